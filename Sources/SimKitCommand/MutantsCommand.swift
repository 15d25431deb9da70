import Foundation
import Synchronization
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch

/// How the seeds of a hunt are made and run. `.plain` is `simkit fuzz`'s generator, seed by
/// seed. This is the seam for another mode (the coverage-guided one of issue 20): add a
/// case, say how it runs seed `i` of a hunt, and `simkit mutants` shows its column.
enum FuzzMode: String, CaseIterable, Codable, Sendable {
    case plain
    /// `simkit fuzz --guided` from a starting corpus (`simkit mutants --corpus`, by default
    /// `fuzz-corpus/` if the current folder has one, else none): seeds dealt to
    /// `GuidedFuzz.lanes` lanes, each run in order (`GuidedFuzz.Lane`), the corpus replayed
    /// first; its time to bug is the first failing seed.
    case guided

    /// Whether seed `seed` of a plain hunt with `options` breaks an invariant.
    func fails(seed: UInt64, options: GeneratorOptions) -> Bool {
        Fuzz.run(seed: seed, options: options).0.failed
    }
}

/// `simkit mutants`: the mutation score — which mutants plain fuzzing catches, and how fast.
enum MutantsCommand {
    static let help = """
    usage: simkit mutants [--list] [--seeds N] [--jobs J] [--out DIR] [--json FILE] [--no-shrink]
                          [--modes M] [--corpus DIR|none] [--density]

    For every mutant (a deliberately wrong variant of the reference SDK or server), runs
    plain 'simkit fuzz' seeds from 0 until one breaks an invariant, shrinks that failure,
    and prints: the time to bug of each fuzzing mode ('plain seeds': seeds up to and
    including the first that fails; 'plain s': wall-clock seconds on this machine until
    that seed is known to fail, with --jobs seeds run side by side as 'simkit fuzz' runs
    them; shrinking is not counted), seeds until the mutant's own invariant broke
    ('own@'), the invariant broken first, and the size of the shrunk reproducer. Ends with
    the median seeds and seconds of each mode over the mutants caught, and the mutation
    score. Mutants are timed one after another; the hunts for their own invariants and
    the shrinking then run side by side.

    options:
      --list         print the mutants, one a line: name, side, invariant it should break, the bug;
                     then the ordering-only ones (for `simkit explore`, not timed here)
      --seeds N      give up on a mutant after N seeds (default 2000)
      --jobs J       seeds (when timing) and mutants (when shrinking) run side by side
                     (default: all cores)
      --out DIR      where reproducers go (default simkit-out/mutants)
      --json FILE    write the table as JSON (with each mutant's catch density)
      --density      also run every seed of the budget for each mutant and count those
                     that break an invariant ('density': k of N seeds); a mutant that
                     few seeds catch is one fuzzing finds by luck. Implied by --json
      --no-shrink    do not shrink
      --modes M      fuzzing modes to time, comma-separated: plain, guided (default
                     both; plain always runs, the hunt starts from its catch). Guided
                     runs as 'simkit fuzz --guided --corpus DIR' would, its 16 lanes
                     side by side: the starting corpus replayed first, then mutation
      --corpus DIR   guided mode's starting corpus (default: fuzz-corpus if the current
                     folder has one, the corpus committed with SimKit, built by guided
                     fuzzing of the reference alone; else none). 'none': start empty.
                     The output names the corpus guided started from

    Ctrl-C (SIGINT) or SIGTERM stops the hunt: no new seed starts, and the table shows
    which mutants were not finished. A second signal exits at once.

    Exit: 0 every mutant caught, 1 a mutant survived, 2 bad input, 3 interrupted (and
    no finished mutant survived).

    """

