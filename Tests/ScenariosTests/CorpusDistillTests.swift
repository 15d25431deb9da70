import Foundation
import SimKitTestSupport
import Testing
import SimKit
import Invariants
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch

/// A feature map with the features numbered `ids` (tag 99, so none is a real observer's).
private func features(_ ids: [UInt32]) -> FeatureMap {
    var m = FeatureMap()
    for id in ids { m.insert(99, id) }
    return m
}

/// The greedy cover the plain way: every gain recomputed each round, ties to the smaller key.
private func naiveCover(_ c: [CorpusDistiller.Candidate], limit: Int) -> [(index: Int, added: Int)] {
    var covered = FeatureMap(), open = Array(repeating: true, count: c.count)
    var out: [(index: Int, added: Int)] = []
    while out.count < limit {
        var best: (i: Int, gain: Int)?
        for i in c.indices where open[i] {
            let g = covered.newFeatures(in: c[i].features)
            if let b = best, g < b.gain || (g == b.gain && c[i].key > c[b.i].key) { continue }
            best = (i, g)
        }
        guard let b = best, b.gain > 0 else { break }
        out.append((b.i, b.gain)); covered.formUnion(c[b.i].features); open[b.i] = false
    }
    return out
}

@Suite("Distilling a guided corpus", .serialized)
struct CorpusDistillTests {
    static let dir = FileManager.default.temporaryDirectory.appendingPathComponent("distill-\(ProcessInfo.processInfo.processIdentifier)").path

    @Test("greedy cover: the most features first, then the most new ones; ties to the smaller key; stops when nothing is new or at the limit")
    func greedyCover() {
        #expect(features([1, 2, 3, 4]).count == 4 && features([4, 5]).count == 2)
        let c = [CorpusDistiller.Candidate(features: features([1, 2, 3, 4]), key: "d"),
                 CorpusDistiller.Candidate(features: features([1, 2, 3, 4]), key: "c"),
                 CorpusDistiller.Candidate(features: features([5, 6]), key: "a"),
                 CorpusDistiller.Candidate(features: features([4, 5]), key: "b"),
                 CorpusDistiller.Candidate(features: FeatureMap(), key: "0")]
        let chosen = CorpusDistiller.cover(c)
        #expect(chosen.map(\.index) == [1, 2] && chosen.map(\.added) == [4, 2])
        #expect(CorpusDistiller.cover(c, limit: 1).map(\.index) == [1])
        // The order the scripts come in changes nothing but the indices.
        let reversed = Array(c.reversed())
        #expect(CorpusDistiller.cover(reversed).map { reversed[$0.index].key } == ["c", "a"])
        #expect(CorpusDistiller.cover([]).isEmpty)
    }

    @Test("the lazy cover chooses what recomputing every gain each round chooses", .tags(.slow), .slowTier, arguments: [1, 2, 3, 4, 5] as [UInt64])
    func lazyEqualsNaive(seed: UInt64) {
        var r = SimRandom(seed: seed)
        let c = (0..<40).map { i in
            CorpusDistiller.Candidate(features: features((0..<r.below(12)).map { _ in UInt32(r.below(60)) }),
                                      key: String(r.below(1_000)) + "-\(i)")
        }
        for limit in [3, 256] {
            let lazy = CorpusDistiller.cover(c, limit: limit), naive = naiveCover(c, limit: limit)
            #expect(lazy.map(\.index) == naive.map(\.index) && lazy.map(\.added) == naive.map(\.added), "seed \(seed), limit \(limit)")
        }
    }

    /// Writes twenty generator scripts into `dir` (a corpus as a guided run leaves one).
    static func writeCorpus(_ dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // Sixteen seeds' scripts and four copies of the first four under other names: a
        // copy reaches nothing its original does not, so distilling keeps fewer than 20.
        for k in 0..<20 as Range<UInt64> {
            var s = ScenarioGenerator.generate(seed: 500 + k % 16, options: .init())
            s.name = "corpus: fuzz seed \(500 + k % 16), file \(k)"
            try ScenarioPrinter.print(s).write(toFile: "\(dir)/g-\(k).scenario", atomically: true, encoding: .utf8)
        }
    }

