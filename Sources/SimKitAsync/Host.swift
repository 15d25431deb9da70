import Foundation
import SimKit
import SimKitCommand
import Scenarios
import SimKitTesting

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
            SimLoop.shared.pickSeedOverride = seed
        }
        AsyncVerdict.trapClockReads = ClockInterposer.isInterposed
        HandOff.following = HandOff.isInterposed
        CrossProcess.isCommandLine = true   // a child started from this executable knows the same cores
        ClockInterposer.reporting = ProcessInfo.processInfo.environment["SIMKIT_ASYNC_ALLOW_CLOCK"] != "1"
        if ProcessInfo.processInfo.environment["SIMKIT_ASYNC_STATS"] == "1" {
            atexit {
                let loop = SimLoop.shared, watch = ResourceWatch.shared
                printError("simkit-async: \(loop.steps) async SDK steps, \(loop.jobsRun) executor jobs\(loop.picks == 0 ? "" : ", \(loop.picks) seeded picks among ready jobs")"
                           + "\(loop.storageWaits == 0 ? "" : ", \(loop.storageWaits) storage waits (\(loop.storageWaitMs) ms in all)"); "
                           + "\(loop.worldsBegun) worlds, \(loop.processesMade) app processes, \(loop.jobsAbandoned) jobs dropped, "
                           + "\(loop.jobsHandedBack) jobs handed back from other threads, \(loop.handOffsStillOut) worlds ended with hand-offs still out; "
                           + "at the last world's end \(watch.latest.openFiles) open files and \(String(format: "%.1f", Double(watch.latest.residentBytes) / 1_048_576)) MB resident "
                           + "(peak \(watch.peak.openFiles) and \(String(format: "%.1f", Double(watch.peak.residentBytes) / 1_048_576)) MB)\n")
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
        // `bench --sdk custom:NAME` is the async core's bench row; plain `bench` is SimKit's.
        if command == "bench", argv.contains("--sdk") || argv.contains("--help") { exit(bench(Array(argv.dropFirst(2)), cores: cores)) }
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
            case "--help": print("usage: conformance --sdk custom:NAME [--seeds N (20)] [--scenarios DIR]"); return 0
            case "--sdk": sdk = value
            case "--seeds" where UInt64(value) != nil: seeds = UInt64(value)!
            case "--scenarios" where !value.isEmpty: scenarios = value
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
    /// ones, and compares each seed's fingerprint (and, for a seed that its core ended with
    /// a verdict of its own, that verdict). Deterministic hashing makes a `Set` or
    /// `Dictionary` iteration that reaches the trace reproducible, and so invisible; this
    /// makes it visible: a seed whose trace changes with the hash seed fails (exit 1). A
    /// check that compared no fingerprint (every seed escaped or failed before it had one)
    /// says so and is INCOMPLETE (exit 3), never a pass.
    static func hashCheck(_ args: [String]) -> Int32 {
        var sdk = "", seeds = "5", from = "0", tries = 8
        var i = 0
        while i < args.count {
            let value = i + 1 < args.count ? args[i + 1] : ""
            switch args[i] {
            case "--help":
                print("""
                usage: hash-check --sdk S [--seeds N (5)] [--from S (0)] [--tries K (8)]
                  each seed's fingerprint with SWIFT_DETERMINISTIC_HASHING=1 and with up to K random hash
                  seeds, each in a process of its own. Exit 0 the same, 1 a seed differs (hash-order),
                  2 bad input, 3 INCOMPLETE: no fingerprint was compared (every seed ended with a verdict).
                """)
                return 0
            case "--sdk": sdk = value
            case "--seeds" where UInt64(value) != nil: seeds = value
            case "--from" where UInt64(value) != nil: from = value
            case "--tries" where (Int(value) ?? 0) > 0: tries = Int(value)!
            default: printError("simkit-async: error: hash-check takes --sdk S [--seeds N] [--from S] [--tries K]\n"); return 2
            }
            i += 2
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-hash-check-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        /// Each seed's fingerprint, or for a seed without one the verdict it ended with.
        func outcomes(random: Bool, _ k: Int) -> [(seed: UInt64, fingerprint: String, verdict: String)]? {
            let json = dir + "/\(random ? "random" : "fixed")-\(k).json"
            let p = Process()
            p.executableURL = URL(fileURLWithPath: me)
            p.arguments = ["fuzz", "--sdk", sdk, "--seeds", seeds, "--from", from, "--quiet", "--no-shrink", "--json", json, "--out", dir]
            var env = ProcessInfo.processInfo.environment
            if random { env["SWIFT_DETERMINISTIC_HASHING"] = nil; env["SIMKIT_ASYNC_RANDOM_HASHING"] = "1" }
            else { env["SWIFT_DETERMINISTIC_HASHING"] = "1"; env["SIMKIT_ASYNC_RANDOM_HASHING"] = nil }
            p.environment = env
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            guard (try? p.run()) != nil else { return nil }
            p.waitUntilExit()
            guard let data = FileManager.default.contents(atPath: json),
                  let report = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let results = report["results"] as? [[String: Any]] else { return nil }
            return results.map { r in
                let broken = (r["broken"] as? [String]) ?? []
                return ((r["seed"] as? NSNumber)?.uint64Value ?? 0, (r["fingerprint"] as? String) ?? "",
                        (r["firstViolation"] as? String) ?? broken.joined(separator: ", "))
            }
        }
        guard let fixed = outcomes(random: false, 0), !fixed.isEmpty else {
            printError("simkit-async: error: hash-check: the run with deterministic hashing wrote no results\n"); return 2
        }
        let fingerprinted = fixed.filter { !$0.fingerprint.isEmpty }.count
        for k in 1...tries {
            guard let other = outcomes(random: true, k) else { continue }
            for (a, b) in zip(fixed, other) where a.fingerprint != b.fingerprint || (a.fingerprint.isEmpty && a.verdict != b.verdict) {
                let what = a.fingerprint.isEmpty || b.fingerprint.isEmpty
                    ? "it ended with '\(a.fingerprint.isEmpty ? a.verdict : "fingerprint " + a.fingerprint)' with SWIFT_DETERMINISTIC_HASHING=1, '\(b.fingerprint.isEmpty ? b.verdict : "fingerprint " + b.fingerprint)' with a random hash seed"
                    : "fingerprint \(a.fingerprint) with SWIFT_DETERMINISTIC_HASHING=1, \(b.fingerprint) with a random hash seed"
                print("FAIL seed \(a.seed): hash-order: its run depends on the process's hash seed (a Set or Dictionary iteration reaches it): \(what) (try \(k))")
                return 1
            }
        }
        guard fingerprinted > 0 else {
            let first = fixed[0]
            print("hash-check --sdk \(sdk): INCOMPLETE: compared no fingerprint: every one of the \(fixed.count) seeds ended without a trace to compare "
                  + "(seed \(first.seed): \(first.verdict)); the verdicts were the same under every hash seed, but a trace that depends on one "
                  + "cannot show before those verdicts are fixed")
            return 3
        }
        let without = fixed.count - fingerprinted
        print("hash-check --sdk \(sdk): \(fingerprinted) seeds, the same fingerprints with the deterministic hash seed and \(tries) random ones"
              + (without == 0 ? "" : "; \(without) more ended with a verdict (the same under every hash seed) and had no fingerprint to compare"))
        return 0
    }

    /// `bench --sdk custom:NAME [--devices N] [--days D] [--seeds S]`: the async core's bench
    /// row beside the sans-IO reference, on this one thread. First the campaign's memory and
    /// open files: peak resident memory and the files open after S/10 fuzz seeds and after
    /// all S (what a seed leaves behind must not pile up); then the CPU time of
    /// `fingerprint --devices N --days D` for the reference and for the async core, and the
    /// async core's SDK inputs (steps) per CPU second. The fuzz summaries go to /dev/null. A
    /// core some of whose seeds fail is measured all the same, and the row says how many
    /// failed (exit 1); exit 0 when every seed passed.
    static func bench(_ args: [String], cores: SDKCores) -> Int32 {
        let usageText = """
        usage: bench --sdk custom:NAME [--devices N (1000)] [--days D (30)] [--seeds S (2000, at least 10)]
          peak resident memory and open files after S/10 and after S fuzz seeds, then the CPU time of
          `fingerprint --devices N --days D` for the sans-IO reference and for the async core, and
          the async core's SDK inputs per CPU second. Seeds that fail are counted, not a reason to
          stop: exit 1 when some did, 0 when none. Without --sdk: SimKit's own bench (the
          reference's workloads; see `simkit bench --help`).
        """
        var sdk = "", devices = "1000", days = "30", seeds = 2_000
        var i = 0
        while i < args.count {
            if args[i] == "--help" { print(usageText); return 0 }
            let value = i + 1 < args.count ? args[i + 1] : ""
            switch args[i] {
            case "--sdk" where value.hasPrefix("custom:"): sdk = value
            case "--devices" where (UInt32(value) ?? 0) > 0: devices = value
            case "--days" where (UInt32(value) ?? 0) > 0: days = value
            case "--seeds" where (Int(value) ?? 0) >= 10: seeds = Int(value)!
            default:
                printError("simkit-async: error: bench: bad or missing value for '\(args[i])'\n\(usageText)\n"); return 2
            }
            i += 2
        }
        guard !sdk.isEmpty else { printError("simkit-async: error: bench needs --sdk custom:NAME\n\(usageText)\n"); return 2 }
        func usage() -> (cpuS: Double, maxRSSKiB: Int) {
            var u = rusage()
            getrusage(RUSAGE_SELF.rawValue, &u)
            let cpu = Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
            return (cpu, Int(u.ru_maxrss))
        }
        let out = FileManager.default.temporaryDirectory.path + "/simkit-bench-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: out) }
        /// Runs `simkit fuzz` for `count` seeds from `from` with its output thrown away; the
        /// seeds that failed (their numbers), or nil when the campaign did not run.
        func fuzz(from: Int, count: Int) -> [UInt64]? {
            fflush(nil)
            let saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY)
            dup2(null, STDOUT_FILENO)
            let status = SimKitCommand.run(["fuzz", "--sdk", sdk, "--quiet", "--no-shrink", "--jobs", "1", "--out", out,
                                            "--from", String(from), "--seeds", String(count)], cores: cores)
            fflush(nil)
            dup2(saved, STDOUT_FILENO); close(saved); close(null)
            return status == 2 ? nil : CampaignNotes.lastFailing
        }
        let first = seeds / 10
        guard let failedEarly = fuzz(from: 0, count: first) else { printError("simkit-async: error: bench: fuzz did not run\n"); return 2 }
        let early = usage().maxRSSKiB, earlyFiles = ResourceWatch.openFiles()
        guard let failedLate = fuzz(from: first, count: seeds - first) else { printError("simkit-async: error: bench: fuzz did not run\n"); return 2 }
        let late = usage().maxRSSKiB, lateFiles = ResourceWatch.openFiles()
        let growth = early > 0 ? 100 * Double(late - early) / Double(early) : 0
        print("\(sdk): peak resident memory \(String(format: "%.1f", Double(early) / 1024)) MB after \(first) fuzz seeds, \(String(format: "%.1f", Double(late) / 1024)) MB after \(seeds) (\(String(format: "%+.1f", growth))%); "
              + "open files \(earlyFiles) and \(lateFiles)")
        let failed = failedEarly + failedLate
        if let firstFailed = failed.first {
            print("\(sdk): \(failed.count) of \(seeds) fuzz seeds failed (first: \(firstFailed)); measured all the same")
        }
        func fingerprint(_ core: String) -> (line: String, cpuS: Double, steps: UInt64)? {
            let before = usage().cpuS, steps = SimLoop.shared.steps
            guard let out = try? FingerprintCommand.output(["--sdk", core, "--devices", devices, "--days", days], cores), out.status != 2 else { return nil }
            let line = out.text.trimmingSuffixNewline.split(separator: "\n").first.map(String.init) ?? ""
            return ((out.status == 0 ? "" : "ended with a verdict: ") + line, usage().cpuS - before, SimLoop.shared.steps - steps)
        }
        guard let reference = fingerprint("reference"), let async = fingerprint(sdk) else {
            printError("simkit-async: error: bench: a fingerprint run did not run\n"); return 2
        }
        print("\(devices) devices × \(days) days, sans-IO reference: \(String(format: "%.2f", reference.cpuS)) s CPU (\(reference.line))")
        print("\(devices) devices × \(days) days, \(sdk): \(String(format: "%.2f", async.cpuS)) s CPU (\(async.line))")
        let perSecond = async.cpuS > 0 ? Double(async.steps) / async.cpuS : 0
        print("\(sdk): \(async.steps) SDK inputs in \(String(format: "%.2f", async.cpuS)) s CPU: \(Int(perSecond)) inputs/s on one core")
        return failed.isEmpty ? 0 : 1
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
