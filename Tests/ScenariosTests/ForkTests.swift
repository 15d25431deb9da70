import Foundation
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch
import SimKit
import Testing

/// `SimWorld.fork()`, `runToForkPoint()`, `extend(as:)` and `resume(to:)`: a world forked
/// at a fork point and given more statements goes on exactly as a fresh world built with
/// them (the same trace fingerprint, events, violations and state digest), and a fork
/// never disturbs the world it was forked from. `explore` relies on both.
@Suite struct ForkTests {
    /// A small world: two devices launched at 0 s, then `steps`, then `tail` of quiet.
    static func setup(_ steps: [String], end: String) throws -> WorldSetup {
        var text = """
        scenario "fork"
        seed 7
        duration \(end)
        account acme
        app photos account acme key rk_live_a
        devices 2 app photos
        network latency 20ms..20ms
        at 0s launch all

        """
        for s in steps { text += s + "\n" }
        let parsed = ScenarioParser.parse(text, file: "fork.scenario")
        let scenario = try #require(parsed.scenario, "\(parsed.diagnostics)")
        return try ScenarioCompiler.compile(scenario).setup
    }

    typealias W = World<ReferenceSDK, InvariantChecker>

    static func summary(_ w: W) -> String {
        var d = StateDigest()
        d.add(parts: w.stateParts())
        d.add(parts: w.observer.stateParts())
        return "\(w.fingerprint) events \(w.eventsHandled) now \(w.now) broken \(w.observer.broken) digest \(d)"
    }

    static func fresh(_ steps: [String], end: String) throws -> String {
        var w = W(setup: try setup(steps, end: end), observer: InvariantChecker(maxPerInvariant: 1))
        w.run()
        return summary(w)
    }

    /// Paths whose steps race the pending events of the one before (a few ms apart, where
    /// a check's request and answer are in flight) and cross a fault window.
    static let paths: [[String]] = [
        ["at 1ms open device photos#1", "at 19ms disable photos", "at 21ms query device photos#1", "at 41ms enable photos"],
        ["at 9ms offline device photos#2 for 2m", "at 20ms query device photos#2", "at 2m21ms open device photos#2"],
        ["at 5ms close device photos#1", "at 11ms background device photos#1", "at 31ms reset device photos#1"],
        ["at 1m slow-responses device photos#1 by 10s for 1s", "at 1m1ms query device photos#1", "at 1m1s2ms disable photos",
         "at 1m1s30ms query device photos#1"],
    ]

    /// Step by step, each prefix's world at its fork point, forked and extended by the next
    /// step, ends where a fresh world of the longer path ends.
    @Test(arguments: 0..<paths.count)
    func extendedForkMatchesAFreshWorld(_ index: Int) throws {
        let path = Self.paths[index]
        var world = W(setup: try Self.setup([], end: "1ms"), observer: InvariantChecker(maxPerInvariant: 1))
        world.runToForkPoint()
        for k in 1...path.count {
            let prefix = Array(path.prefix(k))
            var next = world.fork()
            let extended = next.extend(as: try Self.setup(prefix, end: "10m"))
            #expect(extended, "step \(k) of path \(index)")
            next.runToForkPoint()
            for end in ["10m", "1d"] {
                var finished = next.fork()
                finished.resume(to: try Self.setup(prefix, end: end).durationMs)
                #expect(Self.summary(finished) == (try Self.fresh(prefix, end: end)), "path \(index), \(k) steps, to \(end)")
            }
            world = next
        }
    }

    /// Running a fork does not change the world it came from, nor its observer's truth.
    @Test func aForkLeavesItsParentAlone() throws {
        let steps = ["at 1ms open device photos#1", "at 19ms disable photos"]
        var parent = W(setup: try Self.setup(steps, end: "1h"), observer: InvariantChecker(maxPerInvariant: 1))
        parent.runToForkPoint()
        let before = Self.summary(parent)
        var child = parent.fork()
        child.resume(to: 30 * Ms.day)
        #expect(child.eventsHandled > parent.eventsHandled)
        #expect(Self.summary(parent) == before)
        parent.resume(to: Ms.hour)
        #expect(Self.summary(parent) == (try Self.fresh(steps, end: "1h")))
    }

    /// What `extend(as:)` refuses: a world that ran on past its fork point, a statement
    /// before now, another key table (a rotation to a key not in the setup).
    @Test func extendRefusesWhatItCannotMatch() throws {
        var world = W(setup: try Self.setup(["at 1m open device photos#1"], end: "1h"), observer: InvariantChecker(maxPerInvariant: 1))
        world.runToForkPoint()
        var early = world.fork()
        #expect(!early.extend(as: try Self.setup(["at 1m open device photos#1", "at 30s query device photos#1"], end: "1h")))
        var rotated = world.fork()
        #expect(!rotated.extend(as: try Self.setup(["at 1m open device photos#1", "at 2m rotate photos key rk_live_b stop-old now"], end: "1h")))
        var ranOn = world.fork()
        ranOn.resume(to: Ms.hour)
        #expect(!ranOn.extend(as: try Self.setup(["at 1m open device photos#1", "at 2h query device photos#1"], end: "3h")))
        var fine = world.fork()
        #expect(fine.extend(as: try Self.setup(["at 1m open device photos#1", "at 2m query device photos#1"], end: "1h")))
    }

    /// The explorer gives the same runs, states, pruning and counterexample with and
    /// without forking, depth and breadth first.
    @Test(arguments: [false, true])
    func exploreIsTheSameWithAndWithoutForks(_ bfs: Bool) throws {
        for sdk in [SDKChoice.reference, .mutant("never-purge"), .mutant("background-wake-drops-check")] {
            var o = ExploreOptions()
            o.devices = sdk == .reference ? 2 : 1
            o.maxActions = sdk == .reference ? 2 : 3
            o.sdk = sdk
            o.breadthFirst = bfs
            o.persons = [.open, .close, .background, .query]
            o.dashboardKinds = [.disable, .enable, .rotateNow]
            o.faultKinds = [ExploreFault(rawValue: "offline")!, ExploreFault(rawValue: "slow")!]
            o.raceMoments = 1
            o.boundaries = 1
            var plain = o
            plain.forking = false
            let a = try Explorer(options: o).run(), b = try Explorer(options: plain).run()
            #expect(a.runs == b.runs, "\(sdk) bfs \(bfs)")
            #expect(a.distinctStates == b.distinctStates, "\(sdk) bfs \(bfs)")
            #expect(a.pruned == b.pruned, "\(sdk) bfs \(bfs)")
            #expect(a.counterexample?.scenario == b.counterexample?.scenario, "\(sdk) bfs \(bfs)")
            #expect(a.runs > 100)
            if sdk != .reference { #expect(a.counterexample != nil, "\(sdk) bfs \(bfs)") }
        }
    }
}
