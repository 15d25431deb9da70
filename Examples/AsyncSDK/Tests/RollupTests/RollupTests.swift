import Foundation
import Testing

/// The async SDK under SimKit, through its host `rollup-sim` run as a child process (SimKit's
/// executors are fixed for a process's lifetime, so they cannot be installed inside the
/// test runner): the conformance kit, fuzz seeds, the same seed in two processes, each
/// planted async bug caught and shrunk, and each leak stopped on the first seed.
@Suite(.serialized) struct RollupTests {
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }   // RollupTests.swift, RollupTests, Tests
        return url.path
    }()

    /// The host built beside this test bundle.
    static let tool: String = {
        let beside = Bundle.main.bundleURL.appendingPathComponent("rollup-sim").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return packageRoot + "/.build/debug/rollup-sim"
    }()

    static let scratch: String = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rollup-tests-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.path
    }()

    /// Runs the host with `args`; status and both outputs (through files, so a long output
    /// cannot fill a pipe and stall the child).
    static func run(_ args: [String], environment: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
        let id = UUID().uuidString
        let outURL = URL(fileURLWithPath: scratch + "/\(id).out"), errURL = URL(fileURLWithPath: scratch + "/\(id).err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        p.currentDirectoryURL = URL(fileURLWithPath: packageRoot)
        p.standardOutput = try FileHandle(forWritingTo: outURL)
        p.standardError = try FileHandle(forWritingTo: errURL)
        try p.run()
        p.waitUntilExit()
        return (p.terminationStatus, try String(contentsOf: outURL, encoding: .utf8), try String(contentsOf: errURL, encoding: .utf8))
    }

    @Test func theConformanceKitPasses() throws {
        let r = try Self.run(["conformance", "--sdk", "custom:rollup", "--seeds", "10"])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(r.out.contains("custom:rollup"), "\(r.out)")
    }

    @Test func fuzzSeedsBreakNothing() throws {
        // 2,000 seeds take about 30 s in release (see the README); the debug build here runs 100.
        let r = try Self.run(["fuzz", "--sdk", "custom:rollup", "--seeds", "100", "--from", "200", "--quiet", "--out", Self.scratch])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(r.out.contains("100 of 100 seeds"), "\(r.out)")
        #expect(r.out.contains("no invariant broken"), "\(r.out)")
    }

    /// Other interleavings: with a pick seed, the loop runs ready jobs in a seeded order
    /// instead of FIFO; the SDK keeps every rule under them too.
    @Test func otherInterleavingsBreakNothing() throws {
        let r = try Self.run(["fuzz", "--sdk", "custom:rollup", "--seeds", "40", "--quiet", "--out", Self.scratch],
                             environment: ["SIMKIT_ASYNC_PICK_SEED": "3"])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(r.out.contains("no invariant broken"), "\(r.out)")
    }

    /// Each seed run twice in this process (the determinism guard), and all of them again
    /// in two more processes: the same fingerprints.
    @Test func theSameSeedGivesTheSameFingerprintInTwoProcesses() throws {
        let guarded = try Self.run(["fuzz", "--sdk", "custom:rollup", "--seeds", "20", "--check-determinism", "--quiet", "--out", Self.scratch])
        #expect(guarded.status == 0, "\(guarded.out)\(guarded.err)")
        // Two processes, each running seeds 0..<200 and writing every seed's fingerprint.
        var runs: [[String]] = []
        for k in 0..<2 {
            let json = Self.scratch + "/fingerprints-\(k).json"
            let r = try Self.run(["fuzz", "--sdk", "custom:rollup", "--seeds", "200", "--quiet", "--json", json, "--out", Self.scratch])
            #expect(r.status == 0, "\(r.out)\(r.err)")
            let text = try String(contentsOfFile: json, encoding: .utf8)
            runs.append(text.split(separator: "\n").filter { $0.contains("\"fingerprint\"") }.map(String.init))
        }
        #expect(runs[0].count == 200, "\(runs[0].count) fingerprints")
        for (seed, (a, b)) in zip(runs[0], runs[1]).enumerated() {
            #expect(a == b, "seed \(seed): \(a) in one process, \(b) in the other")
        }
    }

    /// A planted async bug is caught by plain fuzzing (within the seeds its test names: its
    /// first failing seed, measured with 2,000 seeds in release, plus a margin), shrunk to a scenario that names its
    /// core, which fails on it and passes on the SDK as shipped.
    func caughtAndShrunk(_ core: String, _ invariant: String, seeds: Int) throws {
        let r = try Self.run(["fuzz", "--sdk", "custom:\(core)", "--seeds", "\(seeds)", "--no-shrink", "--out", Self.scratch])
        #expect(r.status == 1, "\(core): \(r.out)\(r.err)")
        let failing = r.out.split(separator: "\n").filter { $0.hasPrefix("FAIL seed ") && $0.contains("[\(invariant)]") }
            .compactMap { UInt64($0.dropFirst("FAIL seed ".count).prefix { $0 != ":" }) }
        let seed = try #require(failing.min(), "\(core) broke no \(invariant) in \(seeds) seeds: \(r.out)")
        let file = Self.scratch + "/\(core)-seed\(seed).scenario"
        let shrunk = try Self.run(["shrink", "--seed", "\(seed)", "--sdk", "custom:\(core)", "--invariant", invariant, "-o", file])
        #expect(shrunk.status == 1, "\(shrunk.out)\(shrunk.err)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("sdk custom \(core)\n"), "\(text)")
        let again = try Self.run(["run", "--quiet", file])
        #expect(again.status == 1, "\(again.out)\(again.err)")
        let shipped = try Self.run(["run", "--sdk", "custom:rollup", file])
        #expect(shipped.status == 0, "\(shipped.out)\(shipped.err)")
        let statements = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }.count
        print("\(core): first failing seed \(seed), reproducer of \(statements) lines")
    }

    @Test func aCancelledIndexingLoopThatStillWritesIsCaught() throws {
        try caughtAndShrunk("rollup-index-after-cancel", "locked-is-inert", seeds: 240)   // first: seed 229
    }

    @Test func aVerdictReadBeforeTheAwaitIsCaught() throws {
        try caughtAndShrunk("rollup-verdict-before-await", "newest-verdict-wins", seeds: 20)   // first: seed 12
    }

    @Test func anAnswerActedOnAfterResetIsCaught() throws {
        try caughtAndShrunk("rollup-answer-after-reset", "stale-responses-ignored", seeds: 20)   // first: seed 9
    }

    @Test func aRetryLoopThatOutlivesTheLockIsCaught() throws {
        try caughtAndShrunk("rollup-retry-outlives-lock", "locked-is-inert", seeds: 100)   // first: seed 93
    }

    /// The reproducers kept in scenarios/: each fails on its core the way it says.
    @Test func theKeptReproducersStillFail() throws {
        let dir = Self.packageRoot + "/scenarios"
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".scenario") }.sorted()
        #expect(files.count >= 4, "\(files)")
        for f in files {
            let r = try Self.run(["run", "--quiet", dir + "/" + f])
            #expect(r.status == 1, "\(f): \(r.out)\(r.err)")
            let shipped = try Self.run(["run", "--sdk", "custom:rollup", dir + "/" + f])
            #expect(shipped.status == 0, "\(f) on the SDK as shipped: \(shipped.out)\(shipped.err)")
        }
    }

    /// What escapes SimKit's loop, a step that never settles and a call that never returns
    /// each stop the first seed with a verdict naming it, never a hang.
    @Test(arguments: [("leak-dispatch", "escape-foreign-thread"), ("leak-date", "escape-unsimulated-clock"),
                      ("leak-spin", "step-never-settles"), ("leak-hang", "call-never-returns")])
    func aLeakIsAVerdictOnTheFirstSeed(core: String, verdict: String) throws {
        // A verdict of the seed, not the end of the process: the campaign goes on to the next seed.
        let json = Self.scratch + "/\(core).json"
        let r = try Self.run(["fuzz", "--sdk", "custom:\(core)", "--seeds", "3", "--no-shrink", "--quiet", "--json", json, "--out", Self.scratch])
        #expect(r.status == 1, "\(core): \(r.out)\(r.err)")
        #expect(r.out.contains("3 of 3 seeds"), "\(core): \(r.out)")
        #expect(r.out.contains("\(verdict)") && r.out.contains("(first: 0)"), "\(core): \(r.out)")
        let text = try String(contentsOfFile: json, encoding: .utf8)
        #expect(text.contains("\"\(verdict)\""), "\(core): \(text)")
    }

    /// Deterministic hashing makes a Set's order reproducible; `hash-check` reruns the seed
    /// under random hash seeds, so a Set iteration that reaches a request is found.
    @Test func aSetIterationThatReachesARequestIsFoundByTheHashCheck() throws {
        let leak = try Self.run(["hash-check", "--sdk", "custom:leak-set", "--seeds", "1"])
        #expect(leak.status == 1, "\(leak.out)\(leak.err)")
        #expect(leak.out.contains("FAIL seed 0: hash-order:"), "\(leak.out)")
        let shipped = try Self.run(["hash-check", "--sdk", "custom:rollup", "--seeds", "3", "--tries", "3"])
        #expect(shipped.status == 0, "\(shipped.out)\(shipped.err)")
    }

    @Test func exploreRefusesAnAsyncCore() throws {
        let r = try Self.run(["explore", "--sdk", "custom:rollup"])
        #expect(r.status == 2, "\(r.out)\(r.err)")
        #expect(r.err.contains("cannot be copied"), "\(r.err)")
    }

    /// The bench row, small (the full one, `bench --sdk custom:rollup`, is in the README):
    /// memory after a tenth of the seeds and after all, the reference's and the async
    /// core's CPU time for the same world, and the async core's SDK inputs per second.
    @Test func theBenchRowPrintsMemoryTimeAndInputsPerSecond() throws {
        let r = try Self.run(["bench", "--sdk", "custom:rollup", "--seeds", "20", "--devices", "20", "--days", "2"])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(r.out.contains("MB after 2 fuzz seeds"), "\(r.out)")
        #expect(r.out.contains("MB after 20 ("), "\(r.out)")
        #expect(r.out.contains("20 devices × 2 days, sans-IO reference:"), "\(r.out)")
        #expect(r.out.contains("20 devices × 2 days, custom:rollup:"), "\(r.out)")
        let inputs = r.out.firstMatch(of: /custom:rollup: (\d+) SDK inputs in/).flatMap { Int($0.1) } ?? 0
        #expect(inputs > 0, "\(r.out)")
        let bad = try Self.run(["bench", "--sdk", "custom:rollup", "--seeds", "3"])
        #expect(bad.status == 2, "\(bad.out)\(bad.err)")
        #expect(bad.err.contains("--seeds"), "\(bad.err)")
    }
}
