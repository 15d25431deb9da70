import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import SimKitTestSupport
import Testing
import SimKit
import Invariants
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch

/// The results array of a `simkit fuzz --json` file, without timings.
private func results(_ path: String) throws -> [[String: String]] {
    let data = try #require(FileManager.default.contents(atPath: path), "no JSON at \(path)")
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let rows = try #require(object["results"] as? [[String: Any]])
    return rows.map { row in
        ["seed": "\(row["seed"]!)", "fingerprint": "\(row["fingerprint"]!)", "broken": "\(row["broken"]!)"]
    }
}

@Suite("Fuzzing", .serialized)
struct FuzzTests {
    @Test("the reference SDK breaks no invariant over 200 seeds")
    func referenceIsClean() {
        for seed in 0..<200 as Range<UInt64> {
            let (result, scenario, violations) = Fuzz.run(seed: seed, options: .init())
            #expect(!result.failed, "seed \(seed): \(violations.first?.headline ?? result.broken.description)\n\(ScenarioPrinter.print(scenario))")
        }
    }

    @Test("a mutant is caught, shrunk to at most 12 statements and 3 devices, and the reproducer fails the same way", .tags(.slow), .slowTier,
          arguments: ["lock-on-5xx", "grace-one-day-late", "lock-on-stale-refusal", "unlock-on-stale-ok"])
    func mutantIsCaughtAndShrunk(name: String) throws {
        let m = try #require(Mutants.named(name))
        let options = GeneratorOptions(sdk: .mutant(name))
        var found: (ScenarioFile, UInt64)?
        for seed in 0..<300 as Range<UInt64> {
            let (result, scenario, _) = Fuzz.run(seed: seed, options: options)
            if result.broken.contains(m.expected.rawValue) { found = (scenario, seed); break }
        }
        let (scenario, seed) = try #require(found, "\(name) not caught by \(m.expected.rawValue) within 300 seeds")
        let (small, _) = Fuzz.shrink(scenario, invariant: m.expected.rawValue)
        #expect(small.statementCount <= 12, "\(ScenarioPrinter.print(small))")
        #expect(small.deviceCount <= 3, "\(ScenarioPrinter.print(small))")
        let text = Fuzz.reproducerText(small, invariant: m.expected.rawValue, seed: seed, sdk: options.sdk, file: "r.scenario")
        let outcome = ScenarioRunner().run(file: "r.scenario", source: text)
        #expect(!outcome.passed)
        #expect(outcome.broken.contains(m.expected))
    }

    @Test("shrinking goes back to FIFO and to writes that take no time when the failure needs neither")
    func shrinkingDropsAScheduleNotNeeded() throws {
        let options = GeneratorOptions(sdk: .mutant("lock-on-5xx"))
        var found: ScenarioFile?
        for seed in 0..<200 as Range<UInt64> {
            let (result, scenario, _) = Fuzz.run(seed: seed, options: options)
            if result.broken.contains("never-lock-on-transient") { found = scenario; break }
        }
        var scenario = try #require(found, "lock-on-5xx not caught within 200 seeds")
        scenario.schedule = 12_345      // a sans-IO SDK has no jobs to order: never needed,
        scenario.storageLatency = 200   // nor writes it awaits
        let (small, _) = Fuzz.shrink(scenario, invariant: "never-lock-on-transient")
        #expect(small.schedule == 0 && small.storageLatency == 0, "\(ScenarioPrinter.print(small))")
        #expect(small.statementCount <= 12)
    }

    @Test("verdicts and fingerprints do not depend on --jobs", .tags(.slow), .slowTier)
    func jobsDoNotChangeResults() throws {
        let a = try SimkitProcess.write("jobs1.json", ""), b = try SimkitProcess.write("jobs2.json", "")
        let r1 = try SimkitProcess.run(["fuzz", "--seeds", "150", "--jobs", "1", "--no-shrink", "--quiet", "--sdk", "mutant:lock-on-timeout", "--json", a, "--out", "/tmp/simkit-fuzz-test"])
        let r2 = try SimkitProcess.run(["fuzz", "--seeds", "150", "--jobs", "2", "--no-shrink", "--quiet", "--sdk", "mutant:lock-on-timeout", "--json", b, "--out", "/tmp/simkit-fuzz-test"])
        #expect(r1.status == 1 && r2.status == 1, "\(r1.stderr)\(r2.stderr)")
        let x = try results(a), y = try results(b)
        #expect(x.count == 150)
        #expect(x == y)
        #expect(x.contains { $0["broken"] != "[]" && $0["broken"] != "(\n)" })
    }

