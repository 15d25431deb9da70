import Foundation
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch
import SimKit
import Testing

/// Pinned request fates (`RequestFate`, the language's `pin` lines): the chooser that
/// `simkit explore --fates` enumerates instead of the seed's draws. Each fate does to its
/// one request what it says, and nothing to the others.
@Suite struct RequestFateTests {
    /// One device launched at 0 s and opened at 1 h, latency pinned at 20 ms, with `pins`.
    static func setup(_ pins: [String]) throws -> WorldSetup {
        var text = """
        scenario "fates"
        seed 3
        duration 2h
        account acme
        app photos account acme key rk_live_a
        devices 1 app photos
        network latency 20ms..20ms timeout 30s
        at 0s launch all
        at 1h open all

        """
        for p in pins { text += p + "\n" }
        let parsed = ScenarioParser.parse(text, file: "fates.scenario")
        let scenario = try #require(parsed.scenario, "\(parsed.diagnostics)")
        return try ScenarioCompiler.compile(scenario).setup
    }

    /// The trace of a run with `pins`, and what its checkers found.
    static func run(_ pins: [String]) throws -> (records: [TraceRecord], broken: [InvariantID]) {
        var w = World<ReferenceSDK, ObserverPair<TraceTape, InvariantChecker>>(
            setup: try setup(pins), observer: ObserverPair(TraceTape(), InvariantChecker(maxPerInvariant: 1)))
        w.run()
        return (w.observer.first.records, w.observer.second.broken)
    }

    /// The first request's server answer and delivery: (served at, its answer; delivered at, what).
    static func first(_ records: [TraceRecord]) -> (served: (SimTime, Answer)?, delivered: [(SimTime, Answer, Bool)]) {
        var served: (SimTime, Answer)?
        var delivered: [(SimTime, Answer, Bool)] = []
        for r in records {
            switch r.event {
            case .served(let id, _, _, _, let reply, _) where id == 1 && served == nil: served = (r.time, reply.answer)
            case .delivered(let id, _, let answer, let viaTimer, _, _, _) where id == 1 && r.time < Ms.hour:
                delivered.append((r.time, answer, viaTimer))
            default: break
            }
        }
        return (served, delivered)
    }

    @Test func eachFateDoesWhatItSays() throws {
        let plain = Self.first(try Self.run([]).records)
        #expect(plain.served?.0 == 10 && plain.served?.1 == .ok)
        #expect(plain.delivered.map(\.0) == [20] || plain.delivered.map(\.0) == [21])

        let error = Self.first(try Self.run(["pin device photos#1 request 1 error"]).records)
        #expect(error.served?.1 == .serverError)
        #expect(error.delivered.map(\.1) == [.serverError])

        let late = Self.first(try Self.run(["pin device photos#1 request 1 late"]).records)
        #expect(late.served?.1 == .ok)
        #expect(late.delivered.map(\.0) == [30 * Ms.second - 1] && late.delivered.map(\.1) == [.ok])

        let after = Self.first(try Self.run(["pin device photos#1 request 1 after-timeout"]).records)
        #expect(after.served?.1 == .ok)
        #expect(after.delivered.map(\.1) == [.timedOut, .ok], "the timeout first, then the stale 200")
        #expect(after.delivered.map(\.0) == [30 * Ms.second, 30 * Ms.second + 1])

        let lost = Self.first(try Self.run(["pin device photos#1 request 1 lost"]).records)
        #expect(lost.served?.1 == .ok, "the server acted")
        #expect(lost.delivered.map(\.1) == [.timedOut])

        let offline = Self.first(try Self.run(["pin device photos#1 request 1 offline"]).records)
        #expect(offline.served == nil, "the server never saw it")
        #expect(offline.delivered.map(\.0) == [0] && offline.delivered.map(\.1) == [.offline])
    }

    /// `overtaken`: the answer is held until the device's next verdict to another request
    /// arrives, and arrives in that same millisecond, just after it, whatever the timeout;
    /// a second held answer of the device makes the first one lost.
    @Test func anOvertakenAnswerArrivesJustAfterTheNextVerdict() throws {
        func deliveries(_ records: [TraceRecord]) -> [(index: Int, time: SimTime, id: UInt32, answer: Answer, viaTimer: Bool)] {
            records.enumerated().compactMap { k, r in
                if case .delivered(let id, _, let answer, let viaTimer, _, _, _) = r.event { return (k, r.time, id, answer, viaTimer) }
                return nil
            }
        }
        let run = try Self.run(["pin device photos#1 request 1 overtaken"])
        #expect(run.broken.isEmpty, "\(run.broken)")
        let all = deliveries(run.records)
        let held = try #require(all.first { $0.id == 1 && !$0.viaTimer }, "the held answer arrives")
        #expect(held.answer == .ok)
        #expect(all.contains { $0.id == 1 && $0.viaTimer && $0.answer == .timedOut && $0.time < held.time },
                "the SDK's own timeout came first: the register was answered only after it")
        // The verdict it waited for: the last delivery before it, of another request, in the same millisecond.
        let before = try #require(all.last { $0.index < held.index })
        #expect(before.id != 1 && before.answer.isVerdict && !before.viaTimer)
        #expect(before.time == held.time, "two verdicts in one millisecond")
        #expect(!run.records[(before.index + 1)..<held.index].contains { if case .delivered = $0.event { true } else { false } })

