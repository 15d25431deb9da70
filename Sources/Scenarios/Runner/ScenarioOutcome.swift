import Invariants
import SimKit

/// The result of running one scenario file.
public struct ScenarioOutcome: Sendable {
    /// Pass, fail, or a file that could not be run.
    public enum Verdict: String, Sendable, Equatable {
        case passed, failed
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
    /// True when the run hit the event budget before its end.
    public var stoppedByBudget = false
    /// Why the run stopped early, in words.
    public var stopReason: String?
    /// The world's facts, to name devices in reports.
    public var facts: WorldFacts?

    /// An outcome with nothing run yet; the runner fills in the rest.
    public init(name: String, file: String, verdict: Verdict, errors: String = "") {
        self.name = name; self.file = file; self.verdict = verdict; self.errors = errors
    }

    /// True when the scenario passed.
    public var passed: Bool { verdict == .passed }
}
