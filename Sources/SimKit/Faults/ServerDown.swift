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

extension ServerDown {
    /// Its trace record (`TraceEvent.fault`), as checkers and tools read it.
    public enum Record: Sendable, Equatable {
        /// An outage until `until`.
        case serverDown(until: SimTime)

        /// The record as the trace carries it (tag 4).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .serverDown(let until): FaultRecord(a: 4, b: until)
            }
        }

        /// `r` read as this record, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            guard r.tag == 4 else { return nil }
            self = .serverDown(until: r.b)
        }
    }
}

extension FaultRecord {
    /// An outage until `until`.
    @inlinable public static func serverDown(until: SimTime) -> FaultRecord { ServerDown.Record.serverDown(until: until).fault }
}

extension ServerDown: FaultRecords {
    package static var recordTags: [UInt8] { [4] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// A window on the timeline's server lane.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        guard case .serverDown(let until)? = Record(r) else { return nil }
        return FaultWindowRecord(until: until, mark: .serverWindow(label: "server down", until: until))
    }
}
