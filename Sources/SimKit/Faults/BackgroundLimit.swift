/// `background-limit SEL L [for D]` (SPEC §1.5, P5): the OS gives each background launch of
/// the selected phones L of time (for D, or for the rest of the run). A background launch
/// is the OS firing the SDK's task (`background`: the app launched in the background for it,
/// or a running app woken for it) while the app is not in the foreground; as a BGTask's, its
/// time counts from the firing, whatever the SDK does first: a run it starts later (after
/// its key check's answer, say) has what is left of it. When the time is up, the OS asks
/// the run going on to stop: the SDK gets `SDKInput.backgroundExpiring` (iOS's expiration
/// handler). If that run has not ended `graceMs` later (the task completed, the SDK's
/// `runEnded`, or for an SDK that reports no run events its state leaving `indexing`),
/// the OS kills the process. With no run going when the time is up (the SDK started none,
/// or its run ended), nothing is asked and nothing is killed: the task is complete and iOS
/// only suspends the app, which SimKit does not model (docs/semantics.md). A run that ends
/// before the time is up, a person who opens the app meanwhile (a foreground app is not
/// limited), or a process that dies first ends the count.
///
/// What was written stays (P1) and the next run resumes from it (D4): the checkers judge
/// the expiry from its trace records (`Record`), `background-expiry-keeps-progress`.
/// A world where no statement set a limit pays one test of an empty array when the OS
/// fires a background run, when a run starts or ends and when the SDK reports a state
/// (`FaultWindows.backgroundLimit`).
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
        /// Per device, whether a run is going, as its effects tell (with `runEpoch`: only
        /// in the process that started it).
        @usableFromInline var running: [Bool] = []
        /// Per device, whether the run going was seen only by its `indexing` state (an SDK
        /// that reports no run events): a state other than `indexing` ends it.
        @usableFromInline var inferred: [Bool] = []
        /// Per device, the process epoch in which its last run started.
        @usableFromInline var runEpoch: [UInt16] = []
        /// Per device, when its last run ended (`SimTime.max`: none yet).
        @usableFromInline var endedAt: [SimTime] = []
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
            faults.backgroundLimit.running = Array(repeating: false, count: n)
            faults.backgroundLimit.inferred = Array(repeating: false, count: n)
            faults.backgroundLimit.runEpoch = Array(repeating: 0, count: n)
            faults.backgroundLimit.endedAt = Array(repeating: SimTime.max, count: n)
            // A run going before the first limit was set is known by its state.
            for k in 0..<n where _devices[k].hasProcess && _devices[k].reportedState == .indexing {
                faults.backgroundLimit.running[k] = true
                faults.backgroundLimit.inferred[k] = true
                faults.backgroundLimit.runEpoch[k] = _devices[k].processEpoch
            }
        }
        let i = Int(d)
        faults.backgroundLimit.limitMs[i] = limitMs
        faults.backgroundLimit.until[i] = until
        trace(d, .fault(BackgroundLimit.Record.limit(limitMs: limitMs, until: until).fault))
    }

    /// Whether device `i`'s SDK has a run going in its current process, as its effects tell.
    @inline(__always)
    @inlinable func backgroundLimitRunGoing(_ i: Int) -> Bool {
        faults.backgroundLimit.running[i] && _devices[i].hasProcess && faults.backgroundLimit.runEpoch[i] == _devices[i].processEpoch
    }

    /// The OS fired device `d`'s background task (the firing's step just ended): if a limit
    /// holds and the app is in the background, the launch's time starts counting now,
    /// whether the SDK started its run in this step or starts it later (after its key
    /// check's answer). Not when the SDK ended its run in this very step (the task is
    /// complete), nor when a count of this process's already covers the run going on (a
    /// run keeps the time of the launch it runs in) or its grace is running.
    @inlinable mutating func backgroundRunFired(device d: DeviceIndex) {
        let i = Int(d)
        guard faults.backgroundLimit.limitMs[i] != 0, now < faults.backgroundLimit.until[i],
              _devices[i].hasProcess, !_devices[i].foreground else { return }
        let epoch = _devices[i].processEpoch
        let going = backgroundLimitRunGoing(i)
        if !going, faults.backgroundLimit.endedAt[i] == now, faults.backgroundLimit.runEpoch[i] == epoch { return }
        if faults.backgroundLimit.epoch[i] == epoch {
            if faults.backgroundLimit.killAt[i] != 0 { return }
            if going, faults.backgroundLimit.expiresAt[i] != 0 { return }
        }
        let at = now.saturatingAdd(SimTime(faults.backgroundLimit.limitMs[i]))
        faults.backgroundLimit.expiresAt[i] = at
        faults.backgroundLimit.killAt[i] = 0
        faults.backgroundLimit.epoch[i] = epoch
        schedule(.faultEnds(FaultEnd(kind: BackgroundLimit.endCode, target: d)), at: at)
    }

    /// Device `d`'s SDK started a run (`runStarted`): a run is going. A run already seen by
    /// its `indexing` state is the same run.
    @inlinable mutating func backgroundLimitRunStarted(device d: DeviceIndex) {
        let i = Int(d)
        if backgroundLimitRunGoing(i), faults.backgroundLimit.inferred[i] {
            faults.backgroundLimit.inferred[i] = false
            return
        }
        faults.backgroundLimit.running[i] = true
        faults.backgroundLimit.inferred[i] = false
        faults.backgroundLimit.runEpoch[i] = _devices[i].processEpoch
    }

    /// Device `d`'s SDK reported state `s`: for an SDK that reports no run events, its run
    /// starts when the state becomes `indexing` and ends when it leaves it (as the checkers
    /// read it).
    @inlinable mutating func backgroundLimitState(device d: DeviceIndex, _ s: SDKState) {
        let i = Int(d)
        if s == .indexing {
            guard !backgroundLimitRunGoing(i) else { return }
            faults.backgroundLimit.running[i] = true
            faults.backgroundLimit.inferred[i] = true
            faults.backgroundLimit.runEpoch[i] = _devices[i].processEpoch
        } else if faults.backgroundLimit.inferred[i], backgroundLimitRunGoing(i) {
            backgroundRunEnded(device: d)
        }
    }

    /// Device `d`'s SDK ended a run: the background task is complete, nothing is asked of it
    /// or owed any more.
    @inline(__always)
    @inlinable mutating func backgroundRunEnded(device d: DeviceIndex) {
        let i = Int(d)
        faults.backgroundLimit.running[i] = false
        faults.backgroundLimit.inferred[i] = false
        faults.backgroundLimit.endedAt[i] = now
        faults.backgroundLimit.expiresAt[i] = 0
        faults.backgroundLimit.killAt[i] = 0
    }

    /// One of device `d`'s events is due: the launch's time is up (the run going on is asked
    /// to stop), or its grace is (its process is killed), unless the run ended, the app
    /// came to the foreground or the process died since. With no run going when the time is
    /// up, nothing happens: an SDK that started no run is asked nothing and is not killed.
    @inlinable mutating func backgroundLimitEvent(device d: DeviceIndex) {
        let i = Int(d)
        let sameProcess = _devices[i].hasProcess && faults.backgroundLimit.epoch[i] == _devices[i].processEpoch
        if faults.backgroundLimit.expiresAt[i] == now {
            faults.backgroundLimit.expiresAt[i] = 0
            guard sameProcess, !_devices[i].foreground, backgroundLimitRunGoing(i) else { return }
            let kill = now.saturatingAdd(BackgroundLimit.graceMs)
            faults.backgroundLimit.killAt[i] = kill
            schedule(.faultEnds(FaultEnd(kind: BackgroundLimit.endCode, target: d)), at: kill)
            trace(d, .fault(BackgroundLimit.Record.expiring.fault))
            step(d, .backgroundExpiring)
        } else if faults.backgroundLimit.killAt[i] == now {
            faults.backgroundLimit.killAt[i] = 0
            guard sameProcess, !_devices[i].foreground, backgroundLimitRunGoing(i) else { return }
            trace(d, .fault(BackgroundLimit.Record.killed.fault))
            killProcess(d)
        }
    }
}

// MARK: - The search tools

extension BackgroundLimit {
    /// One seed in six, from the seed's fork "bglimit" (`drawnAlone`): some phones get a
    /// limit of 1, 2 or 3 s, 15 s, 30 s (iOS's refresh task) or a minute, then background
    /// runs with photos to index: new photos added just before, so that a run is mid-chunk
    /// when its time is up, whether the SDK indexes slowly (the reference: 200 photos every
    /// 10 s, cut short by the longer limits) or fast (a few hundred photos every half
    /// second, which index 1,000 photos in about 2 s: cut short by the shorter ones, the
    /// time counting from the firing, before its key check's answer). Half the time the app
    /// is opened a while later (the next run resumes), half the time another background
    /// run comes first.
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let devices = g.someDevices()
        let limit = [Ms.second, 2 * Ms.second, 3 * Ms.second, 15 * Ms.second, 30 * Ms.second, Ms.minute][Int(g.below(6))]
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
