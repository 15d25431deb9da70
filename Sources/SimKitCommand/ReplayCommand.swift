import Foundation
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch

/// `simkit replay SEED`: the same fuzz run again, byte for byte.
enum ReplayCommand {
    static let help = """
    usage: simkit replay SEED [--sdk reference|mutant:NAME|custom:NAME] [--server S] [--devices N] [--duration D] [--print] [--trace FILE]
                              [--twice [--processes]]

    Generates the scenario of fuzz seed SEED exactly as 'simkit fuzz' did and runs it
    again with every invariant checked: the same trace, the same fingerprint. Pass the
    same --sdk, --server, --devices and --duration that the fuzz run used.

    options:
      --sdk S         reference (default), mutant:NAME or custom:NAME (an SDK core the
                      tool registers)
      --server S      reference (default) or custom:NAME, a server core the tool registers
                      (or process:CMD, http://HOST:PORT: a server on the wire, docs/server-protocol.md)
      --devices N     the fuzz run's --devices (default 40)
      --duration D    the fuzz run's --duration (default 90d)
      --print         print the seed's script as a .scenario file and do not run it
      --trace FILE    also stream every trace record to FILE as text, one line each
                      (compare two with 'simkit diff A.trace B.trace')
      --twice         the determinism guard: run the seed twice in this process and
                      compare the traces record by record; a difference is the verdict
                      NONDETERMINISTIC, with the first differing record, the records that
                      agreed before it, and its cause (see 'simkit fuzz --help')
      --processes     with --twice: also run it in a second simkit process and compare

    Exit: 0 no invariant broken and the run reached its end (or --print), 1 an
    invariant broken or NONDETERMINISTIC, 2 bad input, 3 nothing broken but the run
    stopped early.

    """

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        let a = try Arguments(argv, switches: ["print", "twice", "processes"], options: ["sdk", "server", "devices", "duration", "trace"])
        if a.has("help") { print(helpText(help, cores: cores), terminator: ""); return 0 }
        if a.has("processes"), !a.has("twice") { throw UsageError("--processes needs --twice") }
        guard a.positionals.count == 1 else { throw UsageError("expected one SEED, got \(a.positionals.count) arguments") }
        guard let seed = UInt64(a.positionals[0].replacingOccurrences(of: "_", with: "")) else {
            throw UsageError("SEED must be a whole number from 0 to \(UInt64.max), got '\(a.positionals[0])'")
        }
        let options = try a.generatorOptions(cores: cores)
        if a.has("processes"), let refusal = crossProcessRefusal(sdk: options.sdk, server: options.server,
                                                                what: "--processes runs the seed again in another process") {
            throw UsageError(refusal.replacingOccurrences(of: "--check-determinism alone", with: "--twice alone"))
        }
        if a.has("print") {
            print(ScenarioPrinter.print(ScenarioGenerator.generate(seed: seed, options: options)), terminator: "")
            return 0
        }
        if let path = a.string("trace") { try streamTrace(seed: seed, options: options, cores: cores, to: path) }
        let twice = a.has("twice")
        var (result, _, violations) = twice
            ? Fuzz.run(seed: seed, options: options, cores: cores, checkDeterminism: true)
            : Fuzz.run(seed: seed, options: options, cores: cores)
        print("seed \(seed) \(result.coreFlags): fingerprint \(result.fingerprint), \(plural(Int(result.events), "event"))")
        if twice {
            if a.has("processes"), result.nondeterminism == nil, !result.fingerprint.isEmpty {
                let setup = try ScenarioCompiler.compile(ScenarioGenerator.generate(seed: seed, options: options)).setup
                let child = ["replay", "\(seed)", "--sdk", result.sdk] + (result.server.map { ["--server", $0] } ?? [])
                    + ["--devices", "\(options.maxDevicesPerGroup)", "--duration", "\(options.maxDurationDays)d"]
                let own = try CrossProcess.traceText(of: setup, sdk: options.sdk, server: options.server, cores: cores)
                result.nondeterminism = try CrossProcess.compare(own: own, childArguments: child,
                                                                 core: CrossProcess.coreName(sdk: options.sdk, server: options.server, cores: cores))
            }
            if let n = result.nondeterminism {
                print(n.text(), terminator: "")
            } else {
                print("twice: the same trace in both runs" + (a.has("processes") ? " and in another process" : ""))
            }
        }
        if let reason = result.stopReason { print("INCOMPLETE: the run stopped early: \(reason)") }
        if let kind = result.broken.first, Fuzz.isCoreFailure(kind) {
            print(result.firstViolation ?? kind)   // a core's own verdict: the server left the protocol, the SDK escaped
            return 1
        }
        if violations.isEmpty {
            print("no invariant broken")
            return result.failed ? 1 : result.incomplete ? 3 : 0
        }
        for v in violations {
            print(v.headline)
            print(FailureStory(v).wrapped(indent: "  "), terminator: "")
            print("  last events:")
            for r in v.lastEvents {
                let who = r.device == v.device ? v.deviceName : "device \(r.device)"
                print("    \(DurationText.clock(r.time)) \(who)  \(TraceText.event(r.event))")
            }
        }
        print("broken: \(result.broken.joined(separator: ", "))")
        return 1
    }

    /// Runs the seed once more with a `TraceWriter` streaming to `path`.
    static func streamTrace(seed: UInt64, options: GeneratorOptions, cores: SDKCores, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw UsageError("cannot write the trace to '\(path)'")
        }
        defer { try? handle.close() }
        let compiled: CompiledScenario
        do { compiled = try ScenarioCompiler.compile(ScenarioGenerator.generate(seed: seed, options: options)) } catch { throw UsageError("\(error)") }
        let writer = TraceWriter { handle.write(Data($0.utf8)) }
        let records: UInt64
        do {
            let resolved = try cores.resolve(sdk: options.sdk, server: options.server)
            records = resolved.isReference ? traced(ReferenceSDK.self, ServerModel.self, compiled.setup, writer)
                                           : traced(resolved.sdk, resolved.server, compiled.setup, writer)
        } catch { throw UsageError("\(error)") }
        printError("simkit replay: \(records) trace records written to \(path)")
    }

    /// Runs `setup` on the cores `sdk` and `server` with `writer` watching; the records written.
    static func traced<SDK: SDKCore, Server: ServerCore>(_ sdk: SDK.Type, _ server: Server.Type, _ setup: WorldSetup,
                                                         _ writer: TraceWriter) -> UInt64 {
        var world = SimWorld<SDK, Server, TraceWriter>(setup: setup, observer: writer)
        world.run()
        return UInt64(world.observer.records)
    }
}

