import Foundation
import Synchronization
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch

/// `simkit corpus distill`: makes a guided corpus folder small and ordered (`CorpusDistiller`).
enum CorpusCommand {
    static let help = """
    usage: simkit corpus distill DIR [--out DIR2] [--max N] [--compounds N] [--jobs J] [--sdk S] [--server S]

    Makes the corpus of 'simkit fuzz --guided --corpus DIR' small and ordered. Every
    script in DIR is run with every invariant checked and the guidance observer beside
    the checkers; then a greedy set cover over the features they reach (a device's
    transitions, distances from true boundaries, rules in force at once, "sometimes"
    situations): first the script that reaches the most, then each time the one that adds
    the most not yet covered, until none adds anything or N are chosen. Ties go to the
    script whose text has the smaller hash, so the result never depends on the order
    files are read in. Scripts that break an invariant are left out (and named).

    First, though, come a few compound scripts: scripts put side by side in one scenario,
    each renamed apart (its own account, app, devices and keys), as long as the merged
    run still passes, keeps every "edge" it reached and reaches one more. Edges are the
    rare places where rules meet: within a minute of a true boundary (30 days of
    stoppage, 24 h since the last answered check, a grace deadline, a stop-old now), an
    activation just after an answered check, rules in force together or one lifted under
    another, a stale verdict, a lock error on a download. So the first seeds of a guided
    run reach many boundaries each.

    The chosen scripts are written as NNNN-HASH.scenario (NNNN their rank from 0001), so
    file-name order, the order '--corpus' reads them in, is the compounds' and then the
    cover's order: a guided run replays them first, the richest first.

    options:
      --out DIR2     where the distilled corpus goes (default: DIR itself, whose
                     .scenario files are then replaced by the distilled ones); DIR2 is
                     created if missing and must hold no .scenario file
      --max N        keep at most N scripts (default 256, at most 9999), compounds included
      --compounds N  how many compound scripts come first (default 4; 0: none)
      --jobs J       scripts run side by side (default: all cores)
      --sdk S        reference (default), mutant:NAME or custom:NAME (an SDK core the
                     tool registers): the core the features are measured on
      --server S     reference (default) or custom:NAME
                     (or process:CMD, http://HOST:PORT: a server on the wire, docs/server-protocol.md)

    Exit: 0 distilled, 2 bad input (DIR missing or not a folder, a file that does not
    parse, no script that passes).

    """

