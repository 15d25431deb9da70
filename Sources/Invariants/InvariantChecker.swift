import SimKit

/// Every invariant of SPEC §3, checked online as the trace streams by: one pass, memory
/// bounded per device. A run goes on after a violation; the first `maxPerInvariant`
/// violations of each invariant are kept with the device's last records, the rest counted.
///
/// The checks live in `Checks/`, one file per family of rules; the ground truth they
/// judge by lives in `Truth/` and is rebuilt from the trace, never read from the models.
public struct InvariantChecker: TraceObserver {
    public let maxPerInvariant: Int
    public private(set) var violations: [Violation] = []
    /// Violations per invariant (`InvariantID.allCases` order), kept or not.
    public private(set) var counts: [Int] = Array(repeating: 0, count: InvariantID.allCases.count)
    /// How many times each coverage point was reached, in `Coverage` order.
    public var coverage: CoverageCounts {
        var c = CoverageCounts()
        for i in c.counts.indices { c.counts[i] = coverageHits[i] }
        return c
    }
    /// The counts behind `coverage`, bumped with no uniqueness check per hit (an `Array`
    /// made one, a library call, at each hit): see `TruthTable`; `begin` makes it this
    /// checker's own, keeping what it held.
    var coverageHits = TruthTable(repeating: UInt64(0), count: Coverage.allCases.count)
    public private(set) var facts: WorldFacts?

    @usableFromInline let ringDepth: Int
    @usableFromInline var rings = DeviceRings(devices: 0, depth: 0)
    /// Each device's truth; written without uniqueness checks, see `TruthTable`.
    @usableFromInline var devices = TruthTable(repeating: DeviceTruth(), count: 0)
    /// The checkers' server truth; empty until `begin`.
    var server = ServerTruth()
    var hasBegun = false
    /// Copies of the facts read for every request, so the hot path copies no `WorldFacts`.
    var deviceGenuine: [Bool] = []
    var deviceApp: [AppID] = []
    var keyNames: [String] = []
    /// The SDK step being traced (steps never interleave: the engine runs one at a time).
    var step = StepTruth()
    /// Episodes waiting for their device's next step: steps that ended with work in
    /// progress (`unsettled`), judged when one of the device's later steps ends without.
    /// Empty for a sans-IO core; few at once for an async one (one per device at most).
    var parked: [StepTruth] = []
    /// P1: per device, what a kill left owed (`Kills.swift`); empty until a kill's record,
    /// so a run without the fault reads nothing of it.
    var kills: [KillTruth] = []
    /// P1: the truth of the device whose reset step is going, as it was before the reset, in
    /// a run with kills (a reset killed before its first write never happened), and the
    /// generation of the delete that reset newly owes (D7; 0: none), undone with it.
    var truthBeforeReset: (device: DeviceIndex, truth: DeviceTruth, owes: UInt32)? = nil
    /// Named run reports, per device, for SDKs that name them (`NamedReports.swift`);
    /// empty for one that does not. Looked up by device, never iterated into a verdict.
    var ledgers: [DeviceIndex: ReportLedger] = [:]
    /// S6, D4: the newest `attestation_failed` served to each device that got one (clones).
    /// It is a refusal that is never served, not one of S2's verdicts, so an SDK may order
    /// D4's verdicts by it or not: a verdict older only than it may be acted on or ignored.
    var attestationFailedAt: [DeviceIndex: SimTime] = [:]
    /// P6: the latest answer that was not Rollup's to each device's key check, for D1's
    /// "answered" check (a verdict, not such an answer). Written only behind a portal.
    var notRollupCheckAt: [DeviceIndex: SimTime] = [:]
    /// P6: the request id of the latest bare 403 not of Rollup's served to each device
    /// (coverage only). Written only behind a portal.
    var notRollup403: [DeviceIndex: UInt32] = [:]
    /// The time of the record being checked.
    @usableFromInline var now: SimTime = 0
    var timeoutMs: SimTime = 30 * Ms.second
    /// The earliest time at which something changes with no record to say so: a grace
    /// deadline (the truth of the devices carrying that key changes then, S3) or a liveness
    /// deadline (`obligations`, one past it). `.max` when none is pending. One test per record.
    @usableFromInline var nextDeadline: SimTime = .max
    /// The earliest grace deadline not yet passed, or `.max`.
    var nextKeyDeadline: SimTime = .max
    /// Liveness deadlines: uploads owed (D10) and resets' deletes owed (D7).
    var obligations = Obligations()
    /// D7: the resets whose record the server still holds, and the time counted towards
    /// their bound. Few at once; looked up by device.
    var owedResets: [OwedReset] = []
    /// The earlier records the server holds, as the `holds` records just read list them
    /// (with their device), for the `served` record that follows them.
    var heldListed: [UInt32] = []
    var heldListedDevice: DeviceIndex = 0
    /// The server is down, or answers 5xx at a rate, until these times (D7's liveness
    /// counts only time with the server up).
    var serverDownUntil: SimTime = 0
    var serverErrorsUntil: SimTime = 0
    /// S10: the server's last restart (`never`: none yet), and the end of the time its
    /// process is away.
    var lastRestartAt: SimTime = LocalData.never
    var restartAwayUntil: SimTime = 0
    /// Each device is offline (a partition) until this time: D7's liveness counts online
    /// time. Apart from the device truth: written only by partition records.
    var offlineUntil: [SimTime] = []
    /// P6: per device, when its portal window ends (empty until a portal opens): the
    /// server never sees its requests meanwhile, so D7's time does not count, as offline.
    var portalUntil: [SimTime] = []
    /// P2: each phone's wall-clock offset from the true time (ms), and what it was when the
    /// device's last answered check came (`DeviceTruth.lastAnswered`). Empty until a clock
    /// record: a run without the fault reads nothing of them.
    var wallOffsetMs: [Int64] = []
    var wallOffsetAtCheckMs: [Int64] = []
    /// P5: each device's truth of its background runs' expiries (`ExpiryTruth`). Empty
    /// until a `background-limit` record: a run without the fault reads nothing of it.
    var expiry: [ExpiryTruth] = []
    /// P3: what each device's full disks left owed. Empty until a `disk-full` record: a run
    /// without the fault reads nothing of it.
    var diskFaults: [DiskFaultTruth] = []
    /// P4: when each phone's protected data is unlocked after its last restart (0: never
    /// locked). Empty until a `reboot` record.
    var dataUnlockAt: [SimTime] = []
    /// P4: per device, whether its process had reset() called before the unlock, and has
    /// not yet done it (the SDK may fail the call, or do it once its data can be read:
    /// `takeDeferredReset`). Allocated with `dataUnlockAt`.
    var resetAwaitingUnlock: [Bool] = []
    /// What the SDK states within SPEC's limits (its back-offs, D7 and D10).
    var statement = SDKStatement.specLimits
    /// The scenario's `storage latency` (0: none): the longest a wait for the storage takes.
    var storageLatencyMs: SimTime = 0

