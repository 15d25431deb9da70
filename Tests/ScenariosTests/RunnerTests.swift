import Foundation
import Testing
import Invariants
import ScenarioLanguage
import Scenarios
import SimKit

/// Parses `source` with every invariant and mutant known; fails the test on errors.
func parsed(_ source: String, file: String = "test.scenario") throws -> ScenarioFile {
    let r = ScenarioParser.parse(source, file: file, context: ScenarioRunner.standardContext)
    return try #require(r.scenario, "\(r.rendered)")
}

let twoGroups = """
account acme
account other unapproved
app photos account acme key rk_live_A
app albums account other key rk_live_M pending
devices 10 app photos
devices 5 app photos as early
clones 3 app photos

"""

@Suite("Runner: compiler")
struct ScenarioCompilerTests {
    @Test("names become ids; groups in file order; clones are clone groups")
    func declarations() throws {
        let c = try ScenarioCompiler.compile(parsed(twoGroups))
        let s = c.setup
        #expect(s.accounts == [AccountSpec(name: "acme"), AccountSpec(name: "other", approved: false)])
        #expect(s.apps == [AppSpec(name: "photos", account: 0, initialKey: 0),
                           AppSpec(name: "albums", account: 1, initialKey: 1, pending: true)])
        #expect(s.groups.map(\.name) == ["photos", "early", "photos-clones"])
        #expect(s.groups.map(\.count) == [10, 5, 3])
        #expect(s.groups.map(\.clones) == [false, false, true])
        #expect(s.keyNames == ["rk_live_A", "rk_live_M"])
    }

    @Test("selectors map to device selections")
    func selectors() throws {
        let c = try ScenarioCompiler.compile(parsed(twoGroups + """
        at 1s launch all
        at 2s open early
        at 3s close 3 of photos
        at 4s search 12.5% of early
        at 5s query device photos#7
        at 6s profile 10% of all

        """))
        let sel = c.setup.schedule.map { a -> DeviceSelection? in
            if case .person(_, let s, _) = a.action { return s } else { return nil }
        }
        #expect(sel == [.all, DeviceSelection(group: 1, mode: .every), DeviceSelection(group: 0, mode: .count(3)),
                        DeviceSelection(group: 1, mode: .shareBp(1250)), DeviceSelection(group: 0, mode: .single(6)),
                        DeviceSelection(group: nil, mode: .shareBp(1000))])
        #expect(c.setup.schedule.map(\.firstAtMs) == [1000, 2000, 3000, 4000, 5000, 6000])
    }

    @Test("rotate, stop-old-key and update with a key intern every key; update carries key + 1")
    func rotateAndUpdate() throws {
        let c = try ScenarioCompiler.compile(parsed(twoGroups + """
        at 1d rotate photos key rk_live_B stop-old now
        at 2d rotate photos key rk_live_C keep-old 10d
        at 3d rotate photos key rk_live_D
        at 4d stop-old-key photos rk_live_C
        at 5d update 2 of photos key rk_live_X
        at 6d update all

        """))
        #expect(c.setup.keyNames == ["rk_live_A", "rk_live_M", "rk_live_B", "rk_live_C", "rk_live_D", "rk_live_X"])
        #expect(c.setup.schedule.map(\.action) == [
            .dashboard(.rotate(app: 0, newKey: 2, graceMs: nil)),
            .dashboard(.rotate(app: 0, newKey: 3, graceMs: 10 * Ms.day)),
            .dashboard(.rotate(app: 0, newKey: 4, graceMs: 30 * Ms.day)),
            .dashboard(.stopOldKey(app: 0, key: 3)),
            .person(.update, DeviceSelection(group: 0, mode: .count(2)), arg: 6),
            .person(.update, .all, arg: 0),
        ])
    }

    @Test("every: first firing at from or one period in, until, jitter")
    func every() throws {
        let c = try ScenarioCompiler.compile(parsed(twoGroups + """
        every 8h jitter 2h open 60% of photos
        every 1d from 3d until 10d background all

        """))
        let a = c.setup.schedule[0], b = c.setup.schedule[1]
        #expect(a.firstAtMs == 8 * Ms.hour && a.periodMs == 8 * Ms.hour && a.jitterMs == 2 * Ms.hour && a.untilMs == .max)
        #expect(a.action == .person(.open, DeviceSelection(group: 0, mode: .shareBp(6000)), arg: 0))
        #expect(b.firstAtMs == 3 * Ms.day && b.periodMs == Ms.day && b.jitterMs == 0 && b.untilMs == 10 * Ms.day)
    }

    @Test("faults, dashboard, rollup, add-photos and forget-device; expects become probes in file order")
    func actionsAndProbes() throws {
        let c = try ScenarioCompiler.compile(parsed(twoGroups + """
        network latency 5ms..50ms timeout 2s
        at 1d server errors 12.5% status 503 for 2h
        at 1d expect none photos locked
        at 1d timeouts 10% for 1h
        at 1d lost-responses 1% for 1h
        at 1d server down for 1h
        at 1d offline device early#2 for 6h
        at 0s expect all all unconfigured
        at 2d disable photos
        at 2d enable photos
        at 2d rollup revoke albums
        at 2d rollup restore-account other
        at 2d add-photos 200 early
        at 2d forget-device 4 of photos

        """))
        let s = c.setup
        #expect(s.network == NetworkSpec(latencyMinMs: 5, latencyMaxMs: 50))
        #expect(s.sdk.requestTimeoutMs == 2 * Ms.second)
        #expect(s.schedule.map(\.action) == [
            .serverErrors(rateBp: 1250, status: 503, forMs: 2 * Ms.hour),
            .probe(0),
            .timeouts(rateBp: 1000, forMs: Ms.hour),
            .lostResponses(rateBp: 100, forMs: Ms.hour),
            .serverDown(forMs: Ms.hour),
            .offline(DeviceSelection(group: 1, mode: .single(1)), forMs: 6 * Ms.hour),
            .probe(1),
            .dashboard(.disable(app: 0)),
            .dashboard(.enable(app: 0)),
            .dashboard(.rollupApp(.revoke, app: 1)),
            .dashboard(.rollupAccount(.restore, account: 1)),
            .person(.addPhotos, DeviceSelection(group: 1, mode: .every), arg: 200),
            .forgetDevice(DeviceSelection(group: 0, mode: .count(4))),
        ])
        #expect(c.expectations.map(\.group) == [0, nil])
        #expect(c.expectations.map(\.time) == [Ms.day, 0])
        #expect(c.expectations[0].text == "expect none photos locked at 1d")
    }

    @Test("sdk lines: reference, mutant flaws on both sides, custom without flaws; overrides win")
    func sdkChoice() throws {
        let ref = try ScenarioCompiler.compile(parsed("seed 5\n" + twoGroups))
        #expect(ref.setup.sdkFlaws.isEmpty && ref.setup.serverFlaws.isEmpty && ref.setup.seed == 5)
        let sdkMutant = try ScenarioCompiler.compile(parsed("sdk mutant purge-at-29-days\n" + twoGroups))
        #expect(sdkMutant.setup.sdkFlaws == .purgesAt29Days)
        let serverMutant = try ScenarioCompiler.compile(parsed(twoGroups), sdk: .mutant("reset-keeps-record"), seed: 99)
        #expect(serverMutant.setup.serverFlaws == .resetKeepsRecord && serverMutant.setup.sdkFlaws.isEmpty)
        #expect(serverMutant.setup.seed == 99)
        let overridden = try ScenarioCompiler.compile(parsed("sdk mutant never-purge\n" + twoGroups), sdk: .reference)
        #expect(overridden.setup.sdkFlaws.isEmpty)
        // The compiler does not know the cores: a custom one runs with the world's settings.
        let custom = try ScenarioCompiler.compile(ScenarioParser.parse("sdk custom mine\n" + twoGroups, file: "t").scenario!)
        #expect(custom.setup.sdkFlaws.isEmpty && custom.setup.serverFlaws.isEmpty)
    }
}

