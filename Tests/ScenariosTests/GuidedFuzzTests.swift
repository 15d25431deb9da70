import Foundation
import SimKitTestSupport
import Testing
import SimKit
import Invariants
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch

/// The fingerprint of every seed in a `simkit fuzz --json` file, by seed.
private func fingerprints(_ path: String) throws -> [UInt64: String] {
    let data = try #require(FileManager.default.contents(atPath: path), "no JSON at \(path)")
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let rows = try #require(object["results"] as? [[String: Any]])
    var out: [UInt64: String] = [:]
    for row in rows { out[UInt64("\(row["seed"]!)")!] = "\(row["fingerprint"]!)" }
    return out
}

@Suite("Coverage-guided fuzzing", .serialized)
struct GuidedFuzzTests {
    static let dir = FileManager.default.temporaryDirectory.appendingPathComponent("guided-\(ProcessInfo.processInfo.processIdentifier)").path

    @Test("distance buckets: 0 on the boundary, one per power of two on each side")
    func buckets() {
        #expect(GuidanceObserver.bucket(0) == 0)
        #expect(GuidanceObserver.bucket(1) == 1)
        #expect(GuidanceObserver.bucket(-1) == 65)
        #expect(GuidanceObserver.bucket(2) == 2 && GuidanceObserver.bucket(3) == 2 && GuidanceObserver.bucket(4) == 3)
        #expect(GuidanceObserver.bucket(Int64(Ms.hour)) != GuidanceObserver.bucket(Int64(Ms.minute)))
        #expect(GuidanceObserver.bucket(Int64.min + 1) == 64 + 63)
    }

