/// `timeouts P% for D` (SPEC §1.4, "requests timing out at a rate"): for D, that share of
/// the requests sent times out. The server still judges and acts on each; its answer comes
/// back after the request's timeout, from 1 ms to one more timeout after it (`answerTime`),
/// so `timeouts 100%` leaves no answer in time. A server-wide window (`ServerWindow`).
public struct Timeouts: Sendable, Equatable {
    /// The share of requests that time out.
    package var share: Share
    /// How long the window lasts.
    package var forMs: SimTime
    /// `timeouts P% for D`.
    package init(share: Share, forMs: SimTime) { self.share = share; self.forMs = forMs }

    /// The fault as the world injects it.
    public struct Injection: Sendable, Equatable {
        public var rateBp: UInt16
        public var forMs: SimTime
        public init(rateBp: UInt16, forMs: SimTime) { self.rateBp = rateBp; self.forMs = forMs }
    }

    /// The code of its end events (`FaultEnd`).
    @inlinable package static var endCode: UInt8 { 3 }
}

// MARK: - The statement

extension Timeouts: FaultKind {
    package static var keyword: [String] { ["timeouts"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> Timeouts {
        let share = try c.share()
        return Timeouts(share: share, forMs: try c.forDuration())
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.share(share)
        c.window(forMs, of: "'timeouts'")
    }

    package var text: String { "timeouts \(share.text)% for \(DurationText.format(forMs))" }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .timeouts(Injection(rateBp: share.rateBp, forMs: forMs))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `timeouts P% for D`, as the world runs it.
    public static func timeouts(rateBp: UInt16, forMs: SimTime) -> WorldAction { .fault(.timeouts(.init(rateBp: rateBp, forMs: forMs))) }
}

extension SimWorld {
    /// The window opens, or lasts longer at the new rate.
    @inlinable mutating func inject(_ f: Timeouts.Injection) {
        let until = faults.timeouts.open(rateBp: f.rateBp, until: now.saturatingAdd(f.forMs))
        trace(Event.world, .fault(.timeouts(rateBp: f.rateBp, until: until)))
        schedule(.faultEnds(FaultEnd(kind: Timeouts.endCode, target: Event.world)), at: until)
    }

    /// In the window, a request leaving its device is drawn to time out (`faultsOnTheWayOut`):
    /// its answer then comes late (`RequestPool.Slot.late`). The draw is made either way; a
    /// request whose fate is pinned keeps the fate's choice.
    @inline(__always)
    @inlinable func timeoutsPick(_ slot: inout RequestPool.Slot, _ r: inout KeyedRandom) {
        let w = faults.timeouts
        if w.isOpen(at: now), r.chance(UInt64(w.rateBp), outOf: 10_000) { slot.late = slot.fate == 0 }
    }
}

// MARK: - The search tools

extension Timeouts {
    /// A window of a drawn share and length, and traffic a minute in, so that it bites.
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let f = Timeouts(share: g.someShare(), forMs: g.faultLength())
        g.add(f, at: t)
        g.poke(t + Ms.minute)
    }

    /// A new share and length.
    package func mutated<M: FaultMutations>(_ m: inout M) -> Timeouts { Timeouts(share: m.share, forMs: m.lengthMs) }

    /// Every request timing out: `timeouts 100% for 2m`.
    package static var exploreName: String? { "timeouts" }
    package static func explored(_ a: FaultAlphabet) -> [Timeouts] { [Timeouts(share: .all, forMs: a.windowMs)] }
}

// MARK: - Trace records

extension Timeouts {
    /// Its trace record (`TraceEvent.fault`), as checkers and tools read it.
    public enum Record: Sendable, Equatable {
        /// A share (`rateBp`) of the requests sent times out, until `until`.
        case timeouts(rateBp: UInt16, until: SimTime)

        /// The record as the trace carries it (tag 5, the rate above it).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .timeouts(let rate, let until): FaultRecord(a: 5 | UInt64(rate) << 8, b: until)
            }
        }

        /// `r` read as this record, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            guard r.tag == 5 else { return nil }
            self = .timeouts(rateBp: UInt16(truncatingIfNeeded: r.a >> 8), until: r.b)
        }
    }
}

extension FaultRecord {
    /// A share (`rateBp`) of the requests sent times out, until `until`.
    @inlinable public static func timeouts(rateBp: UInt16, until: SimTime) -> FaultRecord {
        Timeouts.Record.timeouts(rateBp: rateBp, until: until).fault
    }
}

extension Timeouts: FaultRecords {
    package static var recordTags: [UInt8] { [5] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// A window on the timeline's server lane.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        guard case .timeouts(let rate, let until)? = Record(r) else { return nil }
        return FaultWindowRecord(until: until, mark: .serverWindow(label: "timeouts \(FaultText.percent(rate))", until: until))
    }
}
