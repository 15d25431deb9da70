import SimKit
#if canImport(Glibc)
import Glibc
#endif

/// What the world asks of an app process, besides answers and timers (the services take
/// those): the inputs an async SDK's adapter turns into calls of the SDK's async API.
public enum DeviceEvent: Sendable, Equatable {
    /// A cold start: the app calls `configure` (`inBackground`: the OS launched it for a background run).
    case launch(inBackground: Bool)
    case becameActive, wentToBackground
    /// The OS fires the background task the SDK scheduled (`SimBackgroundTasks`).
    case backgroundRun
    /// The app calls `search`, `query` or `profile`.
    case call(APICall)
    /// The app calls `reset()`.
    case reset
}

/// An async SDK as a team wires it to SimKit: made once per app process over that
/// process's `SimDevice` (the SDK's own protocols mapped onto the device's services), it
/// turns each `DeviceEvent` into a call of the SDK's real async API and reports the call's
/// outcome (`device.finished`). The SDK itself never imports SimKit.
public protocol AsyncSDKHarness: AnyObject, Sendable {
    /// A fresh app process on `device`, before `configure`.
    init(device: SimDevice)
    /// Calls the SDK for `event`; returns when the SDK's call returns.
    func handle(_ event: DeviceEvent) async
    /// The app process ends (killed, relaunched, or its world ended): end what the SDK and
    /// its libraries hold that SimKit cannot see, so that nothing of the process stays in
    /// memory or keeps a file open across a campaign of thousands of processes. Finish the
    /// streams its pipelines wait on, invalidate its URLSessions, cancel the tasks it keeps.
    /// Called once per process, after the device died (its services throw
    /// `CancellationError`, and the tasks that awaited them are cancelled); what it does
    /// reaches no world. The default does nothing.
    func tearDown() async
    /// For an SDK that keeps its own files on `device.files` (`SimDisk`): what the
    /// checkers need to know, read from them (docs/observation.md, "Storage in the SDK's
    /// own shape"). Read-only; SimKit calls it after every write and traces what changed.
    /// The default, nil: the SDK writes through `device.write(StoreOp)` instead.
    static func observe(_ disk: SimDiskContents) -> DiskObservation?
    /// For such an SDK, optional: writes `credential` into its files where the SDK keeps its
    /// device credential, as a clone that copied a genuine install's storage holds it
    /// (SPEC S6), and returns true. The default returns false: the clone gets the key alone.
    static func place(_ credential: Credential, in disk: inout SimDiskContents) -> Bool
    /// What the SDK states where SPEC lets it choose within a limit (its back-offs, D7 and
    /// D10; whether it keeps `lockedSince`), as its README says. The default: SPEC's limits.
    static var statement: SDKStatement { get }
    /// Whether each `device.write(StoreOp)` is one durable write of the SDK's, which a kill
    /// may land between, even inside one step (P1). True for an SDK that writes each change
    /// on its own (AsyncSDK's Rollup); the default, false, for one whose one save shows as
    /// several operations in a row (its own files seen through `observe`): a kill then
    /// lands between saves, never inside one (P1: one write is atomic).
    static var storeOpsAreWrites: Bool { get }
}

extension AsyncSDKHarness {
    public func tearDown() async {}
    public static func observe(_ disk: SimDiskContents) -> DiskObservation? { nil }
    public static func place(_ credential: Credential, in disk: inout SimDiskContents) -> Bool { false }
    public static var storeOpsAreWrites: Bool { false }
    public static var statement: SDKStatement { .specLimits }
}

