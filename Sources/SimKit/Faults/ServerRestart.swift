/// `server restart [for D]` (SPEC §1.5, S10): the server's process restarts now (a deploy, a
/// crash, a fail-over). The server core's `restart` drops what it kept only in memory and
/// comes back from its durable state; for D (5 s unless written) the process is away, and
/// every request that reaches it meanwhile is, drawn from the seed one in two, answered 5xx
/// (the load balancer's answer: the server never saw it, S9) or lost (no answer at all: the
/// SDK meets its own timeout). A server-wide window (`ServerWindow`).
public struct ServerRestart: Sendable, Equatable {
    /// How long the process is away.
    package var forMs: SimTime
    /// `server restart for D`; `server restart` is `defaultForMs`.
    package init(forMs: SimTime = ServerRestart.defaultForMs) { self.forMs = forMs }

    /// How long a restart keeps the process away when the statement does not say: 5 s.
    package static let defaultForMs: SimTime = 5 * Ms.second

    /// The fault as the world injects it.
    public struct Injection: Sendable, Equatable {
        public var forMs: SimTime
        public init(forMs: SimTime) { self.forMs = forMs }
    }

    /// The code of its end events (`FaultEnd`).
    @inlinable package static var endCode: UInt8 { 9 }
}

// MARK: - The statement

extension ServerRestart: FaultKind {
    package static var keyword: [String] { ["server", "restart"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> ServerRestart {
        guard c.isWord("for") else { return ServerRestart() }
        return ServerRestart(forMs: try c.forDuration())
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.window(forMs, of: "'server restart'")
    }

    package var text: String {
        forMs == Self.defaultForMs ? "server restart" : "server restart for \(DurationText.format(forMs))"
    }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .serverRestart(Injection(forMs: forMs))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `server restart for D`, as the world runs it.
    public static func serverRestart(forMs: SimTime = 5 * Ms.second) -> WorldAction {
        .fault(.serverRestart(.init(forMs: forMs)))
    }
}

extension SimWorld {
    /// The process restarts: the core drops its memory (`ServerCore.restart`), and the
    /// process is away until the window's end.
    @inlinable mutating func inject(_ f: ServerRestart.Injection) {
        server.restart(now: now)
        let until = faults.serverRestart.open(until: now.saturatingAdd(f.forMs))
        faults.serverAnsweredUntil = max(faults.serverAnsweredUntil, until)
        faults.answersFaultedUntil = max(faults.answersFaultedUntil, until)
        trace(Event.world, .fault(.serverRestarted(until: until)))
        schedule(.faultEnds(FaultEnd(kind: ServerRestart.endCode, target: Event.world)), at: until)
    }

    /// While the process is away, its place answers 5xx (`faultAnswer`); `serverRestartLoses`
    /// then loses half of those answers.
    @inline(__always)
    @inlinable func serverRestartAnswer() -> ServerReply? {
        faults.serverRestart.isOpen(at: now) ? ServerReply(.serverError) : nil
    }

    /// A request that met the process away gets no answer at all, one in two drawn from `r`
    /// (`faultsOnTheWayBack`).
    @inline(__always)
    @inlinable func serverRestartLoses(_ r: inout KeyedRandom) -> Bool {
        faults.serverRestart.isOpen(at: now) && r.chance(1, outOf: 2)
    }
}

// MARK: - The search tools

extension ServerRestart {
    /// A restart with traffic at its very moment (requests in flight, cut) and after it (the
    /// server must answer from what it kept); half the time the dashboard stopped the main
    /// app just before it, so a server that forgets would serve the app again after it (S10).
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let f = ServerRestart(forMs: [Ms.second, defaultForMs, 30 * Ms.second, 2 * Ms.minute][Int(g.below(4))])
        let stops = g.chance(1, outOf: 2)
        if stops { g.mainAppAccess(stopped: true, at: t - Ms.minute) }
        g.poke(t)
        g.add(f, at: t)
        g.poke(t + f.forMs + Ms.minute)
        if stops {
            g.mainAppAccess(stopped: false, at: t + 2 * Ms.hour)
            g.poke(t + 2 * Ms.hour + Ms.minute)
        }
    }

    /// One seed in six, from the seed's fork 7 (`drawnAlone`): the other seeds keep the
    /// scripts they had before restarts existed.
    package static var drawnAlone: FaultDrawnAlone? { FaultDrawnAlone(oneIn: 6, stream: 7) }

    /// A new time away.
    package func mutated<M: FaultMutations>(_ m: inout M) -> ServerRestart { ServerRestart(forMs: m.lengthMs) }
}

// MARK: - Trace records

extension ServerRestart {
    /// Its trace record (`TraceEvent.fault`), as checkers and tools read it.
    public enum Record: Sendable, Equatable {
        /// The server's process restarted now and is away until `until`.
        case serverRestarted(until: SimTime)

        /// The record as the trace carries it (tag 16).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .serverRestarted(let until): FaultRecord(a: 16, b: until)
            }
        }

        /// `r` read as this record, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            guard r.tag == 16 else { return nil }
            self = .serverRestarted(until: r.b)
        }
    }
}

extension FaultRecord {
    /// The server's process restarted, away until `until`.
    @inlinable public static func serverRestarted(until: SimTime) -> FaultRecord { ServerRestart.Record.serverRestarted(until: until).fault }
}

extension ServerRestart: FaultRecords {
    package static var recordTags: [UInt8] { [16] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// A window on the timeline's server lane.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        guard case .serverRestarted(let until)? = Record(r) else { return nil }
        return FaultWindowRecord(until: until, mark: .serverWindow(label: "server restart", until: until))
    }
}
