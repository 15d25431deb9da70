import ServerWire
import Invariants
import SimKit

/// The result of running one scenario file.
public struct ScenarioOutcome: Sendable {
    /// Pass, fail, a run that did not finish, or a file that could not be run.
    public enum Verdict: String, Sendable, Equatable {
        /// The run reached its duration, every expectation was judged and held, and the
        /// invariants broken are exactly those expected.
        case passed
        /// A failure was found: an unexpected violation, a failed expectation, or an
        /// expected violation that did not happen in a run that finished.
        case failed
        /// The run stopped early (`stop` says why) and found no failure before it did:
        /// part of the scenario was never tested, so it is not a pass.
        case incomplete
        /// Parse, validation or compile errors: nothing ran.
        case badInput
    }
    /// The scenario's title (may be empty).
    public var name: String
    /// The file it came from, as given.
    public var file: String
    public var verdict: Verdict
    /// For `badInput`: the rendered diagnostics or the compile error.
    public var errors: String = ""
    /// The seed the run used.
    public var seed: UInt64 = 0
    /// Every invariant the run broke.
    public var broken: [InvariantID] = []
    /// Invariants broken that the file did not expect.
    public var unexpected: [InvariantID] = []
    /// Every kept violation, expected or not, in the order found.
    public var violations: [Violation] = []
    /// The kept violations of the unexpected invariants, in the order found.
    public var unexpectedViolations: [Violation] = []
    /// `expect violation` names the run did not break.
    public var missingViolations: [String] = []
    /// Every timed expectation's verdict, in trace order.
    public var expectations: [ExpectationResult] = []
    /// The failed timed expectations.
    public var failedExpectations: [ExpectationResult] { expectations.filter { !$0.passed } }
    /// Probes that never fired (the expectation's time is past the run's end).
    public var unjudgedExpectations: [String] = []
    /// The trace fingerprint, `16 hex digits`.
    public var fingerprint: String = ""
    public var eventsHandled: UInt64 = 0
    /// Virtual time at which the run stopped.
    public var virtualDurationMs: SimTime = 0
    /// Why the run stopped before its end; nil when it reached its duration.
    public var stop: StopReason?
    /// True when the run stopped before its end (an event budget, the queue's or the memory bound).
    public var stoppedByBudget: Bool { stop != nil }
    /// Why the run stopped early, in words.
    public var stopReason: String? { stop?.description }
    /// The world's facts, to name devices in reports.
    public var facts: WorldFacts?
    /// With `ScenarioRunner.checkDeterminism`: where two runs of the scenario differed (the
    /// verdict is then `failed`: NONDETERMINISTIC).
    public var nondeterminism: Nondeterminism?
    /// Set when a core ended the run with a verdict of its own (`CoreFailure`): the server
    /// on the wire left the protocol (a reply out of it, no reply in time, the process
    /// gone), or an async SDK escaped its loop: the verdict, whatever the checkers found.
    public var coreFailure: CoreFailure?

    /// An outcome with nothing run yet; the runner fills in the rest.
    package init(name: String, file: String, verdict: Verdict, errors: String = "") {
        self.name = name; self.file = file; self.verdict = verdict; self.errors = errors
    }

    /// True when the scenario passed.
    public var passed: Bool { verdict == .passed }
}
