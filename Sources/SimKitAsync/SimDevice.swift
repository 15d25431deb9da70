import SimKit

/// One simulated app process's services, for an async SDK: the network, the clock, the
/// disk, the OS's background task scheduling, the Photos library and App Attest, and the
/// app around the SDK (its state and its calls' results). Every call records what SimKit
/// must do as an `Effect`, in order; the adapter hands them to the engine when the step
/// settles. Calls that wait (a request, a sleep) suspend on a continuation that a later
/// step resumes: the world's answer, its timeout, or a timer firing.
///
/// determinism: used only on the simulation thread, inside a step (`AsyncCore.handle`);
/// its tables are looked up by key, never iterated into effects except `sleepers`, an
/// array kept in (deadline, order of sleeping) order.
public final class SimDevice: @unchecked Sendable {
    /// The world's virtual time, ms since the start.
    public private(set) var now: SimTime = 0
    /// The world's settings (the request timeout, D9, among them).
    public private(set) var config = SDKConfig()
    public private(set) var index: DeviceIndex = 0
    /// The device's disk as SimKit handed it this step, with this step's writes applied.
    public private(set) var disk = LocalData()
    /// Photos: the library's size and the person's permission.
    public private(set) var photoCount: UInt32 = 0
    public private(set) var photosAllowed = false
    /// The clock to inject into the SDK.
    public var clock: SimClock { SimClock(device: self) }
    /// The phone's wall clock's offset from the true time, ms, as SimKit handed it this step
    /// (SPEC P2: a `clock` fault moves it; 0 otherwise).
    public private(set) var wallClockOffsetMs: Int64 = 0
    /// The phone's disk is full in this step (SPEC P3, `SDKContext.diskFull`): `write`
    /// refuses a change that takes room, and `files` throws `SimDiskError.full` on a write.
    public private(set) var diskFull = false
    /// The phone restarted and the person has not unlocked it yet (SPEC P4,
    /// `SDKContext.dataLocked`): the SDK's protected data cannot be read or written. `files`
    /// throws `SimDiskError.locked`; `write` refuses every change but the background task's
    /// (the OS's); `disk` holds what is there, which an SDK must not read meanwhile (an
    /// adapter over `disk` says so to its SDK, as AsyncSDK's `SimStore.isReadable` does).
    public private(set) var dataLocked = false
    /// The wall-clock port (`Date()` in the app): what the phone's calendar reads, which the
    /// person may set back or forward; `clock` (elapsed time) never moves with it.
    public var wallClock: SimWallClock { SimWallClock(device: self) }
    /// The OS's background task scheduler for this app.
    public let backgroundTasks = SimBackgroundTasks()
    /// The disk as named files, for an SDK that keeps its own (one state blob, files, a
    /// key-value store): SimKit sees them through the harness's mapping (`AsyncSDKHarness.observe`).
    public private(set) lazy var files = SimDisk(device: self)
    /// The harness's read-only mapping of `files` (`AsyncSDKHarness.observe`).
    var diskMapping: ((SimDiskContents) -> DiskObservation?)?

    var effects: [Effect] = []
    /// This step's writes through `files` that the checkers saw (`observeDisk`), for a kill
    /// that lands at one of them (`undoWrites`).
    var diskJournal: [JournalEntry] = []
    /// The process died: nothing it does reaches the world any more.
    var dead = false

    struct Pending {
        var kind: RequestKind
        var sentAt: SimTime
        var continuation: UnsafeContinuation<ServerReply, any Error>
        /// The network lost the answer: it will never arrive (`SDKCore.answerLost`).
        var lost = false
    }
    var pending: [UInt32: Pending] = [:]
    var nextID: UInt32 = 1

