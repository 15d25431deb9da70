/// `server down for D` (SPEC §1.4, an outage): for D, every request that reaches the server
/// is answered 5xx without touching its state (S9). A server-wide window (`ServerWindow`).
public struct ServerDown: Sendable, Equatable {
    /// How long the outage lasts.
    package var forMs: SimTime
    /// `server down for D`.
    package init(forMs: SimTime) { self.forMs = forMs }

    /// The fault as the world injects it.
    public struct Injection: Sendable, Equatable {
        public var forMs: SimTime
        public init(forMs: SimTime) { self.forMs = forMs }
    }

    /// The code of its end events (`FaultEnd`).
    @inlinable package static var endCode: UInt8 { 2 }
}

// MARK: - The statement

extension ServerDown: FaultKind {
    package static var keyword: [String] { ["server", "down"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> ServerDown {
        ServerDown(forMs: try c.forDuration())
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.window(forMs, of: "'server down'")
    }

    package var text: String { "server down for \(DurationText.format(forMs))" }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .serverDown(Injection(forMs: forMs))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `server down for D`, as the world runs it.
    public static func serverDown(forMs: SimTime) -> WorldAction { .fault(.serverDown(.init(forMs: forMs))) }
}

extension SimWorld {
    /// The outage starts, or lasts longer.
    @inlinable mutating func inject(_ f: ServerDown.Injection) {
        let until = faults.serverDown.open(until: now.saturatingAdd(f.forMs))
        faults.serverAnsweredUntil = max(faults.serverAnsweredUntil, until)
        trace(Event.world, .fault(.serverDown(until: until)))
        schedule(.faultEnds(FaultEnd(kind: ServerDown.endCode, target: Event.world)), at: until)
    }

    /// During an outage the server's place answers 5xx (`faultAnswer`).
    @inline(__always)
    @inlinable func serverDownAnswer() -> ServerReply? {
        faults.serverDown.isOpen(at: now) ? ServerReply(.serverError) : nil
    }
}

// MARK: - The search tools

extension ServerDown {
    /// An outage of a drawn length.
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let f = ServerDown(forMs: g.faultLength())
        g.add(f, at: t)
    }

    /// A new length. (Not in the explorer's alphabet: `errors` there answers every request 5xx too.)
    package func mutated<M: FaultMutations>(_ m: inout M) -> ServerDown { ServerDown(forMs: m.lengthMs) }
}

// MARK: - Trace records

extension FaultRecord {
    /// An outage until `until`.
    @inlinable public static func serverDown(until: SimTime) -> FaultRecord { FaultRecord(a: ServerDown.startedTag, b: until) }
}

extension ServerDown: FaultRecords {
    @usableFromInline static var startedTag: UInt64 { 4 }
    package static var recordTags: [UInt8] { [UInt8(startedTag)] }
    package static func text(of r: FaultRecord) -> String { "serverDown(until: \(r.b))" }

    /// A window on the timeline's server lane.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        FaultWindowRecord(until: r.b, mark: .serverWindow(label: "server down", until: r.b))
    }
}