/// An async SDK as a SimKit core. Each world input is handed to the SDK's real async code,
/// which then runs on SimKit's loop (`SimLoop`) until no job is runnable: every task is
/// suspended on a simulated request or sleep, or done. What it asked for (requests,
/// timers, writes, states, call results) is the step's effects.
///
/// Bounds and verdicts (each is the seed's verdict, see `AsyncVerdict`): a clock read or a
/// sleep that is not the injected `SimClock` (`escape-unsimulated-clock`); work handed to
/// another thread, or a job enqueued from one (`escape-foreign-thread`); more than
/// `Bounds.jobsPerStep` jobs in one step (`step-never-settles`); an input whose call has
/// not returned while the device waits for nothing simulated (`call-never-returns`). An
/// escape is judged before what it leads to.
///
/// A core is one app process and cannot be copied once it has run: its suspended tasks
/// cannot be duplicated (`simkit explore` forks worlds; it refuses async cores).
public struct AsyncCore<Harness: AsyncSDKHarness>: SDKCore, RunsOnSimLoop {
    /// The process: its device and the harness over it.
    final class Box: SimProcess, @unchecked Sendable {
        var harness: Harness?
        override func takeHarness() -> (any AsyncSDKHarness)? {
            defer { harness = nil }
            return harness
        }
        deinit { end("the process's end") }
    }

    var box: Box?

    public init() {}

    /// A new world: the last one ends (its processes' `tearDown`, if nothing judged it
    /// yet), and its verdict and any job it left runnable are dropped, so nothing of a
    /// failed world runs into the next.
    public static func worldBegins() { SimLoop.shared.worldBegins() }

    /// The verdict the world ended with (`AsyncVerdict`), the seed's one broken name. Asked
    /// at the world's end, it ends the world first: every process still running ends
    /// (`tearDown`), and the work the world handed to other threads is waited for, within
    /// `Bounds.handOffWaitMs`, so that what comes back is judged with this seed.
    public static var verdict: SDKVerdict? {
        SimLoop.shared.endWorld()
        return SimLoop.shared.verdict
    }

    /// The host delivers answers when they arrive, late ones too, and needs to know which
    /// will never arrive (`call-never-returns`).
    public static var hearsLostAnswers: Bool { true }

    /// The harness says whether each store operation is a write of its own
    /// (`AsyncSDKHarness.storeOpsAreWrites`); if not, a kill at a write lands between runs
    /// of them, never inside one (P1: one write is atomic).
    public static var storeOpsAreWrites: Bool { Harness.storeOpsAreWrites }

    /// A harness that maps its own files (`observe`) is handed a clone's copied credential
    /// only if it can place one in them (`place`): the world writes none it would never see.
    public static var takesCopiedCredentials: Bool {
        var probe = SimDiskContents()
        return Harness.observe(probe) == nil || Harness.place(Credential(device: 0, generation: 1), in: &probe)
    }

    /// The harness's statement of its SDK's own bounds.
    public static var statement: SDKStatement { Harness.statement }

    public mutating func answerLost(id: UInt32) {
        box?.device.answerLost(id)
    }

    /// P1: the SDK's files go back to what they held before the write the kill landed at.
    public mutating func killed(atEffect effect: Int) {
        box?.device.undoWrites(fromEffect: effect)
    }