    @Test("the union of --shard 1/3, 2/3 and 3/3 is the whole run")
    func shardsAddUpToTheWhole() throws {
        let whole = try SimkitProcess.write("whole.json", "")
        _ = try SimkitProcess.run(["fuzz", "--seeds", "90", "--from", "1000", "--no-shrink", "--quiet", "--json", whole])
        var union: [[String: String]] = []
        var paths: [String] = []
        for i in 1...3 {
            let p = try SimkitProcess.write("shard\(i).json", "")
            let r = try SimkitProcess.run(["fuzz", "--seeds", "90", "--from", "1000", "--shard", "\(i)/3", "--no-shrink", "--quiet", "--json", p])
            #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
            union += try results(p)
            paths.append(p)
        }
        let all = try results(whole)
        #expect(all.count == 90)
        #expect(union.sorted { UInt64($0["seed"]!)! < UInt64($1["seed"]!)! } == all)
        let merged = try SimkitProcess.write("merged.json", "")
        let m = try SimkitProcess.run(["merge"] + paths + ["--json", merged])
        #expect(m.status == 0, "\(m.stdout)\(m.stderr)")
        #expect(try results(merged) == all)
    }

    @Test("JUnit output is well-formed XML that names the failing seeds")
    func junitIsWellFormed() throws {
        let path = try SimkitProcess.write("fuzz.xml", "")
        let json = try SimkitProcess.write("fuzz-junit.json", "")
        let r = try SimkitProcess.run(["fuzz", "--seeds", "40", "--sdk", "mutant:query-while-locked", "--no-shrink", "--quiet", "--junit", path, "--json", json])
        #expect(r.status == 1)
        let data = try #require(FileManager.default.contents(atPath: path))
        let parser = XMLParser(data: data)
        #expect(parser.parse(), "JUnit XML does not parse: \(String(describing: parser.parserError))")
        let xml = String(decoding: data, as: UTF8.self)
        let failing = try results(json).filter { !$0["broken"]!.contains("[]") && $0["broken"]! != "(\n)" }
        #expect(!failing.isEmpty)
        for row in failing { #expect(xml.contains("name=\"seed \(row["seed"]!)\"><") || xml.contains("name=\"seed \(row["seed"]!)\">\n      <failure")) }
        #expect(xml.contains("<failure message=\"locked-is-inert"))
    }

    @Test("replay is byte for byte and --print prints a scenario that parses")
    func replayIsExact() throws {
        let a = try SimkitProcess.run(["replay", "17", "--sdk", "mutant:lock-on-pending"])
        let b = try SimkitProcess.run(["replay", "17", "--sdk", "mutant:lock-on-pending"])
        #expect(a.stdout == b.stdout)
        #expect(a.stdout.contains("fingerprint"))
        let printed = try SimkitProcess.run(["replay", "17", "--print"])
        #expect(printed.status == 0)
        #expect(ScenarioParser.parse(printed.stdout, file: "17.scenario").scenario == ScenarioGenerator.generate(seed: 17))
        let bad = try SimkitProcess.run(["replay", "seventeen"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("SEED must be a whole number"))
    }

    @Test("Ctrl-C stops a fuzz run cleanly with its summary and exit 3")
    func interruptKeepsTheSummary() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: SimkitProcess.binary)
        p.arguments = ["fuzz", "--seeds", "5000000", "--quiet", "--no-shrink"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = Pipe()
        try p.run()
        Thread.sleep(forTimeInterval: 2.0)
        p.interrupt()
        // Bounded wait: a child that ignores Ctrl-C fails the test instead of hanging it.
        var waitedSeconds = 0.0
        while p.isRunning, waitedSeconds < 30 { Thread.sleep(forTimeInterval: 0.1); waitedSeconds += 0.1 }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(waitedSeconds < 30, "simkit fuzz did not stop within 30 s of Ctrl-C")
        #expect(p.terminationStatus == 3, "\(text)")
        #expect(text.contains("INCOMPLETE: stopped by SIGINT"))
        #expect(text.contains("sometimes coverage"))
    }
}
