import Foundation
import Testing
@testable import SimKit
import ScenarioLanguage
import Scenarios
import SimKitTesting

/// Issue 19, part 2: PASS only for a run that reached its end with every expectation
/// judged; a run that stopped early is INCOMPLETE with its true reason.
@Suite("Verdicts: no PASS that tested nothing")
struct VerdictTests {
    /// One device launched every millisecond, each launch jittered by up to 40 days:
    /// pending launches pile up until the queue's bound (2^20 events) stops the run.
    static let runaway = """
    duration 1d
    account acme
    app photos account acme key rk_live_A
    devices 1 app photos
    every 1ms jitter 40d launch all
    at 1d expect all photos idle

    """

    @Test("a run stopped by the queue bound is incomplete, says so, and fails the user's test")
    func queueBoundIsIncomplete() throws {
        let run = try SimKitTest.scenario(source: Self.runaway, file: "runaway.scenario")
        #expect(!run.passed && run.incomplete)
        #expect(run.outcome.verdict == .incomplete)
        guard case let .queueBound(events, atMs)? = run.outcome.stop else {
            Issue.record("stop is \(String(describing: run.outcome.stop))"); return
        }
        #expect(events == 1 << 20 && atMs < Ms.day)
        #expect(run.outcome.stop?.name == "queue bound")
        let text = run.description
        #expect(text.hasPrefix("INCOMPLETE (untitled) (runaway.scenario) seed 0\n"), "\(text)")
        #expect(text.contains("queue bound: more than 1048576 events were pending"))
        #expect(!text.contains("PASS"))
        #expect(ScenarioReport.summary([run.outcome]) == "1 scenario: 0 passed, 0 failed, 1 incomplete")
    }

    @Test("a run that needs more than the memory budget stops with the memory bound")
    func memoryBoundIsIncomplete() {
        var runner = ScenarioRunner()
        runner.memoryBudgetBytes = 8 << 20
        let o = runner.run(file: "runaway.scenario", source: Self.runaway)
        #expect(o.verdict == .incomplete && !o.passed)
        #expect(o.stop?.name == "memory bound", "\(String(describing: o.stop))")
        #expect(o.stopReason?.contains("more than fit in 8 MiB") == true, "\(o.stopReason ?? "nil")")
    }

    @Test("the event budget is its own reason")
    func eventBudgetIsIncomplete() {
        var runner = ScenarioRunner()
        runner.eventBudget = 100
        let o = runner.run(file: "busy.scenario", source: Self.runaway.replacing("every 1ms jitter 40d", with: "every 1m"))
        #expect(o.verdict == .incomplete)
        #expect(o.stop == .eventBudget(events: 100, atMs: o.virtualDurationMs), "\(String(describing: o.stop))")
    }

    @Test("a failure found before an early stop is a failure, not incomplete")
    func failureBeforeStopFails() {
        var runner = ScenarioRunner()
        runner.memoryBudgetBytes = 8 << 20
        let o = runner.run(file: "f.scenario", source: Self.runaway.replacing("at 1d expect", with: "at 1ms expect")
            .replacing("all photos idle", with: "all photos locked"))
        #expect(o.verdict == .failed && o.stop?.name == "memory bound")
    }

    @Test("the memory budget caps the queue of a million devices below its count bound")
    func millionDevicesAreBoundByMemory() {
        let byCount = 64 * 1_000_000
        let byMemory = World<ReferenceSDK, NoObserver>.queueLimit(memoryBudgetBytes: WorldSetup.defaultMemoryBudgetBytes, devices: 1_000_000)
        #expect(byMemory < byCount)
        #expect(UInt64(byMemory) * World<ReferenceSDK, NoObserver>.bytesPerPendingEvent + 1_000_000 * 1_024 <= 4 << 30)
    }

    @Test("a file with nothing in it, or nothing tested, gets warnings at line 1")
    func nothingTestedWarns() {
        let empty = ScenarioParser.parse("", file: "e.scenario")
        #expect(empty.scenario != nil && !empty.hasErrors)
        #expect(empty.diagnostics.map(\.message) == [
            "the scenario has no devices", "the scenario has no actions",
            "the scenario expects nothing: no 'expect' line and no 'expect violation'",
        ])
        #expect(empty.diagnostics.allSatisfy { $0.severity == .warning && $0.rendered.hasPrefix("e.scenario:1:1: warning: ") })
        let strict = empty.strict()
        #expect(strict.scenario == nil && strict.hasErrors)
        let untested = ScenarioParser.parse(Self.runaway.replacing("at 1d expect all photos idle\n", with: ""), file: "u.scenario")
        #expect(untested.diagnostics.map(\.message).contains("the scenario expects nothing: no 'expect' line and no 'expect violation'"))
        #expect(untested.diagnostics.allSatisfy { $0.severity == .warning })
    }

    @Test("CR, LF and CRLF line endings and a byte order mark read the same file")
    func lineEndingsAndByteOrderMark() {
        let lf = Self.runaway
        let lfResult = ScenarioParser.parse(lf, file: "x.scenario")
        #expect(lfResult.diagnostics.filter { $0.severity == .error } == [])
        for variant in [lf.replacing("\n", with: "\r"), lf.replacing("\n", with: "\r\n"), "\u{FEFF}" + lf] {
            let r = ScenarioParser.parse(variant, file: "x.scenario")
            #expect(r.scenario == lfResult.scenario && r.scenario?.groups.count == 1, "\(r.rendered)")
        }
        // Locations count lines by CR too, and columns from after the mark.
        let bad = ScenarioParser.parse("\u{FEFF}duration 1d\rdevices x app photos\r", file: "x.scenario")
        #expect(bad.diagnostics.first?.rendered.hasPrefix("x.scenario:2:9: error: expected number of devices") == true, "\(bad.rendered)")
        let bom = ScenarioParser.parse("\u{FEFF}durationx 1d\n", file: "x.scenario")
        #expect(bom.diagnostics.first?.rendered.hasPrefix("x.scenario:1:1: error: unknown statement 'durationx'") == true, "\(bom.rendered)")
    }
}