    static func scenarioNames(_ dir: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".scenario") }.sorted()
    }

    @Test("simkit corpus distill: ranked files, the same for any --jobs and in place; a guided run starts from them; bad input exits 2", .tags(.slow), .slowTier)
    func command() throws {
        let d = Self.dir
        try? FileManager.default.removeItem(atPath: d)
        defer { try? FileManager.default.removeItem(atPath: d) }
        try Self.writeCorpus(d + "/big")
        try Self.writeCorpus(d + "/inplace")
        let r = try SimkitProcess.run(["corpus", "distill", d + "/big", "--out", d + "/small", "--jobs", "1"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let names = try Self.scenarioNames(d + "/small")
        #expect(!names.isEmpty && names.count < 20, "\(names)")
        #expect(r.stdout.contains("distilled 20 scripts of \(d)/big into \(names.count) in \(d)/small: "), "\(r.stdout)")
        for (rank, name) in names.enumerated() {
            #expect(name.hasPrefix(String(format: "%04d-", rank + 1)) && name.count == "0001-".count + 16 + ".scenario".count, "\(name)")
        }
        #expect(try Self.scenarioNames(d + "/big").count == 20, "--out leaves the source folder alone")
        // In place, with two jobs: the same files, and only those.
        let again = try SimkitProcess.run(["corpus", "distill", d + "/inplace", "--jobs", "2"])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("(20 files removed)"), "\(again.stdout)")
        #expect(try Self.scenarioNames(d + "/inplace") == names)
        for name in names {
            #expect(FileManager.default.contents(atPath: "\(d)/inplace/\(name)") == FileManager.default.contents(atPath: "\(d)/small/\(name)"))
        }
        // Distilling a distilled corpus changes nothing.
        let twice = try SimkitProcess.run(["corpus", "distill", d + "/inplace"])
        #expect(twice.status == 0 && twice.stdout.contains("(0 files removed)"), "\(twice.stdout)\(twice.stderr)")
        #expect(try Self.scenarioNames(d + "/inplace") == names)
        // --max keeps the first ranks.
        let top = try SimkitProcess.run(["corpus", "distill", d + "/big", "--out", d + "/top", "--max", "2"])
        let topNames = try Self.scenarioNames(d + "/top")
        #expect(top.status == 0 && topNames == Array(names.prefix(2)), "\(top.stdout)")

        let fuzz = try SimkitProcess.run(["fuzz", "--guided", "--seeds", "16", "--corpus", d + "/small", "--no-shrink", "--quiet", "--out", d])
        #expect(fuzz.status == 0, "\(fuzz.stdout)\(fuzz.stderr)")
        #expect(fuzz.stdout.contains("corpus of \(names.count) scripts at the start"), "\(fuzz.stdout)")

        let help = try SimkitProcess.run(["corpus", "--help"])
        #expect(help.status == 0 && help.stdout.contains("usage: simkit corpus distill DIR"))
        #expect(try SimkitProcess.run(["corpus", "distill", "--help"]).status == 0)
        #expect(try SimkitProcess.run(["corpus"]).status == 2)
        #expect(try SimkitProcess.run(["corpus", "squash", d + "/big"]).status == 2)
        let missing = try SimkitProcess.run(["corpus", "distill", d + "/nowhere"])
        #expect(missing.status == 2 && missing.stderr.contains("is not a folder"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: d + "/nowhere"))
        let full = try SimkitProcess.run(["corpus", "distill", d + "/big", "--out", d + "/small"])
        #expect(full.status == 2 && full.stderr.contains("already holds"), "\(full.stderr)")
        #expect(try SimkitProcess.run(["corpus", "distill", d + "/big", "--max", "0"]).status == 2)
        try "scenario \"broken\"\nduration 2x\n".write(toFile: d + "/big/zz-bad.scenario", atomically: true, encoding: .utf8)
        let bad = try SimkitProcess.run(["corpus", "distill", d + "/big", "--out", d + "/other"])
        #expect(bad.status == 2 && bad.stderr.contains("zz-bad.scenario:2:"), "\(bad.stderr)")
        #expect(try Self.scenarioNames(d + "/big").count == 21, "a failed distill removes nothing")
    }
}

/// The corpus committed at the repository's root (`fuzz-corpus/`, built by guided fuzzing of
/// the reference alone; its README says how): every script parses and passes on the
/// reference with no violation, so it is a regression suite too.
@Suite("The committed fuzz corpus")
struct CommittedCorpusTests {
    static let dir = PackageRoot.path + "/fuzz-corpus"
    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".scenario") }.sorted()
    }

    @Test("it is there, small, ranked (0001-…, 0002-…), and its README names the command that built it")
    func shape() throws {
        let files = Self.files
        #expect(files.count >= 10 && files.count <= 300, "\(files.count) files in \(Self.dir)")
        for (rank, name) in files.enumerated() { #expect(name.hasPrefix(String(format: "%04d-", rank + 1)), "\(name)") }
        let bytes = files.reduce(0) { $0 + (FileManager.default.contents(atPath: Self.dir + "/" + $1)?.count ?? 0) }
        #expect(bytes < 1_000_000, "\(bytes) bytes")
        let readme = try String(contentsOfFile: Self.dir + "/README.md", encoding: .utf8)
        #expect(readme.contains("simkit fuzz --guided") && readme.contains("simkit corpus distill"))
    }

    @Test("every script parses and runs on the reference with no violation", .tags(.slow), .slowTier, arguments: CommittedCorpusTests.files)
    func passes(_ name: String) throws {
        let source = try String(contentsOfFile: Self.dir + "/" + name, encoding: .utf8)
        let outcome = ScenarioRunner().run(file: name, source: source)
        try #require(outcome.verdict != .badInput, "\(outcome.errors)")
        #expect(outcome.violations.isEmpty && outcome.passed, "\(ScenarioReport.block(outcome))")
    }
}
