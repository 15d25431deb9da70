import Testing
import SimKit
import Invariants

/// A tiny language for writing traces by hand and feeding them to an `InvariantChecker`:
///
///     var t = HandTrace(.oneApp())
///     t.processStarted(at: 0)
///     t.step(at: 0, .input(.launch)) { $0.state(.idle); $0.sent(1, .register) }
///     t.served(at: 100, 1, .register, .ok, issued: cred(0, 1))
///     t.delivered(at: 200, 1, .register, .ok, sentAt: 0) { $0.store(.setCredential(cred(0, 1))) }
///
/// Every SDK step is `[input | delivered | timerFired] effects… stepEnd`, as the engine
/// traces it; the other records (served, dashboard, person, process) stand alone.
struct HandTrace {
    var checker = InvariantChecker()
    let setup: WorldSetup
    /// What the hand-written server said of each request (`served`), so `delivered` passes
    /// on its `servedAt` and `stoppedSince` as the engine does (S2).
    var replies: [UInt64: (servedAt: SimTime, stoppedSince: SimTime)] = [:]
    /// The hand-kept start of the current stop (set by a dashboard action that stops the
    /// app, cleared by one that lifts it): the default `stoppedSince` of a lock error.
    var stopAt: SimTime?

    init(_ setup: WorldSetup) {
        self.setup = setup
        checker.begin(WorldFacts(setup: setup))
    }

    /// How a step starts: a lifecycle input, an answer reaching the SDK, or a timer.
    enum Start {
        case input(LifecycleInput)
        case delivered(UInt32, RequestKind, Answer, sentAt: SimTime)
        /// The SDK's own timeout of request `id` (traced as a `delivered` via the timer).
        case timeout(UInt32, RequestKind)
        case timer(TimerKind)
    }

    /// The effects of one step, in order.
    struct Effects {
        let device: DeviceIndex
        var events: [TraceEvent] = []
        mutating func sent(_ id: UInt32, _ kind: RequestKind, key: KeyID = 0, credential: Credential = .none) {
            events.append(.requestSent(id: id, kind: kind, key: key, credential: credential))
        }
        mutating func store(_ ops: StoreOp...) { events += ops.map { .store($0) } }
        mutating func state(_ s: SDKState) { events.append(.state(s)) }
        mutating func runStarted(background: Bool = false) { events.append(.runStarted(background: background)) }
        mutating func runEnded() { events.append(.runEnded) }
        mutating func call(_ c: APICall, _ outcome: CallOutcome) { events.append(.callResult(c, outcome)) }
        /// The SDK's lock effects of D3 (lockedSince at `since`).
        mutating func lock(since: SimTime) {
            store(.setLockedSince(since), .lock, .cancelBackground)
            state(.locked)
        }
        /// The purge of D5, for a device holding everything.
        mutating func purge() {
            store(.deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .markPurged)
            state(.purged)
        }
    }

    mutating func record(_ time: SimTime, _ device: DeviceIndex, _ event: TraceEvent) {
        checker.observe(TraceRecord(time: time, device: device, event: event))
    }

    /// One SDK step: its first record, its effects, and `stepEnd`.
    mutating func step(at time: SimTime, device: DeviceIndex = 0, _ start: Start, _ body: (inout Effects) -> Void = { _ in }) {
        switch start {
        case .input(let input): record(time, device, .input(input))
        case .delivered(let id, let kind, let answer, let sentAt):
            let said: (servedAt: SimTime, stoppedSince: SimTime) = answer.isVerdict
                ? replies[UInt64(device) << 32 | UInt64(id)] ?? (time, ServerReply.none)
                : (ServerReply.none, ServerReply.none)
            record(time, device, .delivered(id: id, kind: kind, answer: answer, viaTimer: false, sentAt: sentAt,
                                            servedAt: said.servedAt, stoppedSince: said.stoppedSince))
        case .timeout(let id, let kind):
            record(time, device, .delivered(id: id, kind: kind, answer: .timedOut, viaTimer: true, sentAt: 0,
                                            servedAt: ServerReply.none, stoppedSince: ServerReply.none))
        case .timer(let kind): record(time, device, .timerFired(kind, arg: 0))
        }
        var effects = Effects(device: device)
        body(&effects)
        for e in effects.events { record(time, device, e) }
        record(time, device, .stepEnd)
    }

    /// The answer to request `id` reaches the SDK: a step of its own.
    mutating func delivered(at time: SimTime, device: DeviceIndex = 0, _ id: UInt32, _ kind: RequestKind, _ answer: Answer,
                            sentAt: SimTime, _ body: (inout Effects) -> Void = { _ in }) {
        step(at: time, device: device, .delivered(id, kind, answer, sentAt: sentAt), body)
    }

