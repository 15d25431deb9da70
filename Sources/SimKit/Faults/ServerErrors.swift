/// `server errors P% status NNN for D` (SPEC §1.4): for D, that share of the requests that
/// reach the server is answered NNN (500–599) without touching its state (S9). The status is
/// traced as written; the SDK treats every 5xx alike (D6), so no state keeps it. A
/// server-wide window (`ServerWindow`).
public struct ServerErrors: Sendable, Equatable {
    /// The share of requests answered 5xx.
    package var share: Share
    /// The status they are answered.
    package var status: UInt16
    /// How long the window lasts.
    package var forMs: SimTime
    /// `server errors P% status NNN for D`.
    package init(share: Share, status: UInt16, forMs: SimTime) { self.share = share; self.status = status; self.forMs = forMs }

    /// The fault as the world injects it.
    public struct Injection: Sendable, Equatable {
        public var rateBp: UInt16
        public var status: UInt16
        public var forMs: SimTime
        public init(rateBp: UInt16, status: UInt16, forMs: SimTime) { self.rateBp = rateBp; self.status = status; self.forMs = forMs }
    }

    /// The code of its end events (`FaultEnd`).
    @inlinable package static var endCode: UInt8 { 1 }
}

// MARK: - The statement

extension ServerErrors: FaultKind {
    package static var keyword: [String] { ["server", "errors"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> ServerErrors {
        let share = try c.share()
        try c.keyword("status")
        let statusToken = c.peek()
        let status = try c.number("status")
        guard status <= 999 else {
            throw ParseError(offset: statusToken!.offset, message: "status \(statusToken!.quoted) is not between 500 and 599")
        }
        return ServerErrors(share: share, status: UInt16(status), forMs: try c.forDuration())
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.share(share)
        if !(500...599).contains(status) { c.error(at: "\(status)", after: nil, "status '\(status)' is not between 500 and 599") }
        c.window(forMs, of: "'server errors'")
    }

    package var text: String { "server errors \(share.text)% status \(status) for \(DurationText.format(forMs))" }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .serverErrors(Injection(rateBp: share.rateBp, status: status, forMs: forMs))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `server errors P% status NNN for D`, as the world runs it.
    public static func serverErrors(rateBp: UInt16, status: UInt16, forMs: SimTime) -> WorldAction {
        .fault(.serverErrors(.init(rateBp: rateBp, status: status, forMs: forMs)))
    }
}

extension SimWorld {
    /// The window opens, or lasts longer at the new rate.
    @inlinable mutating func inject(_ f: ServerErrors.Injection) {
        let until = faults.serverErrors.open(rateBp: f.rateBp, until: now.saturatingAdd(f.forMs))
        faults.serverAnsweredUntil = max(faults.serverAnsweredUntil, until)
        trace(Event.world, .fault(.serverErrors(rateBp: f.rateBp, status: f.status, until: until)))
        schedule(.faultEnds(FaultEnd(kind: ServerErrors.endCode, target: Event.world)), at: until)
    }

    /// In the window, the server's place answers the drawn share of requests 5xx (`faultAnswer`).
    @inline(__always)
    @inlinable func serverErrorsAnswer(_ r: inout KeyedRandom) -> ServerReply? {
        let w = faults.serverErrors
        return w.isOpen(at: now) && r.chance(UInt64(w.rateBp), outOf: 10_000) ? ServerReply(.serverError) : nil
    }
}

// MARK: - The search tools

extension ServerErrors {
    /// A window of a drawn share, status (500, 502, 503 or 504) and length.
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let f = ServerErrors(share: g.someShare(), status: [500, 502, 503, 504][Int(g.below(4))], forMs: g.faultLength())
        g.add(f, at: t)
    }

    /// A new share and length; half the time, a new status.
    package func mutated<M: FaultMutations>(_ m: inout M) -> ServerErrors {
        ServerErrors(share: m.share, status: m.chance(1, outOf: 2) ? status : [500, 502, 503, 504][Int(m.below(4))], forMs: m.lengthMs)
    }

    /// Every request answered 503: `server errors 100% status 503 for 2m`.
    package static var exploreName: String? { "errors" }
    package static func explored(_ a: FaultAlphabet) -> [ServerErrors] { [ServerErrors(share: .all, status: 503, forMs: a.windowMs)] }
}

// MARK: - Trace records

extension ServerErrors {
    /// Its trace record (`TraceEvent.fault`), as checkers and tools read it.
    public enum Record: Sendable, Equatable {
        /// The server's place answers a share (`rateBp`) of requests `status` until `until`.
        case serverErrors(rateBp: UInt16, status: UInt16, until: SimTime)

        /// The record as the trace carries it (tag 3, the rate and status above it).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .serverErrors(let rate, let status, let until): FaultRecord(a: 3 | UInt64(rate) << 8 | UInt64(status) << 24, b: until)
            }
        }

        /// `r` read as this record, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            guard r.tag == 3 else { return nil }
            self = .serverErrors(rateBp: UInt16(truncatingIfNeeded: r.a >> 8), status: UInt16(truncatingIfNeeded: r.a >> 24), until: r.b)
        }
    }
}

extension FaultRecord {
    /// A window of 5xx answers at `rateBp` with `status`, until `until`.
    @inlinable public static func serverErrors(rateBp: UInt16, status: UInt16, until: SimTime) -> FaultRecord {
        ServerErrors.Record.serverErrors(rateBp: rateBp, status: status, until: until).fault
    }
}

extension ServerErrors: FaultRecords {
    package static var recordTags: [UInt8] { [3] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// A window on the timeline's server lane.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        guard case .serverErrors(let rate, let status, let until)? = Record(r) else { return nil }
        return FaultWindowRecord(until: until, mark: .serverWindow(label: "server errors \(FaultText.percent(rate)) status \(status)", until: until))
    }
}
