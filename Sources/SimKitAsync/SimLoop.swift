// The one place SimKitAsync touches the `_Concurrency` SPI. If this file stops compiling,
// the toolchain changed the custom-executor SPI: see docs/async.md ("The SPI risk").
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
import Synchronization
import SimKit
#if canImport(Glibc)
import Glibc
#endif

/// SimKit's run loop for Swift concurrency: every job of the process (tasks, actors,
/// `async let`, task groups, detached tasks, the main actor, `Task.yield`) is enqueued
/// here and run on one thread, the simulation's, in FIFO order, only while a step drains
/// it (`drain(maxJobs:)`). Nothing runs between steps, so a step ends exactly when no job
/// is runnable: every task is suspended on a simulated service (the network, the clock)
/// or is done.
///
/// A job enqueued from another thread (a continuation resumed from a Dispatch queue or a
/// `Thread`) is an escape: it is kept aside, never run, and counted for the step to report.
/// A sleep on a clock that is not SimKit's (`Task.sleep(for:)` on `ContinuousClock`)
/// arrives at `enqueue(_:at:tolerance:clock:)`: an escape too (the job runs at once, so
/// nothing hangs, and the step reports it).
///
/// determinism: one queue, one thread; the order is the order of enqueues on that thread.
package final class SimLoop: @unchecked Sendable {
    package static let shared = SimLoop()

    /// The thread that is draining now (`pthread_self` bits), 0 when none.
    let owner = Atomic<UInt>(0)
    /// Jobs ready to run, in order; `isMain` jobs run on the main executor.
    var ready: [(job: UnownedJob, isMain: Bool)] = []
    var head = 0
    /// Jobs from foreign threads, kept aside (never run), and what they were.
    let foreign = Mutex<[String]>([])
    let foreignCount = Atomic<Int>(0)
    /// Sleeps on an unsimulated clock, by clock type.
    var unsimulatedSleeps: [String] = []
    /// Jobs run since the process started.
    package private(set) var jobsRun: UInt64 = 0
    /// Steps of async cores (world inputs handed to an async SDK) since the process started.
    package internal(set) var steps: UInt64 = 0
    /// The verdict of the world running now, if it failed (`AsyncCore.verdict`).
    package internal(set) var verdict: SDKVerdict?
    /// Jobs dropped, never run: runnable at a world's end, with its processes dead, still
    /// after `Bounds.jobsPerStep` more (tasks that spin even cancelled).
    package private(set) var jobsAbandoned: UInt64 = 0

    /// Whether a step of an async core is draining now: a clock read, a foreign sleep or a
    /// hand-off to another thread is then the SDK's escape.
    package var inStep = false
    /// Set when an escape is recorded during a step: the drain stops after the job that
    /// made it, so the escape is the step's verdict, never what it leads to (a task that
    /// spins on a frozen foreign clock, a call that never returns).
    var escapeSeen = false
    /// Jobs set aside, never run in a step: those left runnable when a world got its
    /// verdict, and those enqueued from other threads (`handedBack`). They run at the
    /// world's end (`SimLoop.endWorld`), once every process of it is dead, so that their
    /// tasks end (and free what they hold) instead of waiting forever.
    var parked: [(job: UnownedJob, isMain: Bool)] = []
    let handedBack = Mutex<[(job: UnownedJob, isMain: Bool)]>([])
    /// Jobs from other threads set aside and run at a world's end so far (`handedBack`).
    package private(set) var jobsHandedBack: UInt64 = 0

    /// The processes of async cores made so far, and those that may be alive, by serial
    /// (`SimProcess`); the world's end ends them.
    var processesMade: UInt64 = 0
    /// The files of each device of the world running now (`SimDisk`), by device: a disk
    /// outlives the app process; a new world starts with empty disks.
    var disks: [DeviceIndex: DiskSlot] = [:]
    var live: [UInt64: WeakProcess] = [:]
    /// Worlds begun so far, and whether the one running now has ended (`endWorld`).
    package internal(set) var worldsBegun: UInt64 = 0
    var worldEnded = false
    /// Worlds that ended with work handed to another thread still running after the wait.
    package internal(set) var handOffsStillOut: UInt64 = 0

    /// Sets every runnable job aside (`parked`): none runs in a step again.
    func parkReady() {
        if head < ready.count { parked.append(contentsOf: ready[head...]) }
        ready.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Runs the parked and handed-back jobs, with the world's processes dead, within
    /// `Bounds.jobsPerStep`; what is still runnable after that is dropped for good.
    /// Returns whether any ran.
    func runSetAside() -> Bool {
        let back = handedBack.withLock { list -> [(job: UnownedJob, isMain: Bool)] in let l = list; list.removeAll(); return l }
        guard !parked.isEmpty || !back.isEmpty else { return false }
        jobsHandedBack &+= UInt64(back.count)
        asOwner {
            ready.append(contentsOf: parked)
            ready.append(contentsOf: back)
            parked.removeAll()
            if case .exceeded = drain(maxJobs: Bounds.jobsPerStep) {
                jobsAbandoned &+= UInt64(ready.count - head)
                ready.removeAll(keepingCapacity: true)
                head = 0
            }
        }
        return true
    }

    /// Whether `SimKitExecutors` were installed in this process.
    package internal(set) var installed = false

    let main = SimMainExecutor()
    let task = SimTaskExecutor()

    static var currentThread: UInt { UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))) }

    /// Whether the calling thread is draining the loop now.
    package var isDrainingOnThisThread: Bool { owner.load(ordering: .relaxed) == SimLoop.currentThread }

    func push(_ job: UnownedJob, isMain: Bool) {
        if owner.load(ordering: .relaxed) == SimLoop.currentThread {
            ready.append((job, isMain))
        } else if HandOff.mark != 0 {
            // Work that a world handed off (followed: `HandOff`), coming back: already that
            // world's escape when a step made it, and never a later world's. Set aside.
            handedBack.withLock { $0.append((job, isMain)) }
        } else {
            handedBack.withLock { $0.append((job, isMain)) }
            // No thread's name or timing in the text: a verdict reads the same on a rerun.
            let what = "a job for the \(isMain ? "main actor" : "global executor") enqueued from another thread that no hand-off seen in a step explains (work started outside a step, or through a call the host does not interpose); noticed here, it may come from an earlier step"
            foreign.withLock { if $0.count < 16 { $0.append(what) } }
            foreignCount.add(1, ordering: .relaxed)
        }
    }

    /// How a drain ended.
    package enum DrainEnd: Equatable, Sendable {
        /// No job is runnable: every task is suspended or done.
        case settled(jobs: Int)
        /// The bound was reached with jobs still runnable (a task that spins or keeps yielding).
        case exceeded(bound: Int)
        /// A job escaped (`escapeSeen`): the drain stopped after it.
        case escaped(jobs: Int)
    }

    /// Nil: ready jobs run in FIFO order. A seed: each step picks the next job among the
    /// ready ones with a generator seeded from this seed and the step (`pickState`), the
    /// main actor's jobs keeping their order: another interleaving per seed, the same one
    /// on every rerun. Set at each step from the world's `SDKConfig.jobPickSeed` (the
    /// scenario's `schedule` line), unless the run overrides it (`pickSeedOverride`).
    package var pickSeed: UInt64?
    /// The run's own pick seed (`SIMKIT_ASYNC_PICK_SEED`), which wins over every script's
    /// `schedule` line: to try one seed's script under other interleavings by hand.
    package var pickSeedOverride: UInt64?
    /// The generator's state for the step being drained (set by the caller from the step).
    package var pickState: UInt64 = 0

    /// Picks made among two or more ready jobs (an interleaving FIFO would not have chosen).
    package private(set) var picks: UInt64 = 0
    /// Waits for storage (`SimDevice.synchronize` under a `storage latency` line) and their
    /// drawn time in total, for `SIMKIT_ASYNC_STATS`: whether slow storage reached the SDK.
    package var storageWaits: UInt64 = 0
    package var storageWaitMs: UInt64 = 0

    func nextPick(_ bound: Int) -> Int {
        if bound > 1 { picks &+= 1 }
        // SplitMix64.
        pickState &+= 0x9E37_79B9_7F4A_7C15
        var z = pickState
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }

    /// Runs ready jobs on the calling thread until none is runnable or `maxJobs` ran.
    package func drain(maxJobs: Int) -> DrainEnd {
        let me = SimLoop.currentThread
        let previous = owner.exchange(me, ordering: .relaxed)
        precondition(previous == 0 || previous == me, "two threads drive SimKit's loop at once: run async cores with --jobs 1")
        defer { if previous == 0 { owner.store(0, ordering: .relaxed) } }
        var n = 0
        if pickSeed != nil {
            while head < ready.count {
                if n >= maxJobs { return .exceeded(bound: maxJobs) }
                var k = head + nextPick(ready.count - head)
                if ready[k].isMain, let m = ready[head...k].firstIndex(where: { $0.isMain }) { k = m }
                let (job, isMain) = ready.remove(at: k)
                n += 1
                jobsRun &+= 1
                if isMain { job.runSynchronously(on: main.asUnownedSerialExecutor()) }
                else { job.runSynchronously(on: task.asUnownedTaskExecutor()) }
                if escapeSeen, inStep { return .escaped(jobs: n) }
            }
            ready.removeAll(keepingCapacity: true)
            head = 0
            return .settled(jobs: n)
        }
        while head < ready.count {
            if n >= maxJobs { return .exceeded(bound: maxJobs) }
            let (job, isMain) = ready[head]
            head += 1
            n += 1
            jobsRun &+= 1
            if isMain { job.runSynchronously(on: main.asUnownedSerialExecutor()) }
            else { job.runSynchronously(on: task.asUnownedTaskExecutor()) }
            if escapeSeen, inStep { return .escaped(jobs: n) }
            if head > 1024, head * 2 > ready.count { ready.removeFirst(head); head = 0 }
        }
        ready.removeAll(keepingCapacity: true)
        head = 0
        return .settled(jobs: n)
    }

    /// Runs `body` as the loop's owner without draining (services that resume continuations).
    @discardableResult
    package func asOwner<R>(_ body: () throws -> R) rethrows -> R {
        let me = SimLoop.currentThread
        let previous = owner.exchange(me, ordering: .relaxed)
        defer { if previous == 0 { owner.store(0, ordering: .relaxed) } }
        return try body()
    }

    /// Escapes seen since the last call, in order of cause: hand-offs to other threads made
    /// during a step (`HandOff`, each named where it was made), sleeps on unsimulated clocks,
    /// then foreign enqueues (noticed when they arrive).
    package func takeEscapes() -> [Escape] {
        var out: [Escape] = []
        escapeSeen = false
        if let first = HandOff.escapes.first {
            out.append(Escape(kind: .foreignThread, detail: "the SDK handed work to another thread: \(first); it runs outside the simulation, and what it hands back would come at a time no seed decides"))
            HandOff.escapes.removeAll()
        }
        if foreignCount.load(ordering: .relaxed) > 0 {
            let what = foreign.withLock { list -> [String] in let l = list; list.removeAll(); return l }
            foreignCount.store(0, ordering: .relaxed)
            out.append(Escape(kind: .foreignThread, detail: what.first ?? "a job enqueued from a foreign thread"))
        }
        if !unsimulatedSleeps.isEmpty {
            out.append(Escape(kind: .unsimulatedClock, detail: "a sleep on \(unsimulatedSleeps[0]), not on the injected SimClock"))
            unsimulatedSleeps.removeAll()
        }
        return out
    }

    /// The number of foreign enqueues seen and not yet taken.
    package var pendingForeign: Int { foreignCount.load(ordering: .relaxed) }

    /// A sleep on `clock`, which is not SimKit's: the job runs at once. During a step it is
    /// the SDK's escape; elsewhere (a process's end) it only runs.
    func sleptOn<C: Clock>(_ clock: C) {
        guard inStep, isDrainingOnThisThread else { return }
        if unsimulatedSleeps.count < 4 { unsimulatedSleeps.append("\(C.self)") }
        escapeSeen = true
    }
}