    /// D1 and D5 are the product's own numbers ("more than a day", "30 days in a row"),
    /// not settings of the SDK under test.
    static let checkIntervalMs: SimTime = 24 * Ms.hour
    static let purgeAfterMs: SimTime = DeviceTruth.longStopMs

    public init(maxPerInvariant: Int = 10, ringDepth: Int = 12) {
        precondition(maxPerInvariant >= 0, "maxPerInvariant must not be negative")
        self.maxPerInvariant = maxPerInvariant
        self.ringDepth = ringDepth
    }

    /// How many times `invariant` was broken.
    public func count(of invariant: InvariantID) -> Int { counts[InvariantID.index(invariant)] }
    /// The invariants broken at least once, by name.
    public var broken: [InvariantID] { InvariantID.allCases.filter { count(of: $0) > 0 }.sorted() }

    public mutating func begin(_ facts: WorldFacts) {
        self.facts = facts
        devices = TruthTable(repeating: DeviceTruth(), count: facts.deviceCount)   // this checker's own
        let hits = coverageHits
        coverageHits = TruthTable(repeating: 0, count: hits.count)
        for i in 0..<hits.count { coverageHits[i] = hits[i] }
        server = ServerTruth(facts: facts)
        hasBegun = true
        deviceGenuine = facts.deviceGenuine
        deviceApp = facts.deviceApp
        keyNames = facts.setup.keyNames
        rings = DeviceRings(devices: facts.deviceCount, depth: ringDepth)
        timeoutMs = facts.setup.sdk.requestTimeoutMs
        statement = facts.sdkStatement
        obligations = Obligations()
        owedResets = []
        heldListed = []
        serverDownUntil = 0
        serverErrorsUntil = 0
        lastRestartAt = LocalData.never
        restartAwayUntil = 0
        offlineUntil = Array(repeating: 0, count: facts.deviceCount)
        portalUntil = []
        ledgers = [:]
        notRollupCheckAt = [:]
        notRollup403 = [:]
        storageLatencyMs = SimTime(facts.setup.sdk.storageLatencyMaxMs)
        expiry = []
        parked = []
        kills = []
        truthBeforeReset = nil
        // The truth remembers one stop of 30 days besides the current one: enough while an
        // answer cannot outlive two such stops in flight (scenarios allow timeouts up to 1 h).
        precondition(timeoutMs < DeviceTruth.longStopMs, "a request timeout of 30 days or more is not supported by the checkers")
        // The truth at the start: each install's key, library, and whether access is
        // already stopped (an app of an account not yet approved).
        for i in 0..<facts.deviceCount {
            let app = Int(facts.deviceApp[i])
            devices[i].key = app < facts.setup.apps.count ? facts.setup.apps[app].initialKey : 0
            devices[i].photoCount = i < facts.devicePhotos.count ? facts.devicePhotos[i] : 0
            retruth(DeviceIndex(i), at: 0)
        }
        nextKeyDeadline = .max
        nextDeadline = .max
    }