    public mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                                effects: inout EffectBuffer) {
        // After a verdict the world's SDK does nothing more: the verdict is the seed's.
        if SimLoop.shared.verdict != nil { return }
        if box == nil {
            box = Box()
            box!.device.diskMapping = { Harness.observe($0) }
        }
        guard isKnownUniquelyReferenced(&box!) else {
            AsyncVerdict.refuse("an async SDK core was copied (SimWorld.fork, as `simkit explore` does): its suspended tasks cannot be copied; use fuzz, run, replay or shrink")
        }
        let box = self.box!
        let device = box.device
        let loop = SimLoop.shared
        loop.steps &+= 1
        device.begin(now: now, context: context, config: config, disk: disk)
        ClockInterposer.virtualNowMs = now
        AsyncVerdict.checkEscapes(device: device, input: "before \(AsyncVerdict.name(input))")
        var end = SimLoop.DrainEnd.settled(jobs: 0)
        loop.asOwner {
            if box.harness == nil { box.harness = Harness(device: device) }
            let harness = box.harness!
            switch input {
            case .response(let id, _, let reply): device.deliver(reply, to: id)
            case .timer(.requestTimeout, let arg):
                // The trace's timeout of a request still awaited: the SDK's own timeout,
                // a sleep due now, runs in this step (its answer may still come, late).
                if device.requestTimedOut(arg >> 3) { device.wakeDue(byWake: false) }
            case .timer: device.wakeDue()
            case .launch(let bg):
                device.placeCopiedCredential(disk.credential) { Harness.place($0, in: &$1) }
                Self.start(.launch(inBackground: bg), harness, device)
            case .becameActive: Self.start(.becameActive, harness, device)
            case .wentToBackground: Self.start(.wentToBackground, harness, device)
            case .backgroundRun: Self.start(.backgroundRun, harness, device)
            case .backgroundExpiring: device.backgroundTasks.expire()   // BGTask's expirationHandler (P5); none set: killed after the grace
            case .call(let call): Self.start(.call(call), harness, device)
            case .reset: Self.start(.reset, harness, device)
            }
            ClockInterposer.trapping = AsyncVerdict.trapClockReads
            loop.inStep = true
            loop.pickSeed = loop.pickSeedOverride ?? (config.jobPickSeed == 0 ? nil : UInt64(config.jobPickSeed))
            if let seed = loop.pickSeed { loop.pickState = seed ^ UInt64(context.device) &* 0xD6E8_FEB8_6659_FD93 ^ now }
            end = loop.drain(maxJobs: Bounds.jobsPerStep)
            loop.inStep = false
            ClockInterposer.trapping = false
        }
        // Verdicts in order of cause: an escape first (a sleep on a foreign clock that runs
        // at once makes a library's loop spin; work on another thread leaves a call waiting).
        AsyncVerdict.checkEscapes(device: device, input: AsyncVerdict.name(input))
        if case .exceeded(let bound) = end {
            AsyncVerdict.fail(.stepNeverSettles, device: device, input: AsyncVerdict.name(input),
                              "more than \(bound) jobs ran and some were still runnable (a task that spins, keeps yielding or retries without waiting)")
        }
        if loop.verdict == nil, device.openInputs > 0, !device.awaitsSomething {
            // Nothing simulated can resume what is still running: either another thread
            // will (an escape that was not seen where it was made, which usually arrives
            // within microseconds), or nothing will.
            var waited = 0
            while loop.pendingForeign == 0, waited < Bounds.foreignGraceMs { usleep(1000); waited += 1 }
            AsyncVerdict.checkEscapes(device: device, input: AsyncVerdict.name(input))
            AsyncVerdict.fail(.callNeverReturns, device: device, input: AsyncVerdict.name(input),
                              "\(device.openInputs) call(s) of the SDK have not returned, and the device awaits no sleep and no request whose answer may still come"
                              + (device.pending.isEmpty ? "" : " (the network lost the answers to the \(device.pending.count) it awaits, and nothing times them out)")
                              + ": nothing in the simulation can resume them")
        }
        device.armWake()
        // A caller still waits for its storage: what it does when the wait returns is part
        // of this step's reaction (D3's "at once", D5's deletion), judged with the steps to come.
        if device.storageWaitsOpen > 0, !device.dead { device.effects.append(.unsettled) }
        for e in device.effects { effects.append(e) }
        device.effects.removeAll(keepingCapacity: true)
    }

    static func start(_ event: DeviceEvent, _ harness: Harness, _ device: SimDevice) {
        device.openInputs += 1
        Task {
            await harness.handle(event)
            device.openInputs -= 1
        }
    }
}

/// A core whose worlds must run on SimKit's one-thread loop, one at a time.
protocol RunsOnSimLoop {}

/// The bounds every step of an async core keeps.
package enum Bounds {
    /// Executor jobs one step may run before its verdict is `step-never-settles`; a
    /// process's end has the same bound.
    package nonisolated(unsafe) static var jobsPerStep = 100_000
    /// How long a stuck step waits for a foreign thread's enqueue before `call-never-returns`.
    package nonisolated(unsafe) static var foreignGraceMs = 200
    /// How long a world's end waits for the work it handed to other threads (`HandOff`).
    package nonisolated(unsafe) static var handOffWaitMs = 1_000
}

/// Writes to standard error, unbuffered.
func printError(_ s: String) {
    var s = s
    s.withUTF8 { b in _ = write(2, b.baseAddress, b.count) }
}
