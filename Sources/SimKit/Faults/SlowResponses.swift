/// `slow-responses SEL by D for W`, a fault of the scenario language's extension: every
/// answer the server sends a selected device during the window [T, T + W) takes D longer on
/// its way back, on top of the link's latency (and after the `timeouts` rule, for a request
/// that fault picked). A request judged just after the window ends comes back at the usual
/// speed, so its answer can overtake an older one still on its way: a 200 served before a
/// lock arriving after the lock error (D4, D9).
///
/// The delay is not bounded by the timeout: an answer that comes back after its request's
/// timeout is simply late, and the SDK treats it as any late answer (D9: the timeout has
/// already been handed to it; the answer is stale and ignored). Requests judged before the
/// window opened keep their arrival time; an answer that is lost (`lost-responses`) stays lost.
///
/// A device's windows: a new one sets its delay and ends at the later of the two ends.
public struct SlowResponses: Sendable, Equatable {
    /// The devices whose answers come back late.
    package var devices: DeviceSelector
    /// How much later.
    package var byMs: SimTime
    /// How long the window lasts.
    package var forMs: SimTime
    /// `slow-responses SEL by D for W`.
    package init(devices: DeviceSelector, byMs: SimTime, forMs: SimTime) { self.devices = devices; self.byMs = byMs; self.forMs = forMs }

    /// The fault as the world injects it: the devices by index. 32 bits for the delay (49
    /// days at most, far above the language's bound of an hour) keep each `ScheduledAction`
    /// at 64 bytes: 72 cost an instruction a person action.
    public struct Injection: Sendable, Equatable {
        public var devices: DeviceSelection
        public var byMs: UInt32
        public var forMs: SimTime
        public init(devices: DeviceSelection, byMs: UInt32, forMs: SimTime) { self.devices = devices; self.byMs = byMs; self.forMs = forMs }
    }

    /// The devices' windows in a world (`FaultWindows.slowResponses`): empty until one opens.
    @usableFromInline struct Windows: Sendable, Equatable {
        /// Per device, the end of its window (0: none).
        @usableFromInline var until: [SimTime] = []
        /// Per device, the delay of its window.
        @usableFromInline var byMs: [SimTime] = []
        @inlinable init() {}
    }

    /// The code of its end events (`FaultEnd`).
    @inlinable package static var endCode: UInt8 { 5 }
}

// MARK: - The statement

