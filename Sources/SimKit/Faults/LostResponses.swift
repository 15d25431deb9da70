/// `lost-responses P% for D` (SPEC §1.4, S9): for D, the server judges every request and
/// acts on it, then that share of its answers is lost on the way back: the SDK meets only
/// its own timeout. A server-wide window (`ServerWindow`).
public struct LostResponses: Sendable, Equatable {
    /// The share of answers lost.
    package var share: Share
    /// How long the window lasts.
    package var forMs: SimTime
    /// `lost-responses P% for D`.
    package init(share: Share, forMs: SimTime) { self.share = share; self.forMs = forMs }

    /// The fault as the world injects it.
    public struct Injection: Sendable, Equatable {
        public var rateBp: UInt16
        public var forMs: SimTime
        public init(rateBp: UInt16, forMs: SimTime) { self.rateBp = rateBp; self.forMs = forMs }
    }

    /// The code of its end events (`FaultEnd`).
    @inlinable package static var endCode: UInt8 { 4 }
}

// MARK: - The statement

extension LostResponses: FaultKind {
    package static var keyword: [String] { ["lost-responses"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> LostResponses {
        let share = try c.share()
        return LostResponses(share: share, forMs: try c.forDuration())
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.share(share)
        c.window(forMs, of: "'lost-responses'")
    }

    package var text: String { "lost-responses \(share.text)% for \(DurationText.format(forMs))" }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .lostResponses(Injection(rateBp: share.rateBp, forMs: forMs))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `lost-responses P% for D`, as the world runs it.
    public static func lostResponses(rateBp: UInt16, forMs: SimTime) -> WorldAction { .fault(.lostResponses(.init(rateBp: rateBp, forMs: forMs))) }
}

extension SimWorld {
    /// The window opens, or lasts longer at the new rate.
    @inlinable mutating func inject(_ f: LostResponses.Injection) {
        let until = faults.lostResponses.open(rateBp: f.rateBp, until: now.saturatingAdd(f.forMs))
        trace(Event.world, .fault(.lostResponses(rateBp: f.rateBp, until: until)))
        faults.answersFaultedUntil = max(faults.answersFaultedUntil, until)
        schedule(.faultEnds(FaultEnd(kind: LostResponses.endCode, target: Event.world)), at: until)
    }

    /// In the window, the drawn share of the answers the server sends is lost (`faultsOnTheWayBack`).
    @inline(__always)
    @inlinable func lostResponsesLoses(_ r: inout KeyedRandom) -> Bool {
        let w = faults.lostResponses
        return w.isOpen(at: now) && r.chance(UInt64(w.rateBp), outOf: 10_000)
    }
}

// MARK: - The search tools

extension LostResponses {
    /// A window of a drawn share and length, and traffic a minute in, so that it bites.
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let f = LostResponses(share: g.someShare(), forMs: g.faultLength())
        g.add(f, at: t)
        g.poke(t + Ms.minute)
    }

    /// A new share and length.
    package func mutated<M: FaultMutations>(_ m: inout M) -> LostResponses { LostResponses(share: m.share, forMs: m.lengthMs) }

    /// Every answer lost: `lost-responses 100% for 2m`.
    package static var exploreName: String? { "lost" }
    package static func explored(_ a: FaultAlphabet) -> [LostResponses] { [LostResponses(share: .all, forMs: a.windowMs)] }
}

// MARK: - Trace records

extension LostResponses {
    /// Its trace record (`TraceEvent.fault`), as checkers and tools read it.
    public enum Record: Sendable, Equatable {
        /// A share (`rateBp`) of the server's answers is lost, until `until`.
        case lostResponses(rateBp: UInt16, until: SimTime)

        /// The record as the trace carries it (tag 6, the rate above it).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .lostResponses(let rate, let until): FaultRecord(a: 6 | UInt64(rate) << 8, b: until)
            }
        }

        /// `r` read as this record, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            guard r.tag == 6 else { return nil }
            self = .lostResponses(rateBp: UInt16(truncatingIfNeeded: r.a >> 8), until: r.b)
        }
    }
}

extension FaultRecord {
    /// A share (`rateBp`) of the server's answers is lost, until `until`.
    @inlinable public static func lostResponses(rateBp: UInt16, until: SimTime) -> FaultRecord {
        LostResponses.Record.lostResponses(rateBp: rateBp, until: until).fault
    }
}

extension LostResponses: FaultRecords {
    package static var recordTags: [UInt8] { [6] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// A window on the timeline's server lane.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        guard case .lostResponses(let rate, let until)? = Record(r) else { return nil }
        return FaultWindowRecord(until: until, mark: .serverWindow(label: "lost responses \(FaultText.percent(rate))", until: until))
    }
}
