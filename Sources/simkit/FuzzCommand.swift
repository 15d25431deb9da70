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

    Results do not depend on --jobs or sharding. Ctrl-C stops cleanly: the summary is
    printed and every reproducer already found is kept. Exit: 0 no failure, 1 failures, 2 bad input.

    """

    static func run(_ argv: [String]) throws -> Int32 {
        let a = try Arguments(argv, switches: ["no-shrink", "quiet"],
                              options: ["seeds", "from", "jobs", "shard", "sdk", "devices", "duration", "time-limit", "out", "junit", "json"])
        if a.has("help") { print(help, terminator: ""); return 0 }
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument '\(a.positionals[0])'") }
        let count = try a.uint("seeds", default: 160_000, range: 1...10_000_000)
        let from = try a.uint("from", default: 0)
        guard from <= UInt64.max - count else { throw UsageError("--from \(from) + --seeds \(count) overflows") }
        let jobs = Int(try a.uint("jobs", default: UInt64(ProcessInfo.processInfo.activeProcessorCount), range: 1...256))
        let shard = try parseShard(a.string("shard"))
        let generator = try a.generatorOptions()
        let sdk = generator.sdk
        let timeLimit = a.string("time-limit") != nil ? Double(try a.duration("time-limit", default: 0)) / 1000 : nil
        let out = a.string("out") ?? "simkit-out"
        let quiet = a.has("quiet")
        let shrink = !a.has("no-shrink")

        // Shard I of N takes every N-th seed of the range, starting with its (I-1)-th.
        let seeds: [UInt64]
        if let shard {
            seeds = Array(stride(from: from + UInt64(shard.index - 1), to: from + count, by: shard.count))
        } else {
            seeds = Array(from..<(from + count))
        }
        let campaign = Campaign(seeds: seeds, generator: generator, jobs: jobs, out: out, shrink: shrink,
                                quiet: quiet, timeLimit: timeLimit)
        let results = campaign.run()
        let summary = FuzzSummary(results: results, planned: seeds.count, seconds: campaign.elapsed, sdk: sdk)
        print(summary.text(jobs: jobs), terminator: "")
        if let path = a.string("json") { try writeAtomically(summary.json(), to: path) }
        if let path = a.string("junit") { try writeAtomically(summary.junit(), to: path) }
        return results.contains { $0.failed } ? 1 : 0
    }

    static func parseShard(_ text: String?) throws -> (index: Int, count: Int)? {
        guard let text else { return nil }
        let parts = text.split(separator: "/")
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, i >= 1, i <= n else {
            throw UsageError("--shard expects I/N with 1 <= I <= N, got '\(text)'")
        }
        return (i, n)
    }

    static func sdkChoice(_ text: String?) throws -> SDKChoice {
        guard let text else { return .reference }
        if let sdk = Fuzz.parseSDK(text) { return sdk }
        if text.hasPrefix("mutant:") {
            let name = String(text.dropFirst(7))
            let hint = nearest(name, in: Mutants.names).map { "; did you mean 'mutant:\($0)'?" } ?? ""
            throw UsageError("unknown mutant '\(name)'\(hint) (see 'simkit mutants --list')")
        }
        throw UsageError("--sdk expects reference or mutant:NAME, got '\(text)'")
    }
}

/// One fuzz campaign: seeds run on `jobs` threads, failures shrunk and written as they
/// are found, a progress line on a terminal.
final class Campaign: Sendable {
    let seeds: [UInt64]
    let generator: GeneratorOptions
    let jobs: Int
    let out: String
    let shrink: Bool
    let quiet: Bool
    let timeLimit: Double?
    let started = monotonicSeconds()
    struct State { var results: [SeedResult?]; var done = 0; var failures = 0; var lastProgress = 0.0 }
    let state: Mutex<State>
    let finished = Mutex<Double>(0)

    init(seeds: [UInt64], generator: GeneratorOptions, jobs: Int, out: String, shrink: Bool, quiet: Bool, timeLimit: Double?) {
        self.seeds = seeds; self.generator = generator; self.jobs = jobs; self.out = out
        self.shrink = shrink; self.quiet = quiet; self.timeLimit = timeLimit
        state = Mutex(State(results: Array(repeating: nil, count: seeds.count)))
    }

    var elapsed: Double { finished.withLock { $0 } }

    /// `--devices N --duration D` when they differ from the defaults, for replay commands.
    var devicesFlag: String {
        var s = ""
        if generator.maxDevicesPerGroup != 40 { s += " --devices \(generator.maxDevicesPerGroup)" }
        if generator.maxDurationDays != 90 { s += " --duration \(generator.maxDurationDays)d" }
        return s
    }

    /// Runs every seed (or until Ctrl-C or the time limit); results in seed order.
    func run() -> [SeedResult] {
        parallelForEach(count: seeds.count, jobs: jobs) { i in self.runOne(i) }
        finished.withLock { $0 = monotonicSeconds() - started }
        if stderrIsTerminal, !quiet { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        return state.withLock { $0.results.compactMap { $0 } }
    }

    func runOne(_ i: Int) {
        if let limit = timeLimit, monotonicSeconds() - started > limit { stopRequested.store(true, ordering: .relaxed); return }
        let seed = seeds[i]
        var (result, scenario, violations) = Fuzz.run(seed: seed, options: generator)
        if result.failed, let invariant = result.broken.first {
            let name = "\(invariant)-seed\(seed).scenario"
            let path = (out as NSString).appendingPathComponent(name)
            var small = scenario
            if shrink, invariant != "generator-error" {
                let target = violations.first?.invariant.rawValue ?? invariant
                small = Fuzz.shrink(scenario, invariant: target).0
            }
            let text = Fuzz.reproducerText(small, invariant: violations.first?.invariant.rawValue ?? invariant, seed: seed, sdk: generator.sdk, file: path)
            do {
                try writeAtomically(text, to: path)
                result.reproducer = path
                result.reproducerStatements = small.statementCount
                result.reproducerDevices = small.deviceCount
            } catch {
                printError("simkit fuzz: could not write \(path): \(error)")
            }
            if !quiet {
                let story = violations.first.map { FailureStory($0).wrapped(indent: "  ") } ?? ""
                let line = "FAIL seed \(seed): \(result.firstViolation ?? invariant)\n" + story + "  reproducer: \(path) (\(small.statementCount) statements, \(small.deviceCount) devices)\n  replay:     simkit run \(path)   or   simkit replay \(seed) --sdk \(Fuzz.sdkName(generator.sdk))\(devicesFlag)\n"
                    + "  picture:    simkit timeline --seed \(seed) --sdk \(Fuzz.sdkName(generator.sdk))\(devicesFlag) -o seed\(seed).html\n"
                state.withLock { _ in
                    if stderrIsTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
                    FileHandle.standardOutput.write(Data(line.utf8))
                }
            }
        }
        state.withLock { s in
            s.results[i] = result
            s.done += 1
            if result.failed { s.failures += 1 }
            let now = monotonicSeconds()
            if stderrIsTerminal, !quiet, now - s.lastProgress > 0.2 || s.done == seeds.count {
                s.lastProgress = now
                let rate = Double(s.done) / max(now - started, 1e-6)
                let left = Double(seeds.count - s.done) / max(rate, 1e-6)
                let line = String(format: "\r\u{1B}[Kfuzz: %d/%d seeds, %.1f seeds/s, %d failing, ~%.0fs left", s.done, seeds.count, rate, s.failures, left)
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
    }
}
