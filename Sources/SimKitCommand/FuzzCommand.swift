import Foundation
import Synchronization
import SimKit
import Invariants
import Scenarios

/// `simkit fuzz`: property-style runs from seeded random scripts; SimKit's main job.
enum FuzzCommand {
    static let help = """
    usage: simkit fuzz [options]

    Generates one random scenario per seed (swarm testing: each seed switches on its own
    mix of faults, dashboard and Rollup actions and person actions), runs it with every
    invariant checked, and shrinks each failure to a minimal .scenario file that fails the
    same way. The defaults fit a CI job of a minute or two on 2 cores.

    options:
      --seeds N          seeds to run (default 160000)
      --from SEED        the first seed (default 0)
      --jobs J           parallel simulations (default: all cores)
      --shard I/N        run only shard I of N (1-based); shards 1..N together are the whole run
      --sdk S            reference (default) or mutant:NAME (see 'simkit mutants --list')
      --devices N        at most N devices per group in generated worlds (default 40)
      --duration D       at most this long a scenario (default 90d)
      --time-limit D     stop starting new seeds after this much wall time (e.g. 60s, 5m)
      --out DIR          where shrunk reproducers go (default simkit-out)
      --junit FILE       write a JUnit XML report
      --json FILE        write all results as JSON (for 'simkit merge')
      --no-shrink        report failures without shrinking them
      --quiet            only the summary

    Results do not depend on --jobs or sharding. Progress goes to standard error: a
    redrawn line on a terminal, a plain line every 5 s elsewhere (a CI log).

    Ctrl-C (SIGINT) or SIGTERM stops cleanly: no new seed starts, the seeds in flight
    finish (unshrunk if the stop came first), and the summary, --json and --junit are
    written marked interrupted, with how many seeds ran. A second signal exits at once;
    files already written stay whole (every file is written to a temporary name and
    renamed). The --out directory and the --json and --junit files are checked writable
    before the first seed.

    Exit: 0 every seed ran and none failed, 1 a seed failed (even if the run stopped
    early), 2 bad input, 3 the run did not finish (a signal or --time-limit) and none of
    the seeds that ran failed.

    """

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        let a = try Arguments(argv, switches: ["no-shrink", "quiet"],
                              options: ["seeds", "from", "jobs", "shard", "sdk", "devices", "duration", "time-limit", "out", "junit", "json"])
        if a.has("help") { print(helpText(help, cores: cores), terminator: ""); return 0 }
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument '\(a.positionals[0])'") }
        let count = try a.uint("seeds", default: 160_000, range: 1...10_000_000)
        let from = try a.uint("from", default: 0)
        guard from <= UInt64.max - count else { throw UsageError("--from \(from) + --seeds \(count) overflows") }
        let jobs = Int(try a.uint("jobs", default: UInt64(ProcessInfo.processInfo.activeProcessorCount), range: 1...256))
        let shard = try parseShard(a.string("shard")) ?? (1, 1)
        let generator = try a.generatorOptions(cores: cores)
        let timeLimit = a.string("time-limit") != nil ? Double(try a.duration("time-limit", default: 0)) / 1000 : nil
        let out = a.string("out") ?? "simkit-out"
        let quiet = a.has("quiet")
        let shrink = !a.has("no-shrink")
        let plan = FuzzPlan(range: .init(from: from, count: count), shard: .init(index: shard.index, count: shard.count),
                            options: .init(sdk: Fuzz.sdkName(generator.sdk), devices: Int(generator.maxDevicesPerGroup),
                                           durationDays: Int(generator.maxDurationDays), shrink: shrink))
        // Shard I of N takes every N-th seed of the range, starting with its (I-1)-th: a shard
        // past the end of a short range would run nothing and pass, which hides a wrong matrix.
        guard plan.planned > 0 else {
            throw UsageError("--shard \(plan.shardText) gets no seed of --seeds \(count): shard I of N runs every N-th seed "
                             + "from the I-th, so \(plural(Int(count), "seed")) fill at most \(plural(Int(count), "shard")); use --seeds \(shard.count) or more")
        }
        // Every output path is checked before the first seed, not found unwritable at the end.
        try checkWritableDirectory(out)
        for flag in ["json", "junit"] { if let path = a.string(flag) { try checkWritableFile(path) } }

        let campaign = Campaign(seeds: Array(plan.seeds), generator: generator, cores: cores, jobs: jobs, out: out, shrink: shrink,
                                quiet: quiet, timeLimit: timeLimit)
        let results = campaign.run()
        let stoppedBy: String? = results.count < plan.planned
            ? (stopSignal.load(ordering: .relaxed) != 0 ? signalName(stopSignal.load(ordering: .relaxed)) : "--time-limit")
            : nil
        let summary = FuzzSummary(results: results, plan: plan, planned: plan.planned, seconds: campaign.elapsed, stoppedBy: stoppedBy)
        print(summary.text(jobs: jobs), terminator: "")
        if let path = a.string("json") { try writeAtomically(summary.json(), to: path) }
        if let path = a.string("junit") { try writeAtomically(summary.junit(), to: path) }
        return summary.exitStatus
    }

    static func parseShard(_ text: String?) throws -> (index: Int, count: Int)? {
        guard let text else { return nil }
        let parts = text.split(separator: "/")
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, i >= 1, i <= n else {
            throw UsageError("--shard expects I/N with 1 <= I <= N, got '\(text)'")
        }
        return (i, n)
    }

    /// `reference` (also when absent), `mutant:NAME` or `custom:NAME` (a core of `cores`).
    static func sdkChoice(_ text: String?, cores: SDKCores = SDKCores()) throws -> SDKChoice {
        guard let text else { return .reference }
        if let sdk = cores.parse(text) { return sdk }
        if text.hasPrefix("custom:") {
            let name = String(text.dropFirst(7))
            let hint = nearest(name, in: cores.names).map { "; did you mean 'custom:\($0)'?" } ?? ""
            throw UsageError(SDKCores.unknownMessage(name, known: cores.names) + hint)
        }
        if text.hasPrefix("mutant:") {
            let name = String(text.dropFirst(7))
            let hint = nearest(name, in: Mutants.names).map { "; did you mean 'mutant:\($0)'?" } ?? ""
            throw UsageError("unknown mutant '\(name)'\(hint) (see 'simkit mutants --list')")
        }
        throw UsageError("--sdk expects reference or mutant:NAME\(cores.entries.isEmpty ? "" : " or custom:NAME"), got '\(text)'")
    }
}