        // Requests 1 and 2 (the registration at launch, its retry at 1 h) both held, and a
        // third registration at 1 h 30 min answered as usual: 1 is lost when 2 is held
        // (never delivered but as its timeout); 2 arrives just after 3's verdict.
        let two = try Self.run(["pin device photos#1 request 1 overtaken", "pin device photos#1 request 2 overtaken",
                                "at 1h20m close all", "at 1h30m open all"])
        #expect(two.broken.isEmpty, "\(two.broken)")
        let d2 = deliveries(two.records)
        #expect(d2.filter { $0.id == 1 }.map(\.answer) == [.timedOut], "the first held answer was lost")
        let second = try #require(d2.first { $0.id == 2 && !$0.viaTimer }, "the second held answer is let go")
        let third = try #require(d2.last { $0.index < second.index })
        #expect(third.id == 3 && third.answer.isVerdict && !third.viaTimer && third.time == second.time)
    }

    /// `simkit explore`'s state digest sees a held answer: a world that holds one differs
    /// from the same world whose answer was lost instead (no event is queued for either).
    @Test func theStateDigestSeesAHeldAnswer() throws {
        func digest(_ fate: String) throws -> (StateDigest, [String]) {
            var setup = try Self.setup(["pin device photos#1 request 1 \(fate)"])
            setup.durationMs = 20 * Ms.second   // before the register's timeout: nothing else happens
            var w = World<ReferenceSDK, NoObserver>(setup: setup, observer: NoObserver())
            w.run()
            var d = StateDigest()
            let parts = w.stateParts()
            d.add(parts: parts)
            return (d, parts.map(\.label))
        }
        let (held, labels) = try digest("overtaken")
        let (lost, _) = try digest("lost")
        #expect(labels.contains("held-answers"))
        #expect(held != lost)
    }

    /// A pin changes its request and what follows from it, nothing before it; an unpinned
    /// run is the run of a setup that only counts requests (the same fingerprint).
    @Test func aPinLeavesTheRequestsBeforeItAlone() throws {
        let plain = try Self.run([]).records
        let pinned = try Self.run(["pin device photos#1 request 3 error"]).records
        let sent = plain.enumerated().filter { if case .requestSent = $0.element.event { true } else { false } }
        #expect(sent.count >= 3, "the run sends at least three requests")
        let third = sent[2].offset
        #expect(Array(plain.prefix(third + 1)) == Array(pinned.prefix(third + 1)))
        #expect(plain != pinned)

        var counting = try Self.setup([])
        counting.countsRequests = true
        var a = World<ReferenceSDK, InvariantChecker>(setup: try Self.setup([]), observer: InvariantChecker())
        var b = World<ReferenceSDK, InvariantChecker>(setup: counting, observer: InvariantChecker())
        a.run(); b.run()
        #expect(a.fingerprint == b.fingerprint)
        #expect(a.requestsSent(device: 0) == 0)
        #expect(b.requestsSent(device: 0) == UInt32(sent.count))
    }

    /// A pinned request makes the draws an unpinned one would: two a request on a device
    /// that is online (sent, judged), whatever the fate; none on one that is offline, where
    /// a pin changes nothing at all.
    @Test func aPinnedRequestDrawsAsAnUnpinnedOne() throws {
        for pins in [[]] + RequestFate.allCases.map({ ["pin device photos#1 request 2 \($0)"] }) {
            var setup = try Self.setup(pins)
            setup.countsRequests = true
            var w = World<ReferenceSDK, InvariantChecker>(setup: setup, observer: InvariantChecker())
            w.run()
            #expect(w.requestsSent(device: 0) >= 3)
            #expect(w.devices[0].draws == 2 * w.requestsSent(device: 0), "\(pins)")
        }
        func offline(_ pins: [String]) throws -> String {
            var w = World<ReferenceSDK, InvariantChecker>(setup: try Self.setup(["at 0s offline all for 10m"] + pins), observer: InvariantChecker())
            w.run()
            return "\(w.fingerprint)"
        }
        let plain = try offline([])
        // Request 1 (the register at launch) goes before the partition, in file order; request 2 is sent offline.
        for fate in RequestFate.allCases { #expect(try offline(["pin device photos#1 request 2 \(fate)"]) == plain, "\(fate)") }
    }

    /// The reference SDK keeps every promise whatever the fate of its first requests.
    @Test(arguments: RequestFate.allCases)
    func theReferenceKeepsItsPromisesUnderEachFate(_ fate: RequestFate) throws {
        for n in 1...4 {
            let r = try Self.run(["pin device photos#1 request \(n) \(fate)"])
            #expect(r.broken.isEmpty, "request \(n) \(fate): \(r.broken)")
        }
    }
}
