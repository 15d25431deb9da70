import Foundation
import SimKit

/// `simkit`: the command line. Exit codes: 0 pass, 1 a failure found, 2 bad input,
/// 3 did not finish (a run stopped early at a bound, interrupted, stopped by a time
/// limit, or merged shards missing): INCOMPLETE, never a pass.
/// Every command: its name, a line for the usage text, and what runs it.
enum Commands {
    static let all: [(name: String, summary: String, run: @Sendable ([String]) throws -> Int32)] = [
    ("fuzz", "property-style runs from seeded random scripts; shrinks failures (the main job)", FuzzCommand.run),
    ("run", "run scenario files and report PASS or FAIL for each", RunCommand.run),
    ("check", "parse and validate scenario files without running them", CheckCommand.run),
    ("replay", "run one fuzz seed again, byte for byte; --print shows its script", ReplayCommand.run),
    ("shrink", "minimise a failing scenario file or fuzz seed", ShrinkCommand.run),
    ("timeline", "a self-contained HTML picture of one run: lanes of devices, states, answers, violations", TimelineCommand.run),
    ("mutants", "the mutation score: which mutants fuzzing catches, after how many seeds", MutantsCommand.run),
    ("merge", "combine the JSON results of fuzz shards into one summary and JUnit file", MergeCommand.run),
    ("bench", "throughput on this machine: events/s, device-days/s, bytes per device", BenchCommand.run),
    ("fingerprint", "run the standard workload and print its trace fingerprint", FingerprintCommand.run),
    ("diff", "where two written traces first differ (the determinism guard's report)", DiffCommand.run),
    ("version", "print the version (also 'simkit --version')", { _ in print(SimKitVersion.text); return 0 }),
    ]
    /// Commands left out of the usage text: tools for the project's own scripts.
    static let hidden: [(name: String, summary: String, run: @Sendable ([String]) throws -> Int32)] = [
    ("hostile-inputs", "check generated hostile scenario files (scripts/hostile-inputs.sh)", HostileInputsCommand.run),
    ("seed-fingerprints", "fingerprints of fuzz seeds, for 'fuzz --check-determinism --processes'", SeedFingerprintsCommand.run),
    ]
}

func mainUsage() -> String {
    var s = """
    simkit — deterministic simulation and chaos testing of the key-and-revocation lifecycle

    usage: simkit <command> [options]

    commands:

    """
    for c in Commands.all { s += "  " + c.name.padding(toLength: 13, withPad: " ", startingAt: 0) + c.summary + "\n" }
    s += "\nRun 'simkit <command> --help' for a command's options.\nExit codes: 0 pass, 1 a failure found, 2 bad input, 3 did not finish (a run stopped\n"
        + "early at its event budget, queue or memory bound, interrupted, stopped by --time-limit,\nor merged shards missing: INCOMPLETE, not a pass).\n"
    return s
}

func runMain() -> Int32 {
    let argv = Array(CommandLine.arguments.dropFirst())
    if argv.first == "--version" || argv.first == "-V" { print(SimKitVersion.text); return 0 }
    guard let name = argv.first, !["-h", "--help", "help"].contains(name) else {
        print(mainUsage(), terminator: "")
        return argv.isEmpty ? 2 : 0
    }
    guard let command = Commands.all.first(where: { $0.name == name }) ?? Commands.hidden.first(where: { $0.name == name }) else {
        let hint = nearest(name, in: Commands.all.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
        FileHandle.standardError.write(Data("simkit: error: unknown command '\(name)'\(hint)\n".utf8))
        return 2
    }
    // Long runs stop cleanly on SIGINT and SIGTERM; the handler goes in before anything slow starts.
    if name == "fuzz" || name == "mutants" { installInterruptHandler() }
    do {
        return try command.run(Array(argv.dropFirst()))
    } catch let e as UsageError {
        FileHandle.standardError.write(Data("simkit \(name): error: \(e.description)\n".utf8))
        return 2
    } catch {
        FileHandle.standardError.write(Data("simkit \(name): error: \(error)\n".utf8))
        return 2
    }
}

exit(runMain())
