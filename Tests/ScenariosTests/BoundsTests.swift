import Foundation
import Testing
@testable import SimKit
@testable import ScenarioLanguage
@testable import SimKitTesting
@testable import ScenarioSearch

/// Issue 19, part 1: every number in the language is bounded where it is checked, the
/// engine's time sums saturate, and no input traps.
@Suite("Bounds: no input reaches a trap")
struct BoundsTests {
    /// A valid file around `lines`: an account, an app, 3 devices, an expectation.
    static func file(_ lines: String, duration: String = "2d") -> String {
        """
        duration \(duration)
        account acme
        app photos account acme key rk_live_A
        devices 3 app photos
        at 1d expect all photos idle
        \(lines)

        """
    }

    /// The error messages of `text` (warnings left out).
    static func errors(_ text: String) -> [String] {
        ScenarioParser.parse(text, file: "b.scenario").diagnostics.filter { $0.severity == .error }.map(\.message)
    }

    @Test("the inputs that trapped are located errors naming the bound, from SimKitTest too")
    func formerTrapsAreErrors() {
        let cases: [(String, String)] = [
            ("at 1ms server down for 18446744073709551615ms",
             "inline.scenario:6:24: error: 'server down' for '18446744073709551615ms' is longer than the limit of 3650d"),
            ("every 18446744073709551615ms from 1ms server down for 1s",
             "inline.scenario:6:7: error: period '18446744073709551615ms' is longer than the limit of 3650d"),
            ("network timeout 18446744073709551615ms\nat 1s launch all",
             "inline.scenario:6:17: error: timeout '18446744073709551615ms' is longer than the limit of 1h"),
            ("network latency 20ms..2s timeout 106751991167d\nevery 1h jitter 30m launch all\nat 1s launch all",
             "inline.scenario:6:34: error: timeout '106751991167d' is longer than the limit of 1h"),
            ("every 1h jitter 99999d launch all",
             "inline.scenario:6:17: error: jitter '99999d' is longer than the limit of 3650d"),
        ]
        for (lines, expected) in cases {
            do {
                _ = try SimKitTest.scenario(source: Self.file(lines))
                Issue.record("'\(lines)' ran instead of being refused")
            } catch let e as ScenarioRunError {
                #expect(e.message.hasPrefix(expected + "\n"), "\(e.message)")
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }

    @Test("each span and count is accepted at its bound and refused one past it")
    func boundsAreExact() {
        let maxD = ScenarioLimits.maxDuration
        // (the statement with X for the value in ms or as a count, its bound, a word of the error)
        let cases: [(String, UInt64, String)] = [
            ("at 1h offline all for Xms", maxD, "limit of 3650d"),
            ("at 1h server errors 5% status 503 for Xms", maxD, "limit of 3650d"),
            ("at 1h server down for Xms", maxD, "limit of 3650d"),
            ("at 1h timeouts 5% for Xms", maxD, "limit of 3650d"),
            ("at 1h lost-responses 5% for Xms", maxD, "limit of 3650d"),
            ("at 1h slow-responses all by 10s for Xms", maxD, "limit of 3650d"),
            ("at 1h slow-responses all by Xms for 1h", ScenarioLimits.maxLatencyMs, "limit of 1h"),
            ("every Xms from 0s open all", maxD, "limit of 3650d"),
            ("every 1h jitter Xms open all", maxD, "limit of 3650d"),
            ("at 1h rotate photos key rk_live_B keep-old Xms", maxD, "limit of 3650d"),
            ("network timeout Xms", ScenarioLimits.maxTimeoutMs, "limit of 1h"),
            ("network latency 1ms..Xms", ScenarioLimits.maxLatencyMs, "limit of 1h"),
            ("at 1h add-photos X all", ScenarioLimits.maxPhotosPerAdd, "limit of 1000000"),
        ]
        for (template, bound, word) in cases {
            let ok = Self.file(template.replacing("X", with: "\(bound)"))
            #expect(Self.errors(ok) == [], "\(template) at its bound \(bound)")
            let over = Self.errors(Self.file(template.replacing("X", with: "\(bound + 1)")))
            #expect(over.count == 1 && over[0].contains(word), "\(template) at \(bound + 1): \(over)")
        }
        #expect(Self.errors(Self.file("network latency 1ms..3600001ms")) == ["latency '3600001ms' is longer than the limit of 1h"])
        let latency = ScenarioParser.parse(Self.file("network latency 1h..2h"), file: "b.scenario").diagnostics
        #expect(latency.first { $0.severity == .error }?.rendered
            .hasPrefix("b.scenario:6:21: error: latency '2h' is longer than the limit of 1h\n") == true)
        #expect(Self.errors(Self.file("", duration: "3650d")) == [])
        #expect(Self.errors(Self.file("", duration: "3650d1ms")) == ["duration '3650d1ms' is longer than the limit of 3650d"])
    }

    @Test("a jitter longer than the scenario warns; a statement that can never fire warns")
    func neverFiringWarns() {
        let r = ScenarioParser.parse(Self.file("every 1ms jitter 40d launch all\nevery 3d open all"), file: "w.scenario")
        #expect(!r.hasErrors)
        let warnings = r.diagnostics.filter { $0.severity == .warning }.map(\.rendered)
        #expect(warnings.count == 2, "\(warnings)")
        #expect(warnings.first?.hasPrefix("w.scenario:6:18: warning: jitter '40d' is longer than the scenario's duration '2d'") == true)
        #expect(warnings.last?.hasPrefix("w.scenario:7:7: warning: this statement never fires: its first firing at '3d' is past the scenario's duration '2d'") == true)
    }

    @Test("time sums saturate instead of trapping, for worlds built in code")
    func saturatingSums() {
        #expect(SimTime(5).saturatingAdd(7) == 12)
        #expect(SimTime.max.saturatingAdd(1) == .max)
        #expect((SimTime.max - 3).saturatingAdd(SimTime.max) == .max)
        let spanMax = SimTime.max
        let setup = WorldSetup(
            seed: 1, durationMs: Ms.day, keyNames: ["rk_live_A"], accounts: [AccountSpec(name: "acme")],
            apps: [AppSpec(name: "photos", account: 0, initialKey: 0)], groups: [GroupSpec(name: "photos", app: 0, count: 3)],
            schedule: [
                .at(0, .person(.launch, .all, arg: 0)),
                .at(Ms.hour, .serverDown(forMs: spanMax)),
                .at(Ms.hour, .offline(.all, forMs: spanMax)),
                .at(Ms.hour, .timeouts(rateBp: 10_000, forMs: spanMax)),
                .at(Ms.hour, .serverErrors(rateBp: 5_000, status: 503, forMs: spanMax)),
                .at(Ms.hour, .lostResponses(rateBp: 5_000, forMs: spanMax)),
                ScheduledAction(firstAtMs: 2 * Ms.hour, periodMs: spanMax, jitterMs: spanMax, action: .person(.open, .all, arg: 0)),
            ])
        var world = World<ReferenceSDK, NoObserver>(setup: setup, observer: NoObserver())
        world.run()
        #expect(world.stop == nil && world.now == Ms.day)
    }

    /// The grammar-aware hostile files (every statement form; every number at 0, 1, its
    /// bound ± 1 and UInt64.max): each is a located error or a run that ends.
    @Test("hostile inputs: a located error or a run that ends, never a trap")
    func hostileInputs() {
        let count = HostileInputs.singleFieldFiles + 2_500
        var outcomes = [HostileInputs.Outcome: Int]()
        for i in 0..<UInt64(count) {
            let outcome = HostileInputs.check(HostileInputs.file(i), eventBudget: 5_000, runDevicesMax: 2_000)
            outcomes[outcome, default: 0] += 1
            if outcome == .unlocatedError { Issue.record("file \(i): an error without a location:\n\(HostileInputs.file(i))") }
        }
        let ran = outcomes[.passed, default: 0] + outcomes[.failed, default: 0] + outcomes[.incomplete, default: 0]
        #expect(outcomes[.error, default: 0] > count / 10, "\(outcomes)")
        #expect(ran > count / 10, "\(outcomes)")
    }

    @Test("the hostile files use every statement form and every special value")
    func hostileFilesCoverTheLanguage() {
        let first = HostileInputs.file(0)
        for word in Keywords.statements where word != "expect" || first.contains("expect violation") {
            #expect(first.contains("\n\(word) ") || first.hasPrefix("\(word) "), "no '\(word)' statement")
        }
        for action in Keywords.actions {
            #expect(first.contains(" \(action) "), "no '\(action)' action")
        }
        // File 6k + 5 sets slot k to UInt64.max.
        #expect(HostileInputs.file(5).contains("seed 18446744073709551615\n"))
        #expect(HostileInputs.file(6 * 1 + 3).contains("duration \(ScenarioLimits.maxDuration)ms\n"))
        #expect(HostileInputs.file(6 * 1 + 4).contains("duration \(ScenarioLimits.maxDuration + 1)ms\n"))
    }
}