    struct Row: Codable, Sendable {
        var mutant: String
        var side: String
        var expected: String
        var caught: Bool
        var seedsToCatch: Int?
        /// Seeds until one broke the invariant the mutant is meant to break.
        var seedsToExpected: Int?
        var seconds: Double
        var broken: [String]
        var expectedBroken: Bool
        var reproducer: String?
        var reproducerStatements: Int?
        var reproducerDevices: UInt64?
        /// True when a signal stopped the hunt before the mutant was caught or its seeds ran out.
        var interrupted: Bool?
        /// Time to bug, one entry per fuzzing mode (`FuzzMode`); `seconds` above is plain's.
        var timeToBug: [TimeToBug] = []
        /// With `--density` (or `--json`): how many of the budget's plain seeds break an
        /// invariant, of `densitySeeds`.
        var catchingSeeds: Int?
        var densitySeeds: Int?
    }

    /// How long one fuzzing mode takes to catch a mutant.
    struct TimeToBug: Codable, Sendable {
        var mode: String
        /// Seeds up to and including the first that fails; nil when none of the budget did.
        var seeds: Int?
        /// Wall-clock seconds until that seed was known to fail (or the budget ran out),
        /// with `--jobs` seeds side by side.
        var seconds: Double
        /// Guided: the starting corpus folder, nil when it started empty.
        var corpus: String?
        /// Guided: the scripts in the starting corpus.
        var corpusScripts: Int?
    }

