import Foundation
import ServerWire
import SimKit
import Scenarios

/// `simkit`, the command line, as a library: the `simkit` executable is
/// `SimKitCommand.main()`, and a package that tests its own SDK core gets every command
/// for it with one line more:
///
/// ```swift
/// import SimKitCommand
/// import MySDK
/// SimKitCommand.main(sdks: ["mine": MySDK.self])   // simkit fuzz --sdk custom:mine, sdk custom mine
/// ```
///
/// Exit codes: 0 pass, 1 a failure found, 2 bad input, 3 did not finish (a run stopped
/// early at a bound, interrupted, stopped by a time limit, or merged shards missing):
/// INCOMPLETE, never a pass.
public enum SimKitCommand {
    /// Runs the command `CommandLine.arguments` names and exits with its status. `sdks`
    /// are the custom SDK cores it knows, by name (`[a-z][a-z0-9_-]*`): `--sdk custom:NAME`
    /// and `sdk custom NAME` in scenario files run them. `servers` are the custom server
    /// cores: `--server custom:NAME` and `server custom NAME` run them. A wrong name exits 2.
    ///
    /// ```swift
    /// SimKitCommand.main(sdks: ["mine": MySDK.self], servers: ["backend": MyServer.self])
    /// ```
    public static func main(sdks: [String: any SDKCore.Type] = [:], servers: [String: any ServerCore.Type] = [:]) -> Never {
        let problems = sdks.keys.sorted().compactMap(SDKCores.problem(withName:))
            + servers.keys.sorted().compactMap(ServerCores.problem(withName:))
        if let problem = problems.first {
            FileHandle.standardError.write(Data("simkit: error: \(problem)\n".utf8))
            exit(2)
        }
        CrossProcess.isCommandLine = true
        exit(runMain(Array(CommandLine.arguments.dropFirst()), cores: SDKCores(sdks, servers: ServerCores(servers)),
                     handleSignals: true))
    }

    /// Runs one command line (`argv` without the program name) in this process and returns
    /// its exit status; output goes to standard output and error. Unlike `main`, it installs
    /// no signal handler (for tests and tools that embed a command).
    public static func run(_ argv: [String], cores: SDKCores = SDKCores()) -> Int32 {
        runMain(argv, cores: cores, handleSignals: false)
    }
}

/// Every command: its name, a line for the usage text, and what runs it (with the
/// custom cores the tool knows; most commands need none).
enum Commands {
    typealias Run = @Sendable ([String], SDKCores) throws -> Int32
    static let all: [(name: String, summary: String, run: Run)] = [
    ("fuzz", "property-style runs from seeded random scripts; shrinks failures (the main job)", FuzzCommand.run),
    ("run", "run scenario files and report PASS or FAIL for each", RunCommand.run),
    ("check", "parse and validate scenario files without running them", CheckCommand.run),
    ("explore", "search every path of a few actions on 1-3 devices; the shortest that breaks a rule", ExploreCommand.run),
    ("replay", "run one fuzz seed again, byte for byte; --print shows its script", ReplayCommand.run),
    ("shrink", "minimise a failing scenario file or fuzz seed", ShrinkCommand.run),
    ("timeline", "a self-contained HTML picture of one run: lanes of devices, states, answers, violations", TimelineCommand.run),
    ("conformance", "a server's S rules in seconds: SimKit's scenarios and a short campaign, each rule broken named", ConformanceCommand.run),
    ("mutants", "the mutation score: which mutants fuzzing catches, after how many seeds", { a, _ in try MutantsCommand.run(a) }),
    ("corpus", "distill a guided fuzzing corpus folder: the fewest scripts reaching what it reaches, ranked", CorpusCommand.run),
    ("merge", "combine the JSON results of fuzz shards into one summary and JUnit file", { a, _ in try MergeCommand.run(a) }),
    ("bench", "throughput on this machine: events/s, device-days/s, bytes per device", { a, _ in try BenchCommand.run(a) }),
    ("fingerprint", "run the standard workload and print its trace fingerprint", FingerprintCommand.run),
    ("diff", "where two written traces first differ (the determinism guard's report)", { a, _ in try DiffCommand.run(a) }),
    ("version", "print the version (also 'simkit --version')", { _, _ in print(SimKitVersion.text); return 0 }),
    ]
    /// Commands left out of the usage text: tools for the project's own scripts.
    static let hidden: [(name: String, summary: String, run: Run)] = [
    ("hostile-inputs", "check generated hostile scenario files (scripts/hostile-inputs.sh)", { a, _ in try HostileInputsCommand.run(a) }),
    ("seed-fingerprints", "fingerprints of fuzz seeds, for 'fuzz --check-determinism --processes'", SeedFingerprintsCommand.run),
    ("serve-reference", "the reference server on the wire over stdio, for 'bench --wire' (--no-batch: lock step)", { a, _ in
        if let bad = a.first(where: { $0 != "--no-batch" }) { throw UsageError("serve-reference takes only --no-batch, got '\(bad)'") }
        var server = WireReferenceServer(batches: !a.contains("--no-batch"))
        return server.serve()
    }),
    ]
}

func mainUsage(cores: SDKCores = SDKCores()) -> String {
    var s = """
    simkit — deterministic simulation and chaos testing of the key-and-revocation lifecycle

    usage: simkit <command> [options]

    commands:

    """
    for c in Commands.all { s += "  " + c.name.padding(toLength: 13, withPad: " ", startingAt: 0) + c.summary + "\n" }
    s += "\nRun 'simkit <command> --help' for a command's options.\nExit codes: 0 pass, 1 a failure found, 2 bad input, 3 did not finish (a run stopped\n"
        + "early at its event budget, queue or memory bound, interrupted, stopped by --time-limit,\nor merged shards missing: INCOMPLETE, not a pass).\n"
    if !cores.entries.isEmpty {
        s += "\nCustom SDK cores (--sdk custom:NAME, 'sdk custom NAME' in a scenario): " + cores.names.joined(separator: ", ") + "\n"
    }
    if !cores.servers.entries.isEmpty {
        s += "\nCustom server cores (--server custom:NAME, 'server custom NAME' in a scenario): "
            + cores.servers.names.joined(separator: ", ") + "\n"
    }
    return s
}

func runMain(_ argv: [String], cores: SDKCores, handleSignals: Bool) -> Int32 {
    if argv.first == "--version" || argv.first == "-V" { print(SimKitVersion.text); return 0 }
    guard let name = argv.first, !["-h", "--help", "help"].contains(name) else {
        print(mainUsage(cores: cores), terminator: "")
        return argv.isEmpty ? 2 : 0
    }
    guard let command = Commands.all.first(where: { $0.name == name }) ?? Commands.hidden.first(where: { $0.name == name }) else {
        let hint = nearest(name, in: Commands.all.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
        FileHandle.standardError.write(Data("simkit: error: unknown command '\(name)'\(hint)\n".utf8))
        return 2
    }
    // Long runs stop cleanly on SIGINT and SIGTERM; the handler goes in before anything slow starts.
    if handleSignals, name == "fuzz" || name == "mutants" || name == "explore" { installInterruptHandler() }
    do {
        return try command.run(Array(argv.dropFirst()), cores)
    } catch let e as UsageError {
        FileHandle.standardError.write(Data("simkit \(name): error: \(e.description)\n".utf8))
        return 2
    } catch {
        FileHandle.standardError.write(Data("simkit \(name): error: \(error)\n".utf8))
        return 2
    }
}

