import Foundation
import SimKit
import SimKitCommand
import Scenarios

/// Every `simkit` command for async SDK cores, from a team's own executable:
///
/// ```swift
/// import SimKitAsync
/// SimKitAsyncHost.main(sdks: ["my-sdk": AsyncCore<MyHarness>.self])
/// ```
///
/// Call it as the first statement of a synchronous `main.swift` (no `await` before it,
/// no `@main` async entry). Before any async code runs it
/// 1. makes hashing deterministic: re-executes the program with
///    `SWIFT_DETERMINISTIC_HASHING=1` if it is not set (Set and Dictionary order is then
///    the same in every process);
/// 2. installs SimKit's executors (`SimKitExecutors`): every job runs on SimKit's loop; if
///    they cannot be installed (the toolchain changed the SPI, or async code ran first) it
///    says so and exits 2;
/// 3. runs worlds one at a time (`--jobs 1`: the loop has one thread), refuses `explore`
///    for async cores (it forks worlds), and turns system clock reads during a step into
///    the verdict `escape-unsimulated-clock` when the program exports its `clock_gettime`
///    (link it with `-Xlinker --export-dynamic`).
public enum SimKitAsyncHost {
    public static func main(sdks: [String: any SDKCore.Type], servers: [String: any ServerCore.Type] = [:]) -> Never {
        ensureDeterministicHashing()
        guard SimKitExecutors.install() else {
            printError("""
            simkit-async: error: SimKit's executors could not be installed: jobs do not reach its loop.
            This toolchain changed the _Concurrency custom-executor SPI, or refuses an install after async
            code ran (call SimKitAsyncHost.main first, from a synchronous main.swift); see docs/async.md,
            "The SPI risk".

            """)
            exit(2)
        }
        if let text = ProcessInfo.processInfo.environment["SIMKIT_ASYNC_PICK_SEED"] {
            guard let seed = UInt64(text) else { printError("simkit-async: error: SIMKIT_ASYNC_PICK_SEED must be a number, got '\(text)'\n"); exit(2) }
            SimLoop.shared.pickSeed = seed
        }
                AsyncVerdict.trapClockReads = ClockInterposer.isInterposed
        ClockInterposer.reporting = ProcessInfo.processInfo.environment["SIMKIT_ASYNC_ALLOW_CLOCK"] != "1"
        if ProcessInfo.processInfo.environment["SIMKIT_ASYNC_STATS"] == "1" {
            atexit {
                let loop = SimLoop.shared
                printError("simkit-async: \(loop.steps) async SDK steps, \(loop.jobsRun) executor jobs\(loop.pickSeed == nil ? "" : ", \(loop.picks) seeded picks among ready jobs")\n")
            }
        }
        var argv = CommandLine.arguments
        let command = argv.count > 1 ? argv[1] : ""
        // Only worlds of async cores need the one thread; the reference and sans-IO cores
        // registered beside them keep --jobs.
        let namesAsyncCore = sdks.contains { name, type in type is any RunsOnSimLoop.Type && argv.contains("custom:\(name)") }
        if namesAsyncCore, ["fuzz", "seed-fingerprints", "corpus", "mutants"].contains(command) {
            if let i = argv.firstIndex(of: "--jobs"), i + 1 < argv.count {
                if argv[i + 1] != "1" {
                    printError("simkit-async: error: async SDK cores run on SimKit's one-thread loop: --jobs must be 1 (got \(argv[i + 1]))\n")
                    exit(2)
                }
            } else if !argv.contains(where: { $0.hasPrefix("--jobs=") }) {
                argv += ["--jobs", "1"]
            }
        }
        if command == "explore", namesAsyncCore {
            printError("simkit-async: error: explore forks worlds mid-run (SimWorld.fork), and an async SDK's suspended tasks cannot be copied; use fuzz, run, replay or shrink\n")
            exit(2)
        }
        let cores = SDKCores(sdks, servers: ServerCores(servers))
        if command == "conformance" { exit(conformance(Array(argv.dropFirst(2)), cores: cores)) }
        if command == "hash-check" { exit(hashCheck(Array(argv.dropFirst(2)))) }
        let problems = sdks.keys.sorted().compactMap(SDKCores.problem(withName:))
            + servers.keys.sorted().compactMap(ServerCores.problem(withName:))
        if let problem = problems.first { printError("simkit: error: \(problem)\n"); exit(2) }
        exit(SimKitCommand.run(Array(argv.dropFirst()), cores: cores))
    }

