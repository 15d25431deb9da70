import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Synchronization
import Testing

/// A `simkit` process whose standard error is read while it runs, so a test can wait for
/// its first progress line before signalling it. Standard output goes to a file.
final class LiveSimkit: Sendable {
    let process: Process
    let stderrBox = StderrBox()
    /// Everything read from standard error so far.
    var stderrText: String { stderrBox.text.withLock { $0 } }
    let stdoutPath: String

    /// `environment`: variables set for the process beside the test's own.
    init(_ args: [String], environment: [String: String] = [:]) throws {
        try #require(FileManager.default.isExecutableFile(atPath: SimkitProcess.binary),
                     "simkit is not built at \(SimkitProcess.binary): run 'swift build' first")
        stdoutPath = try SimkitProcess.write("live-\(UUID().uuidString).out", "")
        process = Process()
        process.executableURL = URL(fileURLWithPath: SimkitProcess.binary)
        process.arguments = args
        process.currentDirectoryURL = URL(fileURLWithPath: PackageRoot.path)
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        let err = Pipe()
        process.standardError = err
        let box = stderrBox
        err.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil; return }
            box.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    /// Waits (at most `timeout` seconds) until standard error contains `marker`.
    func waitForStderr(_ marker: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if stderrText.contains(marker) { return true }
            if !process.isRunning { return stderrText.contains(marker) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// Waits at most `timeout` seconds for the process to exit; kills it (and returns nil)
    /// if it does not, so a child that ignores a signal fails the test instead of hanging it.
    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit(); return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
}

/// Standard error read so far, shared with the pipe's reading handler.
final class StderrBox: Sendable { let text = Mutex<String>("") }

/// The top-level object of a JSON file.
func jsonObject(_ path: String) throws -> [String: Any] {
    let data = try #require(FileManager.default.contents(atPath: path), "no JSON at \(path)")
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "not a JSON object: \(path)")
}

/// A fresh path in the tests' temporary folder that does not exist yet.
func freshPath(_ name: String) throws -> String {
    let path = try SimkitProcess.write(name, "")
    try FileManager.default.removeItem(atPath: path)
    return path
}

@Suite("Command line: stops, shards, merge, progress", .serialized)
struct StopAndShardTests {
    @Test("SIGTERM and SIGINT stop a fuzz run: exit 3, a whole JSON marked interrupted, a JUnit file that says so",
          arguments: [SIGTERM, SIGINT])
    func signalStopsCleanly(sig: Int32) throws {
        let name = sig == SIGTERM ? "term" : "int"
        let json = try freshPath("stop-\(name).json"), junit = try freshPath("stop-\(name).xml")
        let run = try LiveSimkit(["fuzz", "--seeds", "5000000", "--no-shrink", "--json", json, "--junit", junit,
                                  "--out", NSTemporaryDirectory() + "simkit-stop-test"])
        // The first progress line comes after the first seed; on a pipe it is a plain line.
        let started = run.waitForStderr("fuzz: 1/5,000,000 seeds", timeout: 60)
        kill(run.process.processIdentifier, sig)
        let status = run.waitForExit(timeout: 30)
        #expect(started, "no progress line within 60 s: \(run.stderrText)")
        #expect(status == 3, "exit \(String(describing: status)); stdout: \(run.stdout)")
        let signal = sig == SIGTERM ? "SIGTERM" : "SIGINT"
        #expect(run.stdout.contains("INCOMPLETE: stopped by \(signal)"), "\(run.stdout)")
        #expect(run.stdout.contains("sometimes coverage"))
        #expect(!run.stdout.hasPrefix("\n"))

        let object = try jsonObject(json)
        #expect(object["format"] as? String == "simkit-fuzz/2")
        #expect(object["interrupted"] as? Bool == true)
        #expect(object["complete"] as? Bool == false)
        #expect(object["stoppedBy"] as? String == signal)
        let ran = try #require(object["seedsRun"] as? Int)
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(ran >= 1 && ran < 5_000_000 && ran == results.count)
        #expect(object["planned"] as? Int == 5_000_000)

        let data = try #require(FileManager.default.contents(atPath: junit))
        let parser = XMLParser(data: data)
        #expect(parser.parse(), "JUnit XML does not parse")
        let xml = String(decoding: data, as: UTF8.self)
        #expect(xml.contains("<property name=\"interrupted\" value=\"true\"/>"))
        #expect(xml.contains("<property name=\"seeds-run\" value=\"\(ran)\"/>"))
        #expect(xml.contains("name=\"campaign incomplete\">\n      <error message=\"INCOMPLETE: stopped by \(signal)"))
    }