    /// Follows the truth of S2 for device `d` at `t`: opens or closes its stop (D5).
    @usableFromInline mutating func retruth(_ d: DeviceIndex, at t: SimTime) {
        let i = Int(d)
        let refused = server.refused(key: devices[i].key, device: d, genuine: deviceGenuine[i],
                                     credentialGeneration: devices[i].disk.credentialGeneration, now: t)
        devices[i].follow(refused: refused, at: t)
    }

    /// Follows the truth of every device at `t` (after a dashboard or Rollup change).
    /// - Complexity: O(devices); dashboard changes are few.
    mutating func retruthAll(at t: SimTime) {
        for i in 0..<devices.count { retruth(DeviceIndex(i), at: t) }
    }

    /// Deadlines up to `now` have passed: from each grace deadline on, its key is invalid
    /// (S3); each liveness deadline passed is judged (D7, D10), in time order.
    @usableFromInline @inline(never) mutating func passDeadlines() {
        while true {
            let liveness = obligations.earliest == .max ? SimTime.max : obligations.earliest &+ 1
            if nextKeyDeadline <= now, nextKeyDeadline <= liveness {
                let t = nextKeyDeadline
                server.noteServable(at: t)
                retruthAll(at: t)
                nextKeyDeadline = server.nextDeadline(after: t)
            } else if liveness <= now, let due = obligations.popDue(by: liveness - 1) {
                judgeObligation(due)
            } else {
                break
            }
        }
        resetNextDeadline()
    }

    /// `nextDeadline` after a change of the key deadlines or the obligations.
    mutating func resetNextDeadline() {
        let liveness = obligations.earliest == .max ? SimTime.max : obligations.earliest &+ 1
        nextDeadline = min(nextKeyDeadline, liveness)
    }

    /// Checks one record: notes its time, keeps it in its device's ring, and hands it to
    /// its handler in `Checks/`. Inlined into the engine's trace calls, where the record's
    /// case is known, so the `switch` of `dispatch` folds away and each call site makes one
    /// direct call of its handler, with no routing left to pay per record.
    @inlinable @inline(__always)
    public mutating func observe(_ r: TraceRecord) {
        now = r.time
        if now >= nextDeadline { passDeadlines() }
        if ringDepth > 0 { rings.push(r) }   // with no rings kept, not even the call
        dispatch(r)
    }