/// One fuzz campaign: seeds run on `jobs` threads, failures shrunk and written as they
/// are found, progress on standard error. Stops taking seeds on a signal or the time limit.
final class Campaign: Sendable {
    let seeds: [UInt64]
    let generator: GeneratorOptions
    /// The custom cores `generator.sdk` may name.
    let cores: SDKCores
    let jobs: Int
    let out: String
    let shrink: Bool
    let quiet: Bool
    let timeLimit: Double?
    let started = monotonicSeconds()
    struct State { var results: [SeedResult?]; var done = 0; var failures = 0; var progress: ProgressLine }
    let state: Mutex<State>
    let finished = Mutex<Double>(0)

    init(seeds: [UInt64], generator: GeneratorOptions, cores: SDKCores = SDKCores(), jobs: Int, out: String, shrink: Bool,
         quiet: Bool, timeLimit: Double?) {
        self.seeds = seeds; self.generator = generator; self.cores = cores; self.jobs = jobs; self.out = out
        self.shrink = shrink; self.quiet = quiet; self.timeLimit = timeLimit
        state = Mutex(State(results: Array(repeating: nil, count: seeds.count),
                            progress: ProgressLine(label: "fuzz", noun: "seed", total: seeds.count, quiet: quiet)))
    }

    var elapsed: Double { finished.withLock { $0 } }

    /// `--devices N --duration D` when they differ from the defaults, for replay commands.
    var devicesFlag: String {
        var s = ""
        if generator.maxDevicesPerGroup != 40 { s += " --devices \(generator.maxDevicesPerGroup)" }
        if generator.maxDurationDays != 90 { s += " --duration \(generator.maxDurationDays)d" }
        return s
    }

    /// Runs every seed (or until a signal or the time limit); the results of the seeds that
    /// ran, in seed order.
    func run() -> [SeedResult] {
        parallelForEach(count: seeds.count, jobs: jobs) { i in self.runOne(i) }
        finished.withLock { $0 = monotonicSeconds() - started }
        state.withLock { $0.progress.clear() }
        return state.withLock { $0.results.compactMap { $0 } }
    }

    func runOne(_ i: Int) {
        if let limit = timeLimit, monotonicSeconds() - started > limit { stopRequested.store(true, ordering: .relaxed); return }
        let seed = seeds[i]
        var (result, scenario, violations) = Fuzz.run(seed: seed, options: generator, cores: cores)
        if result.failed, let invariant = result.broken.first {
            // The reproducer is shrunk for, and named after, the first invariant broken in
            // time (`broken` is sorted by name).
            let target = violations.first?.invariant.rawValue ?? invariant
            let path = (out as NSString).appendingPathComponent("\(target)-seed\(seed).scenario")
            var small = scenario
            // After a stop the failure is written as generated: it fails the same way, and
            // shrinking can take seconds that the one who pressed Ctrl-C did not ask for.
            if shrink, invariant != "generator-error", !stopRequested.load(ordering: .relaxed) {
                small = Fuzz.shrink(scenario, invariant: target, cores: cores).0
            }
            let text = Fuzz.reproducerText(small, invariant: target, seed: seed, sdk: generator.sdk, file: path)
            do {
                try writeAtomically(text, to: path)
                result.reproducer = path
                result.reproducerStatements = small.statementCount
                result.reproducerDevices = small.deviceCount
            } catch {
                printError("simkit fuzz: \(error)")
            }
            if !quiet {
                let story = violations.first.map { FailureStory($0).wrapped(indent: "  ") } ?? ""
                let written = result.reproducer != nil
                let line = "FAIL seed \(seed): \(result.firstViolation ?? invariant)\n" + story
                    + (written ? "  reproducer: \(path) (\(plural(small.statementCount, "statement")), \(plural(Int(small.deviceCount), "device")))\n" : "")
                    + "  replay:     " + (written ? "simkit run \(path)   or   " : "") + "simkit replay \(seed) --sdk \(Fuzz.sdkName(generator.sdk))\(devicesFlag)\n"
                    + "  picture:    simkit timeline --seed \(seed) --sdk \(Fuzz.sdkName(generator.sdk))\(devicesFlag) -o seed\(seed).html\n"
                state.withLock { s in
                    s.progress.clear()
                    FileHandle.standardOutput.write(Data(line.utf8))
                }
            }
        }
        state.withLock { s in
            s.results[i] = result
            s.done += 1
            if result.failed { s.failures += 1 }
            s.progress.update(done: s.done, failures: s.failures, started: started)
        }
    }
}
