/// `background-limit SEL L [for D]` (SPEC §1.5, P5): the OS gives each background run of
/// the selected phones L of time (for D, or for the rest of the run). A background run is
/// one the OS fires (`background`: the app launched in the background for it, or a running
/// app woken for it) while the app is not in the foreground. When the SDK's run has gone on
/// for L, the OS asks it to stop: the SDK gets `SDKInput.backgroundExpiring` (iOS's
/// expiration handler). If its run has not ended `graceMs` later (the task completed, the
/// SDK's `runEnded`), the OS kills the process. A run that ends before its limit, a person
/// who opens the app meanwhile (a foreground app is not limited), or a process that dies
/// first ends the count.
///
/// What was written stays (P1) and the next run resumes from it (D4): the checkers judge
/// the expiry from its trace records (`Record`), `background-expiry-keeps-progress`.
/// A world where no statement set a limit pays one test of an empty array when the OS
/// fires a background run and when a run ends (`FaultWindows.backgroundLimit`).
public struct BackgroundLimit: Sendable, Equatable {
    /// The phones whose background runs are limited.
    package var devices: DeviceSelector
    /// The time the OS gives each background run, in milliseconds.
    package var limitMs: SimTime
    /// For how long the limit holds, or nil: for the rest of the run.
    package var forMs: SimTime?
    /// `background-limit SEL L [for D]`.
    package init(devices: DeviceSelector, limitMs: SimTime, forMs: SimTime? = nil) {
        self.devices = devices; self.limitMs = limitMs; self.forMs = forMs
    }

    /// The longest limit: a day (iOS gives a processing task minutes, a refresh 30 s).
    package static let maxLimitMs: SimTime = Ms.day

    /// How long the OS waits, once it asked a run to stop, before it kills the process: 5 s.
    /// iOS calls a background task's expiration handler a few seconds before its time is up
    /// and terminates the app if the task is not completed by then (docs/semantics.md).
    @usableFromInline package static let graceMs: SimTime = 5 * Ms.second

    /// The fault as the world injects it: the devices by index, the limit, the window (0:
    /// for the rest of the run).
    public struct Injection: Sendable, Equatable {
        public var devices: DeviceSelection
        public var limitMs: UInt32
        public var forMs: SimTime
        public init(devices: DeviceSelection, limitMs: UInt32, forMs: SimTime) {
            self.devices = devices; self.limitMs = limitMs; self.forMs = forMs
        }
    }

    /// The limits and the runs they count in a world (`FaultWindows.backgroundLimit`): empty
    /// until a statement sets a limit, so a world without the fault reads no per-device value.
    @usableFromInline struct Limits: Sendable, Equatable {
        /// Per device, the time the OS gives a background run (0: none).
        @usableFromInline var limitMs: [UInt32] = []
        /// Per device, the end of its limit's window.
        @usableFromInline var until: [SimTime] = []
        /// Per device, when its background run is asked to stop (0: no run counted).
        @usableFromInline var expiresAt: [SimTime] = []
        /// Per device, when its process is killed if its run has not ended (0: none owed).
        @usableFromInline var killAt: [SimTime] = []
        /// Per device, the process epoch whose run is counted.
        @usableFromInline var epoch: [UInt16] = []
        @inlinable init() {}
    }

    /// The code of its events (`FaultEnd`): a run asked to stop, a process killed.
    @inlinable package static var endCode: UInt8 { 33 }
}

// MARK: - The statement