/// `simkit shrink`: minimise a failing scenario on demand.
enum ShrinkCommand {
    static let help = """
    usage: simkit shrink FILE [--sdk S] [--server S] [--invariant NAME] [-o OUT] [--max-attempts N]
           simkit shrink --seed SEED [--sdk S] [--server S] [--devices N] [--duration D] [--invariant NAME] [-o OUT]

    Runs the scenario (a file, or fuzz seed SEED), picks the invariant it breaks (or
    --invariant), and removes statements, devices, time and detail while that invariant
    still breaks. Prints the minimal scenario (or writes it to OUT). --sdk and --server
    (reference or custom:NAME, a server core the tool registers) replace a FILE's own lines.

    Exit: 1 a failure was found and shrunk, 0 the scenario breaks nothing, 2 bad input,
    3 the scenario breaks nothing but its run stopped early (nothing to shrink, and
    not a pass).

    """

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        let a = try Arguments(argv, switches: [], options: ["seed", "sdk", "server", "devices", "duration", "invariant", "o", "out", "max-attempts"])
        if a.has("help") { print(helpText(help, cores: cores), terminator: ""); return 0 }
        var scenario: ScenarioFile
        if a.string("seed") != nil {
            guard a.positionals.isEmpty else { throw UsageError("give either FILE or --seed, not both") }
            scenario = ScenarioGenerator.generate(seed: try a.uint("seed", default: 0), options: try a.generatorOptions(cores: cores))
        } else {
            guard a.positionals.count == 1 else { throw UsageError("expected one scenario FILE or --seed SEED") }
            guard let s = try loadScenario(a.positionals[0], cores: cores) else { return 2 }
            scenario = s
            if let sdk = a.string("sdk") { scenario.sdk = try FuzzCommand.sdkChoice(sdk, cores: cores) }
            if let server = try serverChoice(a.string("server"), cores: cores) { scenario.server = server }
        }
        let world: CheckedRun
        do { world = try Fuzz.check(scenario, cores: cores) } catch { throw UsageError("\(error)") }
        if let failure = world.coreFailure, failure.isServer {
            // The environment's failure, not the scenario's: a smaller script would not show it better.
            printError("simkit shrink: not shrunk: the server left the protocol\n" + failure.text)
            return 1
        }
        // An SDK core's own verdict (an async SDK's escape) is the run's one broken name.
        let broken = world.coreFailure.map { [$0.name] } ?? world.checker.broken.map(\.rawValue)
        guard !broken.isEmpty else {
            if let reason = world.stopReason {
                printError("simkit shrink: INCOMPLETE: the run stopped early, breaking no invariant before it did: \(reason)")
                return 3
            }
            printError("simkit shrink: the scenario breaks no invariant; nothing to shrink")
            return 0
        }
        let target = a.string("invariant") ?? world.checker.violations.first?.invariant.rawValue ?? broken[0]
        guard broken.contains(target) else {
            throw UsageError("the scenario does not break '\(target)'; it breaks: \(broken.joined(separator: ", "))")
        }
        let before = (scenario.statementCount, scenario.deviceCount)
        let t0 = monotonicSeconds()
        let (small, attempts) = Fuzz.shrink(scenario, invariant: target,
                                            maxAttempts: Int(try a.uint("max-attempts", default: 1_500, range: 1...1_000_000)), cores: cores)
        let text = Fuzz.reproducerText(small, invariant: target, seed: scenario.seed, sdk: small.sdk, file: a.string("o") ?? a.string("out") ?? "FILE")
        if let out = a.string("o") ?? a.string("out") { try writeAtomically(text, to: out) } else { print(text, terminator: "") }
        printError("simkit shrink: '\(target)': \(plural(before.0, "statement")), \(plural(Int(before.1), "device")) -> \(plural(small.statementCount, "statement")), \(plural(Int(small.deviceCount), "device")) in \(plural(attempts, "run")) (\(String(format: "%.1f", monotonicSeconds() - t0)) s)")
        return 1
    }
}
