import Foundation
import Testing

/// Runs the built `simkit` binary (`.build/debug/simkit` under the package root).
struct SimkitProcess {
    var status: Int32
    var stdout: String
    var stderr: String

    static var binary: String { PackageRoot.path + "/.build/debug/simkit" }

    static func run(_ args: [String]) throws -> SimkitProcess { try run(args, in: PackageRoot.path) }

    /// Runs simkit with `args` in the folder `directory`.
    static func run(_ args: [String], in directory: String) throws -> SimkitProcess {
        try #require(FileManager.default.isExecutableFile(atPath: binary),
                     "simkit is not built at \(binary): run 'swift build' first")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = args
        p.currentDirectoryURL = URL(fileURLWithPath: directory)
        let out = Pipe(), err = Pipe()
        p.standardOutput = out; p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return SimkitProcess(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                             stderr: String(decoding: e, as: UTF8.self))
    }

    /// Writes `text` to a fresh file in a per-process temporary folder; returns its path.
    static func write(_ name: String, _ text: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("simkit-cli-tests-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}

@Suite("Command line: run and check", .serialized)
struct CommandLineTests {
    static let good = """
    scenario "Good"
    duration 1d
    account acme
    app photos account acme key rk_live_A
    devices 5 app photos
    at 0s launch all
    at 1h expect all photos idle

    """

    @Test("run: all pass → exit 0 and a PASS line and summary")
    func runPasses() throws {
        let f = try SimkitProcess.write("good.scenario", Self.good)
        let r = try SimkitProcess.run(["run", f])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("PASS Good (\(f))"))
        #expect(r.stdout.hasSuffix("1 scenario: 1 passed, 0 failed\n"))
    }

    @Test("run: a failed expectation → exit 1 with the message")
    func runFails() throws {
        let f = try SimkitProcess.write("fails.scenario", Self.good.replacingOccurrences(of: "all photos idle", with: "all photos locked"))
        let r = try SimkitProcess.run(["run", f])
        #expect(r.status == 1)
        #expect(r.stdout.contains("FAIL Good (\(f))"))
        #expect(r.stdout.contains("expect all photos locked at 1h: 0 of 5 are locked (5 idle)"))
        let quiet = try SimkitProcess.run(["run", "--quiet", f])
        #expect(quiet.status == 1 && quiet.stdout == "1 scenario: 0 passed, 1 failed\n")
    }

    @Test("run and check: a file with errors → exit 2, rendered diagnostics on stderr")
    func badInput() throws {
        let f = try SimkitProcess.write("bad.scenario", "at 1d launch nobody\n")
        let r = try SimkitProcess.run(["run", f])
        #expect(r.status == 2)
        #expect(r.stderr.contains("\(f):1:14: error:"))
        let c = try SimkitProcess.run(["check", f])
        #expect(c.status == 2 && c.stderr.contains("error:"))
        let missing = try SimkitProcess.run(["run", "/nonexistent/x.scenario"])
        #expect(missing.status == 2)
    }

    @Test("check: good files → exit 0 and 'ok FILE'")
    func checkGood() throws {
        let f = try SimkitProcess.write("ok.scenario", Self.good)
        let r = try SimkitProcess.run(["check", f])
        #expect(r.status == 0 && r.stdout == "ok \(f)\n")
    }

    @Test("run: --sdk and --seed override the file; bad values → exit 2")
    func overrides() throws {
        let f = try SimkitProcess.write("mut.scenario", Self.good + "expect violation purge-when-due\n")
        let withSeed = try SimkitProcess.run(["run", "--seed", "77", "--sdk", "reference", f])
        #expect(withSeed.status == 1 && withSeed.stdout.contains("seed 77"))
        #expect(try SimkitProcess.run(["run", "--sdk", "mutant:no-such", f]).status == 2)
        #expect(try SimkitProcess.run(["run", "--sdk", "bogus", f]).status == 2)
        #expect(try SimkitProcess.run(["run", "--sdk", "mutant:never-purge", Self.goodPath()]).status == 0)
    }

    @Test("both commands have --help")
    func help() throws {
        for c in ["run", "check"] {
            let r = try SimkitProcess.run([c, "--help"])
            #expect(r.status == 0 && r.stdout.hasPrefix("usage: simkit \(c)"))
        }
    }

    @Test("run: a directory runs every *.scenario inside, sorted")
    func directory() throws {
        let r = try SimkitProcess.run(["check", "scenarios"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count >= 25 && lines == lines.sorted())
    }

    @Test("run: many files show progress on standard error; --quiet and a single file do not")
    func runProgress() throws {
        let r = try SimkitProcess.run(["run", "scenarios"])
        #expect(r.status == 0)
        let first = try #require(r.stderr.split(separator: "\n").first.map(String.init), "no progress line")
        #expect(first.wholeMatch(of: /run: 1\/[0-9]+ files, 0 failures, [0-9,]+ files\/s, ETA [0-9hms]+/) != nil, "\(first)")
        #expect(try SimkitProcess.run(["run", "--quiet", "scenarios"]).stderr.isEmpty)
        #expect(try SimkitProcess.run(["run", try Self.goodPath()]).stderr.isEmpty)
    }

    static func goodPath() throws -> String { try SimkitProcess.write("good2.scenario", good) }
}
