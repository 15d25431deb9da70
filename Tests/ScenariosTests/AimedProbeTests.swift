import Foundation
import Testing
import SimKit
import Invariants
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch
@testable import SimKitCommand

/// The generator's aimed probes (issue 20, item 1) and `simkit mutants`' time to bug
/// (item 6): each probe builds the boundary or rare situation it names, so that the deep
/// mutant living there is caught by it while the reference passes the same script.
@Suite struct AimedProbeTests {
    /// A generator holding a bare script: no feature on, 40 days, 3 devices of `photos`
    /// launched at 0s, a latency of `latencyMs`; a probe is added to it.
    static func bareGenerator(_ name: String, seed: UInt64, latencyMs: ClosedRange<SimTime>, sdk: SDKChoice) -> ScenarioGenerator {
        var g = ScenarioGenerator(seed: seed, options: GeneratorOptions(sdk: sdk))
        g.on = ScenarioGenerator.Feature.allCases.map { _ in false }
        g.durationMs = 40 * Ms.day
        g.s.name = "\(name) seed \(seed)"
        g.s.seed = seed
        g.s.sdk = sdk
        g.s.duration = g.durationMs
        g.s.accounts = [AccountDecl(name: "acme")]
        g.s.apps = [AppDecl(name: "photos", account: "acme", key: "rk_live_p0")]
        g.s.groups = [DeviceGroupDecl(kind: .devices, count: 3, app: "photos")]
        g.s.network = NetworkDecl(latencyMin: latencyMs.lowerBound, latencyMax: latencyMs.upperBound, timeout: 30 * Ms.second)
        g.at(0, .person(.launch, .all))
        return g
    }

    /// A script of one launch at 0s and one probe, on a pinned latency of `pinMs`.
    static func probeScript(_ probe: ScenarioGenerator.Probe, seed: UInt64, pinMs: SimTime, sdk: SDKChoice) -> ScenarioFile {
        var g = bareGenerator("probe \(probe)", seed: seed, latencyMs: pinMs...pinMs, sdk: sdk)
        g.probe(probe)
        return g.s
    }

    static let pairs: [(ScenarioGenerator.Probe, String)] = [
        (.purgeEdge, "purge-strictly-after-30-days"),
        (.purgeEdge, "purge-30-minutes-late"),
        (.activationEdge, "check-age-in-whole-seconds"),
        (.backgroundAfterLaunch, "skip-background-check-after-launch"),
        (.graceEdge, "grace-deadline-inclusive"),
        (.stopNowEdge, "stop-now-one-ms-late"),
        (.stopDuringDownload, "no-lock-on-download-refusal"),
        (.staleAfterPartition, "stale-verdict-after-partition"),
        (.restoreWhileDisabled, "restore-lifts-disable"),
        (.accountRestoreOverAppRevoke, "account-restore-lifts-app-revoke"),
        (.disableDuringGrace, "disable-spares-grace-keys"),
    ]

    @Test("each probe catches the deep mutant of its boundary; the reference passes every probe script",
          arguments: pairs.indices)
    func probeCatchesItsMutant(_ index: Int) throws {
        let (probe, name) = AimedProbeTests.pairs[index]
        let mutant = try #require(Mutants.named(name))
        let pin: SimTime = probe == .stopNowEdge ? 1 : 20
        var caughtBy: [UInt64] = []
        for seed: UInt64 in 0..<8 {
            let reference = try Fuzz.check(AimedProbeTests.probeScript(probe, seed: seed, pinMs: pin, sdk: .reference),
                                           cores: SDKCores()).checker
            #expect(reference.broken.isEmpty, "\(probe) seed \(seed): the reference breaks \(reference.violations.map(\.headline))")
            let run = try Fuzz.check(AimedProbeTests.probeScript(probe, seed: seed, pinMs: pin, sdk: .mutant(name)),
                                     cores: SDKCores()).checker
            if run.broken.contains(mutant.expected) { caughtBy.append(seed) }
        }
        // A probe draws its deltas; the exact boundary is drawn first, so most seeds catch it.
        #expect(caughtBy.count >= 4, "\(probe) caught \(name) under probe seeds \(caughtBy) of 0..<8")
    }