    struct Sleeper { var deadline: SimTime; var order: UInt64; var continuation: UnsafeContinuation<Void, any Error> }
    /// Sleeping tasks, in (deadline, order) order.
    var sleepers: [Sleeper] = []
    var sleepOrder: UInt64 = 0
    var cancelledBeforeSleeping: Set<UInt64> = []
    /// The wake-up SimKit has armed for the earliest sleeper (an `indexChunk` timer).
    var armedWake: SimTime?
    /// Input tasks (API calls, lifecycle handlers) not yet returned.
    var openInputs = 0
    /// How many times this process waited for its storage (`synchronize`): each wait draws its own time.
    var storageWaits: UInt64 = 0
    /// Storage waits begun and not yet returned: a step that ends with one open ends
    /// `unsettled`, so the checkers judge it with the device's steps until the wait returns.
    var storageWaitsOpen = 0

    init() { backgroundTasks.device = self }

    func begin(now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData) {
        self.now = now; self.config = config; self.disk = disk
        index = context.device; photoCount = context.photoCount; photosAllowed = context.photosAllowed
        wallClockOffsetMs = context.wallClockOffsetMs
        diskFull = context.diskFull
        dataLocked = context.dataLocked
        diskJournal.removeAll(keepingCapacity: true)
    }

    // MARK: The network