extension SlowResponses: FaultKind {
    package static var keyword: [String] { ["slow-responses"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> SlowResponses {
        let devices = try c.selector()
        try c.keyword("by")
        let delay = try c.duration("delay")
        return SlowResponses(devices: devices, byMs: delay, forMs: try c.forDuration())
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.devices(devices)
        if byMs == 0 { c.error(at: nil, after: "by", "'slow-responses' must delay by more than 0s") }
        if byMs > ScenarioLimits.maxLatencyMs {
            c.error(at: nil, after: "by", "'slow-responses' by '\(c.spelled(after: "by", byMs))' is longer than the limit of \(DurationText.format(ScenarioLimits.maxLatencyMs))")
        }
        c.window(forMs, of: "'slow-responses'")
    }

    package var text: String {
        "slow-responses \(devices.text) by \(DurationText.format(byMs)) for \(DurationText.format(forMs))"
    }
    package var selectedDevices: DeviceSelector? { devices }
    package func selecting(_ devices: DeviceSelector) -> SlowResponses { SlowResponses(devices: devices, byMs: byMs, forMs: forMs) }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .slowResponses(Injection(devices: try resolve(devices), byMs: UInt32(min(byMs, UInt64(UInt32.max))), forMs: forMs))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `slow-responses SEL by D for W`, as the world runs it.
    public static func slowResponses(_ devices: DeviceSelection, byMs: UInt32, forMs: SimTime) -> WorldAction {
        .fault(.slowResponses(.init(devices: devices, byMs: byMs, forMs: forMs)))
    }
}

extension SimWorld {
    /// Opens (or extends) the window of each selected device.
    @inlinable mutating func inject(_ f: SlowResponses.Injection, statement index: Int, firing: UInt32) {
        let until = now.saturatingAdd(f.forMs)
        forEachSelected(f.devices, statement: index, firing: firing) { world, d in
            world.slowResponsesStart(device: d, byMs: SimTime(f.byMs), until: until)
        }
    }

    /// Opens (or extends) device `d`'s window of slow answers until `until`.
    @inlinable mutating func slowResponsesStart(device d: DeviceIndex, byMs: SimTime, until: SimTime) {
        if faults.slowResponses.until.isEmpty {
            faults.slowResponses.until = Array(repeating: 0, count: _devices.count)
            faults.slowResponses.byMs = Array(repeating: 0, count: _devices.count)
        }
        let i = Int(d)
        faults.slowResponses.byMs[i] = byMs
        if faults.slowResponses.until[i] < until {
            faults.slowResponses.until[i] = until
            schedule(.faultEnds(FaultEnd(kind: SlowResponses.endCode, target: d)), at: until)
        }
        trace(d, .fault(.slowResponses(byMs: byMs, until: faults.slowResponses.until[i])))
        faults.answersFaultedUntil = max(faults.answersFaultedUntil, faults.slowResponses.until[i])
    }

    /// A device's window of slow answers ends (unless a later one extended it).
    @inlinable mutating func slowResponsesEnd(device d: DeviceIndex) {
        if faults.slowResponses.until[Int(d)] == now { trace(d, .fault(.slowResponsesEnded)) }
    }

    /// The extra delay of an answer the server sends `d` now, or nil outside its window
    /// (`faultsOnTheWayBack`).
    @inlinable func slowDelay(of d: DeviceIndex) -> SimTime? {
        let i = Int(d)
        guard i < faults.slowResponses.until.count, now < faults.slowResponses.until[i] else { return nil }
        return faults.slowResponses.byMs[i]
    }
}

// MARK: - The search tools

extension SlowResponses {
    /// One seed in eight, from the seed's fork 4 (`drawnAlone`), gets a window in which the
    /// answers the server sends some devices come back late, and a verdict race across it,
    /// so that an older verdict arrives after a newer one (D4, D9). Some delays pass the
    /// timeout (5 s to 30 s): those answers are late and ignored (D9).
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let window = [Ms.second, 10 * Ms.second, Ms.minute][Int(g.below(3))]
        let delay = [2 * Ms.second, 20 * Ms.second, 40 * Ms.second, 2 * Ms.minute][Int(g.below(4))]
        let (group, n) = g.mainGroup
        let devices: DeviceSelector
        switch g.below(4) {
        case 0: devices = .all
        case 1: devices = .group(group)
        case 2: devices = .share(Share(percent: [25, 50, 100][Int(g.below(3))]), of: group)
        default: devices = .device(group: group, index: 1 + g.below(n))
        }
        g.add(SlowResponses(devices: devices, byMs: delay, forMs: window), at: t)
        if g.chance(1, outOf: 2) {
            // A check served 200 inside the window, access stopped, a query refused just
            // after it: the 200 comes back last (it must not unlock).
            g.everyone(.launch, at: t)
            g.mainAppAccess(stopped: true, at: t + window)
            g.everyone(.query, at: t + window + 1)
            g.mainAppAccess(stopped: false, at: t + window + 10 * Ms.minute)
        } else {
            // A query refused inside the window, access back, a run's check served 200 just
            // after it: the refusal comes back last (it must not lock).
            g.mainAppAccess(stopped: true, at: t)
            g.everyone(.query, at: t)
            g.mainAppAccess(stopped: false, at: t + window)
            g.everyone(.background, at: t + window + 1)
            g.everyone(.query, at: t + window + 2)
        }
    }

    /// Fork 4 of the seed: its first slow answers came after every other draw of the
    /// generator, so the other seven seeds in eight kept their scripts.
    package static var drawnAlone: FaultDrawnAlone? { FaultDrawnAlone(oneIn: 8, stream: 4) }

    /// A new length; half the time, other devices.
    package func mutated<M: FaultMutations>(_ m: inout M) -> SlowResponses {
        SlowResponses(devices: m.chance(1, outOf: 2) ? m.someDevices() : devices, byMs: byMs, forMs: m.lengthMs)
    }

    /// One device's answers slowed: `slow-responses device photos#I by 10s for 1s`, so that a
    /// newer answer can overtake them (the verdict races of D4 and D9).
    package static var exploreName: String? { "slow" }
    package static func explored(_ a: FaultAlphabet) -> [SlowResponses] {
        a.devices.map { SlowResponses(devices: $0, byMs: a.delayMs, forMs: a.shortWindowMs) }
    }

    /// Just after the window: a request judged then comes back at the usual speed and
    /// overtakes the slowed answers.
    package func raceMoment(firedAt t: SimTime) -> SimTime? { t + forMs + 1 }
}

// MARK: - Trace records

extension SlowResponses {
    /// Its trace records (`TraceEvent.fault`), as checkers and tools read them.
    public enum Record: Sendable, Equatable {
        /// The answers the server sends this device until `until` take `byMs` longer to come
        /// back, so an older answer can arrive after a newer one.
        case slowResponses(byMs: SimTime, until: SimTime)
        /// A device's window of slow answers closed.
        case slowResponsesEnded

        /// The record as the trace carries it (tags 8 and 9; the delay above the tag).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .slowResponses(let by, let until): FaultRecord(a: 8 | by << 8, b: until)
            case .slowResponsesEnded: FaultRecord(a: 9, b: 0)
            }
        }

        /// `r` read as one of these records, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            switch r.tag {
            case 8: self = .slowResponses(byMs: r.a >> 8, until: r.b)
            case 9: self = .slowResponsesEnded
            default: return nil
            }
        }
    }
}

extension FaultRecord {
    /// A device's answers slowed by `byMs` until `until`.
    @inlinable public static func slowResponses(byMs: SimTime, until: SimTime) -> FaultRecord {
        SlowResponses.Record.slowResponses(byMs: byMs, until: until).fault
    }
    /// A device's window of slow answers closed.
    @inlinable public static var slowResponsesEnded: FaultRecord { SlowResponses.Record.slowResponsesEnded.fault }
}

extension SlowResponses: FaultRecords {
    package static var recordTags: [UInt8] { [8, 9] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// Nothing on the timeline: the slowed answers show as late ticks.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        switch Record(r) {
        case .slowResponses(_, let until)?: FaultWindowRecord(until: until, mark: nil)
        case .slowResponsesEnded?: FaultWindowRecord(until: nil, mark: nil)
        case nil: nil
        }
    }
}