    @Test("a probed seed pins its latency sometimes, and probes only add statements to the script")
    func probesAreAdditive() {
        var pinned = 0
        for seed: UInt64 in 0..<200 {
            let full = ScenarioGenerator.generate(seed: seed)
            if full.network.latencyMin == full.network.latencyMax { pinned += 1 }
            // The statements of the unaimed script come first, unchanged.
            var plain = ScenarioGenerator(seed: seed, options: GeneratorOptions())
            let unaimed = plain.make(seed: seed, aimed: false)
            #expect(Array(full.timeline.prefix(unaimed.timeline.count)) == unaimed.timeline, "seed \(seed)")
            // Interleaving probes may declare more (an app of their own, clones) after them.
            #expect(Array(full.accounts.prefix(unaimed.accounts.count)) == unaimed.accounts
                    && Array(full.apps.prefix(unaimed.apps.count)) == unaimed.apps
                    && Array(full.groups.prefix(unaimed.groups.count)) == unaimed.groups, "seed \(seed)")
        }
        #expect(pinned >= 20, "only \(pinned) of 200 seeds pinned their latency")
    }

    @Test("time to bug: the first failing seed, the same with one job or three, nil past the budget")
    func timeToBugIsTheFirstFailingSeed() throws {
        let mutant = try #require(Mutants.named("lock-on-offline"))
        let options = GeneratorOptions(sdk: .mutant(mutant.name))
        let first = try #require((0..<100).first { Fuzz.run(seed: UInt64($0), options: options).0.failed })
        let one = MutantsCommand.timeToBug(mutant, mode: .plain, seeds: 100, jobs: 1)
        let three = MutantsCommand.timeToBug(mutant, mode: .plain, seeds: 100, jobs: 3)
        #expect(one.seeds == first + 1 && three.seeds == first + 1)
        #expect(one.mode == "plain" && one.seconds >= 0)
        let short = MutantsCommand.timeToBug(mutant, mode: .plain, seeds: first, jobs: 2)
        #expect(short.seeds == nil)
        #expect(MutantsCommand.median([3, 1, 2]) == 2 && MutantsCommand.median([4, 1, 3, 2]) == 2.5)
    }
}

/// `simkit mutants --corpus`: guided mode replays its starting corpus first, as
/// `simkit fuzz --guided --corpus` does, and says which corpus it started from.
@Suite struct MutantsCorpusTests {
    @Test("guided time to bug from a starting corpus: a script that catches the mutant, replayed at seed i, catches it at seed i + 1, under any --jobs")
    func guidedReplaysStartFirst() throws {
        let mutant = try #require(Mutants.named("lock-on-offline"))
        let options = GeneratorOptions(sdk: .mutant(mutant.name))
        let failing = try #require((0..<100 as Range<UInt64>).first { Fuzz.run(seed: $0, options: options).0.failed })
        let catcher = Fuzz.run(seed: failing, options: options).1
        let passer = try #require((0..<100 as Range<UInt64>).lazy.map { Fuzz.run(seed: $0, options: options) }.first { !$0.0.failed }).1
        #expect(MutantsCommand.timeToBug(mutant, mode: .guided, seeds: 50, jobs: 1, start: (nil, [catcher])).seeds == 1)
        for jobs in [1, 2] {
            let t = MutantsCommand.timeToBug(mutant, mode: .guided, seeds: 50, jobs: jobs, start: ("here", [passer, passer, catcher]))
            #expect(t.seeds == 3 && t.corpus == "here" && t.corpusScripts == 3, "--jobs \(jobs): \(t)")
        }
        #expect(MutantsCommand.corpusLabel("fuzz-corpus", 143) == "from fuzz-corpus/, 143 scripts")
        #expect(MutantsCommand.corpusLabel(nil, 0) == "from an empty corpus")
    }

    @Test("simkit mutants names the corpus guided started from; a missing --corpus folder, or --corpus without guided, exits 2")
    func commandLine() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mutants-corpus-\(ProcessInfo.processInfo.processIdentifier)").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir + "/c", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for k in 0..<2 as Range<UInt64> {
            try ScenarioPrinter.print(ScenarioGenerator.generate(seed: 900 + k, options: .init()))
                .write(toFile: "\(dir)/c/000\(k + 1).scenario", atomically: true, encoding: .utf8)
        }
        let r = try SimkitProcess.run(["mutants", "--seeds", "1", "--no-shrink", "--corpus", dir + "/c", "--out", dir + "/out"])
        #expect(r.status == 0 || r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.hasPrefix("guided starts from \(dir)/c/, 2 scripts\n"), "\(r.stdout)")
        #expect(r.stdout.contains("median time to bug (guided deep from \(dir)/c/, 2 scripts") || r.stdout.contains("(guided deep from \(dir)/c/, 2 scripts): none caught"), "\(r.stdout)")
        let none = try SimkitProcess.run(["mutants", "--seeds", "1", "--no-shrink", "--corpus", "none", "--out", dir + "/out"])
        #expect(none.stdout.hasPrefix("guided starts from an empty corpus\n"), "\(none.stdout)")
        let missing = try SimkitProcess.run(["mutants", "--corpus", dir + "/nowhere"])
        #expect(missing.status == 2 && missing.stderr.contains("is not a folder"), "\(missing.stderr)")
        #expect(try SimkitProcess.run(["mutants", "--modes", "plain", "--corpus", dir + "/c"]).status == 2)
    }
}