    /// The server answered request `id` (an answer the checker judges against S2).
    /// A verdict is dated `time`; a lock error carries `stoppedSince` (default: the hand-kept
    /// start of the stop, else `time`).
    mutating func served(at time: SimTime, device: DeviceIndex = 0, _ id: UInt32, _ kind: RequestKind, key: KeyID = 0,
                         credential: Credential = .none, _ answer: Answer, issued: Credential = .none, recordAfter: UInt32? = nil,
                         stoppedSince: SimTime? = nil) {
        let after = recordAfter ?? (issued.isNone ? credential.generation : issued.generation)
        let since = answer.isLockError ? stoppedSince ?? stopAt ?? time : ServerReply.none
        let reply = answer.isVerdict ? ServerReply(answer, credential: issued, servedAt: time, stoppedSince: since)
                                     : ServerReply(answer)
        replies[UInt64(device) << 32 | UInt64(id)] = (reply.servedAt, reply.stoppedSince)
        record(time, device, .served(id: id, kind: kind, key: key, credential: credential, reply: reply, recordAfter: after))
    }

    mutating func dashboard(at time: SimTime, _ action: DashboardAction) {
        switch action {
        case .disable, .rollupApp(.revoke, _), .rollupApp(.reject, _), .rollupAccount(.revoke, _), .rotate(_, _, nil):
            if stopAt == nil { stopAt = time }
        case .enable, .rollupApp(.restore, _), .rollupApp(.approve, _), .rollupAccount(.restore, _), .rollupAccount(.approve, _):
            stopAt = nil
        default: break
        }
        record(time, Event.world, .dashboard(action, applied: true))
    }
    mutating func person(at time: SimTime, device: DeviceIndex = 0, _ action: PersonAction, arg: UInt32 = 0) {
        record(time, device, .person(action, arg: arg))
    }
    mutating func processStarted(at time: SimTime, device: DeviceIndex = 0, background: Bool = false) {
        record(time, device, .processStarted(inBackground: background))
    }
    mutating func processKilled(at time: SimTime, device: DeviceIndex = 0) { record(time, device, .processKilled) }

    /// A check sent by a launch (a new process, so request ids start again at 1), answered
    /// by the server at +100 ms and delivered at +200 ms; `effects` are the SDK's reaction.
    mutating func launchAndCheck(at time: SimTime, device: DeviceIndex = 0, locked: Bool = false, key: KeyID = 0,
                                 _ answer: Answer, _ effects: (inout Effects) -> Void = { _ in }) {
        let c = cred(device, 1)
        processStarted(at: time, device: device)
        step(at: time, device: device, .input(.launch)) {
            $0.state(locked ? .locked : .idle)
            $0.sent(1, .check, key: key, credential: c)
        }
        served(at: time + 100, device: device, 1, .check, key: key, credential: c, answer)
        step(at: time + 200, device: device, .delivered(1, .check, answer, sentAt: time)) {
            if answer.isVerdict { $0.store(.setLastAnsweredCheck(time + 200)) }
            effects(&$0)
        }
    }

    /// The first launch of device `d` at 0, done by 11 s: registered with `cred(d, 1)`,
    /// models and place data downloaded, photos 0..<200 indexed, the run report uploaded.
    /// The process stays in the foreground; request ids 1…4 are used.
    mutating func ready(_ d: DeviceIndex = 0) {
        let c = cred(d, 1)
        processStarted(at: 0, device: d)
        step(at: 0, device: d, .input(.launch)) {
            $0.state(.idle); $0.store(.scheduleBackground)
            $0.runStarted(); $0.state(.indexing)
            $0.sent(1, .register)
        }
        served(at: 100, device: d, 1, .register, .ok, issued: c)
        delivered(at: 200, device: d, 1, .register, .ok, sentAt: 0) {
            $0.store(.setLastAnsweredCheck(200), .setCredential(c))
            $0.sent(2, .modelDownload, credential: c)
        }
        served(at: 300, device: d, 2, .modelDownload, credential: c, .ok)
        delivered(at: 400, device: d, 2, .modelDownload, .ok, sentAt: 200) {
            $0.store(.saveModels)
            $0.sent(3, .placeData, credential: c)
        }
        served(at: 500, device: d, 3, .placeData, credential: c, .ok)
        delivered(at: 600, device: d, 3, .placeData, .ok, sentAt: 400) { $0.store(.savePlaceData) }
        step(at: 10_600, device: d, .timer(.indexChunk)) {
            $0.store(.indexPhotos(from: 0, count: 200))
            $0.runEnded(); $0.store(.queueReport); $0.state(.idle)
            $0.sent(4, .runReport, credential: c)
        }
        served(at: 10_700, device: d, 4, .runReport, credential: c, .ok)
        delivered(at: 10_800, device: d, 4, .runReport, .ok, sentAt: 10_600) { $0.store(.reportsUploaded(1)) }
    }