    @Test("a second signal exits at once with status 3, before the seed in flight is done")
    func secondSignalExitsAtOnce() throws {
        let json = try freshPath("second-signal.json")
        // One seed of up to 100,000 devices a group runs for minutes in a debug build.
        let run = try LiveSimkit(["fuzz", "--seeds", "10", "--jobs", "1", "--devices", "100000", "--no-shrink", "--json", json])
        Thread.sleep(forTimeInterval: 1.5)
        kill(run.process.processIdentifier, SIGINT)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(run.process.isRunning, "the first signal must let the seed in flight finish")
        kill(run.process.processIdentifier, SIGTERM)
        let status = run.waitForExit(timeout: 10)
        #expect(status == 3)
        #expect(!FileManager.default.fileExists(atPath: json), "no summary is written after a second signal")
    }

    @Test("SIGTERM stops 'simkit mutants': exit 3, unfinished mutants marked, none called survived")
    func mutantsStop() throws {
        let json = try freshPath("mutants-stop.json")
        let run = try LiveSimkit(["mutants", "--seeds", "100000", "--jobs", "1", "--no-shrink", "--json", json,
                                  "--out", NSTemporaryDirectory() + "simkit-mutants-stop"])
        Thread.sleep(forTimeInterval: 2)
        kill(run.process.processIdentifier, SIGTERM)
        let status = run.waitForExit(timeout: 60)
        #expect(status == 3, "\(run.stdout)\(run.stderrText)")
        #expect(run.stdout.contains("INCOMPLETE: stopped by SIGTERM;"), "\(run.stdout)")
        #expect(!run.stdout.contains("SURVIVED"), "\(run.stdout)")
        let data = try #require(FileManager.default.contents(atPath: json), "no --json written")
        let rows = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(rows.contains { $0["interrupted"] as? Bool == true } || rows.count < 26)
    }

    @Test("--time-limit stops early: exit 3 and the JSON says so")
    func timeLimitIsIncomplete() throws {
        let json = try freshPath("time-limit.json")
        let r = try SimkitProcess.run(["fuzz", "--seeds", "5000000", "--time-limit", "1s", "--quiet", "--no-shrink", "--json", json])
        #expect(r.status == 3, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("INCOMPLETE: stopped by --time-limit"))
        let object = try jsonObject(json)
        #expect(object["stoppedBy"] as? String == "--time-limit")
        #expect(object["interrupted"] as? Bool == true)
    }

    @Test("each JSON says its shard, range and options; merge of all shards passes")
    func shardJSONSaysItsPlan() throws {
        let paths = try (1...3).map { i in try freshPath("plan-shard\(i).json") }
        for (i, p) in paths.enumerated() {
            let r = try SimkitProcess.run(["fuzz", "--seeds", "30", "--from", "500", "--shard", "\(i + 1)/3", "--devices", "7",
                                           "--duration", "20d", "--no-shrink", "--quiet", "--json", p])
            #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
            #expect(r.stdout.hasPrefix("simkit fuzz --sdk reference --shard \(i + 1)/3: 10 of 10 seeds"), "\(r.stdout)")
        }
        let object = try jsonObject(paths[1])
        #expect(object["shard"] as? [String: Int] == ["index": 2, "count": 3])
        #expect((object["range"] as? [String: Any])?["from"] as? Int == 500)
        #expect((object["range"] as? [String: Any])?["count"] as? Int == 30)
        let options = try #require(object["options"] as? [String: Any])
        #expect(options["sdk"] as? String == "reference" && options["devices"] as? Int == 7 && options["durationDays"] as? Int == 20)
        let seeds = try #require(object["results"] as? [[String: Any]]).map { $0["seed"] as? Int }
        #expect(seeds == [501, 504, 507, 510, 513, 516, 519, 522, 525, 528])

        let all = try SimkitProcess.run(["merge"] + paths)
        #expect(all.status == 0, "\(all.stdout)\(all.stderr)")
        #expect(all.stdout.hasPrefix("simkit merge --sdk reference: 30 of 30 seeds"), "\(all.stdout)")
        #expect(!all.stdout.contains("INCOMPLETE"))

        // One shard alone is not the whole campaign.
        let alone = try SimkitProcess.run(["merge", paths[0]])
        #expect(alone.status == 3, "\(alone.stdout)\(alone.stderr)")
        #expect(alone.stdout.contains("10 of 30 seeds"))
        #expect(alone.stdout.contains("INCOMPLETE: missing shards 2, 3 of 3; 20 seeds of 30 not run"), "\(alone.stdout)")
        #expect(alone.stdout.contains("missing seeds: 20 (first: 501, 502, 504, 505, 507, …)"), "\(alone.stdout)")
        let merged = try freshPath("merged-missing.json")
        _ = try SimkitProcess.run(["merge", paths[0], paths[2], "--json", merged])
        let m = try jsonObject(merged)
        #expect(m["missingShards"] as? [Int] == [2] && m["missingSeeds"] as? Int == 10 && m["complete"] as? Bool == false)
        #expect(m["mergedShards"] as? [Int] == [1, 3])

        // The same file twice, under two spellings of its path, and two files of one shard.
        let twice = try SimkitProcess.run(["merge", paths[0], paths[1], paths[0]])
        #expect(twice.status == 2 && twice.stderr.contains("'\(paths[0])' is given twice"), "\(twice.stderr)")
        let dotted = (paths[0] as NSString).deletingLastPathComponent + "/./" + (paths[0] as NSString).lastPathComponent
        let spelled = try SimkitProcess.run(["merge", paths[0], dotted])
        #expect(spelled.status == 2 && spelled.stderr.contains("are the same file"), "\(spelled.stderr)")
        let copy = try freshPath("plan-shard1-copy.json")
        try FileManager.default.copyItem(atPath: paths[0], toPath: copy)
        let sameShard = try SimkitProcess.run(["merge", paths[0], copy])
        #expect(sameShard.status == 2 && sameShard.stderr.contains("'\(paths[0])' and '\(copy)' are both shard 1/3"), "\(sameShard.stderr)")
    }

