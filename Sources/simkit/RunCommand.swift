import Foundation
import Scenarios
import Invariants

/// `simkit run FILE…`: runs scenario files and prints a PASS/FAIL report.
enum RunCommand {
    static let help = """
    usage: simkit run [--quiet] [--sdk reference|mutant:NAME] [--seed N] FILE|DIR...

    Runs scenario files (SPEC §4). A directory stands for every *.scenario file inside
    it, sorted by path. Every invariant is checked in every run; a scenario passes when
    every 'expect' holds and the invariants broken are exactly its 'expect violation' lines.

    Prints 'PASS name (file)' or 'FAIL name (file)' per scenario, with each unexpected
    violation and the device's last events, each failed expectation and each expected
    violation that did not happen; then 'N scenarios: P passed, F failed'.

    With two or more files, progress goes to standard error: a redrawn line on a
    terminal, a plain line after the first file and then every 5 s elsewhere.

    options:
      --quiet           print the summary line only (and no progress)
      --sdk CORE        run 'reference' or 'mutant:NAME' instead of the files' sdk line
      --seed N          use seed N instead of the files' seed line

    exit codes: 0 every scenario passed, 1 a scenario failed, 2 bad input (an
    unreadable file, parse or validation errors: nothing is run)

    """

    static func run(_ argv: [String]) throws -> Int32 {
        let a = try Arguments(argv, switches: ["quiet"], options: ["sdk", "seed"])
        if a.has("help") { print(help, terminator: ""); return 0 }
        var runner = ScenarioRunner(sdk: try sdkChoice(a.string("sdk")))
        if a.string("seed") != nil { runner.seed = try a.uint("seed", default: 0) }
        let files = try ScenarioFiles.expand(a.positionals)

        // Every file is read and validated before anything runs.
        var scenarios: [(file: String, scenario: ScenarioFile)] = []
        var bad = false
        for file in files {
            guard let bytes = ScenarioFiles.read(file) else {
                printError("simkit run: error: cannot read '\(file)'"); bad = true; continue
            }
            let parsed = ScenarioParser.parse(bytes: bytes, file: file, context: runner.context)
            if !parsed.diagnostics.isEmpty { FileHandle.standardError.write(Data(parsed.rendered.utf8)) }
            if let s = parsed.scenario, !parsed.hasErrors { scenarios.append((file, s)) } else { bad = true }
        }
        if bad { return 2 }

        var outcomes: [ScenarioOutcome] = []
        // Progress on standard error (after the first file, then every 5 s off a terminal),
        // and each report flushed at once, so a CI log shows a long run as it goes.
        var progress = ProgressLine(label: "run", noun: "file", total: scenarios.count, quiet: a.has("quiet") || scenarios.count < 2)
        let started = monotonicSeconds()
        for (file, scenario) in scenarios {
            let outcome = runner.run(scenario: scenario, file: file)
            if outcome.verdict == .badInput {
                progress.clear()
                printError(outcome.errors)
                return 2
            }
            progress.clear()
            if !a.has("quiet") { FileHandle.standardOutput.write(Data(ScenarioReport.block(outcome).utf8)) }
            outcomes.append(outcome)
            progress.update(done: outcomes.count, failures: outcomes.filter { !$0.passed }.count, started: started)
        }
        progress.clear()
        print(ScenarioReport.summary(outcomes))
        return outcomes.allSatisfy(\.passed) ? 0 : 1
    }

    /// `reference` or `mutant:NAME`; nil when the flag is absent.
    static func sdkChoice(_ text: String?) throws -> SDKChoice? {
        guard let text else { return nil }
        if text == "reference" { return .reference }
        if text.hasPrefix("mutant:") {
            let name = String(text.dropFirst("mutant:".count))
            guard Mutants.named(name) != nil else {
                let hint = nearest(name, in: Mutants.names).map { "; did you mean 'mutant:\($0)'?" } ?? ""
                throw UsageError("unknown mutant '\(name)'\(hint)")
            }
            return .mutant(name)
        }
        throw UsageError("'--sdk' expects 'reference' or 'mutant:NAME', got '\(text)'")
    }
}