    /// A background run of device 0 at `time`: its key check `checkID` is served 200 at
    /// +100 ms and delivered at +200 ms, the run ends there, queues its report and sends
    /// upload `checkID + 1` (answered by the caller).
    mutating func backgroundRunUploads(at time: SimTime, checkID: UInt32) {
        let c = cred(0, 1)
        step(at: time, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(checkID, .check, credential: c) }
        served(at: time + 100, checkID, .check, credential: c, .ok)
        delivered(at: time + 200, checkID, .check, .ok, sentAt: time) {
            $0.store(.setLastAnsweredCheck(time + 200)); $0.runEnded(); $0.store(.queueReport); $0.state(.idle)
            $0.sent(checkID + 1, .runReport, credential: c)
        }
    }

    /// A ready device 0 locked by a developer disable at 30 min: the launch at 1 h gets
    /// `app_disabled` at 1 h + 200 ms (lockedSince), and locks.
    mutating func readyThenLocked() {
        ready()
        dashboard(at: 30 * Ms.minute, .disable(app: 0))
        launchAndCheck(at: Ms.hour, .appDisabled) { $0.lock(since: Ms.hour + 200) }
    }

    var violations: [Violation] { checker.violations }
    var broken: [InvariantID] { checker.broken }
}

func cred(_ d: DeviceIndex, _ generation: UInt32) -> Credential { Credential(device: d, generation: generation) }

extension WorldSetup {
    /// One approved app `photos` with key A (keys B and C unissued), `devices` genuine
    /// installs, and `clones` clones after them.
    static func oneApp(devices: UInt32 = 1, clones: UInt32 = 0) -> WorldSetup {
        var groups: [GroupSpec] = []
        if devices > 0 { groups.append(GroupSpec(name: "photos", app: 0, count: devices)) }
        if clones > 0 { groups.append(GroupSpec(name: "clones", app: 0, count: clones, clones: true)) }
        return WorldSetup(seed: 1, durationMs: 60 * Ms.day, keyNames: ["rk_live_A", "rk_live_B", "rk_live_C"],
                          accounts: [AccountSpec(name: "acme")],
                          apps: [AppSpec(name: "photos", account: 0, initialKey: 0)], groups: groups)
    }

    /// Two apps of two accounts: `photos` (key A, device 0) and `other` (key B, device 1).
    static var twoApps: WorldSetup {
        WorldSetup(seed: 1, durationMs: 60 * Ms.day, keyNames: ["rk_live_A", "rk_live_B"],
                   accounts: [AccountSpec(name: "acme"), AccountSpec(name: "globex")],
                   apps: [AppSpec(name: "photos", account: 0, initialKey: 0), AppSpec(name: "other", account: 1, initialKey: 1)],
                   groups: [GroupSpec(name: "photos", app: 0, count: 1), GroupSpec(name: "other", app: 1, count: 1)])
    }
}

/// `invariant` fired, first on `device` at `time`, with a message naming every fact in
/// `mentions`; nothing fired but it and `also`.
func expectFires(_ t: HandTrace, _ invariant: InvariantID, device: DeviceIndex = 0, at time: SimTime,
                 mentions: [String], also: Set<InvariantID> = [], sourceLocation: SourceLocation = #_sourceLocation) {
    let mine = t.violations.filter { $0.invariant == invariant }
    guard let v = mine.first else {
        Issue.record("\(invariant.rawValue) did not fire; fired: \(t.violations.map(\.headline))", sourceLocation: sourceLocation)
        return
    }
    #expect(v.device == device, "fired on device \(v.device): \(v.headline)", sourceLocation: sourceLocation)
    #expect(v.time == time, "fired at \(DurationText.clock(v.time)), not \(DurationText.clock(time)): \(v.headline)", sourceLocation: sourceLocation)
    for fact in mentions {
        #expect(v.message.contains(fact), "the message does not mention \"\(fact)\": \(v.message)", sourceLocation: sourceLocation)
    }
    #expect(!v.lastEvents.isEmpty || device == Event.world, "the violation carries no context", sourceLocation: sourceLocation)
    let others = t.broken.filter { $0 != invariant && !also.contains($0) }
    #expect(others.isEmpty, "also fired: \(t.violations.filter { others.contains($0.invariant) }.map(\.headline))", sourceLocation: sourceLocation)
}

/// No invariant fired.
func expectQuiet(_ t: HandTrace, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(t.broken.isEmpty, "fired: \(t.violations.map(\.headline))", sourceLocation: sourceLocation)
}