extension BackgroundLimit: FaultKind {
    package static var keyword: [String] { ["background-limit"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> BackgroundLimit {
        let devices = try c.selector()
        let offset = c.peek()?.offset ?? c.endOffset
        let limit = try c.duration("time limit")
        if let problem = problem(limit) { throw ParseError(offset: offset, message: problem, hint: "a background run's time: 'background-limit all 30s'") }
        var forMs: SimTime?
        if !c.atEnd { forMs = try c.forDuration() }
        return BackgroundLimit(devices: devices, limitMs: limit, forMs: forMs)
    }

    /// What is wrong with a limit of `ms`, or nil: at least a second, at most a day.
    static func problem(_ ms: SimTime) -> String? {
        if ms < Ms.second { return "'background-limit' gives a background run at least 1s, not \(DurationText.format(ms))" }
        if ms > maxLimitMs { return "'background-limit' \(DurationText.format(ms)) is longer than the limit of \(DurationText.format(maxLimitMs))" }
        return nil
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.devices(devices)
        // The parser refuses a limit out of bounds at its token; a statement built in code
        // (the search tools) is checked here.
        if let problem = BackgroundLimit.problem(limitMs) { c.error(at: nil, after: nil, problem) }
        if let forMs { c.window(forMs, of: "'background-limit'") }
    }

    package var text: String {
        "background-limit \(devices.text) \(DurationText.format(limitMs))\(forMs.map { " for \(DurationText.format($0))" } ?? "")"
    }
    package var selectedDevices: DeviceSelector? { devices }
    package func selecting(_ devices: DeviceSelector) -> BackgroundLimit { BackgroundLimit(devices: devices, limitMs: limitMs, forMs: forMs) }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .backgroundLimit(Injection(devices: try resolve(devices), limitMs: UInt32(min(limitMs, BackgroundLimit.maxLimitMs)), forMs: forMs ?? 0))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `background-limit SEL L [for D]`, as the world runs it (`forMs` 0: for the rest of the run).
    public static func backgroundLimit(_ devices: DeviceSelection, limitMs: UInt32, forMs: SimTime = 0) -> WorldAction {
        .fault(.backgroundLimit(.init(devices: devices, limitMs: limitMs, forMs: forMs)))
    }
}

extension SimWorld {
    /// Each selected phone's background runs get `limitMs` from now on (until `forMs` from now).
    @inlinable mutating func inject(_ f: BackgroundLimit.Injection, statement index: Int, firing: UInt32) {
        let until = f.forMs == 0 ? SimTime.max : now.saturatingAdd(f.forMs)
        forEachSelected(f.devices, statement: index, firing: firing) { world, d in
            world.backgroundLimitSet(device: d, limitMs: f.limitMs, until: until)
        }
    }

    /// Device `d`'s background runs get `limitMs` until `until` (the gate of the fault's
    /// two stages opens: its arrays exist).
    @inlinable mutating func backgroundLimitSet(device d: DeviceIndex, limitMs: UInt32, until: SimTime) {
        if faults.backgroundLimit.limitMs.isEmpty {
            let n = _devices.count
            faults.backgroundLimit.limitMs = Array(repeating: 0, count: n)
            faults.backgroundLimit.until = Array(repeating: 0, count: n)
            faults.backgroundLimit.expiresAt = Array(repeating: 0, count: n)
            faults.backgroundLimit.killAt = Array(repeating: 0, count: n)
            faults.backgroundLimit.epoch = Array(repeating: 0, count: n)
        }
        let i = Int(d)
        faults.backgroundLimit.limitMs[i] = limitMs
        faults.backgroundLimit.until[i] = until
        trace(d, .fault(BackgroundLimit.Record.limit(limitMs: limitMs, until: until).fault))
    }

    /// The OS fired a background run of device `d`'s (its step just ended, its effects still
    /// in `effects`): if a limit holds and the SDK's run is going in the background, its time
    /// starts counting.
    @inlinable mutating func backgroundRunFired(device d: DeviceIndex) {
        let i = Int(d)
        guard faults.backgroundLimit.limitMs[i] != 0, now < faults.backgroundLimit.until[i],
              _devices[i].hasProcess, !_devices[i].foreground else { return }
        var going = false
        for k in 0..<effects.count {
            switch effects[k] {
            case .runStarted: going = true
            case .runEnded: going = false
            default: break
            }
        }
        guard going, faults.backgroundLimit.expiresAt[i] == 0 || faults.backgroundLimit.epoch[i] != _devices[i].processEpoch else { return }
        let at = now.saturatingAdd(SimTime(faults.backgroundLimit.limitMs[i]))
        faults.backgroundLimit.expiresAt[i] = at
        faults.backgroundLimit.killAt[i] = 0
        faults.backgroundLimit.epoch[i] = _devices[i].processEpoch
        schedule(.faultEnds(FaultEnd(kind: BackgroundLimit.endCode, target: d)), at: at)
    }

    /// Device `d`'s SDK ended a run: the background task is complete, nothing is asked of it
    /// or owed any more.
    @inline(__always)
    @inlinable mutating func backgroundRunEnded(device d: DeviceIndex) {
        let i = Int(d)
        faults.backgroundLimit.expiresAt[i] = 0
        faults.backgroundLimit.killAt[i] = 0
    }

    /// One of device `d`'s events is due: its run's time is up (it is asked to stop), or its
    /// grace is (its process is killed), unless the run ended, the app came to the
    /// foreground or the process died since.
    @inlinable mutating func backgroundLimitEvent(device d: DeviceIndex) {
        let i = Int(d)
        let sameProcess = _devices[i].hasProcess && faults.backgroundLimit.epoch[i] == _devices[i].processEpoch
        if faults.backgroundLimit.expiresAt[i] == now {
            faults.backgroundLimit.expiresAt[i] = 0
            guard sameProcess, !_devices[i].foreground else { return }
            let kill = now.saturatingAdd(BackgroundLimit.graceMs)
            faults.backgroundLimit.killAt[i] = kill
            schedule(.faultEnds(FaultEnd(kind: BackgroundLimit.endCode, target: d)), at: kill)
            trace(d, .fault(BackgroundLimit.Record.expiring.fault))
            step(d, .backgroundExpiring)
        } else if faults.backgroundLimit.killAt[i] == now {
            faults.backgroundLimit.killAt[i] = 0
            guard sameProcess, !_devices[i].foreground else { return }
            trace(d, .fault(BackgroundLimit.Record.killed.fault))
            killProcess(d)
        }
    }
}

// MARK: - The search tools

extension BackgroundLimit {
    /// One seed in six, from the seed's fork "bglimit" (`drawnAlone`): some phones get a
    /// limit of 30 s (iOS's refresh task), 15 s or a minute, then background runs with
    /// photos to index: new photos added just before, so that a run is mid-chunk when its
    /// time is up. Half the time the app is opened a while later (the next run resumes), half
    /// the time another background run comes first.
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let devices = g.someDevices()
        let limit = [15 * Ms.second, 30 * Ms.second, 30 * Ms.second, Ms.minute][Int(g.below(4))]
        g.everyone(.launch, at: t - Ms.hour)
        g.everyone(.close, at: t - Ms.hour + Ms.minute)
        g.add(BackgroundLimit(devices: devices, limitMs: limit, forMs: g.chance(1, outOf: 2) ? nil : 2 * Ms.day), at: t)
        g.addPhotos(1_000, at: t + Ms.minute)
        g.everyone(.background, at: t + 2 * Ms.minute)
        if g.chance(1, outOf: 2) {
            g.everyone(.open, at: t + Ms.hour)
        } else {
            g.addPhotos(1_000, at: t + 6 * Ms.hour)
            g.everyone(.background, at: t + 6 * Ms.hour + Ms.minute)
            g.everyone(.open, at: t + Ms.day)
        }
    }

    /// Fork "bglimit" of the seed: the other seeds keep their scripts.
    package static var drawnAlone: FaultDrawnAlone? { FaultDrawnAlone(oneIn: 6, stream: 0x6267_6C69_6D69_74) }

    /// A new limit (1 s to a minute), and half the time other devices; the window kept.
    package func mutated<M: FaultMutations>(_ m: inout M) -> BackgroundLimit {
        let limit = [Ms.second, 10 * Ms.second, 30 * Ms.second, Ms.minute][Int(m.below(4))]
        return BackgroundLimit(devices: m.chance(1, outOf: 2) ? m.someDevices() : devices, limitMs: limit, forMs: forMs)
    }

    /// One phone at a time, its background runs limited to 15 s, with `--faults background-limit`.
    package static var exploreName: String? { "background-limit" }
    /// Asked for by name, so that the default alphabet, and what explore finds with it, stay as they were.
    package static var exploredByDefault: Bool { false }
    package static func explored(_ a: FaultAlphabet) -> [BackgroundLimit] {
        a.devices.map { BackgroundLimit(devices: $0, limitMs: 15 * Ms.second) }
    }
}

// MARK: - Trace records

extension BackgroundLimit {
    /// Its trace records (`TraceEvent.fault`), as checkers and tools read them.
    public enum Record: Sendable, Equatable {
        /// The phone's background runs get `limitMs` until `until` (`SimTime.max`: the rest of the run).
        case limit(limitMs: UInt32, until: SimTime)
        /// The OS asks the phone's background run to stop: its time is up (the SDK's
        /// `backgroundExpiring` step follows).
        case expiring
        /// The run did not end within the grace: the OS kills the process (its
        /// `processKilled` record follows).
        case killed

