import Foundation
import Synchronization
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch
import ServerWire

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
      --sdk S            reference (default), mutant:NAME (see 'simkit mutants --list') or
                         custom:NAME, an SDK core the tool registers (SimKitCommand.main(sdks:),
                         SimKitAsyncHost.main: docs/custom-cores.md, docs/async.md)
      --server S         reference (default) or custom:NAME, a server core the tool registers
                         (or process:CMD, http://HOST:PORT: a server on the wire, docs/server-protocol.md)
      --devices N        at most N devices per group in generated worlds (default 40)
      --duration D       at most this long a scenario (default 90d)
      --time-limit D     stop starting new seeds after this much wall time (e.g. 60s, 5m)
      --max-server-failures N  stop starting new seeds once N seeds ended because the server
                         on the wire left the protocol, exited or did not answer (default 0:
                         never; each such seed restarts the server and the campaign goes on)
      --out DIR          where shrunk reproducers go (default simkit-out)
      --junit FILE       write a JUnit XML report
      --json FILE        write all results as JSON (for 'simkit merge')
      --no-shrink        report failures without shrinking them
      --baseline CORE    also run every seed on CORE (reference, mutant:NAME, custom:NAME) and
                         compare seed by seed: fail only when the core under test breaks
                         something CORE does not (below)
      --guided           coverage-guided: mutate the scripts that reached something new
                         (below)
      --corpus DIR       with --guided: start from the scripts in DIR and add the new
                         ones to it at the end (created if missing)
      --quiet            only the summary
      --check-determinism  run every seed twice in this process and compare the traces
                         record by record (below)
      --processes        with --check-determinism: also run every seed in a second
                         simkit process and compare (one more process for the whole run)
      --determinism-sample N  without --check-determinism, the share of seeds run twice:
                         one in N (default 64; 0: none)

    The determinism guard: a seed that is run twice must write the same trace. When two
    runs differ, the seed fails with the verdict NONDETERMINISTIC (not an invariant): the
    report names the first differing trace record (its number, virtual time and device),
    shows both records side by side and the last records that agreed, and says when the
    difference is inside an SDK step whose input agreed: the core's step was not a
    function of its input and state (a Set or Dictionary iterated in hash order, a clock,
    the system random generator, a global variable). By default one seed in 64 (chosen
    by a hash of the seed, the same in every shard) is run twice, so CI catches a leak
    without paying for every seed twice. 'simkit replay SEED --twice' checks one seed.

    Guided fuzzing keeps a corpus of the scripts that reached something new: a new
    (state, input, answer) transition of a device, a verdict or an activation in a new
    distance bucket from a true boundary (30 days of stoppage, 24 h since the last
    answered check, a grace deadline), a new set of rules in force at once, a new
    "sometimes" situation. The starting corpus (--corpus DIR, in file-name order) is
    replayed first, as libFuzzer runs its seed corpus: the range's i-th seed runs the
    i-th script as it is. After that, three seeds in four run a mutation of a corpus
    script (moved onto a boundary, a statement duplicated or dropped, a selector or a
    fault changed, two scripts spliced); the fourth is generated as usual. Seeds are
    dealt to 16 lanes (seed mod 16), each learning from its own earlier seeds, so results
    are the same for any --jobs and --shard (at most 16 shards; a shard takes whole
    lanes). A failing mutated or replayed seed is replayed from its reproducer file, not
    with 'simkit replay'. No determinism sample runs in guided mode. 'simkit corpus
    distill' makes a large corpus folder small.

    Results do not depend on --jobs or sharding. Progress goes to standard error: a
    redrawn line on a terminal, a plain line every 5 s elsewhere (a CI log).

    Ctrl-C (SIGINT) or SIGTERM stops cleanly: no new seed starts, the seeds in flight
    finish (unshrunk if the stop came first), and the summary, --json and --junit are
    written marked interrupted, with how many seeds ran. On a server on the wire the
    seeds in flight do not wait for it: each stops within a tenth of a second, whatever
    the server does, and counts as not run. A second signal exits at once;
    files already written stay whole (every file is written to a temporary name and
    renamed). The --out directory and the --json and --junit files are checked writable
    before the first seed.

    A baseline (--baseline CORE) is what a team uses while it fixes its first findings:
    every seed runs on both cores, and the summary (and --json, "baseline") lists the
    seeds that fail only with the core under test, only with the baseline, and with both
    (and of those, the ones where the core under test breaks more). Only a seed where the
    core under test breaks something the baseline does not is shrunk and fails the run;
    the others are printed as known, not shrunk. Not with --guided.

    "Sometimes" situations are properties too: a campaign must reach each situation that
    a campaign of its size reaches with a correct core (a lock from a place-data request,
    a reset retried, …; the table is in SometimesRequirements.swift). One that is never
    reached is a blind spot: the core may have lost a path (a retry that never happens),
    or the scripts no longer build it. The requirements hold for the default --devices and
    --duration only, under which they were measured.

    Exit: 0 every seed ran and none failed, 1 a seed failed: an invariant broken or
    NONDETERMINISTIC (even if the run stopped early; with --baseline, only what the
    baseline does not break), 2 bad input, 3 the run did not
    finish (a signal or --time-limit) and none of the seeds that ran failed, 4 every seed
    passed but a required "sometimes" situation was never reached (BLIND SPOT).

    """

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        let a = try Arguments(argv, switches: ["no-shrink", "quiet", "check-determinism", "processes", "guided"],
                              options: ["seeds", "from", "jobs", "shard", "sdk", "server", "devices", "duration", "time-limit", "out", "junit", "json",
                                        "determinism-sample", "corpus", "max-server-failures", "baseline"])
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
        try checkModes(a, generator: generator, shardCount: shard.count)
        let checkAll = a.has("check-determinism")
        let guided = a.has("guided")
        let sampleOneIn = guided ? 0 : checkAll ? 1 : try a.uint("determinism-sample", default: DeterminismCheck.defaultSampleOneIn, range: 0...1_000_000_000)
        let plan = FuzzPlan(range: .init(from: from, count: count), shard: .init(index: shard.index, count: shard.count),
                            options: .init(sdk: Fuzz.sdkName(generator.sdk), devices: Int(generator.maxDevicesPerGroup),
                                           durationDays: Int(generator.maxDurationDays), shrink: shrink,
                                           guided: guided ? true : nil, corpus: a.string("corpus"),
                                           server: Fuzz.serverName(generator.server)))
        // Shard I of N takes every N-th seed of the range, starting with its (I-1)-th: a shard
        // past the end of a short range would run nothing and pass, which hides a wrong matrix.
        guard plan.planned > 0 else {
            if guided { throw UsageError("--shard \(plan.shardText) gets no lane with a seed of --seeds \(count) (guided, shard I of N takes the lanes whose number mod N is I-1; lane = seed mod \(GuidedFuzz.lanes))") }
            throw UsageError("--shard \(plan.shardText) gets no seed of --seeds \(count): shard I of N runs every N-th seed "
                             + "from the I-th, so \(plural(Int(count), "seed")) fill at most \(plural(Int(count), "shard")); use --seeds \(shard.count) or more")
        }
        // Every output path is checked before the first seed, not found unwritable at the end.
        try checkWritableDirectory(out)
        for flag in ["json", "junit"] { if let path = a.string(flag) { try checkWritableFile(path) } }
        // A server on the wire that fails writes the messages that led there beside the reproducers.
        WireSession.messagesDirectory = out

        CampaignNotes.reset()
        let start = try a.string("corpus").map { try GuidedCorpus.load($0, cores: cores) } ?? []
        var baseline: GeneratorOptions?
        if let text = a.string("baseline") {
            if guided { throw UsageError("--baseline and --guided exclude each other: a guided seed's script depends on its core's history") }
            baseline = generator
            baseline!.sdk = try sdkChoice(text, cores: cores)
        }
        let campaign = Campaign(seeds: plan.seeds, generator: generator, cores: cores, jobs: jobs, out: out, shrink: shrink,
                                quiet: quiet, timeLimit: timeLimit, determinismOneIn: sampleOneIn, baseline: baseline)
        campaign.maxServerFailures = Int(try a.uint("max-server-failures", default: 0, range: 0...10_000_000))
        var guidedLine: String?
        var results: [SeedResult]
        if guided {
            let run = try runGuided(campaign, start: start, from: from, corpus: a.string("corpus"))
            results = run.results
            guidedLine = run.line
        } else {
            results = campaign.run()
        }
        let stoppedBy: String? = results.count < plan.planned
            ? (CampaignNotes.stopReason ?? (stopSignal.load(ordering: .relaxed) != 0 ? signalName(stopSignal.load(ordering: .relaxed))
               : campaign.stoppedByServer ? "--max-server-failures (\(plural(campaign.maxServerFailures, "seed")) ended by the server)"
               : "--time-limit"))
            : nil
        if a.has("processes"), stoppedBy == nil {
            results = try campaign.checkInAnotherProcess(results, plan: plan)
        }
        var summary = FuzzSummary(results: results, plan: plan, planned: plan.planned, seconds: campaign.elapsed, stoppedBy: stoppedBy)
        summary.determinism = determinismLine(results, oneIn: sampleOneIn, processes: a.has("processes") && stoppedBy == nil)
        summary.guidedLine = guidedLine
        summary.warnings = CampaignNotes.warnings
        CampaignNotes.finished(failing: summary.failures.map(\.seed))
        if let baseline {
            summary.baseline = BaselineComparison(core: Fuzz.sdkName(baseline.sdk), results: results, baseline: campaign.baselineResults)
        }
        print(summary.text(jobs: jobs), terminator: "")
        if let path = a.string("json") { try writeAtomically(summary.json(), to: path) }
        if let path = a.string("junit") { try writeAtomically(summary.junit(), to: path) }
        // A guard that compared nothing is no pass (it cannot be one today: such seeds fail).
        if checkAll, summary.exitStatus == 0, !results.isEmpty, determinismCompared(results) == (0, 0) { return exitIncomplete }
        return summary.exitStatus
    }

    /// The modes' options that exclude or need each other (determinism guard, processes,
    /// guided, corpus, shards of guided lanes): a usage error for the first wrong pair.
    static func checkModes(_ a: Arguments, generator: GeneratorOptions, shardCount: Int) throws {
        let checkAll = a.has("check-determinism")
        if a.has("processes"), !checkAll { throw UsageError("--processes needs --check-determinism") }
        if a.has("processes"), let refusal = crossProcessRefusal(sdk: generator.sdk, server: generator.server,
                                                                what: "--processes runs the seeds again in another process") {
            throw UsageError(refusal)
        }
        if checkAll, a.string("determinism-sample") != nil { throw UsageError("--determinism-sample and --check-determinism exclude each other: --check-determinism runs every seed twice") }
        let guided = a.has("guided")
        if a.string("corpus") != nil, !guided { throw UsageError("--corpus needs --guided") }
        if guided, checkAll { throw UsageError("--guided and --check-determinism exclude each other: the guard reruns a seed from the seed alone") }
        if guided, a.string("determinism-sample") != nil { throw UsageError("--guided runs no determinism sample (a guided seed's scenario depends on its lane)") }
        if guided, shardCount > Int(GuidedFuzz.lanes) {
            throw UsageError("--guided deals seeds to \(GuidedFuzz.lanes) lanes and a shard takes whole lanes: at most \(GuidedFuzz.lanes) shards")
        }
    }

    /// Runs the campaign guided from the `start` scripts, saving the scripts it adds to the
    /// `corpus` folder when given; returns the results and the summary's line on guidance.
    static func runGuided(_ campaign: Campaign, start: [ScenarioFile], from: UInt64,
                          corpus: String?) throws -> (results: [SeedResult], line: String) {
        let added = campaign.runGuided(start: start, firstSeed: from)
        let results = campaign.results
        let replayed = results.filter { $0.seed - from < UInt64(start.count) }.count
        let mutated = results.filter { $0.guided == true }.count - replayed
        var line = "guided: \(GuidedFuzz.lanes) lanes; \(grouped(mutated)) of \(plural(results.count, "seed")) mutated from the corpus"
            + (start.isEmpty ? "" : ", \(grouped(replayed)) replayed it")
            + "; corpus of \(plural(start.count, "script")) at the start, \(grouped(added.count)) added"
        if let dir = corpus { line += " (\(grouped(try GuidedCorpus.save(added, to: dir))) new files in \(dir))" }
        return (results, line)
    }

    /// The summary's line on the determinism guard: always with --check-determinism;
    /// with the sampled default only when it found something (the usual summary stays as it was).
    static func determinismLine(_ results: [SeedResult], oneIn: UInt64, processes: Bool) -> String? {
        let found = results.filter { $0.nondeterminism != nil }
        let verdict = found.first.map { "\(plural(found.count, "seed")) NONDETERMINISTIC (first: \($0.seed); simkit replay \($0.seed) \($0.coreFlags) --twice)" }
        if oneIn == 1 {
            let compared = determinismCompared(results)
            if compared.byTrace + compared.byVerdict == 0, !results.isEmpty {
                return "determinism: INCOMPLETE: compared nothing: no seed ended with a trace or a verdict of its core to compare "
                    + "(\(plural(results.count, "seed")): the generator's error or the server's failure)"
            }
            let how = compared.byVerdict == 0 ? "" : "; \(grouped(compared.byTrace)) compared by trace, \(grouped(compared.byVerdict)) by the verdict "
                + "their core ended them with (an escape: the same, naming the same step)"
            return "determinism: every seed ran twice in this process" + (processes ? " and once in another" : "") + how + "; "
                + (verdict ?? (compared.byVerdict == 0 ? "every trace the same" : "every run the same"))
        }
        guard let verdict else { return nil }
        let checked = results.filter { DeterminismCheck.sampled($0.seed, oneIn: oneIn) }.count
        return "determinism: \(plural(checked, "seed")) (1 in \(oneIn)) ran twice; \(verdict)"
    }

    /// Seeds whose two runs the determinism guard compared: by trace (fingerprints), or by
    /// the verdict an SDK core ended them with (`CoreFailure`; `Fuzz.sameVerdict`). A seed
    /// that the generator or the server on the wire ended was not compared.
    static func determinismCompared(_ results: [SeedResult]) -> (byTrace: Int, byVerdict: Int) {
        var trace = 0, verdict = 0
        for r in results {
            if !r.fingerprint.isEmpty { trace += 1 }
            else if let kind = r.broken.first, Fuzz.isCoreFailure(kind), !Fuzz.isServerFailure(kind) { verdict += 1 }
        }
        return (trace, verdict)
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

extension Campaign {
    /// `simkit replay SEED …` with this campaign's options, for commands it prints.
    func replayArguments(_ seed: UInt64) -> [String] {
        ["replay", "\(seed)", "--sdk", Fuzz.sdkName(generator.sdk)] + (ServerCores.flag(generator.server).isEmpty ? [] : ["--server", ServerCores.name(generator.server)])
        + ["--devices", "\(generator.maxDevicesPerGroup)",
         "--duration", "\(generator.maxDurationDays)d"]
    }

    /// Prints a NONDETERMINISTIC seed's report (unless quiet).
    func reportNondeterminism(seed: UInt64, _ n: Nondeterminism) {
        guard !quiet else { return }
        let text = "NONDETERMINISTIC seed \(seed): " + n.text().dropFirst("NONDETERMINISTIC: ".count)
            + "  replay:     simkit replay \(seed) \(coreFlags(generator))\(devicesFlag) --twice\n"
        state.withLock { s in
            s.progress.clear()
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }

    /// `--processes`: every seed of the plan run once more in another simkit process
    /// (`simkit seed-fingerprints`, one process for the whole run) and its fingerprint and
    /// event count compared with this process's. A seed that differs is located by a trace
    /// written in another process (`simkit replay --trace`) and one written here.
    func checkInAnotherProcess(_ results: [SeedResult], plan: FuzzPlan) throws -> [SeedResult] {
        if !quiet { printError("fuzz: running \(plural(results.count, "seed")) again in another process…") }
        let server = ServerCores.flag(generator.server).isEmpty ? [] : ["--server", ServerCores.name(generator.server)]
        let child = try CrossProcess.run(["seed-fingerprints", "--from", "\(plan.range.from)", "--seeds", "\(plan.range.count)",
                                          "--shard", plan.shardText, "--sdk", Fuzz.sdkName(generator.sdk)] + server
                                         + ["--devices", "\(generator.maxDevicesPerGroup)", "--duration", "\(generator.maxDurationDays)d",
                                            "--jobs", "\(jobs)"])
        guard child.status == 0 else {
            // A signal reaches the whole process group: the second process stopped with this one.
            if stopRequested.load(ordering: .relaxed) {
                printError("simkit fuzz: stopped: the check in another process did not finish")
                return results
            }
            throw UsageError("the second process failed (exit \(child.status)): \(child.err)")
        }
        var theirs: [UInt64: (String, UInt64)] = [:]
        for line in child.out.split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.count == 3, let seed = UInt64(f[0]), let events = UInt64(f[2]) { theirs[seed] = (String(f[1]), events) }
        }
        var out = results
        for i in out.indices where out[i].nondeterminism == nil && !out[i].fingerprint.isEmpty {
            let r = out[i]
            guard let other = theirs[r.seed] else { throw UsageError("the second process gave no fingerprint for seed \(r.seed)") }
            if other.0 == r.fingerprint, other.1 == r.events { continue }
            let setup = try ScenarioCompiler.compile(ScenarioGenerator.generate(seed: r.seed, options: generator)).setup
            let core = CrossProcess.coreName(sdk: generator.sdk, server: generator.server, cores: cores)
            let detail = "fingerprints: this process \(r.fingerprint) (\(r.events) events), another process \(other.0) (\(other.1) events)"
            let own = try CrossProcess.traceText(of: setup, sdk: generator.sdk, server: generator.server, cores: cores)
            var n = try CrossProcess.compare(own: own, childArguments: replayArguments(r.seed), core: core)
                ?? .unlocated(.unlocated, explanation: "the runs in the two processes differed, but the traces written afterwards, "
                              + "one more in each process, were the same: the leak did not repeat.", names: ("this process", "another process"),
                              core: core, detail: nil)
            n.detail = [n.detail, detail].compactMap { $0 }.joined(separator: "; ")
            out[i].nondeterminism = n
            reportNondeterminism(seed: r.seed, n)
        }
        return out
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
    /// One seed in this many runs twice (`DeterminismCheck.sampled`); 1: all, 0: none.
    let determinismOneIn: UInt64
    /// The baseline core's options (`--baseline`): every seed runs on it too.
    let baseline: GeneratorOptions?
    let started = monotonicSeconds()
    struct State {
        var results: [SeedResult?]; var done = 0; var failures = 0; var serverFailures = 0; var progress: ProgressLine
        var baselineResults: [SeedResult?] = []
    }
    /// Stop taking seeds after this many ended by the server on the wire (0: never).
    nonisolated(unsafe) var maxServerFailures = 0
    /// Whether `maxServerFailures` stopped the campaign.
    var stoppedByServer: Bool { maxServerFailures > 0 && state.withLock { $0.serverFailures >= maxServerFailures } }
    let state: Mutex<State>
    let finished = Mutex<Double>(0)

    init(seeds: [UInt64], generator: GeneratorOptions, cores: SDKCores = SDKCores(), jobs: Int, out: String, shrink: Bool,
         quiet: Bool, timeLimit: Double?, determinismOneIn: UInt64 = DeterminismCheck.defaultSampleOneIn, baseline: GeneratorOptions? = nil) {
        self.seeds = seeds; self.generator = generator; self.cores = cores; self.jobs = jobs; self.out = out
        self.shrink = shrink; self.quiet = quiet; self.timeLimit = timeLimit; self.determinismOneIn = determinismOneIn
        self.baseline = baseline
        state = Mutex(State(results: Array(repeating: nil, count: seeds.count),
                            progress: ProgressLine(label: "fuzz", noun: "seed", total: seeds.count, quiet: quiet),
                            baselineResults: Array(repeating: nil, count: baseline == nil ? 0 : seeds.count)))
    }

    /// The baseline's results of the seeds that ran, in seed order (`--baseline`).
    var baselineResults: [SeedResult] { state.withLock { $0.baselineResults.compactMap { $0 } } }

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
        if timeIsUp() { return }
        let seed = seeds[i]
        let baselineResult = runBaseline(i)
        // The seeds the guard checks run in worlds of their own type; the others run as they always did.
        let (result, scenario, violations) = DeterminismCheck.sampled(seed, oneIn: determinismOneIn)
            ? Fuzz.run(seed: seed, options: generator, cores: cores, checkDeterminism: true)
            : Fuzz.run(seed: seed, options: generator, cores: cores)
        if stoppedOnTheWire { return }
        finish(i, result, scenario, violations, baseline: baselineResult)
    }

    /// Whether a signal stopped the wait on a server on the wire: the seed in progress did
    /// not run to its end (its world stopped talking to the server), so it counts as not run.
    var stoppedOnTheWire: Bool {
        switch generator.server {
        case .process, .http: WireInterrupt.requested
        default: false
        }
    }

    /// True (and a stop requested) once the time limit has passed.
    func timeIsUp() -> Bool {
        guard let limit = timeLimit, monotonicSeconds() - started > limit else { return false }
        stopRequested.store(true, ordering: .relaxed)
        return true
    }

    /// Runs the seeds guided (`GuidedFuzz`): each job takes whole lanes and runs a lane's
    /// seeds in order, so every seed's scenario is the same under any --jobs or --shard.
    /// The scripts the lanes added to their corpora, lane by lane.
    /// `firstSeed` is the whole range's first seed: seed `firstSeed + i` replays `start[i]`.
    func runGuided(start: [ScenarioFile], firstSeed: UInt64) -> [ScenarioFile] {
        var byLane: [UInt64: [Int]] = [:]
        for (i, seed) in seeds.enumerated() { byLane[GuidedFuzz.lane(of: seed), default: []].append(i) }
        let lanes = byLane.keys.sorted().map { byLane[$0]! }
        let added = Mutex<[[ScenarioFile]]>(Array(repeating: [], count: lanes.count))
        parallelForEach(count: lanes.count, jobs: jobs) { k in
            var lane = GuidedFuzz.Lane(start: start, options: self.generator, cores: self.cores, firstSeed: firstSeed)
            for i in lanes[k] {
                if stopRequested.load(ordering: .relaxed) || self.timeIsUp() { break }
                let outcome = lane.run(seed: self.seeds[i])
                if self.stoppedOnTheWire { break }
                self.finish(i, outcome.result, outcome.scenario, outcome.violations)
            }
            let mine = lane.added
            added.withLock { $0[k] = mine }
        }
        finished.withLock { $0 = monotonicSeconds() - started }
        state.withLock { $0.progress.clear() }
        return added.withLock { $0.flatMap { $0 } }
    }

    /// The results of the seeds that ran, in seed order (after `run` or `runGuided`).
    var results: [SeedResult] { state.withLock { $0.results.compactMap { $0 } } }

    /// Records seed `i`'s outcome: shrinks a failure and writes its reproducer, prints it,
    /// and counts it in the progress line.
    func finish(_ i: Int, _ seedResult: SeedResult, _ scenario: ScenarioFile, _ violations: [Violation], baseline: SeedResult? = nil) {
        let seed = seeds[i]
        var result = seedResult
        let guided = result.guided ?? false
        // With --baseline, a failure the baseline has too (and no more) is known: told, not shrunk.
        let known = baseline.map { $0.failed && !BaselineComparison.breaksMore(result, than: $0) } ?? false
        if let n = result.nondeterminism { reportNondeterminism(seed: seed, n) }
        if result.failed, known {
            if !quiet, let b = baseline {
                let line = "FAIL seed \(seed): \(result.firstViolation ?? result.broken.first ?? "NONDETERMINISTIC")\n"
                    + "  known: the baseline (--sdk \(b.sdk)) fails it too: \(BaselineComparison.broken(b).joined(separator: ", "))\n"
                state.withLock { s in
                    s.progress.clear()
                    FileHandle.standardOutput.write(Data(line.utf8))
                }
            }
        } else if result.failed, let invariant = result.broken.first {
            // The reproducer is shrunk for, and named after, the first invariant broken in
            // time (`broken` is sorted by name).
            let target = violations.first?.invariant.rawValue ?? invariant
            let path = (out as NSString).appendingPathComponent("\(target)-seed\(seed).scenario")
            var small = scenario
            // After a stop the failure is written as generated: it fails the same way, and
            // shrinking can take seconds that the one who pressed Ctrl-C did not ask for.
            // A server that left the protocol is written as generated too: shrinking would
            // run it again and again, and what it needs is its message, not a smaller script.
            if shrink, invariant != "generator-error", !Fuzz.isServerFailure(invariant), !stopRequested.load(ordering: .relaxed) {
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
                    + (guided
                        // A guided seed's scenario came from its lane's corpus: only the file rebuilds it.
                        ? "  replay:     simkit run \(path)\n  picture:    simkit timeline \(path) -o seed\(seed).html\n"
                        : "  replay:     " + (written ? "simkit run \(path)   or   " : "") + "simkit replay \(seed) \(coreFlags(generator))\(devicesFlag)\n"
                          + "  picture:    simkit timeline --seed \(seed) \(coreFlags(generator))\(devicesFlag) -o seed\(seed).html\n")
                state.withLock { s in
                    s.progress.clear()
                    FileHandle.standardOutput.write(Data(line.utf8))
                }
            }
        }
        state.withLock { s in
            s.results[i] = result
            if let baseline { s.baselineResults[i] = baseline }
            s.done += 1
            if result.failed { s.failures += 1 }
            if let kind = result.broken.first, Fuzz.isServerFailure(kind) {
                s.serverFailures += 1
                if maxServerFailures > 0, s.serverFailures >= maxServerFailures { stopRequested.store(true, ordering: .relaxed) }
            }
            s.progress.update(done: s.done, failures: s.failures, started: started)
        }
    }
}
