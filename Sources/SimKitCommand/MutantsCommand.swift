import Foundation
import Synchronization
import SimKit
import Invariants
import Scenarios

/// `simkit mutants`: the mutation score — which mutants plain fuzzing catches, and how fast.
enum MutantsCommand {
    static let help = """
    usage: simkit mutants [--list] [--seeds N] [--jobs J] [--out DIR] [--json FILE] [--no-shrink]

    For every mutant (a deliberately wrong variant of the reference SDK or server), runs
    plain 'simkit fuzz' seeds from 0 until one breaks an invariant, shrinks that failure,
    and prints: seeds to the first catch ('seeds'), seeds until the mutant's own invariant
    broke ('own@'), the time to the first catch, the invariant broken first, and the size
    of the shrunk reproducer. Ends with the mutation score.

    options:
      --list         print the mutants, one a line: name, side, invariant it should break, the bug
      --seeds N      give up on a mutant after N seeds (default 2000)
      --jobs J       mutants run side by side (default: all cores)
      --out DIR      where reproducers go (default simkit-out/mutants)
      --json FILE    write the table as JSON
      --no-shrink    do not shrink

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
    }

    static func run(_ argv: [String]) throws -> Int32 {
        let a = try Arguments(argv, switches: ["list", "no-shrink"], options: ["seeds", "jobs", "out", "json"])
        if a.has("help") { print(help, terminator: ""); return 0 }
        if a.has("list") {
            for m in Mutants.all {
                print("\(m.name.padding(toLength: 30, withPad: " ", startingAt: 0)) \(m.side.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(m.expected.rawValue.padding(toLength: 36, withPad: " ", startingAt: 0)) \(m.summary)")
            }
            return 0
        }
        let seeds = Int(try a.uint("seeds", default: 2_000, range: 1...1_000_000))
        let jobs = Int(try a.uint("jobs", default: UInt64(ProcessInfo.processInfo.activeProcessorCount), range: 1...256))
        let out = a.string("out") ?? "simkit-out/mutants"
        let shrink = !a.has("no-shrink")
        try checkWritableDirectory(out)
        if let path = a.string("json") { try checkWritableFile(path) }
        let rows = Mutex<[Row?]>(Array(repeating: nil, count: Mutants.all.count))
        let t0 = monotonicSeconds()
        parallelForEach(count: Mutants.all.count, jobs: jobs) { i in
            let row = hunt(Mutants.all[i], seeds: seeds, out: out, shrink: shrink)
            rows.withLock { $0[i] = row }
        }
        let table = rows.withLock { $0.compactMap { $0 } }
        let interrupted = stopRequested.load(ordering: .relaxed)
        print("mutant                         side    seeds  own@   time     invariant broken (first)              reproducer")
        for r in table {
            let seedsText = r.seedsToCatch.map(String.init) ?? "-"
            let first = r.broken.first ?? (r.interrupted == true ? "INTERRUPTED" : "SURVIVED")
            let size = r.reproducerStatements.map { "\($0) stmts, \(r.reproducerDevices ?? 0) dev" } ?? "-"
            let own = r.seedsToExpected.map(String.init) ?? "-"
            print("\(r.mutant.padding(toLength: 30, withPad: " ", startingAt: 0)) \(r.side.padding(toLength: 7, withPad: " ", startingAt: 0)) \(seedsText.padding(toLength: 6, withPad: " ", startingAt: 0)) \(own.padding(toLength: 6, withPad: " ", startingAt: 0))\(String(format: "%6.2fs", r.seconds))  \((first + (r.expectedBroken || r.interrupted == true ? "" : " (expected \(r.expected))")).padding(toLength: 38, withPad: " ", startingAt: 0)) \(size)")
        }
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

    /// Fuzzes one mutant from seed 0 until it is caught or `seeds` run out.
    static func hunt(_ m: Mutant, seeds: Int, out: String, shrink: Bool) -> Row {
        let t0 = monotonicSeconds()
        let options = GeneratorOptions(sdk: .mutant(m.name))
        var row = Row(mutant: m.name, side: m.side.rawValue, expected: m.expected.rawValue, caught: false, seedsToCatch: nil,
                      seedsToExpected: nil, seconds: 0, broken: [], expectedBroken: false)
        var firstCatch: (seed: Int, scenario: ScenarioFile, broken: [String])?
        for i in 0..<seeds where !stopRequested.load(ordering: .relaxed) {
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
            row.expectedBroken = ownInvariant
            row.seedsToExpected = ownInvariant ? i + 1 : nil
            let target = ownInvariant ? m.expected.rawValue : firstCatch!.broken[0]
            let chosen = ownInvariant ? scenario : firstCatch!.scenario
            let small = shrink ? Fuzz.shrink(chosen, invariant: target).0 : chosen
            let path = (out as NSString).appendingPathComponent("\(m.name)-seed\(i).scenario")
            if (try? writeAtomically(Fuzz.reproducerText(small, invariant: target, seed: UInt64(i), sdk: options.sdk, file: path), to: path)) != nil {
                row.reproducer = path
            }
            row.reproducerStatements = small.statementCount
            row.reproducerDevices = small.deviceCount
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
