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
}

/// An async SDK as a SimKit core. Each world input is handed to the SDK's real async code,
/// which then runs on SimKit's loop (`SimLoop`) until no job is runnable: every task is
/// suspended on a simulated request or sleep, or done. What it asked for (requests,
/// timers, writes, states, call results) is the step's effects.
///
/// Bounds and verdicts (each ends the run with a report on standard error and exit 1,
/// see `AsyncVerdict`): more than `Bounds.jobsPerStep` jobs in one step
/// (`step-never-settles`); an input whose call has not returned while the device waits
/// for nothing simulated (`call-never-returns`); a job enqueued from another thread
/// (`escape-foreign-thread`); a clock read or a sleep that is not the injected `SimClock`
/// (`escape-unsimulated-clock`).
///
/// A core is one app process and cannot be copied once it has run: its suspended tasks
/// cannot be duplicated (`simkit explore` forks worlds; it refuses async cores).
public struct AsyncCore<Harness: AsyncSDKHarness>: SDKCore, RunsOnSimLoop {
    final class Box: @unchecked Sendable {
        let device = SimDevice()
        var harness: Harness?
        deinit {
            let device = self.device
            SimLoop.shared.asOwner {
                device.kill()
                harness = nil
                if case .exceeded(let bound) = SimLoop.shared.drain(maxJobs: Bounds.jobsPerStep) {
                    AsyncVerdict.fail(.stepNeverSettles, device: device, input: "the process's end",
                                      "its tasks were still running after \(bound) jobs once the process died")
                    SimLoop.shared.abandonReady()   // never into the next step or world
                }
            }
            AsyncVerdict.checkEscapes(device: device, input: "the process's end")
        }
    }

    var box: Box?

    public init() {}

    /// A new world: the last one's verdict and any job it left runnable are dropped, so
    /// nothing of a failed world runs into the next.
    public static func worldBegins() {
        let loop = SimLoop.shared
        loop.verdict = nil
        loop.abandonReady()
        _ = loop.takeEscapes()
        _ = ClockInterposer.takeReads()
    }

    /// The verdict the world ended with (`AsyncVerdict`), the seed's one broken name.
    public static var verdict: SDKVerdict? { SimLoop.shared.verdict }

    public mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                                effects: inout EffectBuffer) {
        // After a verdict the world's SDK does nothing more: the verdict is the seed's.
        if SimLoop.shared.verdict != nil { return }
        if box == nil { box = Box() }
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
        loop.asOwner {
            if box.harness == nil { box.harness = Harness(device: device) }
            let harness = box.harness!
            switch input {
            case .response(let id, _, let reply): device.deliver(reply, to: id)
            case .timer(.requestTimeout, let arg): device.timedOut(arg >> 3)
            case .timer: device.wakeDue()
            case .launch(let bg): Self.start(.launch(inBackground: bg), harness, device)
            case .becameActive: Self.start(.becameActive, harness, device)
            case .wentToBackground: Self.start(.wentToBackground, harness, device)
            case .backgroundRun: Self.start(.backgroundRun, harness, device)
            case .call(let call): Self.start(.call(call), harness, device)
            case .reset: Self.start(.reset, harness, device)
            }
            ClockInterposer.trapping = AsyncVerdict.trapClockReads
            if let seed = loop.pickSeed { loop.pickState = seed ^ UInt64(context.device) &* 0xD6E8_FEB8_6659_FD93 ^ now }
            let end = loop.drain(maxJobs: Bounds.jobsPerStep)
            ClockInterposer.trapping = false
            if case .exceeded(let bound) = end {
                AsyncVerdict.fail(.stepNeverSettles, device: device, input: AsyncVerdict.name(input),
                                  "more than \(bound) jobs ran and some were still runnable (a task that spins, keeps yielding or retries without waiting)")
            }
        }
        AsyncVerdict.checkEscapes(device: device, input: AsyncVerdict.name(input))
        if device.openInputs > 0, device.pending.isEmpty, device.sleepers.isEmpty {
            // Nothing simulated can resume what is still running: either another thread
            // will (an escape, which usually arrives within microseconds), or nothing will.
            var waited = 0
            while loop.pendingForeign == 0, waited < Bounds.foreignGraceMs { usleep(1000); waited += 1 }
            AsyncVerdict.checkEscapes(device: device, input: AsyncVerdict.name(input))
            AsyncVerdict.fail(.callNeverReturns, device: device, input: AsyncVerdict.name(input),
                              "\(device.openInputs) call(s) of the SDK have not returned, and the device awaits no request and no sleep: nothing in the simulation can resume them")
        }
        device.armWake()
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
    /// Executor jobs one step may run before its verdict is `step-never-settles`.
    package nonisolated(unsafe) static var jobsPerStep = 100_000
    /// How long a stuck step waits for a foreign thread's enqueue before `call-never-returns`.
    package nonisolated(unsafe) static var foreignGraceMs = 200
}

