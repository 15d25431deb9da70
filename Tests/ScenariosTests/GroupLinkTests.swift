import Testing
import SimKit
@testable import ScenarioLanguage
@testable import Scenarios

/// Per-device links (SPEC §1.4): `devices N app A [as NAME] latency LO..HI` gives a group
/// its own round-trip range.
@Suite("Language: per-group links")
struct GroupLinkTests {
    static let source = """
    scenario "two links"
    seed 7
    duration 2d
    sdk reference

    account acme
    app photos account acme key rk_live_a
    devices 2 app photos latency 4ms..4ms
    devices 2 app photos as far latency 3s..3s
    network latency 20ms..800ms timeout 30s

    at 0s launch all
    at 1h query all

    """

    @Test("parsed, printed back the same, and each group's answers take its own round trip")
    func eachGroupUsesItsLink() throws {
        let parsed = ScenarioParser.parse(Self.source, file: "links.scenario")
        let scenario = try #require(parsed.scenario, "\(parsed.rendered)")
        #expect(scenario.groups.map { $0.latency } == [4...4, 3_000...3_000])
        #expect(ScenarioPrinter.print(scenario).contains("devices 2 app photos as far latency 3s..3s\n"))
        #expect(ScenarioParser.parse(ScenarioPrinter.print(scenario), file: "again.scenario").scenario == scenario)

        let compiled = try ScenarioCompiler.compile(scenario)
        var world = World<ReferenceSDK, TraceRecorder>(setup: compiled.setup, observer: TraceRecorder())
        world.run()
        var roundTrips: [DeviceIndex: Set<SimTime>] = [:]
        for r in world.observer.records {
            if case .delivered(_, _, let answer, let viaTimer, let sentAt, _, _) = r.event, answer == .ok, !viaTimer {
                roundTrips[r.device, default: []].insert(r.time - sentAt)
            }
        }
        // A request goes out in half the drawn round trip; the answer comes back in half the
        // range's width plus at most one millisecond.
        for d in 0..<2 as Range<DeviceIndex> {
            let trips = try #require(roundTrips[d], "device \(d) got no answer")
            #expect(trips.allSatisfy { (3...5).contains($0) }, "device \(d): \(trips.sorted())")
        }
        for d in 2..<4 as Range<DeviceIndex> {
            let trips = try #require(roundTrips[d], "device \(d) got no answer")
            #expect(trips.allSatisfy { (2_999...3_001).contains($0) }, "device \(d): \(trips.sorted())")
        }
    }

    @Test("an empty or too long range is a located error")
    func badRanges() {
        let empty = ScenarioParser.parse(Self.source.replacingOccurrences(of: "latency 4ms..4ms", with: "latency 9ms..4ms"), file: "e.scenario")
        #expect(empty.hasErrors)
        #expect(empty.rendered.contains("e.scenario:8:30: error: latency range '9ms..4ms' is empty"), "\(empty.rendered)")
        let long = ScenarioParser.parse(Self.source.replacingOccurrences(of: "latency 3s..3s", with: "latency 3s..2h"), file: "l.scenario")
        #expect(long.rendered.contains("l.scenario:9:41: error: latency '2h' is longer than the limit of 1h"), "\(long.rendered)")
        let dangling = ScenarioParser.parse(Self.source.replacingOccurrences(of: "latency 4ms..4ms", with: "latency 4ms"), file: "d.scenario")
        #expect(dangling.rendered.contains("d.scenario:8:"), "\(dangling.rendered)")
    }
}