    /// Sends a request of `kind` with `credential` (the engine adds the app's key and the
    /// App Attest assertion) and suspends until the network delivers its answer: a verdict,
    /// a 5xx or the device offline, when the world says it arrives, also after the request's
    /// timeout (`config.requestTimeoutMs`, D9) has passed. The network's fate for a request
    /// is an answer that arrives at some time, or none (lost): the timeout is the SDK's to
    /// apply, by racing its own sleep on the injected clock against this call, and a late
    /// answer is one the SDK must ignore (D9). The trace records the timeout all the same,
    /// at `sentAt + requestTimeoutMs`, and the SDK's own sleep due then wakes in that step.
    /// Cancelling the calling task abandons the request (`CancellationError`); its answer is
    /// then ignored. The process's end cancels it too. A call awaiting only answers the
    /// network lost, and no sleep, is stuck: `call-never-returns`.
    public func send(_ kind: RequestKind, credential: Credential) async throws -> ServerReply {
        if dead { throw await Self.calledAfterDeath() }
        try Task.checkCancellation()
        let id = nextID
        nextID = nextID >= (1 << 28) ? 1 : nextID + 1
        effects.append(.send(id: id, kind: kind, credential: credential))
        effects.append(.setTimer(.requestTimeout, at: now &+ config.requestTimeoutMs, arg: id << 3 | UInt32(kind.rawValue)))
        let sentAt = now
        do {
            return try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { c in pending[id] = Pending(kind: kind, sentAt: sentAt, continuation: c) }
            } onCancel: {
                self.abandon(id)
            }
        } catch {
            throw dead ? Self.processDied() : error
        }
    }

    func abandon(_ id: UInt32) {
        pending.removeValue(forKey: id)?.continuation.resume(throwing: CancellationError())
    }

    /// The answer to `id` arrives, in time or late: whoever still awaits it gets it.
    func deliver(_ reply: ServerReply, to id: UInt32) {
        guard let p = pending.removeValue(forKey: id) else { return }   // abandoned, or from before a cancel
        p.continuation.resume(returning: reply)
    }

    /// The world's timeout of `id` fires (the trace's `delivered … timedOut`, at the timeout
    /// the SDK states, D9). The request stays awaited (its answer may still come, late);
    /// whether it was still awaited, in which case the SDK's own timeout, due now, runs in
    /// this step.
    func requestTimedOut(_ id: UInt32) -> Bool {
        pending[id] != nil
    }

    /// The network lost the answer to `id`.
    func answerLost(_ id: UInt32) {
        pending[id]?.lost = true
    }

    /// Whether something simulated may still resume a waiting task: a request whose answer
    /// may still come, or a sleep.
    var awaitsSomething: Bool {
        !sleepers.isEmpty || pending.values.contains { !$0.lost }
    }

    /// Requests awaited now.
    public var requestsInFlight: Int { pending.count }

    // MARK: The clock

    func sleep(until deadline: SimTime) async throws {
        if dead { throw await Self.calledAfterDeath() }
        try Task.checkCancellation()
        if deadline <= now { await Task.yield(); return }
        sleepOrder &+= 1
        let order = sleepOrder
        do {
            try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { (c: UnsafeContinuation<Void, any Error>) in
                    if cancelledBeforeSleeping.remove(order) != nil { return c.resume(throwing: CancellationError()) }
                    let s = Sleeper(deadline: deadline, order: order, continuation: c)
                    var lo = 0, hi = sleepers.count
                    while lo < hi { let mid = (lo + hi) / 2; if sleepers[mid].deadline <= deadline { lo = mid + 1 } else { hi = mid } }
                    sleepers.insert(s, at: lo)
                }
            } onCancel: {
                self.cancelSleep(order)
            }
        } catch {
            throw dead ? Self.processDied() : error
        }
    }

    func cancelSleep(_ order: UInt64) {
        if let i = sleepers.firstIndex(where: { $0.order == order }) {
            sleepers.remove(at: i).continuation.resume(throwing: CancellationError())
        } else if cancelledBeforeSleeping.count < 1024 {
            cancelledBeforeSleeping.insert(order)
        }
    }

    /// Wakes every sleeper due by now, earliest first. `byWake`: SimKit's wake-up fired
    /// (it is no longer armed); otherwise another input of this step found sleepers due.
    func wakeDue(byWake: Bool = true) {
        if byWake { armedWake = nil }
        var k = 0
        while k < sleepers.count, sleepers[k].deadline <= now { k += 1 }
        let due = sleepers[0..<k]
        sleepers.removeFirst(k)
        for s in due { s.continuation.resume() }
    }

    /// Arms (or moves, or cancels) SimKit's wake-up for the earliest sleeper.
    func armWake() {
        let earliest = sleepers.first?.deadline
        guard earliest != armedWake else { return }
        if let earliest { effects.append(.setTimer(.indexChunk, at: earliest, arg: 0)) } else { effects.append(.cancelTimer(.indexChunk)) }
        armedWake = earliest
    }

    // MARK: The disk

    /// Writes one change to the device's disk, durably (SimKit traces it); false when a full
    /// disk refused it (P3, `StoreOp.takesRoom`) or the protected data is locked (P4, every
    /// change but the background task's): the old value stays, SimKit traces the write as
    /// failed, and the SDK must not count it as done.
    @discardableResult
    public func write(_ op: StoreOp) -> Bool {
        guard !dead else { return false }
        effects.append(.store(op))
        if diskFull, op.takesRoom { return false }
        if dataLocked, op != .scheduleBackground, op != .cancelBackground { return false }
        disk.apply(op)
        return true
    }

    /// Waits until the storage is done with the writes made so far (`fsync`, or an async
    /// store's write returning): a time drawn up to the scenario's `storage latency`
    /// (`SDKConfig.storageLatencyMaxMs`; none: returns at once, without suspending). The
    /// writes themselves are durable when made (`write`, traced in their step, where a kill
    /// may land after them); only the caller waits. Meanwhile the world's next inputs (an
    /// answer, a timer, an activation, a call) reach the SDK: an actor method that writes,
    /// awaits this, then acts meets them there (issue 46, part 2). The time is a function
    /// of the device, the step's time and the count of such waits in this process.
    public func synchronize() async {
        let maxMs = SimTime(config.storageLatencyMaxMs)
        guard maxMs > 0, !dead else { return }
        storageWaits &+= 1
        // SimKit's split-mix over the device, the time and the wait's count (the step's own
        // increment taken back, so the key itself is mixed): the same on every rerun.
        let key = UInt64(index) &* 0xD6E8_FEB8_6659_FD93 ^ now &* 0xA076_1D64_78BD_642F ^ storageWaits &* 0x9E37_79B9_7F4A_7C15
        var state = key &- 0x9E37_79B9_7F4A_7C15
        let ms = SimRandom.splitMix(&state) % (maxMs + 1)
        SimLoop.shared.storageWaits &+= 1
        SimLoop.shared.storageWaitMs &+= ms
        storageWaitsOpen += 1
        try? await sleep(until: now &+ ms)   // a death or a cancel ends the wait: the writes stay done
        storageWaitsOpen -= 1
    }

    // MARK: The app around the SDK

    /// The state the SDK reports to its app.
    public func publish(_ state: SDKState) { if !dead { effects.append(.state(state)) } }
    /// An API call returned (or threw).
    public func finished(_ call: APICall, _ outcome: CallOutcome) { if !dead { effects.append(.callResult(call, outcome)) } }
    public func indexingStarted(background: Bool) { if !dead { effects.append(.runStarted(background: background)) } }
    public func indexingEnded() { if !dead { effects.append(.runEnded) } }

    // MARK: App Attest

    /// An assertion for the next request. The engine attests every request itself (a clone
    /// fails, S6); this is what the SDK's App Attest call returns under simulation.
    public func appAttestAssertion() -> [UInt8] { withUnsafeBytes(of: index.littleEndian) { Array($0) } }

    // MARK: Death

    /// The error a service of a dead process throws, after cancelling the calling task: a
    /// task of a dead process is cancelled for real (`Task.isCancelled` is true from then
    /// on, its child tasks are cancelled too, and every later sleep or request throws at
    /// once), so a correct loop that retries after a failed await ends instead of spinning.
    static func processDied() -> CancellationError {
        withUnsafeCurrentTask { $0?.cancel() }
        return CancellationError()
    }

    /// `processDied()` for a service called after the process died: the task also yields
    /// first, so a loop that ignores its cancellation and calls again at once still goes
    /// through the loop's queue, where `Bounds.jobsPerStep` stops it (`step-never-settles`
    /// at the process's end), instead of spinning inside one job for ever.
    static func calledAfterDeath() async -> CancellationError {
        let error = processDied()
        await Task.yield()
        return error
    }

    /// Whether the process died (its services throw `CancellationError`).
    public var isDead: Bool { dead }

    /// The process died: every waiting task ends with `CancellationError` and is cancelled
    /// (`processDied`), so nothing it left waiting on SimKit stays in memory, and nothing
    /// it does from now reaches the world.
    func kill() {
        dead = true
        let waiting = pending.values.map(\.continuation)
        pending.removeAll()
        let sleeping = sleepers.map(\.continuation)
        sleepers.removeAll()
        for c in waiting { c.resume(throwing: CancellationError()) }
        for c in sleeping { c.resume(throwing: CancellationError()) }
        backgroundTasks.handler = nil
        backgroundTasks.expirationHandler = nil
    }
}

