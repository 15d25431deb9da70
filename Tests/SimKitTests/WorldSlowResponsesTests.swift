import Testing
@testable import SimKit

/// `slow-responses` (issue 22): answers the server sends a selected device inside the
/// window come back later by the delay; answers sent after it overtake them.
@Suite struct WorldSlowResponsesTests {
    static let h = Ms.hour, s = Ms.second

    @Test("an answer served in the window comes back D later; one served after it overtakes it; other devices are not slowed")
    func slowedAnswersAreOvertaken() throws {
        let h = Self.h, s = Self.s
        // Latency 100 ms: a request reaches the server 50 ms after it is sent.
        let world = WT.run(WT.setup(devices: 2, until: 2 * h, [
            .at(0, WT.person(.launch)),
            .at(h, WT.person(.launch)),                                               // checks judged at h + 50
            .at(h + 10, .slowResponses(WT.dev(0), byMs: 10_000, forMs: s)),          // device 1 only, until h + 1010
            .at(h + 2 * s, WT.person(.query, WT.dev(0))),                             // judged after the window
        ]))
        let t = DeviceTrace(world, 0)
        #expect(t.records.contains { $0.time == h + 10 && $0.event == .fault(.slowResponses(byMs: 10_000, until: h + s + 10)) })
        #expect(t.records.contains { $0.time == h + s + 10 && $0.event == .fault(.slowResponsesEnded) })
        let check = try #require(t.delivered.first { $0.kind == .check })
        let query = try #require(t.delivered.first { $0.kind == .query })
        // The check, served at h + 50, is back 10 s after the usual 50-51 ms.
        #expect((h + 50 + 10_000 + 50...h + 50 + 10_000 + 51).contains(check.time))
        #expect(query.time < check.time, "the newer answer overtakes the slowed one")
        #expect(query.time <= h + 2 * s + 101)
        // Device 2 was not selected: its check is back within a round trip.
        let other = try #require(DeviceTrace(world, 1).delivered.first { $0.kind == .check })
        #expect(other.time <= h + 101)
        // The reference acts on both (no verdict race here: access never stopped).
        #expect(t.storeTimes(.lock).isEmpty)
    }

    @Test("an answer slowed past its timeout is late: the SDK has taken the timeout and ignores it (D9)")
    func slowedPastTheTimeoutIsLate() throws {
        let h = Self.h, s = Self.s
        let world = WT.run(WT.setup(until: 2 * h, [
            .at(0, WT.person(.launch)),
            .at(h - s, .slowResponses(.all, byMs: 40_000, forMs: 2 * s)),
            .at(h, WT.person(.launch)),
        ]))
        let t = DeviceTrace(world, 0)
        let checks = t.delivered.filter { $0.kind == .check }
        #expect(checks.first?.answer == .timedOut && checks.first?.viaTimer == true)
        #expect(checks.first.map { $0.time == h + 30 * s } == true)
        #expect(t.staleDeliveries.contains { $0.kind == .check && $0.time > h + 40 * s })
        #expect(t.storeTimes(.lock).isEmpty)
    }

    @Test("a world with no slow window keeps its arrays empty; a second window extends the first and sets the delay")
    func windowsExtendAndReplaceTheDelay() {
        let h = Self.h, s = Self.s
        let plain = WT.run([.at(0, WT.person(.launch))])
        #expect(plain.faults.slowResponses.until.isEmpty && plain.faults.answersFaultedUntil == 0)
        var world = WT.TestWorld(setup: WT.setup(until: h, [
            .at(s, .slowResponses(.all, byMs: 5_000, forMs: 10 * s)),
            .at(2 * s, .slowResponses(.all, byMs: 7_000, forMs: s)),
        ]), observer: TraceRecorder())
        world.run()
        #expect(world.faults.slowResponses.until == [11 * s] && world.faults.slowResponses.byMs == [7_000])
        #expect(world.faults.answersFaultedUntil == 11 * s)
        let ends = DeviceTrace(world, 0).records.filter { $0.event == .fault(.slowResponsesEnded) }.map(\.time)
        #expect(ends == [11 * s])
    }
}