@Suite("Command line: verdicts and exit codes", .serialized)
struct VerdictCommandLineTests {
    @Test("run: a run stopped early exits 3 with INCOMPLETE and its reason, never PASS")
    func runIncompleteExits3() throws {
        let f = try SimkitProcess.write("runaway.scenario", VerdictTests.runaway)
        let r = try SimkitProcess.run(["run", "--max-memory", "8M", f])
        #expect(r.status == 3, "\(r.stdout)\(r.stderr)")
        #expect(!r.stdout.contains("PASS"))
        #expect(r.stdout.contains("INCOMPLETE (untitled) (\(f))"))
        #expect(r.stdout.contains("memory bound: more than"))
        #expect(r.stdout.hasSuffix("1 scenario: 0 passed, 0 failed, 1 incomplete\n"))
        #expect(r.stderr.contains("warning: jitter '40d' is longer than the scenario's duration '1d'"))
        let strict = try SimkitProcess.run(["run", "--strict", f])
        #expect(strict.status == 2 && strict.stdout.isEmpty, "\(strict.stdout)")
        #expect(strict.stderr.contains("error: jitter '40d' is longer than the scenario's duration '1d'"))
    }

    @Test("timeline and shrink: the true reason (queue bound) and exit 3")
    func timelineAndShrinkIncomplete() throws {
        let f = try SimkitProcess.write("runaway.scenario", VerdictTests.runaway)
        let out = f + ".html"
        let t = try SimkitProcess.run(["timeline", f, "-o", out])
        #expect(t.status == 3, "\(t.stdout)\(t.stderr)")
        #expect(t.stdout.contains("INCOMPLETE: the run stopped early: queue bound"), "\(t.stdout)")
        #expect(try String(contentsOfFile: out, encoding: .utf8).contains("incomplete: stopped early (queue bound)"))
        let s = try SimkitProcess.run(["shrink", f])
        #expect(s.status == 3, "\(s.stdout)\(s.stderr)")
        #expect(s.stderr.contains("INCOMPLETE: the run stopped early, breaking no invariant before it did: queue bound"))
    }

    @Test("check: an empty file warns (exit 0), and is an error with --strict (exit 2)")
    func checkWarnsAndStrict() throws {
        let f = try SimkitProcess.write("empty.scenario", "")
        let r = try SimkitProcess.run(["check", f])
        #expect(r.status == 0 && r.stdout == "ok \(f)\n")
        #expect(r.stderr.contains("\(f):1:1: warning: the scenario has no devices"))
        let s = try SimkitProcess.run(["check", "--strict", f])
        #expect(s.status == 2 && s.stdout.isEmpty)
        #expect(s.stderr.contains("\(f):1:1: error: the scenario has no devices"))
    }

    @Test("a file larger than the limit is refused from its size (exit 2)")
    func hugeFileRefused() throws {
        let f = try SimkitProcess.write("huge.scenario", "")
        let h = try #require(FileHandle(forWritingAtPath: f))
        try h.truncate(atOffset: UInt64(ScenarioLimits.maxFileBytes) + 1)   // sparse: nothing is written
        try h.close()
        defer { try? FileManager.default.removeItem(atPath: f) }
        for command in ["check", "run", "timeline"] {
            let r = try SimkitProcess.run(command == "timeline" ? [command, f, "-o", f + ".html"] : [command, f])
            #expect(r.status == 2, "\(command): \(r.stderr)")
            #expect(r.stderr.contains("\(f): error: file is larger than 67108864 bytes"), "\(command): \(r.stderr)")
        }
    }

    @Test("help lists exit code 3")
    func helpListsIncomplete() throws {
        let r = try SimkitProcess.run(["--help"])
        #expect(r.stdout.contains("3 did not finish"))
        for command in ["run", "timeline", "replay", "shrink"] {
            let h = try SimkitProcess.run([command, "--help"])
            #expect(h.stdout.contains("3 "), "\(command) --help: \(h.stdout)")
        }
    }
}