    /// The most files `distill` reads: a guided run of 20,000 seeds adds a few thousand.
    static let maxFiles = 65_536

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        guard let sub = argv.first, !sub.hasPrefix("-") else {
            if argv.contains("--help") || argv.contains("-h") { print(helpText(help, cores: cores), terminator: ""); return 0 }
            throw UsageError("expected a subcommand: distill (see 'simkit corpus --help')")
        }
        guard sub == "distill" else { throw UsageError("unknown subcommand '\(sub)'; the one there is: distill") }
        let a = try Arguments(Array(argv.dropFirst()), switches: [], options: ["out", "max", "compounds", "jobs", "sdk", "server"])
        if a.has("help") { print(helpText(help, cores: cores), terminator: ""); return 0 }
        guard a.positionals.count == 1 else {
            throw UsageError(a.positionals.isEmpty ? "distill needs a corpus folder" : "distill takes one folder, not \(a.positionals.count)")
        }
        let dir = a.positionals[0]
        let limit = Int(try a.uint("max", default: UInt64(CorpusDistiller.defaultLimit), range: 1...9_999))
        let compoundCount = Int(try a.uint("compounds", default: UInt64(CorpusCompounder.defaultCount), range: 0...64))
        let jobs = Int(try a.uint("jobs", default: UInt64(ProcessInfo.processInfo.activeProcessorCount), range: 1...256))
        let options = try a.generatorOptions(cores: cores)
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            throw UsageError("\(dir) is not a folder")
        }
        let out = a.string("out") ?? dir
        let inPlace = (out as NSString).standardizingPath == (dir as NSString).standardizingPath
        if !inPlace { try checkEmptyOut(out, dir: dir) }
        let scripts = try GuidedCorpus.loadNamed(dir, cores: cores, limit: maxFiles)
        let texts = scripts.map { ScenarioPrinter.print($0.scenario) }
        guard let runs = measure(scripts.map(\.scenario), options: options, jobs: jobs, cores: cores) else { return exitIncomplete }
        let failing = scripts.indices.filter { !runs[$0].passed }
        for i in failing { printError("simkit corpus distill: \(scripts[i].name) breaks an invariant on \(Fuzz.sdkName(options.sdk)): left out") }
        let passing = scripts.indices.filter { runs[$0].passed }
        guard !passing.isEmpty else { throw UsageError("\(dir) has no script that passes (\(plural(scripts.count, "scenario file")) read)") }
        // The compounds: merged runs measured `jobs` at a time, on the core under study.
        // Compounds already there (a distilled corpus distilled again) stay first, as they are.
        let kept = passing.filter { CorpusCompounder.parts(ofTitle: scripts[$0].scenario.name) != nil }.prefix(min(compoundCount, limit))
        var compounds = kept.map {
            CorpusCompounder.Compound(scenario: scripts[$0].scenario, features: runs[$0].0, edges: runs[$0].edges,
                                      parts: CorpusCompounder.parts(ofTitle: scripts[$0].scenario.name)!)
        }
        var keptEdges = FeatureMap()
        for c in compounds { keptEdges.formUnion(c.edges) }
        let parts = passing.filter { CorpusCompounder.parts(ofTitle: scripts[$0].scenario.name) == nil }.map {
            CorpusCompounder.Part(scenario: scripts[$0].scenario, features: runs[$0].0, edges: runs[$0].edges, key: GuidedCorpus.hash(texts[$0]))
        }
        compounds += buildCompounds(parts, count: min(compoundCount, limit) - compounds.count, jobs: jobs, reached: keptEdges,
                                    options: options, cores: cores)
        if stopRequested.load(ordering: .relaxed) { return exitIncomplete }
        var start = FeatureMap()
        for c in compounds { start.formUnion(c.features) }
        let candidates = passing.map { CorpusDistiller.Candidate(features: runs[$0].0, key: GuidedCorpus.hash(texts[$0])) }
        let chosen = CorpusDistiller.cover(candidates, limit: limit - compounds.count, start: start)
        var all = FeatureMap()
        for c in candidates { all.formUnion(c.features) }
        for c in compounds { all.formUnion(c.features) }

        let (written, removed) = try write(compounds: compounds, chosen: chosen.map { texts[passing[$0.index]] }, to: out,
                                           replacing: inPlace ? scripts.map(\.name) : [], in: dir)
        let covered = start.count + chosen.reduce(0) { $0 + $1.added }
        var edges = keptEdges, compoundEdges = FeatureMap()
        for p in parts { edges.formUnion(p.edges) }
        for c in compounds { compoundEdges.formUnion(c.edges) }
        if !compounds.isEmpty {
            print("compounds: \(compounds.map { "\($0.parts)" }.joined(separator: " + ")) scripts (\(compounds.map { "\($0.edges.count)" }.joined(separator: ", ")) edges), reaching \(grouped(compoundEdges.count)) of the \(grouped(edges.count)) edges the scripts reach")
        }
        print("distilled \(plural(scripts.count, "script")) of \(dir) into \(written.count) in \(out)"
              + (inPlace ? " (\(grouped(removed)) files removed)" : "")
              + ": \(grouped(covered)) of \(grouped(all.count)) features covered"
              + (failing.isEmpty ? "" : "; \(failing.count) left out for breaking an invariant")
              + (written.count == limit ? "; stopped at --max \(limit)" : ""))
        return 0
    }

    /// A usage error unless `out`, the folder a distillation of `dir` goes to, is writable
    /// and holds no scenario file.
    static func checkEmptyOut(_ out: String, dir: String) throws {
        try checkWritableDirectory(out)
        let there = ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).filter { $0.hasSuffix(".scenario") }
        guard there.isEmpty else {
            throw UsageError("--out \(out) already holds \(plural(there.count, "scenario file")): give an empty or new folder, "
                             + "or leave --out off to distill \(dir) in place")
        }
    }

    /// Every script's features (and whether it passes), measured `jobs` at a time, each in
    /// its own slot; on the core under study. Nil when an interrupt stopped the runs.
    static func measure(_ scripts: [ScenarioFile], options: GeneratorOptions, jobs: Int,
                        cores: SDKCores) -> [(FeatureMap, passed: Bool, edges: FeatureMap)]? {
        let measured = Mutex<[(FeatureMap, passed: Bool, edges: FeatureMap)?]>(Array(repeating: nil, count: scripts.count))
        parallelForEach(count: scripts.count, jobs: jobs) { i in
            var s = scripts[i]
            s.sdk = options.sdk; s.server = options.server
            let (result, _, features, edges) = GuidedFuzz.measure(s, seed: s.seed, options: options, cores: cores)
            measured.withLock { $0[i] = (features, result.passed, edges) }
        }
        if stopRequested.load(ordering: .relaxed) { return nil }
        return measured.withLock { $0 }.map { $0! }
    }

    /// Up to `count` new compounds of `parts`, each merged script measured as the written
    /// file will run (printed and parsed back), `jobs` at a time.
    static func buildCompounds(_ parts: [CorpusCompounder.Part], count: Int, jobs: Int, reached: FeatureMap,
                               options: GeneratorOptions, cores: SDKCores) -> [CorpusCompounder.Compound] {
        CorpusCompounder.build(parts, count: count, batch: jobs, reached: reached) { merged in
            let slots = Mutex<[(features: FeatureMap, edges: FeatureMap)?]>(Array(repeating: nil, count: merged.count))
            parallelForEach(count: merged.count, jobs: jobs) { k in
                var s = merged[k]
                s.sdk = options.sdk; s.server = options.server
                // What the written file will run: the merged script printed and parsed back.
                guard let back = GuidedFuzz.printedAndParsed(s, cores: cores) else { return }
                s = back
                let (result, _, features, edges) = GuidedFuzz.measure(s, seed: s.seed, options: options, cores: cores)
                if result.passed { slots.withLock { $0[k] = (features, edges) } }
            }
            return slots.withLock { $0 }
        }
    }

    /// Writes the compounds (titled by rank) and then the chosen scripts to `out`, ranked
    /// and named by their hash; then removes the files of `replacing` (the old corpus, when
    /// distilling in place) that were not written again. Returns the names written and the
    /// count removed.
    static func write(compounds: [CorpusCompounder.Compound], chosen: [String], to out: String,
                      replacing old: [String], in dir: String) throws -> (written: [String], removed: Int) {
        try makeDirectories(out)
        var written: [String] = []
        var outputs: [String] = compounds.enumerated().map { k, c in
            var s = c.scenario
            s.name = CorpusCompounder.title(k + 1, parts: c.parts)
            return ScenarioPrinter.print(s)
        }
        outputs += chosen
        for (rank, text) in outputs.enumerated() {
            let name = String(format: "%04d-", rank + 1) + GuidedCorpus.hash(text) + ".scenario"
            try writeAtomically(text, to: (out as NSString).appendingPathComponent(name))
            written.append(name)
        }
        var removed = 0
        // The folder holds the distilled corpus alone afterwards.
        for name in old where !written.contains(name) {
            try FileManager.default.removeItem(atPath: (dir as NSString).appendingPathComponent(name))
            removed += 1
        }
        return (written, removed)
    }
}