@Suite("Runner: expectation judge")
struct ExpectationJudgeTests {
    static let setup = WorldSetup(seed: 1, durationMs: Ms.day, keyNames: ["rk_live_A"], accounts: [AccountSpec(name: "a")],
                                  apps: [AppSpec(name: "photos", account: 0, initialKey: 0)],
                                  groups: [GroupSpec(name: "photos", app: 0, count: 4), GroupSpec(name: "early", app: 0, count: 2)])

    func expectation(_ q: Quantifier, _ group: String, _ state: DeviceStateName, groupIndex: Int?) -> TimedExpectation {
        TimedExpectation(expectation: Expectation(quantifier: q, group: group, state: state), time: 11 * Ms.day, group: groupIndex)
    }

    @Test("states start unconfigured; state records move them; a probe counts its group")
    func judging() {
        var judge = ExpectationJudge(expectations: [
            expectation(.all, "photos", .locked, groupIndex: 0),
            expectation(.compare(.atLeast, .count(3)), "photos", .locked, groupIndex: 0),
            expectation(.none, "all", .purged, groupIndex: nil),
            expectation(.compare(.exactly, .share(Share(percent: 50))), "early", .unconfigured, groupIndex: 1),
        ])
        judge.begin(WorldFacts(setup: Self.setup))
        func rec(_ d: DeviceIndex, _ e: TraceEvent) { judge.observe(TraceRecord(time: 0, device: d, event: e)) }
        for d: DeviceIndex in 0..<3 { rec(d, .state(.locked)) }
        rec(3, .state(.indexing)); rec(3, .state(.idle))
        rec(4, .state(.purged))
        for i: UInt32 in 0..<4 { rec(Event.world, .probe(arg: i)) }
        #expect(judge.results.map(\.passed) == [false, true, false, true])
        #expect(judge.results[0].message == "expect all photos locked at 11d: 3 of 4 are locked (1 idle)")
        #expect(judge.results[2].message.hasPrefix("expect none all purged at 11d: 1 of 6 is purged ("))
        #expect(judge.failures.count == 2)
    }

