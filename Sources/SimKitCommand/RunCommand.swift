import Foundation
import SimKit
import ScenarioLanguage
import Scenarios
import Invariants

/// `simkit run FILE…`: runs scenario files and prints a PASS/FAIL report.
enum RunCommand {
    static let help = """
    usage: simkit run [--quiet] [--strict] [--sdk reference|mutant:NAME|custom:NAME] [--server S] [--seed N] [--max-memory BYTES]
                      [--check-determinism [--processes]] [--trace OUT] FILE|DIR...

    Runs scenario files (SPEC §4). A directory stands for every *.scenario file inside
    it, sorted by path. Every invariant is checked in every run; a scenario passes when
    every 'expect' holds and the invariants broken are exactly its 'expect violation' lines.

    Prints 'PASS name (file)' or 'FAIL name (file)' per scenario, with each unexpected
    violation and the device's last events, each failed expectation and each expected
    violation that did not happen; then 'N scenarios: P passed, F failed'.
    PASS means the run reached its duration and every expectation was judged. A run that
    stopped early without finding a failure prints 'INCOMPLETE name (file)' with why:
    the event budget, the queue's bound (a runaway schedule), or the memory bound.
    Warnings (a file with no devices, no actions or nothing expected; a statement that
    can never fire) go to standard error.

    With two or more files, progress goes to standard error: a redrawn line on a
    terminal, a plain line after the first file and then every 5 s elsewhere.

    options:
      --quiet           print the summary line only (and no progress)
      --strict          warnings are errors (exit 2, nothing is run)
      --sdk CORE        run 'reference', 'mutant:NAME' or 'custom:NAME' (an SDK core the
                        tool registers) instead of the files' sdk line
      --server S        run 'reference' or 'custom:NAME' (a server core the tool registers)
                        (or process:CMD, http://HOST:PORT: a server on the wire, docs/server-protocol.md)
                        instead of the files' server line
      --seed N          use seed N instead of the files' seed line
      --max-memory B    the memory a run may use, in bytes, or with a unit: 512M, 4G
                        (default 4G); a run that needs more stops, INCOMPLETE
      --check-determinism  run each scenario twice more in this process and compare
                        the traces record by record: a difference fails it,
                        NONDETERMINISTIC, with the first differing record, the records
                        that agreed and its cause (see 'simkit fuzz --help')
      --processes       with --check-determinism: also run each in a second simkit
                        process and compare the traces written as text
      --trace OUT       (one scenario only) also write its trace to OUT as text, one
                        record a line (compare two with 'simkit diff A.trace B.trace')

    exit codes: 0 every scenario passed, 1 a scenario failed (NONDETERMINISTIC too), 2 bad input (an
    unreadable or too large file, parse or validation errors: nothing is run),
    3 no failure but a run did not finish (INCOMPLETE)

    """

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        let a = try Arguments(argv, switches: ["quiet", "strict", "check-determinism", "processes"],
                              options: ["sdk", "server", "seed", "max-memory", "trace"])
        if a.has("help") { print(helpText(help, cores: cores), terminator: ""); return 0 }
        if a.has("processes"), !a.has("check-determinism") { throw UsageError("--processes needs --check-determinism") }
        var runner = ScenarioRunner(sdk: try sdkChoice(a.string("sdk"), cores: cores),
                                    server: try serverChoice(a.string("server"), cores: cores), cores: cores)
        runner.checkDeterminism = a.has("check-determinism")
        if a.string("seed") != nil { runner.seed = try a.uint("seed", default: 0) }
        if let text = a.string("max-memory") { runner.memoryBudgetBytes = try parseBytes(text, option: "--max-memory") }
        let files = try ScenarioFiles.expand(a.positionals)