    @Test("a lane is a function of its seeds and starting corpus: the same scenarios and features twice; mutated scripts compile and run clean on the reference")
    func laneIsDeterministic() throws {
        var a = GuidedFuzz.Lane(start: [], options: .init())
        var b = GuidedFuzz.Lane(start: [], options: .init())
        var mutated = 0
        for k in 0..<40 as Range<UInt64> {
            let seed = 3 + k * GuidedFuzz.lanes
            let x = a.run(seed: seed), y = b.run(seed: seed)
            #expect(x.scenario == y.scenario && x.result == y.result && x.novel == y.novel, "seed \(seed)")
            #expect(GuidedFuzz.isValidFile(x.scenario, cores: SDKCores()), "seed \(seed) ran a script that does not print as a valid file")
            #expect(!x.result.failed, "seed \(seed): \(x.result.firstViolation ?? "")\n\(ScenarioPrinter.print(x.scenario))")
            if x.mutated { mutated += 1; #expect(x.result.guided == true) } else { #expect(x.result.guided == nil) }
        }
        #expect(a.seen == b.seen && a.corpus == b.corpus)
        #expect(mutated >= 20, "only \(mutated) of 40 seeds mutated")
        #expect(!a.added.isEmpty && a.added.count <= 40)
    }

    /// Twenty generator scripts of seeds far from the ones a lane runs, as a starting corpus.
    static func startCorpus() -> [ScenarioFile] {
        (0..<20 as Range<UInt64>).map { k in
            var s = ScenarioGenerator.generate(seed: 7_000 + k, options: .init())
            s.name = "start \(k)"
            return s
        }
    }

    @Test("a starting corpus is replayed first: the range's i-th seed runs script i unmutated, in lane i mod 16, then mutation")
    func replaysStartFirst() throws {
        let start = Self.startCorpus()
        for firstSeed in [0, 100] as [UInt64] {
            for offset in [3, 4] as [UInt64] {
                // The lane of seeds firstSeed + offset, firstSeed + offset + 16, …
                var lane = GuidedFuzz.Lane(start: start, options: .init(), firstSeed: firstSeed)
                var replayed: [Int] = []
                var mutated = 0
                for k in 0..<8 as Range<UInt64> {
                    let seed = firstSeed + offset + k * GuidedFuzz.lanes
                    let outcome = lane.run(seed: seed)
                    let i = Int(seed - firstSeed)
                    if i < start.count {
                        #expect(outcome.replayed && !outcome.mutated, "seed \(seed)")
                        #expect(outcome.scenario == start[i], "seed \(seed) did not run start script \(i) as it is")
                        // Its run is the script's own run: the same fingerprint as the file alone.
                        let alone = GuidedFuzz.check(start[i], seed: seed, options: .init(), cores: SDKCores()).0
                        #expect(outcome.result.fingerprint == alone.fingerprint, "seed \(seed)")
                        #expect(outcome.result.guided == true, "a replayed seed is not rebuilt by 'simkit replay SEED'")
                        replayed.append(i)
                    } else {
                        #expect(!outcome.replayed, "seed \(seed) is past the corpus")
                        if outcome.mutated { mutated += 1 }
                    }
                }
                // This lane replays the scripts i ≡ offset (mod 16): 3 and 19, or 4 alone (20 scripts).
                #expect(replayed == (offset == 3 ? [3, 19] : [4]), "offset \(offset), --from \(firstSeed)")
                #expect(mutated >= 2, "offset \(offset): only \(mutated) of the seeds after the replays mutated")
                // Replayed scripts are in the corpus already: the lane does not add them again.
                #expect(!lane.added.contains { a in start.contains { var b = $0; b.name = a.name; return b == a } })
            }
        }
    }

    @Test("with a starting corpus, the same results under any --jobs and --shard; the summary counts the replays")
    func startCorpusCommandLine() throws {
        let d = Self.dir + "-start"
        try? FileManager.default.removeItem(atPath: d)
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: d) }
        // A corpus folder per run: --corpus adds the run's finds to its folder at the end.
        let runs = ["one", "two", "s1", "s2", "s3"]
        for r in runs {
            try FileManager.default.createDirectory(atPath: "\(d)/\(r)", withIntermediateDirectories: true)
            for (i, s) in Self.startCorpus().enumerated() {
                try ScenarioPrinter.print(s).write(toFile: "\(d)/\(r)/\(String(format: "%04d", i + 1)).scenario", atomically: true, encoding: .utf8)
            }
        }
        let common = ["fuzz", "--guided", "--seeds", "40", "--from", "5", "--no-shrink", "--quiet", "--out", d]
        let one = try SimkitProcess.run(common + ["--jobs", "1", "--corpus", d + "/one", "--json", d + "/one.json"])
        #expect(one.status == 0, "\(one.stdout)\(one.stderr)")
        #expect(one.stdout.contains(", 20 replayed it; corpus of 20 scripts at the start"), "\(one.stdout)")
        let two = try SimkitProcess.run(common + ["--jobs", "2", "--corpus", d + "/two", "--json", d + "/two.json"])
        #expect(two.status == 0, "\(two.stdout)\(two.stderr)")
        let whole = try fingerprints(d + "/one.json")
        #expect(whole.count == 40)
        #expect(try fingerprints(d + "/two.json") == whole)
        var sharded: [UInt64: String] = [:]
        for i in 1...3 {
            let r = try SimkitProcess.run(common + ["--shard", "\(i)/3", "--corpus", d + "/s\(i)", "--json", d + "/s\(i).json"])
            #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
            sharded.merge(try fingerprints(d + "/s\(i).json")) { a, _ in a }
        }
        #expect(sharded == whole)
        // Seed 5 + i ran start script i (the file alone gives its fingerprint).
        for (i, s) in Self.startCorpus().enumerated() where i % 7 == 0 {
            let alone = GuidedFuzz.check(s, seed: 5 + UInt64(i), options: .init(), cores: SDKCores()).0
            #expect(whole[5 + UInt64(i)] == alone.fingerprint, "seed \(5 + i)")
        }
    }

    /// One account, its app `photos` and a group of `devices` of it, for `days`: the
    /// mutator's tests add their statements.
    static func photosScenario(days: UInt64, devices: UInt64) -> ScenarioFile {
        var s = ScenarioFile()
        s.duration = days * Ms.day
        s.accounts = [AccountDecl(name: "acme")]
        s.apps = [AppDecl(name: "photos", account: "acme", key: "rk_live_a")]
        s.groups = [DeviceGroupDecl(kind: .devices, count: devices, app: "photos")]
        return s
    }

    @Test("aiming moves a statement onto a boundary counted from another")
    func aimsAtBoundaries() {
        var s = Self.photosScenario(days: 60, devices: 2)
        s.timeline = [TimedStatement(schedule: .at(Ms.day), body: .action(.disable(app: "photos"))),
                      TimedStatement(schedule: .at(5 * Ms.day), body: .action(.person(.open, .all)))]
        let boundaries: Set<SimTime> = [0, Ms.day, 29 * Ms.day, 30 * Ms.day]
        var onBoundary = 0
        for k in 0..<300 as Range<UInt64> {
            var m = ScenarioMutator(random: SimRandom(seed: k))
            var t = s
            m.step(&t, donor: nil)
            guard t.timeline.count == 2, case .at(let a) = t.timeline[0].schedule, case .at(let b) = t.timeline[1].schedule else { continue }
            let gap = a > b ? a - b : b - a
            for edge in boundaries {
                let off = gap > edge ? gap - edge : edge - gap
                if [0, 1, Ms.second, Ms.minute, Ms.hour].contains(off), gap != 4 * Ms.day { onBoundary += 1; break }
            }
        }
        // Aiming is one step kind in five, and half of its draws anchor a statement on itself
        // (both statements are picked at random): about 30 of 300 are expected, 15 is a margin.
        #expect(onBoundary >= 15, "only \(onBoundary) of 300 mutations put the statements a boundary apart")
    }

    @Test("the mutator aims answers: it adds pins on a genuine group's first devices and changes their fates")
    func mutatorAimsAnswers() {
        var s = Self.photosScenario(days: 2, devices: 5)
        s.timeline = [TimedStatement(schedule: .at(Ms.hour), body: .action(.person(.open, .all)))]
        var added = 0, changed = 0
        for k in 0..<300 as Range<UInt64> {
            var m = ScenarioMutator(random: SimRandom(seed: k))
            var t = s
            m.aimAnswer(&t)
            #expect(t.pins.count == 1)
            if let p = t.pins.first {
                added += 1
                #expect(p.group == "photos" && (1...3).contains(p.index) && (1...40).contains(p.request))
            }
            var u = t
            m.aimAnswer(&u)
            if u.pins.count == t.pins.count, u.pins != t.pins { changed += 1 }
        }
        #expect(added == 300)
        // Half the second calls change the pin's fate (to one of six, its own included).
        #expect(changed >= 80, "\(changed) of 300 second calls changed a pin")
    }

    @Test("the mutator reschedules: another pick seed for an async step's jobs, or FIFO again, or another storage latency")
    func mutatorReschedules() {
        var s = Self.photosScenario(days: 2, devices: 1)
        s.schedule = 7
        s.storageLatency = 3
        var fifo = 0, other = 0, storage = 0
        var seen: Set<UInt32> = []
        for k in 0..<300 as Range<UInt64> {
            var m = ScenarioMutator(random: SimRandom(seed: k))
            var t = s
            m.reschedule(&t)
            var rest = t
            rest.schedule = s.schedule
            rest.storageLatency = s.storageLatency
            #expect(rest == s, "only the schedule or the storage latency changes")
            #expect(t.schedule == s.schedule || t.storageLatency == s.storageLatency, "one of the two at a time")
            if t.storageLatency != s.storageLatency {
                storage += 1
                #expect(t.storageLatency == 0 || ScenarioGenerator.storageLatencies.contains(t.storageLatency))
            } else if t.schedule == 0 { fifo += 1 } else if t.schedule != 7 { other += 1; seen.insert(t.schedule) }
        }
        // Storage one time in three (about 100 of 300), else FIFO one time in four (about 50).
        #expect((60...140).contains(storage), "\(storage) of 300 changed the storage latency")
        #expect((25...80).contains(fifo), "\(fifo) of 300 went back to FIFO")
        #expect(other + fifo + storage == 300 && seen.count == other, "\(other) new pick seeds, \(seen.count) distinct")
    }

    @Test("the same results under any --jobs and --shard; the corpus folder is written and read back; bad flags exit 2")
    func commandLine() throws {
        try? FileManager.default.removeItem(atPath: Self.dir)
        try FileManager.default.createDirectory(atPath: Self.dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: Self.dir) }
        let d = Self.dir
        let one = try SimkitProcess.run(["fuzz", "--guided", "--seeds", "48", "--jobs", "1", "--no-shrink", "--quiet", "--json", d + "/one.json", "--out", d])
        #expect(one.status == 0, "\(one.stdout)\(one.stderr)")
        #expect(one.stdout.contains("simkit fuzz --sdk reference --guided: 48 of 48 seeds"), "\(one.stdout)")
        #expect(one.stdout.contains("guided: 16 lanes; "), "\(one.stdout)")
        let two = try SimkitProcess.run(["fuzz", "--guided", "--seeds", "48", "--jobs", "2", "--no-shrink", "--quiet", "--json", d + "/two.json", "--out", d])
        #expect(two.status == 0)
        var shards: [String] = []
        for i in 1...3 {
            let p = d + "/s\(i).json"
            let r = try SimkitProcess.run(["fuzz", "--guided", "--seeds", "48", "--shard", "\(i)/3", "--no-shrink", "--quiet", "--json", p, "--out", d])
            #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
            shards.append(p)
        }
        let whole = try fingerprints(d + "/one.json")
        #expect(whole.count == 48)
        #expect(try fingerprints(d + "/two.json") == whole)
        var sharded: [UInt64: String] = [:]
        for p in shards { sharded.merge(try fingerprints(p)) { a, _ in a } }
        #expect(sharded == whole)
        let merged = try SimkitProcess.run(["merge"] + shards)
        #expect(merged.status == 0, "\(merged.stdout)\(merged.stderr)")

        // The corpus on disk: written at the end, read at the start of the next run.
        let corpus = d + "/corpus"
        let first = try SimkitProcess.run(["fuzz", "--guided", "--seeds", "32", "--corpus", corpus, "--no-shrink", "--quiet", "--out", d])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus).filter { $0.hasSuffix(".scenario") }
        #expect(!files.isEmpty && first.stdout.contains("(\(files.count) new files in \(corpus))"), "\(first.stdout)")
        let second = try SimkitProcess.run(["fuzz", "--guided", "--seeds", "32", "--corpus", corpus, "--no-shrink", "--quiet", "--out", d])
        #expect(second.stdout.contains("corpus of \(files.count) scripts at the start"), "\(second.stdout)")
        for f in files.prefix(3) {
            let r = try SimkitProcess.run(["check", corpus + "/" + f])
            #expect(r.status == 0, "\(f): \(r.stdout)\(r.stderr)")
        }
        try "scenario \"broken\"\nduration 2x\n".write(toFile: corpus + "/zz-bad.scenario", atomically: true, encoding: .utf8)
        let bad = try SimkitProcess.run(["fuzz", "--guided", "--seeds", "8", "--corpus", corpus, "--quiet"])
        #expect(bad.status == 2 && bad.stderr.contains("zz-bad.scenario:2:"), "\(bad.stderr)")

        #expect(try SimkitProcess.run(["fuzz", "--corpus", corpus]).status == 2)
        #expect(try SimkitProcess.run(["fuzz", "--guided", "--shard", "1/17"]).status == 2)
        #expect(try SimkitProcess.run(["fuzz", "--guided", "--check-determinism"]).status == 2)
    }

    @Test("a guided campaign catches a mutant; a mutated seed's reproducer file fails the same way", .tags(.slow), .slowTier)
    func catchesAMutant() throws {
        try FileManager.default.createDirectory(atPath: Self.dir + "-m", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: Self.dir + "-m") }
        let r = try SimkitProcess.run(["fuzz", "--guided", "--seeds", "200", "--sdk", "mutant:lock-on-5xx", "--jobs", "2", "--out", Self.dir + "-m"])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let files = lines.compactMap { line -> String? in
            guard let range = line.range(of: "  replay:     simkit run ") else { return nil }
            return String(line[range.upperBound...]).components(separatedBy: "   ").first
        }
        let file = try #require(files.first, "\(r.stdout)")
        let again = try SimkitProcess.run(["run", "--quiet", file])
        #expect(again.status == 1, "\(again.stdout)\(again.stderr)")
    }
}