/// The OS's background task scheduling (BGTaskScheduler): the SDK registers a handler and
/// schedules or cancels its task; SimKit's world fires it (`background` in a scenario).
public final class SimBackgroundTasks: @unchecked Sendable {
    var handler: (@Sendable () async -> Void)?
    /// What the OS calls when the running task's time is up (BGTask's `expirationHandler`,
    /// SPEC P5): set by the task's handler for its run (which goes on after the handler
    /// returns, as a BGTask does until it is completed), cleared when a run is fired. The OS kills the process a few seconds later unless the SDK's run
    /// has ended by then (`background-limit`, docs/semantics.md).
    public var expirationHandler: (@Sendable () -> Void)?
    weak var device: SimDevice?
    init() {}
    /// Registers what runs when the OS fires the task (at launch, as BGTaskScheduler wants).
    public func register(_ handler: @escaping @Sendable () async -> Void) { self.handler = handler }
    /// Whether the task is scheduled (it survives the app process: it is on the disk).
    public var isScheduled: Bool { device?.disk.backgroundScheduled ?? false }
    public func schedule() { device?.write(.scheduleBackground) }
    public func cancel() { device?.write(.cancelBackground) }
    /// Runs the registered handler, if any; returns whether there was one.
    public func fire() async -> Bool {
        guard let handler else { return false }
        expirationHandler = nil
        await handler()
        return true
    }
    /// The OS says the running task's time is up: calls its expiration handler, if it set one.
    func expire() {
        guard let expiring = expirationHandler else { return }
        expirationHandler = nil
        expiring()
    }
}