/// The main actor's executor: jobs join the loop's one FIFO queue.
final class SimMainExecutor: MainExecutor, SchedulingExecutor, @unchecked Sendable {
    package func enqueue(_ job: consuming ExecutorJob) { SimLoop.shared.push(UnownedJob(job), isMain: true) }
    package func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        SimLoop.shared.sleptOn(clock)
        SimLoop.shared.push(UnownedJob(job), isMain: true)
    }
    package func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
        SimLoop.shared.sleptOn(clock)
        SimLoop.shared.push(UnownedJob(job), isMain: true)
    }
    package var isMainExecutor: Bool { true }
    package func checkIsolated() {
        if !SimLoop.shared.isDrainingOnThisThread { fatalError("simkit-async: main-actor code ran off the simulation thread") }
    }
    package func run() throws {
        _ = SimLoop.shared.drain(maxJobs: .max)
    }
    package func stop() {}
}

/// The global (default) executor: jobs join the same queue.
final class SimTaskExecutor: TaskExecutor, SchedulingExecutor, @unchecked Sendable {
    package func enqueue(_ job: consuming ExecutorJob) { SimLoop.shared.push(UnownedJob(job), isMain: false) }
    package func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        SimLoop.shared.sleptOn(clock)
        SimLoop.shared.push(UnownedJob(job), isMain: false)
    }
    package func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
        SimLoop.shared.sleptOn(clock)
        SimLoop.shared.push(UnownedJob(job), isMain: false)
    }
    package var isMainExecutor: Bool { false }
}