    /// The starting corpus of the guided mode: `--corpus DIR`, `none`, or by default
    /// `fuzz-corpus` when the current folder has it. A folder named but missing is bad input.
    static func startCorpus(_ flag: String?) throws -> (dir: String?, scripts: [ScenarioFile]) {
        let dir: String
        if let flag {
            if flag == "none" { return (nil, []) }
            dir = flag
        } else {
            dir = defaultCorpus
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else { return (nil, []) }
        }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            throw UsageError("--corpus \(dir) is not a folder (give a corpus folder, or none to start guided fuzzing empty)")
        }
        return (dir, try GuidedCorpus.load(dir, cores: SDKCores()))
    }

    /// The corpus folder guided mode starts from when `--corpus` is not given and the
    /// current folder has it: the one committed at the repository's root.
    static let defaultCorpus = "fuzz-corpus"

    /// How the output names guided mode's start: "from fuzz-corpus/, 143 scripts" or "from an empty corpus".
    static func corpusLabel(_ dir: String?, _ count: Int) -> String {
        guard let dir else { return "from an empty corpus" }
        return "from \(dir.hasSuffix("/") ? dir : dir + "/"), \(plural(count, "script"))"
    }

    /// The width of the name column: the longest mutant name, so that every name is printed
    /// whole (to paste into `--sdk mutant:NAME`) and the columns after it still line up.
    static var nameWidth: Int { Mutants.names.map(\.count).max() ?? 0 }

    /// `text` padded with spaces to `width` columns; never cut (a longer text is kept whole).
    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// `simkit mutants --list`: a line per mutant (name, side, the invariant it should break,
    /// the bug), then the ordering-only ones under a heading.
    static func listLines() -> [String] {
        let invariantWidth = (Mutants.all + Mutants.orderingOnly).map(\.expected.rawValue.count).max() ?? 0
        func line(_ m: Mutant) -> String {
            "\(pad(m.name, nameWidth)) \(pad(m.side.rawValue, 7)) \(pad(m.expected.rawValue, invariantWidth)) \(m.summary)"
        }
        return Mutants.all.map(line)
            + ["ordering-only (found by 'simkit explore'; fuzzing is not expected to catch them and they are not in the score):"]
            + Mutants.orderingOnly.map(line)
    }

    static func run(_ argv: [String]) throws -> Int32 {
        if argv.contains(where: { $0 == "--server" || $0.hasPrefix("--server=") }) {
            throw UsageError("mutants takes no --server: each mutant plants its bug in the reference SDK or the reference server, "
                             + "and a server on the wire replaces the reference server, so a server mutant cannot reach it. "
                             + "Plant the bug in your own server (as Examples/PythonServer/server.py --bug NAME does) and fuzz it: "
                             + "simkit fuzz --server process:'CMD'")
        }
        let a = try Arguments(argv, switches: ["list", "no-shrink", "density"], options: ["seeds", "jobs", "out", "json", "modes", "corpus"])
        if a.has("help") { print(help, terminator: ""); return 0 }
        if a.has("list") {
            for line in listLines() { print(line) }
            return 0
        }
        let seeds = Int(try a.uint("seeds", default: 2_000, range: 1...1_000_000))
        let jobs = Int(try a.uint("jobs", default: UInt64(ProcessInfo.processInfo.activeProcessorCount), range: 1...256))
        let out = a.string("out") ?? "simkit-out/mutants"
        let shrink = !a.has("no-shrink")
        let modes = try parseModes(a.string("modes") ?? "plain,guided")
        if a.string("corpus") != nil, !modes.contains(.guided) { throw UsageError("--corpus is guided mode's: add guided to --modes") }
        let start = modes.contains(.guided) ? try startCorpus(a.string("corpus")) : (dir: nil, scripts: [])
        if modes.contains(.guided) { print("guided starts \(corpusLabel(start.dir, start.scripts.count))") }
        try checkWritableDirectory(out)
        if let path = a.string("json") { try checkWritableFile(path) }
        let t0 = monotonicSeconds()
        // Time to bug: one mutant at a time, its seeds side by side, as 'simkit fuzz' would run.
        var timing: [[TimeToBug]] = []
        for m in Mutants.all where !stopRequested.load(ordering: .relaxed) {
            timing.append(modes.map { timeToBug(m, mode: $0, seeds: seeds, jobs: jobs, start: start) })
        }
        let rows = Mutex<[Row?]>(Array(repeating: nil, count: Mutants.all.count))
        let timed = timing
        parallelForEach(count: timed.count, jobs: jobs) { i in
            // Plain seeds before the first catch are known to pass: the hunt starts there.
            let plain = timed[i][0]
            var row = hunt(Mutants.all[i], seeds: seeds, from: plain.seeds.map { $0 - 1 } ?? seeds, out: out, shrink: shrink)
            row.timeToBug = timed[i]
            row.seconds = plain.seconds
            if plain.seeds == nil, stopRequested.load(ordering: .relaxed) { row.interrupted = true }
            rows.withLock { $0[i] = row }
        }
        // A mutant that a stop left untimed or unhunted is listed as interrupted.
        var table = rows.withLock { $0 }.enumerated().map { i, row in
            row ?? Row(mutant: Mutants.all[i].name, side: Mutants.all[i].side.rawValue, expected: Mutants.all[i].expected.rawValue,
                       caught: false, seedsToCatch: nil, seedsToExpected: nil, seconds: 0, broken: [], expectedBroken: false,
                       interrupted: true)
        }
        let densities = a.has("density") || a.string("json") != nil
        if densities {
            for i in table.indices where !stopRequested.load(ordering: .relaxed) {
                table[i].catchingSeeds = density(Mutants.all[i], seeds: seeds, jobs: jobs)
                table[i].densitySeeds = seeds
            }
        }
        let interrupted = stopRequested.load(ordering: .relaxed)
        printTable(table, modes: modes)
        printMedians(table, modes: modes, guided: corpusLabel(start.dir, start.scripts.count), jobs: jobs)
        if densities { printThinnest(table) }
        let caught = table.filter(\.caught).count
        let survived = table.filter { !$0.caught && $0.interrupted != true }.count
        print("mutation score: \(caught)/\(Mutants.all.count) caught (\(caught * 100 / max(1, Mutants.all.count))%) within \(plural(seeds, "seed")) each, in \(String(format: "%.1f", monotonicSeconds() - t0)) s")
        if interrupted {
            let unfinished = Mutants.all.count - table.filter { $0.interrupted != true }.count
            print("INCOMPLETE: stopped by \(signalName(stopSignal.load(ordering: .relaxed))); \(plural(unfinished, "mutant")) of \(Mutants.all.count) not finished")
        }
        if let path = a.string("json") {
            let enc = JSONEncoder(); enc.outputFormatting = [.sortedKeys, .prettyPrinted]
            try writeAtomically(String(decoding: try enc.encode(table), as: UTF8.self) + "\n", to: path)
        }
        return survived > 0 ? 1 : interrupted ? exitIncomplete : 0
    }

    /// The fuzzing modes `--modes` names, once each, plain first: the hunt starts from
    /// plain's catch.
    static func parseModes(_ list: String) throws -> [FuzzMode] {
        var modes: [FuzzMode] = []
        for name in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let mode = FuzzMode(rawValue: String(name)) else {
                throw UsageError("--modes takes plain and guided, separated by commas; not '\(name)'")
            }
            if !modes.contains(mode) { modes.append(mode) }
        }
        if modes.first != .plain { modes.removeAll { $0 == .plain }; modes.insert(.plain, at: 0) }   // the hunt starts from plain's catch
        return modes
    }

    /// The table: a line per mutant with each mode's time to bug, the seeds to its own
    /// invariant, the invariant broken first and the reproducer's size.
    static func printTable(_ table: [Row], modes: [FuzzMode]) {
        let modeHeader = modes.map { "\(($0.rawValue + " seeds").padding(toLength: 12, withPad: " ", startingAt: 0)) \(($0.rawValue + " s").padding(toLength: 8, withPad: " ", startingAt: 0))" }.joined(separator: " ")
        print("\(pad("mutant", nameWidth)) side    \(modeHeader) own@   invariant broken (first)              reproducer")
        for r in table {
            let first = r.broken.first ?? (r.interrupted == true ? "INTERRUPTED" : "SURVIVED")
            let size = r.reproducerStatements.map { "\($0) stmts, \(r.reproducerDevices ?? 0) dev" } ?? "-"
            let own = r.seedsToExpected.map(String.init) ?? "-"
            let modeColumns = modes.map { mode in
                let t = r.timeToBug.first { $0.mode == mode.rawValue }
                let seedsText = t?.seeds.map(String.init) ?? "-"
                let secondsText = t.map { String(format: "%.2f", $0.seconds) } ?? "-"
                return "\(seedsText.padding(toLength: 12, withPad: " ", startingAt: 0)) \(secondsText.padding(toLength: 8, withPad: " ", startingAt: 0))"
            }.joined(separator: " ")
            let density = r.catchingSeeds.map { "  density \($0)/\(r.densitySeeds ?? 0)" } ?? ""
            print("\(pad(r.mutant, nameWidth)) \(r.side.padding(toLength: 7, withPad: " ", startingAt: 0)) \(modeColumns) \(own.padding(toLength: 6, withPad: " ", startingAt: 0)) \((first + (r.expectedBroken || r.interrupted == true ? "" : " (expected \(r.expected))")).padding(toLength: 38, withPad: " ", startingAt: 0)) \(size)\(density)")
        }
    }

    /// The median time to bug of each mode, over all mutants and over the deep ones;
    /// `guided` names the corpus guided mode started from.
    static func printMedians(_ table: [Row], modes: [FuzzMode], guided: String, jobs: Int) {
        for (label, subset) in [("", table), (" deep", table.filter { Mutants.deepNames.contains($0.mutant) })] {
            for mode in modes {
                let caughtBy = subset.compactMap { r in r.timeToBug.first { $0.mode == mode.rawValue && $0.seeds != nil } }
                let name = mode.rawValue + label + (mode == .guided ? " " + guided : "")
                guard !caughtBy.isEmpty else { print("median time to bug (\(name)): none caught"); continue }
                let seedsMedian = median(caughtBy.map { Double($0.seeds!) }), secondsMedian = median(caughtBy.map(\.seconds))
                print("median time to bug (\(name), \(caughtBy.count) of \(subset.count) mutants caught, --jobs \(jobs)): \(seedsMedian.formatted(.number.precision(.fractionLength(0...1)))) seeds, \(String(format: "%.3f", secondsMedian)) s; slowest \(caughtBy.map { $0.seeds! }.max()!) seeds, \(String(format: "%.2f", caughtBy.map(\.seconds).max()!)) s")
            }
        }
    }

    /// The ten mutants the fewest seeds catch: where fuzzing finds a bug by luck.
    static func printThinnest(_ table: [Row]) {
        let measured = table.filter { $0.catchingSeeds != nil }.sorted { ($0.catchingSeeds!, $0.mutant) < ($1.catchingSeeds!, $1.mutant) }
        guard !measured.isEmpty else { return }
        print("thinnest catch density (seeds that break an invariant, of each budget):")
        for r in measured.prefix(10) {
            print("  \(pad(r.mutant, nameWidth)) \(r.catchingSeeds!) of \(r.densitySeeds ?? 0)")
        }
    }

    /// How many of plain seeds `0..<seeds` of mutant `m` break an invariant, `jobs` side by side.
    static func density(_ m: Mutant, seeds: Int, jobs: Int) -> Int {
        let options = GeneratorOptions(sdk: .mutant(m.name))
        let next = Atomic<Int>(0), caught = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, seeds))) { _ in
            while !stopRequested.load(ordering: .relaxed) {
                let i = next.add(1, ordering: .relaxed).oldValue
                if i >= seeds { break }
                if FuzzMode.plain.fails(seed: UInt64(i), options: options) { caught.add(1, ordering: .relaxed) }
            }
        }
        return caught.load(ordering: .relaxed)
    }

    /// The median of `values` (not empty): the middle one, or the mean of the two middle ones.
    static func median(_ values: [Double]) -> Double {
        let v = values.sorted()
        return v.count % 2 == 1 ? v[v.count / 2] : (v[v.count / 2 - 1] + v[v.count / 2]) / 2
    }

    /// Runs `mode`'s seeds 0, 1, … of mutant `m` on `jobs` threads, each taking the next
    /// seed, until the first failing seed is known (every seed before it ran) or `seeds`
    /// run out; the wall-clock time of that, as a user of 'simkit fuzz' would wait for it.
    static func timeToBug(_ m: Mutant, mode: FuzzMode, seeds: Int, jobs: Int,
                          start: (dir: String?, scripts: [ScenarioFile]) = (nil, [])) -> TimeToBug {
        let options = GeneratorOptions(sdk: .mutant(m.name))
        if mode == .guided {
            var t = guidedTimeToBug(options: options, seeds: seeds, jobs: jobs, start: start.scripts)
            t.corpus = start.dir
            t.corpusScripts = start.scripts.count
            return t
        }
        let next = Atomic<Int>(0)
        let first = Atomic<Int>(Int.max)
        let t0 = monotonicSeconds()
        DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, seeds))) { _ in
            while !stopRequested.load(ordering: .relaxed) {
                let i = next.add(1, ordering: .relaxed).oldValue
                if i >= seeds || i > first.load(ordering: .relaxed) { break }
                guard mode.fails(seed: UInt64(i), options: options) else { continue }
                var seen = first.load(ordering: .relaxed)
                while i < seen {
                    let (exchanged, now) = first.compareExchange(expected: seen, desired: i, ordering: .relaxed)
                    if exchanged { break }
                    seen = now
                }
            }
        }
        let found = first.load(ordering: .relaxed)
        return TimeToBug(mode: mode.rawValue, seeds: found == Int.max ? nil : found + 1, seconds: monotonicSeconds() - t0)
    }

    /// `timeToBug` for guided fuzzing: the lanes run side by side on `jobs` threads, each
    /// taking its seeds in order and stopping past the first failing seed found so far,
    /// so the answer is the first failing seed of `simkit fuzz --guided --corpus` (from
    /// `start`) under any --jobs.
    static func guidedTimeToBug(options: GeneratorOptions, seeds: Int, jobs: Int, start: [ScenarioFile] = []) -> TimeToBug {
        let first = Atomic<Int>(Int.max)
        let t0 = monotonicSeconds()
        let lanes = Int(GuidedFuzz.lanes)
        parallelForEach(count: lanes, jobs: jobs) { k in
            var lane = GuidedFuzz.Lane(start: start, options: options)
            var i = k
            while i < seeds, i < first.load(ordering: .relaxed), !stopRequested.load(ordering: .relaxed) {
                if lane.run(seed: UInt64(i)).result.failed {
                    var seen = first.load(ordering: .relaxed)
                    while i < seen {
                        let (exchanged, now) = first.compareExchange(expected: seen, desired: i, ordering: .relaxed)
                        if exchanged { break }
                        seen = now
                    }
                    break
                }
                i += lanes
            }
        }
        let found = first.load(ordering: .relaxed)
        return TimeToBug(mode: FuzzMode.guided.rawValue, seeds: found == Int.max ? nil : found + 1, seconds: monotonicSeconds() - t0)
    }

    /// Fuzzes one mutant from seed `from` (the seeds before it are known to pass) until it
    /// is caught or `seeds` run out.
    static func hunt(_ m: Mutant, seeds: Int, from: Int = 0, out: String, shrink: Bool) -> Row {
        let t0 = monotonicSeconds()
        let options = GeneratorOptions(sdk: .mutant(m.name))
        var row = Row(mutant: m.name, side: m.side.rawValue, expected: m.expected.rawValue, caught: false, seedsToCatch: nil,
                      seedsToExpected: nil, seconds: 0, broken: [], expectedBroken: false)
        var firstCatch: (seed: Int, scenario: ScenarioFile, broken: [String])?
        var smallest: (seed: Int, scenario: ScenarioFile, invariant: String)?
        var tries = 0
        for i in min(from, seeds)..<seeds where !stopRequested.load(ordering: .relaxed) {
            let (result, scenario, violations) = Fuzz.run(seed: UInt64(i), options: options)
            guard result.failed else { continue }
            let broken = violations.map(\.invariant.rawValue).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            if firstCatch == nil {
                firstCatch = (i, scenario, broken)
                row.caught = true
                row.seedsToCatch = i + 1
                row.seconds = monotonicSeconds() - t0
                row.broken = broken
            }
            // Keep hunting (within the budget) for a seed that breaks the mutant's own invariant.
            let ownInvariant = result.broken.contains(m.expected.rawValue)
            guard ownInvariant || i == seeds - 1 else { continue }
            if row.seedsToExpected == nil {
                row.expectedBroken = ownInvariant
                row.seedsToExpected = ownInvariant ? i + 1 : nil
            }
            if ownInvariant || smallest == nil {
                let target = ownInvariant ? m.expected.rawValue : firstCatch!.broken[0]
                let chosen = ownInvariant ? scenario : firstCatch!.scenario
                let small = shrink ? Fuzz.shrink(chosen, invariant: target).0 : chosen
                if smallest == nil || Shrinker.smaller(small, than: smallest!.scenario) { smallest = (ownInvariant ? i : firstCatch!.seed, small, target) }
                tries += 1
            }
            let small = smallest!.scenario
            // A reproducer still larger than 12 statements or 3 devices: some failures need
            // more of the script than others, so shrink up to three more seeds that break
            // the same invariant and keep the smallest.
            guard !shrink || Shrinker.isSmall(small) || tries >= 4 || i == seeds - 1 || !ownInvariant else { continue }
            let (seed, best, invariant) = smallest!
            let path = (out as NSString).appendingPathComponent("\(m.name)-seed\(seed).scenario")
            if (try? writeAtomically(Fuzz.reproducerText(best, invariant: invariant, seed: UInt64(seed), sdk: options.sdk, file: path), to: path)) != nil {
                row.reproducer = path
            }
            row.reproducerStatements = best.statementCount
            row.reproducerDevices = best.deviceCount
            return row
        }
        if let first = firstCatch {   // caught, but never by its own invariant: shrink the first catch
            // After a stop the hunt for the mutant's own invariant did not finish, and the
            // reproducer is written unshrunk.
            if stopRequested.load(ordering: .relaxed) { row.interrupted = true }
            let small = shrink && row.interrupted != true ? Fuzz.shrink(first.scenario, invariant: first.broken[0]).0 : first.scenario
            let path = (out as NSString).appendingPathComponent("\(m.name)-seed\(first.seed).scenario")
            if (try? writeAtomically(Fuzz.reproducerText(small, invariant: first.broken[0], seed: UInt64(first.seed), sdk: options.sdk, file: path), to: path)) != nil {
                row.reproducer = path
            }
            row.reproducerStatements = small.statementCount
            row.reproducerDevices = small.deviceCount
            return row
        }
        row.seconds = monotonicSeconds() - t0
        if stopRequested.load(ordering: .relaxed) { row.interrupted = true }
        return row
    }
}
