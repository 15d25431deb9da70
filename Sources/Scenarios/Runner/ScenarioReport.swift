import SimKit

/// The text report of `simkit run`: a block per scenario, then a one-line summary.
package enum ScenarioReport {
    /// `PASS name (file)`, `FAIL name (file)` with every reason indented, or
    /// `INCOMPLETE name (file)` with why the run stopped early.
    package static func block(_ o: ScenarioOutcome) -> String {
        let title = o.name.isEmpty ? "(untitled)" : o.name
        switch o.verdict {
        case .passed:
            return "PASS \(title) (\(o.file))\n"
        case .badInput:
            return "ERROR \(o.file)\n" + indent(o.errors)
        case .incomplete:
            var s = "INCOMPLETE \(title) (\(o.file)) seed \(o.seed)\n"
            s += "  the run stopped early, at \(DurationText.format(o.virtualDurationMs)) of its duration: \(o.stopReason ?? "unknown")\n"
            s += "  no failure was found before it stopped, but the rest of the scenario was not tested\n"
            for e in o.unjudgedExpectations { s += "  not judged: \(e)\n" }
            for m in o.missingViolations { s += "  not reached: expected violation \(m)\n" }
            return s
        case .failed:
            var s = "FAIL \(title) (\(o.file)) seed \(o.seed)\n"
            if let n = o.nondeterminism { s += "  " + n.text(indent: "    ") }
            if let f = o.coreFailure { s += "  " + f.text.split(separator: "\n").joined(separator: "\n  ") + "\n" }
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
            if let reason = o.stopReason { s += "  note: the run stopped early: \(reason)\n" }
            return s
        }
    }

    /// `N scenarios: P passed, F failed` (and `, I incomplete`, `, E bad input` when any).
    package static func summary(_ outcomes: [ScenarioOutcome]) -> String {
        let passed = outcomes.filter { $0.verdict == .passed }.count
        let failed = outcomes.filter { $0.verdict == .failed }.count
        let incomplete = outcomes.filter { $0.verdict == .incomplete }.count
        let bad = outcomes.count - passed - failed - incomplete
        var s = "\(outcomes.count) scenario\(outcomes.count == 1 ? "" : "s"): \(passed) passed, \(failed) failed"
        if incomplete > 0 { s += ", \(incomplete) incomplete" }
        if bad > 0 { s += ", \(bad) bad input" }
        return s
    }

    /// Every block, then the summary.
    package static func text(_ outcomes: [ScenarioOutcome]) -> String {
        outcomes.map(block).joined() + summary(outcomes) + "\n"
    }

    static func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.isEmpty }.map { "  " + $0 + "\n" }.joined()
    }
}