        // Every file is read and validated before anything runs.
        guard let scenarios = readAll(files, context: runner.context, strict: a.has("strict")) else { return 2 }
        if a.string("trace") != nil, scenarios.count != 1 {
            throw UsageError("--trace writes one scenario's trace; \(plural(scenarios.count, "scenario")) given")
        }
        if let path = a.string("trace") { try checkWritableFile(path) }
        // The other process is this program again: say before anything runs when it cannot be.
        if a.has("processes") {
            for (file, scenario) in scenarios {
                if let refusal = crossProcessRefusal(sdk: runner.sdk ?? scenario.sdk, server: runner.server ?? scenario.server,
                                                     what: "\(file): --processes runs it again in another process") {
                    throw UsageError(refusal)
                }
            }
        }

        var outcomes: [ScenarioOutcome] = []
        // Progress on standard error (after the first file, then every 5 s off a terminal),
        // and each report flushed at once, so a CI log shows a long run as it goes.
        var progress = ProgressLine(label: "run", noun: "file", total: scenarios.count, quiet: a.has("quiet") || scenarios.count < 2)
        let started = monotonicSeconds()
        for (file, scenario) in scenarios {
            var outcome = runner.run(scenario: scenario, file: file)
            if outcome.verdict == .badInput {
                progress.clear()
                printError(outcome.errors)
                return 2
            }
            if a.has("processes") || a.string("trace") != nil {
                try traceAndCompare(&outcome, scenario, file: file, runner: runner, a)
            }
            progress.clear()
            if !a.has("quiet") { FileHandle.standardOutput.write(Data(ScenarioReport.block(outcome).utf8)) }
            outcomes.append(outcome)
            progress.update(done: outcomes.count, failures: outcomes.filter { !$0.passed }.count, started: started)
        }
        progress.clear()
        print(ScenarioReport.summary(outcomes))
        return exitCode(outcomes)
    }

    /// Reads, parses and validates every file, printing each one's diagnostics; nil when a
    /// file is unreadable or has errors (then nothing runs).
    static func readAll(_ files: [String], context: ValidationContext, strict: Bool) -> [(file: String, scenario: ScenarioFile)]? {
        var scenarios: [(file: String, scenario: ScenarioFile)] = []
        var bad = false
        for file in files {
            if let s = parseChecked(file, context: context, strict: strict) { scenarios.append((file, s)) } else { bad = true }
        }
        return bad ? nil : scenarios
    }

    /// Reads, parses and validates one file, printing its diagnostics; nil when it is
    /// unreadable or has errors (with `strict`, warnings count as errors).
    static func parseChecked(_ file: String, context: ValidationContext, strict: Bool) -> ScenarioFile? {
        let bytes: [UInt8]
        switch ScenarioFiles.read(file) {
        case .success(let b): bytes = b
        case .failure(let e): printError(e.message); return nil
        }
        var parsed = ScenarioParser.parse(bytes: bytes, file: file, context: context)
        if strict { parsed = parsed.strict() }
        if !parsed.diagnostics.isEmpty { FileHandle.standardError.write(Data(parsed.rendered.utf8)) }
        return parsed.hasErrors ? nil : parsed.scenario
    }

    /// For `--trace` and `--processes`: runs `scenario` again on the built-in runner,
    /// streaming its trace to the file, and compares it with a run in a second process
    /// (a difference makes `outcome` failed and nondeterministic).
    static func traceAndCompare(_ outcome: inout ScenarioOutcome, _ scenario: ScenarioFile, file: String,
                                runner: ScenarioRunner, _ a: Arguments) throws {
        let setup: WorldSetup
        do { setup = try ScenarioCompiler.compile(scenario, sdk: runner.sdk, seed: runner.seed).setup } catch { throw UsageError("\(error)") }
        var limited = setup
        if let budget = runner.eventBudget { limited.eventBudget = budget }
        limited.memoryBudgetBytes = runner.memoryBudgetBytes
        // The trace streams to its file (a big run's text never sits in memory); the
        // check across processes reads it back, or keeps a run's text when there is no file.
        let sdk = runner.sdk ?? scenario.sdk, server = runner.server ?? scenario.server
        if let path = a.string("trace") { try streamTrace(limited, sdk: sdk, server: server, cores: runner.cores, to: path) }
        if a.has("processes"), outcome.nondeterminism == nil {
            let text = try a.string("trace").flatMap { FileManager.default.contents(atPath: $0) }.map { String(decoding: $0, as: UTF8.self) }
                ?? CrossProcess.traceText(of: limited, sdk: sdk, server: server, cores: runner.cores)
            var child = ["run", "--quiet", "--max-memory", "\(runner.memoryBudgetBytes)"]
            if let sdk = a.string("sdk") { child += ["--sdk", sdk] }
            if let server = a.string("server") { child += ["--server", server] }
            if let seed = runner.seed { child += ["--seed", "\(seed)"] }
            outcome.nondeterminism = try CrossProcess.compare(
                own: text, childArguments: child + [file], core: CrossProcess.coreName(sdk: sdk, server: server, cores: runner.cores))
            if outcome.nondeterminism != nil { outcome.verdict = .failed }
        }
    }

    /// Runs `setup` once more on the cores `sdk` and `server` name (the reference, a mutant
    /// of it, or custom ones of `cores`) with a `TraceWriter` streaming to `path`.
    static func streamTrace(_ setup: WorldSetup, sdk: SDKChoice, server: ServerChoice, cores: SDKCores, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw UsageError("cannot write the trace to '\(path)'")
        }
        defer { try? handle.close() }
        let resolved: ResolvedCores
        do { resolved = try cores.resolve(sdk: sdk, server: server) } catch { throw UsageError("\(error)") }
        let writer = TraceWriter { handle.write(Data($0.utf8)) }
        if resolved.isReference {
            var world = World<ReferenceSDK, TraceWriter>(setup: setup, observer: writer)
            world.run()
        } else {
            _ = ReplayCommand.traced(resolved.sdk, resolved.server, setup, writer)
        }
    }

    /// 1 when a scenario failed, else 3 when one did not finish, else 0.
    static func exitCode(_ outcomes: [ScenarioOutcome]) -> Int32 {
        if outcomes.contains(where: { $0.verdict == .failed || $0.verdict == .badInput }) { return 1 }
        if outcomes.contains(where: { $0.verdict == .incomplete }) { return 3 }
        return 0
    }

    /// `4294967296`, `512M`, `4G` (binary units: K, M, G) as bytes; at least 1 MiB.
    static func parseBytes(_ text: String, option: String) throws -> UInt64 {
        let units: [Character: UInt64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(text), unit: UInt64 = 1
        if let last = text.last, let u = units[Character(last.uppercased())] { digits = text.dropLast(); unit = u }
        guard let n = UInt64(digits), case let (bytes, false) = n.multipliedReportingOverflow(by: unit), bytes >= 1 << 20 else {
            throw UsageError("'\(option)' expects a size of at least 1M such as 512M or 4G, got '\(text)'")
        }
        return bytes
    }

    /// `reference`, `mutant:NAME` or `custom:NAME` (a core of `cores`); nil when the flag is absent.
    static func sdkChoice(_ text: String?, cores: SDKCores = SDKCores()) throws -> SDKChoice? {
        guard let text else { return nil }
        if text.hasPrefix("custom:") { return try FuzzCommand.sdkChoice(text, cores: cores) }
        if text == "reference" { return .reference }
        if text.hasPrefix("mutant:") {
            let name = String(text.dropFirst("mutant:".count))
            guard Mutants.named(name) != nil else {
                let hint = nearest(name, in: Mutants.names).map { "; did you mean 'mutant:\($0)'?" } ?? ""
                throw UsageError("unknown mutant '\(name)'\(hint)")
            }
            return .mutant(name)
        }
        throw UsageError("'--sdk' expects 'reference' or 'mutant:NAME'\(cores.entries.isEmpty ? "" : " or 'custom:NAME'"), got '\(text)'")
    }
}