/// Writes to standard error, unbuffered.
func printError(_ s: String) {
    var s = s
    s.withUTF8 { b in _ = write(2, b.baseAddress, b.count) }
}

/// The verdicts of an async core that SimKit's invariants cannot give: what escaped the
/// loop, or a step that never settles. Each stops the process with a report naming the
/// verdict, the device, its virtual time and the step, and exit status 1 (a failure found).
package enum AsyncVerdict: String, Sendable {
    case foreignThread = "escape-foreign-thread"
    case unsimulatedClock = "escape-unsimulated-clock"
    case stepNeverSettles = "step-never-settles"
    case callNeverReturns = "call-never-returns"

    /// Whether clock reads during a step are caught (the host turns it on when it could
    /// interpose `clock_gettime`): they get the virtual time and, unless
    /// `SIMKIT_ASYNC_ALLOW_CLOCK=1`, are the verdict `escape-unsimulated-clock`.
    package nonisolated(unsafe) static var trapClockReads = false
    /// Called instead of exiting (tests of the library); nil: report and exit 1.
    package nonisolated(unsafe) static var onVerdict: ((AsyncVerdict, String) -> Void)?

    static func name(_ input: SDKInput) -> String {
        switch input {
        case .launch(let bg): bg ? "launch in background" : "launch"
        case .becameActive: "became active"
        case .wentToBackground: "went to background"
        case .backgroundRun: "background run"
        case .call(let c): "\(c)"
        case .reset: "reset"
        case .response(let id, let kind, let reply): "the \(reply.answer) answer to its \(kind) request #\(id)"
        case .timer(let kind, _): kind == .requestTimeout ? "a request's timeout" : "a sleep's wake-up"
        }
    }

    static func checkEscapes(device: SimDevice, input: String) {
        let reads = ClockInterposer.takeReads()
        if reads.count > 0 {
            fail(.unsimulatedClock, device: device, input: input,
                 "the SDK read the system clock \(reads.count) time(s) (clock_gettime clock \(reads.clock): Date(), ContinuousClock.now, DispatchTime.now()) instead of its injected SimClock")
        }
        for e in SimLoop.shared.takeEscapes() {
            // A foreign enqueue is seen when it arrives: at this step, or the first step after
            // the one whose work escaped (the step may belong to another device).
            let noticed = e.kind == .foreignThread ? "; noticed here, it may come from an earlier step" : ""
            fail(e.kind == .foreignThread ? .foreignThread : .unsimulatedClock, device: device, input: input, e.detail + noticed)
        }
    }

    static func fail(_ verdict: AsyncVerdict, device: SimDevice, input: String, _ detail: String) {
        let loop = SimLoop.shared
        guard loop.verdict == nil else { return }   // the world's first verdict stands
        let report = "device \(device.index) at \(SimDuration.text(device.now)) (step: \(input)): \(detail)"
        let text = "\(verdict.rawValue): \(report)"
        // The seed fails with it (SDKCore.verdict); the jobs still runnable are dropped, never run.
        loop.verdict = SDKVerdict(name: verdict.rawValue, report: report)
        loop.abandonReady()
        if let onVerdict { return onVerdict(verdict, text) }
        printError("simkit-async: FAIL \(text)\n")
    }

    static func refuse(_ message: String) -> Never {
        printError("simkit-async: error: \(message)\n")
        exit(2)
    }
}

enum SimDuration {
    /// `1d2h3m4s5ms`, the scenario language's way.
    static func text(_ ms: SimTime) -> String {
        if ms == 0 { return "0s" }
        var rest = ms, out = ""
        for (unit, size) in [("d", SimTime(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)] where rest >= size {
            out += "\(rest / size)\(unit)"; rest %= size
        }
        return out
    }
}