        /// The record as the trace carries it (tag 36 the limit, its length above the tag and
        /// its end in `b`; tag 37 the expiry, 0 asked to stop and 1 killed above the tag).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .limit(let limit, let until): FaultRecord(a: 36 | UInt64(limit) << 8, b: UInt64(until))
            case .expiring: FaultRecord(a: 37, b: 0)
            case .killed: FaultRecord(a: 37 | 1 << 8, b: 0)
            }
        }

        /// `r` read as this record, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            switch r.tag {
            case 36: self = .limit(limitMs: UInt32(truncatingIfNeeded: r.a >> 8), until: SimTime(r.b))
            case 37: self = r.a >> 8 == 0 ? .expiring : .killed
            default: return nil
            }
        }
    }
}

extension BackgroundLimit: FaultRecords {
    package static var recordTags: [UInt8] { [36, 37] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// Marks on the timeline: the limit set, a run asked to stop, a process killed.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        switch Record(r) {
        case .limit(let limit, let until)?:
            let window = until == SimTime.max ? "" : " until \(DurationText.format(until))"
            return FaultWindowRecord(until: nil, mark: .deviceMoment(label: "background limit \(DurationText.format(SimTime(limit)))\(window)"))
        case .expiring?: return FaultWindowRecord(until: nil, mark: .deviceMoment(label: "background time up"))
        case .killed?: return FaultWindowRecord(until: nil, mark: .deviceMoment(label: "killed after the grace"))
        case nil: return nil
        }
    }
}