    /// Hands a record to its handler. Every record of a run comes through here; inlined
    /// where the case is known it is one call. Where it is not (a recorded trace replayed):
    /// - the `switch` only picks the case, and each case reads its own fields from the
    ///   record (`if case`): binding them in the `switch` made the compiler gather the
    ///   payload bytes of every case before dispatching, on every record;
    /// - the handlers are functions of their own (`@inline(never)`), even the one-liners,
    ///   so the inlined copies stay small;
    /// - `served` takes the whole record: its fields are more than fit in registers.
    @inlinable @inline(__always)
    mutating func dispatch(_ r: TraceRecord) {
        let d = r.device
        if d == Event.world {
            if case .dashboard(let action, _) = r.event { dashboard(action) }
            else if case .fault(let f) = r.event { serverFault(f) }
            return
        }
        switch r.event {
        case .input:
            if case .input(let input) = r.event { beginStep(d, .lifecycle(input)) }
        case .delivered:
            if case .delivered(let id, let kind, let answer, let viaTimer, let sentAt, let servedAt, let stoppedSince) = r.event {
                delivered(d, id: id, kind: kind, answer: answer, viaTimer: viaTimer, sentAt: sentAt,
                          servedAt: servedAt, stoppedSince: stoppedSince)
            }
        case .timerFired:
            if case .timerFired(let kind, _) = r.event { beginStep(d, .timer(kind)) }
        case .stepEnd: endStep(d)
        case .unsettled: stepUnsettled(d)
        case .carries:
            if case .carries(let report) = r.event { carries(d, report) }
        case .served: served(d, r)
        case .holds:
            if case .holds(let generation) = r.event { holds(d, generation) }
        case .processStarted: processStarted(d)
        case .processKilled: processKilled(d)
        case .person:
            // Only the Photos permission, the library and the key change the truth: most
            // person records (opens, closes, background runs) skip the call.
            if case .person(let action, let arg) = r.event,
               action == .revokePhotos || action == .grantPhotos || action == .addPhotos || action == .update {
                person(d, action, arg: arg)
            }
        case .forgotDevice: forgotDevice(d)
        case .requestSent:
            if case .requestSent(let id, let kind, let key, let credential) = r.event {
                requestSent(d, id: id, kind: kind, key: key, credential: credential)
            }
        case .store:
            if case .store(let op) = r.event { store(d, op) }
        case .state:
            if case .state(let s) = r.event { stateReported(d, s) }
        case .callResult:
            if case .callResult(let call, let outcome) = r.event { callResult(d, call, outcome) }
        case .runStarted:
            if case .runStarted(let bg) = r.event { runStarted(d, background: bg) }
        case .runEnded: runEnded(d)
        case .fault:
            if case .fault(let f) = r.event { fault(d, f) }
        case .droppedForDeadProcess, .backgroundRunSkipped, .dashboard, .probe: break
        }
    }

    /// A copy with truth tables and rings of its own: the tables are written in place, so a
    /// plain copy would share them with this checker (`SimWorld.fork()`).
    public func forked() -> InvariantChecker {
        var copy = self
        copy.devices = devices.copied()
        copy.coverageHits = coverageHits.copied()
        copy.rings.makeUnique()
        return copy
    }

    public mutating func finish(at time: SimTime) {
        now = time
        if now >= nextDeadline { passDeadlines() }
        // An episode still open at the end is judged as it stands, unless the run ended
        // while the storage wait that keeps it open may still be out (within the scenario's
        // `storage latency` of its latest step): what the SDK does when the wait returns
        // is part of its reaction, and the run cut it short.
        while let p = parked.popLast() {
            if storageLatencyMs > 0, now <= p.parkedAt + storageLatencyMs { continue }
            step = p
            step.continues = false
            endStep(p.device)
        }
        // D7: a reset still owed at the end is judged on the time counted so far.
        for k in owedResets.indices.reversed() { refreshOwedReset(k) }
    }

    /// Records a violation of `invariant` on `device`; keeps the first few with context.
    mutating func violate(_ invariant: InvariantID, _ device: DeviceIndex, _ message: String) {
        let i = InvariantID.index(invariant)
        counts[i] += 1
        guard counts[i] <= maxPerInvariant else { return }
        let name = facts?.deviceName(device) ?? "device \(device)"
        violations.append(Violation(invariant: invariant, time: now, device: device, deviceName: name,
                                    message: message, lastEvents: rings.last(of: device)))
    }

    @inline(__always) mutating func hit(_ c: Coverage) { coverageHits[c.rawValue] &+= 1 }
}

extension InvariantID {
    @inline(__always) static func index(_ id: InvariantID) -> Int { positions[id]! }
    private static let positions: [InvariantID: Int] = Dictionary(uniqueKeysWithValues: allCases.enumerated().map { ($1, $0) })
}