    /// `conformance --sdk custom:NAME [--seeds N] [--scenarios DIR]`: SimKit's conformance
    /// kit (`SimKitTest.conformance`) for an async core, in this process (the kit is a
    /// library call, and async cores run only under this host). Exit 0 when it passes.
    static func conformance(_ args: [String], cores: SDKCores) -> Int32 {
        var sdk = "", seeds: UInt64 = 20, scenarios = SimKitTest.bundledScenarios
        var i = 0
        while i < args.count {
            let value = i + 1 < args.count ? args[i + 1] : ""
            switch args[i] {
            case "--sdk": sdk = value
            case "--seeds": seeds = UInt64(value) ?? seeds
            case "--scenarios": scenarios = value
            default: printError("simkit-async: error: conformance takes --sdk custom:NAME [--seeds N] [--scenarios DIR]\n"); return 2
            }
            i += 2
        }
        guard sdk.hasPrefix("custom:") else { printError("simkit-async: error: conformance needs --sdk custom:NAME\n"); return 2 }
        let report = SimKitTest.conformance(sdk: .custom(String(sdk.dropFirst("custom:".count))), server: .reference, cores: cores,
                                            scenarios: scenarios, seeds: 0..<seeds)
        print(report)
        return report.passed ? 0 : 1
    }

    /// `hash-check --sdk custom:NAME [--seeds N] [--from S] [--tries K]`: runs the seeds in a
    /// child process with the deterministic hash seed and in up to K children with random
    /// ones, and compares each seed's fingerprint. Deterministic hashing makes a `Set` or
    /// `Dictionary` iteration that reaches the trace reproducible, and so invisible; this
    /// makes it visible: a seed whose trace changes with the hash seed fails (exit 1).
    static func hashCheck(_ args: [String]) -> Int32 {
        var sdk = "", seeds = "5", from = "0", tries = 8
        var i = 0
        while i < args.count {
            let value = i + 1 < args.count ? args[i + 1] : ""
            switch args[i] {
            case "--sdk": sdk = value
            case "--seeds": seeds = value
            case "--from": from = value
            case "--tries": tries = max(1, Int(value) ?? tries)
            default: printError("simkit-async: error: hash-check takes --sdk S [--seeds N] [--from S] [--tries K]\n"); return 2
            }
            i += 2
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-hash-check-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        func fingerprints(random: Bool, _ k: Int) -> [String]? {
            let json = dir + "/\(random ? "random" : "fixed")-\(k).json"
            let p = Process()
            p.executableURL = URL(fileURLWithPath: me)
            p.arguments = ["fuzz", "--sdk", sdk, "--seeds", seeds, "--from", from, "--quiet", "--no-shrink", "--json", json, "--out", dir]
            var env = ProcessInfo.processInfo.environment
            if random { env["SWIFT_DETERMINISTIC_HASHING"] = nil; env["SIMKIT_ASYNC_RANDOM_HASHING"] = "1" }
            else { env["SWIFT_DETERMINISTIC_HASHING"] = "1"; env["SIMKIT_ASYNC_RANDOM_HASHING"] = nil }
            p.environment = env
            p.standardOutput = FileHandle.nullDevice
            guard (try? p.run()) != nil else { return nil }
            p.waitUntilExit()
            guard let text = try? String(contentsOfFile: json, encoding: .utf8) else { return nil }
            return text.split(separator: "\n").filter { $0.contains("\"fingerprint\"") }
                .map { line in line.firstMatch(of: /[0-9a-f]{16}/).map { String($0.output) } ?? String(line) }
        }
        guard let fixed = fingerprints(random: false, 0), !fixed.isEmpty else {
            printError("simkit-async: error: hash-check: the run with deterministic hashing wrote no fingerprints\n"); return 2
        }
        let first = UInt64(from) ?? 0
        for k in 1...tries {
            guard let other = fingerprints(random: true, k) else { continue }
            for (n, (a, b)) in zip(fixed, other).enumerated() where a != b {
                print("FAIL seed \(first + UInt64(n)): hash-order: its trace depends on the process's hash seed (a Set or Dictionary iteration reaches it): fingerprint \(a) with SWIFT_DETERMINISTIC_HASHING=1, \(b) with a random hash seed (try \(k))")
                return 1
            }
        }
        print("hash-check --sdk \(sdk): \(fixed.count) seeds, the same fingerprints with the deterministic hash seed and \(tries) random ones")
        return 0
    }

    /// Re-executes this program with `SWIFT_DETERMINISTIC_HASHING=1` unless it is set.
    static func ensureDeterministicHashing() {
        let env = ProcessInfo.processInfo.environment
        if env["SWIFT_DETERMINISTIC_HASHING"] == "1" || env["SIMKIT_ASYNC_RANDOM_HASHING"] == "1" { return }
        setenv("SWIFT_DETERMINISTIC_HASHING", "1", 1)
        let args = CommandLine.arguments
        var cargs: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) }
        cargs.append(nil)
        execv("/proc/self/exe", &cargs)
        printError("simkit-async: error: could not re-execute itself with SWIFT_DETERMINISTIC_HASHING=1 (\(String(cString: strerror(errno)))); set it and run again\n")
        exit(2)
    }
}