    @Test("purged and locked count as themselves, not as each other")
    func purgedIsNotLocked() {
        var judge = ExpectationJudge(expectations: [expectation(.all, "early", .locked, groupIndex: 1),
                                                    expectation(.compare(.exactly, .count(1)), "early", .purged, groupIndex: 1)])
        judge.begin(WorldFacts(setup: Self.setup))
        judge.observe(TraceRecord(time: 0, device: 4, event: .state(.locked)))
        judge.observe(TraceRecord(time: 0, device: 5, event: .state(.purged)))
        judge.observe(TraceRecord(time: 0, device: Event.world, event: .probe(arg: 0)))
        judge.observe(TraceRecord(time: 0, device: Event.world, event: .probe(arg: 1)))
        #expect(judge.results.map(\.passed) == [false, true])
        #expect(judge.results[0].message == "expect all early locked at 11d: 1 of 2 is locked (1 purged)")
    }
}

@Suite("Runner: running scenarios")
struct ScenarioRunnerTests {
    static let disable = """
    scenario "Disable"
    seed 3
    duration 3d
    account acme
    app photos account acme key rk_live_A
    devices 20 app photos
    at 0s launch all
    at 1h expect all photos idle
    at 1d disable photos
    at 1d1h launch all

    """

    @Test("a scenario whose expectations hold passes")
    func passes() {
        let o = ScenarioRunner().run(file: "d.scenario", source: Self.disable + "at 1d2h expect all photos locked\n")
        #expect(o.passed, "\(ScenarioReport.block(o))")
        #expect(o.expectations.count == 2)
        #expect(o.eventsHandled > 0 && o.virtualDurationMs == 3 * Ms.day && o.fingerprint.count == 16)
        #expect(ScenarioReport.block(o) == "PASS Disable (d.scenario)\n")
    }

    @Test("a failed expectation fails the scenario with its message")
    func failsWithMessage() {
        let o = ScenarioRunner().run(file: "d.scenario", source: Self.disable + "at 1d2h expect all photos idle\n")
        #expect(o.verdict == .failed)
        #expect(o.failedExpectations.map(\.message) == ["expect all photos idle at 1d2h: 0 of 20 are idle (20 locked)"])
        let text = ScenarioReport.text([o])
        #expect(text.hasPrefix("FAIL Disable (d.scenario)"))
        #expect(text.contains("  failed expect all photos idle at 1d2h: 0 of 20 are idle (20 locked)\n"))
        #expect(text.hasSuffix("1 scenario: 0 passed, 1 failed\n"))
    }

