import SimKit
#if canImport(Glibc)
import Glibc
#endif

/// The verdicts of an async core that SimKit's invariants cannot give: what escaped the
/// loop, or a step that never settles. Each is the seed's one broken name
/// (`SDKCore.verdict`), with a report naming the device, its virtual time and the step;
/// the host prints it on standard error too (`simkit-async: FAIL …`).
package enum AsyncVerdict: String, Sendable {
    case foreignThread = "escape-foreign-thread"
    case unsimulatedClock = "escape-unsimulated-clock"
    case stepNeverSettles = "step-never-settles"
    case callNeverReturns = "call-never-returns"

    /// Whether clock reads during a step are caught (the host turns it on when it could
    /// interpose `clock_gettime`): they get the virtual time and, unless
    /// `SIMKIT_ASYNC_ALLOW_CLOCK=1`, are the verdict `escape-unsimulated-clock`.
    package nonisolated(unsafe) static var trapClockReads = false
    /// Called instead of printing (tests of the library).
    package nonisolated(unsafe) static var onVerdict: ((AsyncVerdict, String) -> Void)?

    static func name(_ input: SDKInput) -> String {
        switch input {
        case .launch(let bg): bg ? "launch in background" : "launch"
        case .becameActive: "became active"
        case .wentToBackground: "went to background"
        case .backgroundRun: "background run"
        case .backgroundExpiring: "background time up"
        case .call(let c): "\(c)"
        case .reset: "reset"
        case .response(let id, let kind, let reply): "the \(reply.answer) answer to its \(kind) request #\(id)"
        case .timer(let kind, _): kind == .requestTimeout ? "a request's timeout" : "a sleep's wake-up"
        }
    }

    /// Makes the escapes recorded since the last call the world's verdict (the first one
    /// stands), in order of cause: a clock read, a hand-off to another thread or a foreign
    /// sleep made in the step, then a foreign thread's enqueue, noticed when it arrived.
    static func checkEscapes(device: SimDevice?, input: String) {
        let reads = ClockInterposer.takeReads()
        if reads.count > 0 {
            fail(.unsimulatedClock, device: device, input: input,
                 "the SDK read the system clock \(reads.count) time(s) (clock_gettime clock \(reads.clock): Date(), ContinuousClock.now, DispatchTime.now()) instead of its injected SimClock")
        }
        for e in SimLoop.shared.takeEscapes() {
            fail(e.kind == .foreignThread ? .foreignThread : .unsimulatedClock, device: device, input: input, e.detail)
        }
    }

    static func fail(_ verdict: AsyncVerdict, device: SimDevice?, input: String, _ detail: String) {
        let loop = SimLoop.shared
        guard loop.verdict == nil else { return }   // the world's first verdict stands
        let report = device.map { "device \($0.index) at \(SimDuration.text($0.now)) (step: \(input)): \(detail)" } ?? "\(input): \(detail)"
        let text = "\(verdict.rawValue): \(report)"
        // The seed fails with it (SDKCore.verdict); the jobs still runnable are dropped, never run.
        loop.verdict = SDKVerdict(name: verdict.rawValue, report: report)
        loop.parkReady()
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