/// What `_createExecutors(factory:)` installs.
enum SimExecutorFactory: ExecutorFactory {
    static var mainExecutor: any MainExecutor { SimLoop.shared.main }
    static var defaultExecutor: any TaskExecutor { SimLoop.shared.task }
}

/// SimKit's executors for this process.
package enum SimKitExecutors {
    /// Installs SimKit's executors; must run before any async code in the process.
    /// Returns whether jobs now reach SimKit's loop (a probe task is enqueued and run).
    package static func install() -> Bool {
        _createExecutors(factory: SimExecutorFactory.self)
        let loop = SimLoop.shared
        let before = loop.jobsRun
        final class Flag: @unchecked Sendable { var ran = false }
        let flag = Flag()
        loop.asOwner { Task { flag.ran = true } }
        _ = loop.drain(maxJobs: 100)
        let ok = loop.jobsRun > before && flag.ran && loop.pendingForeign == 0
        loop.installed = ok
        return ok
    }
}

/// Something that left SimKit's control.
package struct Escape: Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable {
        /// A job enqueued from a thread that is not the simulation's (Dispatch, `Thread`).
        case foreignThread = "escape-foreign-thread"
        /// A read of, or a sleep on, a clock that is not the injected `SimClock`.
        case unsimulatedClock = "escape-unsimulated-clock"
    }
    package var kind: Kind
    package var detail: String
    package var description: String { "\(kind.rawValue): \(detail)" }
}

extension String {
    var trimmingSuffixNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}
