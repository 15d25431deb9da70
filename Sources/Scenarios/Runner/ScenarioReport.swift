import SimKit

/// The text report of `simkit run`: a block per scenario, then a one-line summary.
public enum ScenarioReport {
    /// `PASS name (file)` or `FAIL name (file)`, and for a failure every reason, indented.
    public static func block(_ o: ScenarioOutcome) -> String {
        let title = o.name.isEmpty ? "(untitled)" : o.name
        switch o.verdict {
        case .passed:
            return "PASS \(title) (\(o.file))\n"
        case .badInput:
            return "ERROR \(o.file)\n" + indent(o.errors)
        case .failed:
            var s = "FAIL \(title) (\(o.file)) seed \(o.seed)\n"
            for v in o.unexpectedViolations {
                s += "  unexpected violation \(v.headline)\n"
                s += FailureStory(v).wrapped(indent: "    ")
                s += "    last events:\n"
                for r in v.lastEvents { s += "      " + TraceText.line(r, facts: o.facts) + "\n" }
            }
            for id in o.unexpected where !o.unexpectedViolations.contains(where: { $0.invariant == id }) {
                s += "  unexpected violation [\(id.rawValue)] (\(id.rules))\n"
            }
            for e in o.failedExpectations { s += "  failed \(e.message)\n" }
            for e in o.unjudgedExpectations { s += "  failed \(e)\n" }
            for m in o.missingViolations { s += "  expected violation \(m) did not happen\n" }
            if o.stoppedByBudget { s += "  note: the run stopped early: \(o.stopReason ?? "the event budget was reached")\n" }
            return s
        }
    }

    /// `N scenarios: P passed, F failed` (and `, E bad input` when any).
    public static func summary(_ outcomes: [ScenarioOutcome]) -> String {
        let passed = outcomes.filter { $0.verdict == .passed }.count
        let failed = outcomes.filter { $0.verdict == .failed }.count
        let bad = outcomes.count - passed - failed
        var s = "\(outcomes.count) scenario\(outcomes.count == 1 ? "" : "s"): \(passed) passed, \(failed) failed"
        if bad > 0 { s += ", \(bad) bad input" }
        return s
    }

    /// Every block, then the summary.
    public static func text(_ outcomes: [ScenarioOutcome]) -> String {
        outcomes.map(block).joined() + summary(outcomes) + "\n"
    }

    static func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.isEmpty }.map { "  " + $0 + "\n" }.joined()
    }
}
