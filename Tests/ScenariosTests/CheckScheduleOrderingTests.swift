import Testing
import SimKit
import Invariants
@testable import ScenarioLanguage
@testable import Scenarios

/// D1 with D4 and D9: the last answered check, which the 24 h rule counts from, is the last
/// verdict on the key the SDK acted on. A check answer older (by `servedAt`) than a verdict
/// already acted on is ignored, so it must not make the next check look recent.
@Suite struct CheckScheduleOrderingTests {
    /// An activation at 1d1m sends a check (C1), judged 200 at once but slowed by 20 s; a
    /// query answered meanwhile brings a newer 200. C1 then arrives, older: ignored. The
    /// activation at 2d1m10s is then about 2 days after the last check acted on (the
    /// launch's), so it must check; had C1 counted, it would have been 23 h 59 min 50 s.
    static let source = """
        scenario "An ignored check answer does not refresh the 24 h schedule"
        seed 120
        duration 3d
        account acme
        app photos account acme key rk_live_A
        devices 1 app photos latency 20ms..20ms
        network latency 20ms..20ms timeout 30s
        at 0s launch all
        at 1h close all
        at 1d1m slow-responses device photos#1 by 20s for 1s
        at 1d1m open device photos#1
        at 1d1m1s query device photos#1
        at 1d1h close all
        at 2d1m10s open device photos#1
        at 2d2m expect all photos idle

        """

    @Test func anIgnoredCheckAnswerDoesNotRefreshTheSchedule() throws {
        let parsed = ScenarioParser.parse(Self.source, file: "ordering.scenario")
        let scenario = try #require(parsed.scenario, "\(parsed.diagnostics)")
        let setup = try ScenarioCompiler.compile(scenario).setup
        var w = World<ReferenceSDK, ObserverPair<TraceTape, InvariantChecker>>(
            setup: setup, observer: ObserverPair(TraceTape(), InvariantChecker(maxPerInvariant: 1)))
        w.run()
        #expect(w.observer.second.broken.isEmpty, "broken: \(w.observer.second.broken)")
        let records = w.observer.first.records
        let day = Ms.day, minute = Ms.minute
        // C1: the check sent at the activation of 1d1m, delivered 200 about 20 s later.
        let c1 = records.first { r in
            if r.time == day + minute, case .requestSent(_, .check, _, _) = r.event { return true }
            return false
        }
        guard case .requestSent(let c1ID, _, _, _)? = c1?.event else {
            Issue.record("no check sent at the activation of 1d1m"); return
        }
        let arrival = records.first { r in
            if case .delivered(c1ID, .check, .ok, false, _, _, _) = r.event { return r.time > day + minute }
            return false
        }
        let arrivedAt = try #require(arrival?.time, "C1's 200 never arrived")
        #expect(arrivedAt >= day + minute + 20 * Ms.second)
        // Ignored: no store at its arrival refreshes the last answered check.
        let refreshed = records.contains { r in
            if r.time == arrivedAt, case .store(.setLastAnsweredCheck) = r.event { return true }
            return false
        }
        #expect(!refreshed, "an answer older than the verdict acted on refreshed the last answered check")
        // So the activation at 2d1m10s, two days after the last check acted on, checks.
        let checkedAgain = records.contains { r in
            if r.time == 2 * day + minute + 10 * Ms.second, case .requestSent(_, .check, _, _) = r.event { return true }
            return false
        }
        #expect(checkedAgain, "the activation at 2d1m10s sent no key check")
    }
}