    @Test("an expected violation that does not happen fails the scenario")
    func missingViolation() {
        let o = ScenarioRunner().run(file: "d.scenario", source: Self.disable + "expect violation purge-when-due\n")
        #expect(o.verdict == .failed)
        #expect(o.missingViolations == ["purge-when-due"])
        #expect(ScenarioReport.block(o).contains("expected violation purge-when-due did not happen"))
    }

    @Test("bad input is reported, never run")
    func badInput() {
        let o = ScenarioRunner().run(file: "bad.scenario", source: "at 1d launch nobody\n")
        #expect(o.verdict == .badInput)
        #expect(o.errors.contains("bad.scenario:1:"))
        let custom = ScenarioRunner().run(file: "c.scenario", source: "sdk custom mine\n")
        #expect(custom.verdict == .badInput && custom.errors.contains("c.scenario:1:12: error: unknown sdk core 'mine'"), "\(custom.errors)")
    }

    @Test("the same scenario and seed give the same fingerprint; another seed another")
    func deterministic() {
        let src = Self.disable + "every 1h jitter 30m launch 30% of photos\n"
        let a = ScenarioRunner().run(file: "d", source: src), b = ScenarioRunner().run(file: "d", source: src)
        let c = ScenarioRunner(seed: 4).run(file: "d", source: src)
        #expect(a.fingerprint == b.fingerprint && a.eventsHandled == b.eventsHandled)
        #expect(a.fingerprint != c.fingerprint && c.seed == 4)
    }

    @Test("the summary counts passes, failures and bad input")
    func summary() {
        let pass = ScenarioOutcome(name: "a", file: "a", verdict: .passed)
        let fail = ScenarioOutcome(name: "b", file: "b", verdict: .failed)
        #expect(ScenarioReport.summary([pass, fail, pass]) == "3 scenarios: 2 passed, 1 failed")
    }
}

@Suite("Runner: report")
struct ScenarioReportTests {
    @Test("an unexpected violation prints its headline, its story, and the device's last events, one per line")
    func violationBlock() throws {
        let facts = WorldFacts(setup: ExpectationJudgeTests.setup)
        let events = [
            TraceRecord(time: 3 * Ms.day + 2 * Ms.hour, device: 2, event: .delivered(id: 4, kind: .check, answer: .serverError, viaTimer: false, sentAt: 0, servedAt: ServerReply.none, stoppedSince: ServerReply.none)),
            TraceRecord(time: 3 * Ms.day + 2 * Ms.hour, device: 2, event: .state(.locked)),
        ]
        let v = Violation(invariant: .neverLockOnTransient, time: 3 * Ms.day + 2 * Ms.hour, device: 2,
                          deviceName: facts.deviceName(2), message: "locked on a 5xx", lastEvents: events)
        var o = ScenarioOutcome(name: "Storm", file: "storm.scenario", verdict: .failed)
        o.seed = 9
        o.broken = [.neverLockOnTransient]
        o.unexpected = [.neverLockOnTransient]
        o.unexpectedViolations = [v]
        o.missingViolations = ["purge-when-due"]
        o.facts = facts
        let lines = ScenarioReport.block(o).split(separator: "\n").map(String.init)
        #expect(lines[0] == "FAIL Storm (storm.scenario) seed 9")
        #expect(lines[1] == "  unexpected violation [never-lock-on-transient] 3d02h00m00.000s photos#3: locked on a 5xx (D6)")
        // The story comes first, wrapped and indented, then the raw events.
        #expect(lines[2].hasPrefix("    Device photos#3 locked at 3d02h after a 5xx from the server (D6:"))
        let header = try #require(lines.firstIndex(of: "    last events:"))
        #expect(lines[2..<header].allSatisfy { $0.hasPrefix("    ") && !$0.hasPrefix("      ") })
        #expect(lines[2..<header].map { $0.dropFirst(4) }.joined(separator: " ").contains("The checker: locked on a 5xx."))
        #expect(lines.count == header + 4)
        #expect(lines[header + 1].hasPrefix("      3d02h00m00.000s photos#3  delivered check #4"))
        #expect(lines[header + 2] == "      3d02h00m00.000s photos#3  state → locked")
        #expect(lines[header + 3] == "  expected violation purge-when-due did not happen")
    }
}
