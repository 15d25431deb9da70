import Foundation
import Testing
import SimKit
import Scenarios
import ScenarioSearch

/// The determinism guard from the command line: `replay --twice`, `fuzz
/// --check-determinism --processes`, `run --check-determinism --trace`, and `diff`.
@Suite("Determinism guard: the command line", .serialized)
struct DeterminismCommandTests {
    @Test("the same seed in two processes writes the same trace: replay --twice --processes")
    func seedInTwoProcesses() throws {
        let r = try SimkitProcess.run(["replay", "5", "--twice", "--processes"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("twice: the same trace in both runs and in another process"), "\(r.stdout)")
    }

    @Test("fuzz --check-determinism --processes: every seed twice here and once in another process")
    func fuzzChecksEverySeed() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-det-\(ProcessInfo.processInfo.processIdentifier)").path
        let r = try SimkitProcess.run(["fuzz", "--seeds", "40", "--jobs", "2", "--check-determinism", "--processes", "--quiet",
                                       "--no-shrink", "--out", out])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("determinism: every seed ran twice in this process and once in another; every trace the same\n"), "\(r.stdout)")
        #expect(r.stdout.contains("no invariant broken"))
    }

    @Test("bad combinations are bad input")
    func badInput() throws {
        #expect(try SimkitProcess.run(["fuzz", "--processes"]).status == 2)
        #expect(try SimkitProcess.run(["fuzz", "--check-determinism", "--determinism-sample", "8"]).status == 2)
        #expect(try SimkitProcess.run(["replay", "1", "--processes"]).status == 2)
        let twice = try SimkitProcess.run(["run", "--trace", "/tmp/x.trace", "scenarios"])
        #expect(twice.status == 2 && twice.stderr.contains("--trace writes one scenario's trace"), "\(twice.stderr)")
    }

    @Test("diff: the same traces exit 0, different ones 1 with the first difference, a non-trace 2")
    func diff() throws {
        let a = try SimkitProcess.write("a.trace", ""), b = try SimkitProcess.write("b.trace", ""), c = try SimkitProcess.write("c.trace", "")
        #expect(try SimkitProcess.run(["replay", "3", "--trace", a]).status == 0)
        #expect(try SimkitProcess.run(["replay", "3", "--trace", b]).status == 0)
        #expect(try SimkitProcess.run(["replay", "4", "--trace", c]).status == 0)
        let same = try SimkitProcess.run(["diff", a, b])
        #expect(same.status == 0 && same.stdout.hasPrefix("the same: "), "\(same.stdout)")
        let other = try SimkitProcess.run(["diff", a, c])
        #expect(other.status == 1)
        #expect(other.stdout.contains("\(a) and \(c) first differ at trace record #"), "\(other.stdout)")
        #expect(other.stdout.contains("not of the same run"), "\(other.stdout)")
        let notTrace = try SimkitProcess.write("not.trace", "hello\n")
        let bad = try SimkitProcess.run(["diff", a, notTrace])
        #expect(bad.status == 2 && bad.stderr.contains("is not a simkit trace"), "\(bad.stderr)")
        #expect(try SimkitProcess.run(["diff", a]).status == 2)
        #expect(try SimkitProcess.run(["diff", a, "/nonexistent.trace"]).status == 2)
    }

    @Test("diff: an effect changed inside a step is told as the core's step, with both records and those that agreed")
    func diffFindsTheStep() throws {
        let a = try SimkitProcess.write("step-a.trace", "")
        #expect(try SimkitProcess.run(["replay", "3", "--trace", a]).status == 0)
        let text = try String(contentsOfFile: a, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The tenth effect that reports a state: make it report another one, as a leaky core would.
        let states = lines.indices.filter { lines[$0].contains("  state → ") }
        let k = try #require(states.dropFirst(9).first, "seed 3 reports fewer than 10 states")
        let original = lines[k]
        lines[k] = original.contains("idle") ? original.replacingOccurrences(of: "idle", with: "indexing")
            : original.replacingOccurrences(of: "state → ", with: "state → idle ")
        let b = try SimkitProcess.write("step-b.trace", lines.joined(separator: "\n"))
        let r = try SimkitProcess.run(["diff", a, b])
        #expect(r.status == 1)
        #expect(r.stdout.contains("first differ at trace record #\(k) ("), "\(r.stdout)")   // line k+1 of the file is record k
        #expect(r.stdout.contains("  \(a): \(original)\n"), "\(r.stdout)")
        #expect(r.stdout.contains("  \(b): \(lines[k])\n"), "\(r.stdout)")
        #expect(r.stdout.contains("the last records that agreed:\n"), "\(r.stdout)")
        #expect(r.stdout.contains("    #\(k - 1)  \(lines[k - 1])\n"), "\(r.stdout)")
        #expect(r.stdout.contains("the core's step for this input was not a function of its input and state"), "\(r.stdout)")
        #expect(r.stdout.contains("(record #\(k) is line \(k + 1) of each file)"), "\(r.stdout)")
    }

    @Test("run --check-determinism passes a scenario; run --trace writes a trace that diff finds the same as replay's kind")
    func runChecksAndTraces() throws {
        let file = PackageRoot.path + "/scenarios/leaked-key-stopped-at-once.scenario"
        let r = try SimkitProcess.run(["run", "--check-determinism", "--processes", file])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let a = try SimkitProcess.write("run-a.trace", ""), b = try SimkitProcess.write("run-b.trace", "")
        #expect(try SimkitProcess.run(["run", "--quiet", "--trace", a, file]).status == 0)
        #expect(try SimkitProcess.run(["run", "--quiet", "--trace", b, file]).status == 0)
        let same = try SimkitProcess.run(["diff", a, b])
        #expect(same.status == 0, "\(same.stdout)")
        #expect(try String(contentsOfFile: a, encoding: .utf8).hasPrefix("# simkit trace: seed "))
    }
}

@Suite("Determinism guard: which seeds the default fuzz run checks")
struct DeterminismSampleTests {
    @Test("one seed in 64, spread by a hash of the seed; 1 checks all, 0 none")
    func sampledShare() {
        let checked = (0..<64_000 as Range<UInt64>).filter { DeterminismCheck.sampled($0, oneIn: 64) }
        #expect((850...1_150).contains(checked.count), "\(checked.count) of 64,000 seeds checked")
        // Spread over 8 shards (seed % 8), not all in one.
        let perShard = (0..<8 as Range<UInt64>).map { s in checked.filter { $0 % 8 == s }.count }
        #expect(perShard.allSatisfy { $0 > 80 }, "\(perShard)")
        #expect((0..<100 as Range<UInt64>).allSatisfy { DeterminismCheck.sampled($0, oneIn: 1) })
        #expect(!(0..<100 as Range<UInt64>).contains { DeterminismCheck.sampled($0, oneIn: 0) })
    }

    @Test("the same scenario run twice by DeterminismCheck.twice is the same; a scenario with a leaky core is not")
    func twiceOnSetups() throws {
        let setup = try ScenarioCompiler.compile(ScenarioGenerator.generate(seed: 11)).setup
        #expect(DeterminismCheck.twice(setup, sdk: ReferenceSDK.self) == nil)
        let leak = try #require(DeterminismCheck.twice(setup, sdk: SystemRandomSDK.self))
        #expect(leak.core == "SystemRandomSDK" && leak.cause == .coreStep, "\(leak)")
    }
}