    @Test("merge refuses shards of different campaigns: another N, range or option")
    func mergeRefusesMismatches() throws {
        let a = try freshPath("mm-a.json"), b = try freshPath("mm-b.json"), c = try freshPath("mm-c.json")
        _ = try SimkitProcess.run(["fuzz", "--seeds", "8", "--shard", "1/2", "--no-shrink", "--quiet", "--json", a])
        _ = try SimkitProcess.run(["fuzz", "--seeds", "8", "--shard", "2/4", "--no-shrink", "--quiet", "--json", b])
        _ = try SimkitProcess.run(["fuzz", "--seeds", "8", "--shard", "2/2", "--devices", "5", "--no-shrink", "--quiet", "--json", c])
        let n = try SimkitProcess.run(["merge", a, b])
        #expect(n.status == 2 && n.stderr.contains("it is one of 4 shards, not 2"), "\(n.stderr)")
        let o = try SimkitProcess.run(["merge", a, c])
        #expect(o.status == 2 && o.stderr.contains("it ran --devices 5, not 40"), "\(o.stderr)")
        // A result that is not one of its shard's seeds (a hand-edited or mixed-up file).
        var object = try jsonObject(a)
        var rows = try #require(object["results"] as? [[String: Any]])
        rows[0]["seed"] = 1
        object["results"] = rows
        let tampered = try SimkitProcess.write("mm-tampered.json", String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        let t = try SimkitProcess.run(["merge", tampered])
        #expect(t.status == 2 && t.stderr.contains("has a result for seed 1, which is not one of shard 1/2's seeds"), "\(t.stderr)")
    }

    @Test("an interrupted shard leaves its missing seeds counted: merge exits 3")
    func mergeCountsMissingSeeds() throws {
        let a = try freshPath("int-a.json"), b = try freshPath("int-b.json")
        _ = try SimkitProcess.run(["fuzz", "--seeds", "5000000", "--shard", "1/2", "--time-limit", "1s", "--no-shrink", "--quiet", "--json", a])
        _ = try SimkitProcess.run(["fuzz", "--seeds", "5000000", "--shard", "2/2", "--time-limit", "1s", "--no-shrink", "--quiet", "--json", b])
        let m = try SimkitProcess.run(["merge", a, b])
        #expect(m.status == 3, "\(m.stdout)\(m.stderr)")
        #expect(m.stdout.contains("INCOMPLETE: stopped by shard 1/2 by --time-limit, shard 2/2 by --time-limit"), "\(m.stdout)")
        #expect(m.stdout.contains("missing seeds: "))
    }

    @Test("a shard with no seed is bad input, with the reason")
    func emptyShard() throws {
        let r = try SimkitProcess.run(["fuzz", "--seeds", "3", "--shard", "5/10", "--quiet"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("--shard 5/10 gets no seed of --seeds 3"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test("unwritable --out, --json and --junit are refused before the first seed, in plain words")
    func unwritablePaths() throws {
        let file = try SimkitProcess.write("a-plain-file", "x")
        let cases: [([String], String)] = [
            (["--out", "/proc/simkit-x"], "cannot create the directory /proc/simkit-x: no such directory"),
            (["--out", file + "/sub"], "cannot create the directory \(file)/sub: a part of the path is a file, not a directory"),
            (["--json", file + "/x.json"], "cannot write \(file)/x.json: a part of the path is a file, not a directory"),
            (["--junit", NSTemporaryDirectory()], "it is a directory"),
        ]
        for (flags, message) in cases {
            let r = try SimkitProcess.run(["fuzz", "--seeds", "5", "--quiet"] + flags)
            #expect(r.status == 2, "\(flags)")
            #expect(r.stderr.contains(message), "\(flags): \(r.stderr)")
            #expect(!r.stderr.contains("Domain") && !r.stderr.contains("NSCocoa"), "\(r.stderr)")
            #expect(r.stdout.isEmpty, "no seed runs: \(r.stdout)")
        }
        // A missing --out directory is fine (it is made when a reproducer is written), and
        // a run that writes none leaves none behind.
        let fresh = try freshPath("out-made-later") + "/deeper"
        let ok = try SimkitProcess.run(["fuzz", "--seeds", "5", "--quiet", "--out", fresh])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(!FileManager.default.fileExists(atPath: (fresh as NSString).deletingLastPathComponent))
    }

    @Test("progress: a plain line on a pipe, nothing with --quiet, no blank first line")
    func progressLines() throws {
        let loud = try SimkitProcess.run(["fuzz", "--seeds", "20", "--jobs", "1", "--no-shrink"])
        #expect(loud.status == 0)
        let first = try #require(loud.stderr.split(separator: "\n").first.map(String.init), "no progress line: \(loud.stderr)")
        #expect(first.wholeMatch(of: /fuzz: 1\/20 seeds, 0 failures, [0-9,]+ seeds\/s, ETA [0-9hms]+/) != nil, "\(first)")
        #expect(!loud.stderr.contains("\u{1B}["), "no terminal codes on a pipe")
        #expect(loud.stdout.hasPrefix("simkit fuzz --sdk reference: 20 of 20 seeds in "), "\(loud.stdout)")
        #expect(loud.stdout.contains("1 job)"), "\(loud.stdout)")
        let quiet = try SimkitProcess.run(["fuzz", "--seeds", "20", "--no-shrink", "--quiet"])
        #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
        #expect(quiet.stdout.hasPrefix("simkit fuzz"), "\(quiet.stdout)")
    }

    @Test("progress on a terminal is one redrawn line, cleared before the summary",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "skipped: no /usr/bin/script (util-linux) to give simkit a terminal"))
    func progressOnATerminal() throws {
        // `script` runs the command on a pseudo-terminal and copies what it shows.
        let command = "\(SimkitProcess.binary) fuzz --seeds 40 --jobs 1 --no-shrink"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        p.arguments = ["-qec", command, "/dev/null"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = Pipe()
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(text.hasPrefix("\r\u{1B}[Kfuzz: 1/40 seeds, 0 failures, "), "\(text.debugDescription)")
        // Every progress line redraws the last one; none is left on a line of its own.
        let lines = text.components(separatedBy: "fuzz: ").count - 1
        #expect(lines >= 1 && lines == text.components(separatedBy: "\r\u{1B}[Kfuzz: ").count - 1, "\(text.debugDescription)")
        #expect(text.contains("\r\u{1B}[Ksimkit fuzz --sdk reference: 40 of 40 seeds"), "\(text.debugDescription)")
    }

    @Test("a shrunk one-device reproducer says '1 device'")
    func singularDevice() throws {
        let out = NSTemporaryDirectory() + "simkit-plural-test"
        let r = try SimkitProcess.run(["fuzz", "--seeds", "28", "--from", "0", "--sdk", "mutant:lock-on-5xx", "--jobs", "1", "--out", out])
        #expect(r.status == 1)
        #expect(r.stdout.contains(" 1 device)"), "\(r.stdout)")
        #expect(!r.stdout.contains(" 1 devices") && !r.stdout.contains(" 1 statements"), "\(r.stdout)")
    }

    @Test("--version and version print the one version string")
    func version() throws {
        let a = try SimkitProcess.run(["--version"]), b = try SimkitProcess.run(["version"])
        #expect(a.status == 0 && b.status == 0)
        #expect(a.stdout.wholeMatch(of: /SimKit [0-9]+\.[0-9]+\.[0-9]+\n/) != nil, "\(a.stdout)")
        #expect(a.stdout == b.stdout)
    }
}
