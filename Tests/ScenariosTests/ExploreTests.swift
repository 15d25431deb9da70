import Foundation
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch
import SimKit
import Testing

/// `Explorer` (`simkit explore`): exhaustive search over short scripts of a small world.
@Suite struct ExploreTests {
    static func options(devices: Int = 1, actions: Int = 2, sdk: SDKChoice = .reference, bfs: Bool = false) -> ExploreOptions {
        var o = ExploreOptions()
        o.devices = devices
        o.maxActions = actions
        o.sdk = sdk
        o.breadthFirst = bfs
        return o
    }

    @Test func referenceExhaustsOneDeviceWithoutViolation() throws {
        for bfs in [false, true] {
            let r = try Explorer(options: Self.options(bfs: bfs)).run()
            #expect(r.counterexample == nil, "\(r.counterexample?.headline ?? "")")
            #expect(r.incomplete == nil)
            #expect(r.maxDepth == 2)
            // Every action of the alphabet is tried at least once from the root.
            #expect(r.runs > 49)
            #expect(r.distinctStates > 1)
            #expect(r.pruned > 0, "paths that reach a state already searched go no further")
        }
    }

    @Test func referenceExhaustsTwoDevicesWithoutViolation() throws {
        let r = try Explorer(options: Self.options(devices: 2, actions: 2)).run()
        #expect(r.counterexample == nil, "\(r.counterexample?.headline ?? "")")
        #expect(r.incomplete == nil)
        #expect(r.maxDepth == 2)
    }

    /// S2's dating across an update, searched whole: launches, updates, stop-now rotations
    /// and a disable, four actions. The reference once dated a stop from the old key's
    /// stop when a request sent before an update reached the server after it (explore's
    /// own finding: rotate at 11 ms, update at 21 ms, launch at 29 ms, rotate at 31 ms).
    /// It is clean now, and a server that dates an update from its first request is found.
    @Test func datingAcrossAnUpdateIsSoundAndTight() throws {
        func search(_ sdk: SDKChoice) throws -> ExploreResult {
            var o = Self.options(actions: 4, sdk: sdk, bfs: true)
            o.persons = [.launch]
            o.dashboardKinds = [.rotateNow, .update, .disable]
            o.faults = false
            o.boundaries = 0
            return try Explorer(options: o).run()
        }
        let reference = try search(.reference)
        #expect(reference.counterexample == nil, "\(reference.counterexample?.headline ?? "")")
        #expect(reference.incomplete == nil)
        #expect(reference.runs > 10_000)
        let name = "date-update-from-first-request"
        let mutant = try search(.mutant(name))
        let c = try #require(mutant.counterexample, "explore did not find \(name)")
        #expect(c.broken == [.serverEnforcesAccess])
    }

    /// The same options give the same search: same runs, states and counterexample.
    @Test func searchIsDeterministic() throws {
        let a = try Explorer(options: Self.options(sdk: .mutant("lock-on-timeout"))).run()
        let b = try Explorer(options: Self.options(sdk: .mutant("lock-on-timeout"))).run()
        #expect(a.runs == b.runs)
        #expect(a.distinctStates == b.distinctStates)
        #expect(a.pruned == b.pruned)
        #expect(a.counterexample?.scenario == b.counterexample?.scenario)
        #expect(a.counterexample != nil)
    }

    /// Mutants found within two actions on one device; each counterexample, printed and
    /// parsed back as `simkit run` reads it, fails with the invariants the search saw.
    @Test(arguments: ["lock-on-5xx", "lock-on-timeout", "lock-on-offline"])
    func findsMutantWithReplayableCounterexample(_ name: String) throws {
        let mutant = try #require(Mutants.named(name))
        let r = try Explorer(options: Self.options(sdk: .mutant(name), bfs: true)).run()
        let c = try #require(r.counterexample, "explore did not find \(name)")
        #expect(c.broken.contains(mutant.expected))
        #expect(c.path.count <= 2)
        let text = ScenarioPrinter.print(c.scenario)
        let outcome = ScenarioRunner().run(file: "\(name).scenario", source: text)
        #expect(outcome.verdict == .failed)
        #expect(outcome.unexpected == c.broken)
        // The reference SDK runs the same script without a violation: the mutant's bug, not the script.
        let reference = ScenarioRunner(sdk: .reference).run(scenario: c.scenario, file: "reference")
        #expect(reference.broken.isEmpty, "\(reference.broken)")
    }

    /// The ordering-only mutant (`Mutants.orderingOnly`), which the default fuzz run does not
    /// find in 160,000 seeds (README): its bug needs a disable before the launch's register
    /// is served, a close, then a background wake, all within the register's 20 ms round
    /// trip. Explore finds exactly that order in three actions, breadth first, and the
    /// counterexample fails under `simkit run` the same way; the reference passes it.
    @Test func findsTheOrderingMutantThatFuzzMisses() throws {
        let name = "background-wake-drops-check"
        let mutant = try #require(Mutants.orderingOnly.first { $0.name == name })
        var o = Self.options(actions: 3, sdk: .mutant(name), bfs: true)
        o.persons = [.launch, .close, .background]   // a smaller alphabet keeps the debug test quick
        o.faults = false
        let r = try Explorer(options: o).run()
        let c = try #require(r.counterexample, "explore did not find \(name)")
        #expect(c.broken.contains(mutant.expected))
        #expect(c.path.count == 3, "\(c.path)")
        let outcome = ScenarioRunner().run(file: "\(name).scenario", source: ScenarioPrinter.print(c.scenario))
        #expect(outcome.verdict == .failed)
        #expect(outcome.unexpected == c.broken)
        let reference = ScenarioRunner(sdk: .reference).run(scenario: c.scenario, file: "reference")
        #expect(reference.broken.isEmpty, "\(reference.broken)")
        // Two actions are not enough: the search at that bound is exhausted without a violation.
        o.maxActions = 2
        let shorter = try Explorer(options: o).run()
        #expect(shorter.counterexample == nil && shorter.incomplete == nil)
    }

    /// A verdict race (issue 22): a 200 served before the lock error that locked the SDK
    /// arrives after it. Only a `slow-responses` window orders answers that way (latency is
    /// pinned), so without it the search finds nothing; with it, breadth first finds
    /// `unlock-on-stale-ok` in four actions of a small alphabet (a check sent, its answers
    /// slowed, a disable, a query just after the window), and the counterexample fails
    /// under `simkit run` the same way while the reference passes it.
    @Test func findsTheVerdictRaceWithSlowResponses() throws {
        let name = "unlock-on-stale-ok"
        let mutant = try #require(Mutants.named(name))
        var o = Self.options(actions: 4, sdk: .mutant(name), bfs: true)
        o.persons = [.launch, .query]   // a small alphabet keeps the debug test quick
        o.dashboardKinds = [.disable]
        o.faultKinds = [ExploreFault(rawValue: "slow")!]
        o.raceMoments = 1
        o.boundaries = 0
        let r = try Explorer(options: o).run()
        let c = try #require(r.counterexample, "explore did not find \(name)")
        #expect(c.broken.contains(mutant.expected))
        #expect(c.path.count == 4, "\(c.path)")
        #expect(c.path.contains { if case .fault(let f) = $0.action { f.base is SlowResponses } else { false } })
        let text = ScenarioPrinter.print(c.scenario)
        #expect(text.contains("slow-responses device photos#1 by 10s for 1s"))
        let outcome = ScenarioRunner().run(file: "\(name).scenario", source: text)
        #expect(outcome.verdict == .failed)
        #expect(outcome.unexpected == c.broken)
        let reference = ScenarioRunner(sdk: .reference).run(scenario: c.scenario, file: "reference")
        #expect(reference.broken.isEmpty, "\(reference.broken)")
        // Three actions are not enough; nor are four without the slow window.
        var shorter = o
        shorter.maxActions = 3
        let three = try Explorer(options: shorter).run()
        #expect(three.counterexample == nil && three.incomplete == nil)
        var noSlow = o
        noSlow.faults = false
        let without = try Explorer(options: noSlow).run()
        #expect(without.counterexample == nil && without.incomplete == nil)
    }

    /// The network's choices, enumerated (`maxFates`, issue 22's chooser): with no fault
    /// windows in the alphabet, a pinned `late` answer (a 200 served before the disable,
    /// delivered just before its timeout, after the lock) is what the verdict race needs.
    /// Explore finds it in 3 actions and 1 pin (4 actions with a slow-responses window,
    /// above); without fates the same alphabet finds nothing; forking or not, the same
    /// search; the counterexample's `pin` line makes `simkit run` fail it the same way.
    @Test func findsTheVerdictRaceWithAPinnedFate() throws {
        let name = "unlock-on-stale-ok"
        let mutant = try #require(Mutants.named(name))
        var o = Self.options(actions: 4, sdk: .mutant(name), bfs: true)
        o.persons = [.launch, .query]
        o.dashboardKinds = [.disable]
        o.faults = false
        o.raceMoments = 1
        o.boundaries = 0
        o.maxFates = 2   // one pin is enough, and sets of one are tried before sets of two
        o.fateKinds = [.late, .lost]
        let r = try Explorer(options: o).run()
        let c = try #require(r.counterexample, "explore did not find \(name)")
        #expect(c.broken.contains(mutant.expected))
        #expect(c.path.count == 3, "\(c.path)")
        #expect(c.pins.count == 1 && c.pins.first?.fate == .late)
        #expect(c.story.hasPrefix("  Device photos#1 "), "the first violation told as a story: \(c.story)")
        #expect(r.pinnedRuns > 0 && r.pinnedRuns < r.runs)
        let text = ScenarioPrinter.print(c.scenario)
        #expect(text.contains("\npin device photos#1 request "))
        let outcome = ScenarioRunner().run(file: "\(name).scenario", source: text)
        #expect(outcome.verdict == .failed)
        #expect(outcome.unexpected == c.broken)
        #expect(ScenarioRunner(sdk: .reference).run(scenario: c.scenario, file: "reference").broken.isEmpty)
        var noFork = o
        noFork.forking = false
        let same = try Explorer(options: noFork).run()
        #expect(same.runs == r.runs && same.pinnedRuns == r.pinnedRuns)
        #expect(same.counterexample.map { ScenarioPrinter.print($0.scenario) } == text)
        var noFates = o
        noFates.maxFates = 0
        let without = try Explorer(options: noFates).run()
        #expect(without.counterexample == nil && without.incomplete == nil)
    }

    /// The reference SDK and server keep every rule whatever the fates of up to two
    /// requests of every path of a small search.
    @Test func referenceKeepsTheRulesUnderPinnedFates() throws {
        var o = Self.options(actions: 1)
        o.persons = [.open, .query, .reset]
        o.dashboardKinds = [.disable, .rotateNow]
        o.faults = false
        o.boundaries = 1
        o.maxFates = 2
        let r = try Explorer(options: o).run()
        #expect(r.counterexample == nil, "\(r.counterexample.map { ScenarioPrinter.print($0.scenario) } ?? "")")
        #expect(r.incomplete == nil)
        #expect(r.pinnedRuns > 1_000, "\(r.pinnedRuns)")
    }

    /// The exact boundary moments (issue 22: "time that matters"). Each of these mutants
    /// puts a `>` for a `>=` (or counts in whole seconds), so it differs from the reference
    /// only exactly at a boundary: a request judged by the server at a grace deadline or
    /// at 30 days of stoppage (`judged-at`, half the pinned round trip before it), or an
    /// activation 24 h and 1 ms after the last answered check (`after-1ms`). With the
    /// boundaries tried 1 s before and after only, the search at 2 actions is exhausted
    /// without a violation; with the exact moments it finds each in 2 actions, and the
    /// counterexample fails under `simkit run` the same way while the reference passes it.
    @Test(arguments: ["purge-strictly-after-30-days", "grace-deadline-inclusive", "check-age-in-whole-seconds"])
    func findsTheExactBoundaryMutants(_ name: String) throws {
        let mutant = try #require(Mutants.named(name))
        var o = Self.options(actions: 2, sdk: .mutant(name), bfs: true)
        o.persons = [.launch, .open]   // a small alphabet keeps the debug test quick
        o.dashboardKinds = [.disable, .rotateKeep]
        o.faults = false
        o.raceMoments = 1
        o.boundaryMoments = [.before, .after]
        let coarse = try Explorer(options: o).run()
        #expect(coarse.counterexample == nil && coarse.incomplete == nil, "\(coarse.counterexample?.path ?? [])")
        o.boundaryMoments = ExploreBoundaryMoment.allCases
        let r = try Explorer(options: o).run()
        let c = try #require(r.counterexample, "explore did not find \(name)")
        #expect(c.broken.contains(mutant.expected))
        #expect(c.path.count == 2, "\(c.path)")
        // The last step is at an exact moment: judged 30 days after the disable or the
        // rotation (keep-old 30d) itself, or 1 ms past 24 h after the register's answer.
        let first = c.path[0].time, last = c.path[1].time
        if name == "check-age-in-whole-seconds" {
            #expect((20...21).contains(last - 24 * Ms.hour - 1), "\(DurationText.format(last))")
        } else {
            #expect(last == first + 30 * Ms.day - o.latencyMs / 2, "\(DurationText.format(last))")
        }
        let outcome = ScenarioRunner().run(file: "\(name).scenario", source: ScenarioPrinter.print(c.scenario))
        #expect(outcome.verdict == .failed)
        #expect(outcome.unexpected == c.broken)
        let reference = ScenarioRunner(sdk: .reference).run(scenario: c.scenario, file: "reference")
        #expect(reference.broken.isEmpty, "\(reference.broken)")
    }

    /// Rollup's account actions (`--dashboard …,revoke-account,restore-account`, not in the
    /// default alphabet): restoring the account must not lift the app's own revocation (S5).
    /// The mutant that lets it is found in 3 actions, and replays.
    @Test func findsTheAccountRestoreMutant() throws {
        let name = "account-restore-lifts-app-revoke"
        let mutant = try #require(Mutants.named(name))
        #expect(!ExploreOptions().dashboardKinds.contains(.revokeAccount))
        var o = Self.options(actions: 3, sdk: .mutant(name), bfs: true)
        o.persons = [.launch]
        o.dashboardKinds = [.revoke, .revokeAccount, .restoreAccount]
        o.faults = false
        o.boundaries = 0
        let r = try Explorer(options: o).run()
        let c = try #require(r.counterexample, "explore did not find \(name)")
        #expect(c.broken.contains(mutant.expected))
        #expect(c.path.count == 3, "\(c.path)")
        #expect(c.path.contains { if case .rollupAccount(.restore, _) = $0.action { true } else { false } })
        let outcome = ScenarioRunner().run(file: "\(name).scenario", source: ScenarioPrinter.print(c.scenario))
        #expect(outcome.verdict == .failed)
        #expect(outcome.unexpected == c.broken)
        // Without the account's actions nothing breaks in 3 actions.
        o.dashboardKinds = [.revoke]
        let without = try Explorer(options: o).run()
        #expect(without.counterexample == nil && without.incomplete == nil)
    }

    /// `eachOnce` bounds every dashboard, Rollup and fault action to once a path: fewer
    /// runs, the same shortest counterexample when it needs no repeat, and no path found
    /// repeats one.
    @Test func eachOnceBoundsRepeats() throws {
        var o = Self.options(actions: 3, sdk: .mutant("account-restore-lifts-app-revoke"), bfs: true)
        o.persons = [.launch]
        o.dashboardKinds = [.revoke, .revokeAccount, .restoreAccount]
        o.faults = false
        o.boundaries = 0
        let all = try Explorer(options: o).run()
        o.eachOnce = true
        let once = try Explorer(options: o).run()
        #expect(once.runs < all.runs)
        let a = try #require(all.counterexample), b = try #require(once.counterexample)
        #expect(a.path.count == b.path.count)
        let kinds = b.path.compactMap { Explorer.onceKind($0.action) }
        #expect(Set(kinds).count == kinds.count, "\(kinds)")
        #expect(Explorer.onceKind(.person(.query, .device(group: "photos", index: 1))) == nil)
        // The reference, 2 actions, with and without the bound: both exhausted, fewer runs bounded.
        var r = Self.options(actions: 2)
        let free = try Explorer(options: r).run()
        r.eachOnce = true
        let bounded = try Explorer(options: r).run()
        #expect(free.incomplete == nil && bounded.incomplete == nil && bounded.counterexample == nil)
        #expect(bounded.runs < free.runs)
    }

    /// Boundaries come from the checkers' truth too (what the server decided and when),
    /// read from `InvariantChecker.stateParts()`: the last answered check (the launch's
    /// register, answered 20 or 21 ms after 0 s) and the start of the stop (the disable).
    /// If the truth's fields are renamed this fails instead of silently losing them.
    @Test func boundariesFromTheCheckersTruth() throws {
        let explorer = try Explorer(options: Self.options(devices: 2))
        let path = [ExploreStep(time: Ms.minute, action: .disable(app: "photos"))]
        let compiled = try ScenarioCompiler.compile(explorer.scenario(path: path, duration: Ms.minute + 1))
        var world = World<ReferenceSDK, InvariantChecker>(setup: compiled.setup, observer: InvariantChecker())
        world.run()
        let truth = Explorer.truthTimes(world.observer.stateParts())
        #expect(truth.lastAnswered.count == 2 && truth.stopStart.count == 2)
        #expect(truth.lastAnswered.allSatisfy { (20...21).contains($0) }, "\(truth.lastAnswered)")
        #expect(truth.stopStart == [Ms.minute, Ms.minute])
        // And before the disable, no stop.
        let before = try ScenarioCompiler.compile(explorer.scenario(path: [], duration: Ms.minute))
        var w2 = World<ReferenceSDK, InvariantChecker>(setup: before.setup, observer: InvariantChecker())
        w2.run()
        #expect(Explorer.truthTimes(w2.observer.stateParts()).stopStart == [LocalData.never, LocalData.never])
    }

    /// Depth first keeps searching shorter paths after a violation, so it ends with a
    /// counterexample as short as breadth first's.
    @Test func depthFirstEndsWithTheShortest() throws {
        let dfs = try Explorer(options: Self.options(actions: 3, sdk: .mutant("lock-on-5xx"))).run()
        let bfs = try Explorer(options: Self.options(actions: 3, sdk: .mutant("lock-on-5xx"), bfs: true)).run()
        let d = try #require(dfs.counterexample), b = try #require(bfs.counterexample)
        #expect(d.path.count == b.path.count)
        #expect(d.scenario.timeline.count == d.path.count + 1)   // the launch at 0 s, then the path
        // None shorter exists: the search one action short is exhausted without a violation.
        let shorter = try Explorer(options: Self.options(actions: b.path.count - 1, sdk: .mutant("lock-on-5xx"))).run()
        #expect(shorter.counterexample == nil)
        #expect(shorter.incomplete == nil)
    }

    @Test func budgetsStopTheSearchIncomplete() throws {
        var o = Self.options(actions: 3)
        o.maxRuns = 10
        let r = try Explorer(options: o).run()
        #expect(r.runs == 10)
        #expect(r.incomplete?.contains("run budget") == true)
        o = Self.options(actions: 3)
        o.stateBudgetBytes = 5 * StateDigest.storedBytes
        let s = try Explorer(options: o).run()
        #expect(s.incomplete?.contains("state store is full") == true)
        #expect(s.distinctStates <= 5)
    }

    /// Two shards search the whole space between them: each less than the whole, the two
    /// at least as much (they share no state store), and the one that holds the mutant's
    /// first action finds it.
    @Test func shardsSplitTheSearch() throws {
        let whole = try Explorer(options: Self.options()).run()
        var runs: UInt64 = 0
        var found = 0
        for i in 1...2 {
            var o = Self.options()
            o.shard = (i, 2)
            let r = try Explorer(options: o).run()
            #expect(r.incomplete == nil)
            #expect(r.runs < whole.runs)
            runs += r.runs
            var m = Self.options(actions: 1, sdk: .mutant("reset-keeps-credential"))
            m.shard = (i, 2)
            if try Explorer(options: m).run().counterexample != nil { found += 1 }
        }
        #expect(runs >= whole.runs)
        #expect(found >= 1)
    }

    @Test func badOptionsAreRefused() {
        var o = Self.options(devices: 4)
        #expect(throws: CompileError.self) { try Explorer(options: o) }
        o = Self.options(sdk: .mutant("no-such-mutant"))
        #expect(throws: CompileError.self) { try Explorer(options: o) }
        o = Self.options(sdk: .custom("nobody"))
        #expect(throws: CompileError.self) { try Explorer(options: o) }
        o = Self.options()
        o.shard = (3, 2)
        #expect(throws: CompileError.self) { try Explorer(options: o) }
    }

    /// The digest covers the world and the checkers by value: no reference is left
    /// unfollowed, two runs of one scenario digest alike, and one more action differs.
    @Test func stateDigestIsByValueAndSeesActions() throws {
        let explorer = try Explorer(options: Self.options())
        func digest(_ path: [ExploreStep]) throws -> StateDigest {
            let compiled = try ScenarioCompiler.compile(explorer.scenario(path: path, duration: path.last?.time ?? 1))
            var world = World<ReferenceSDK, InvariantChecker>(setup: compiled.setup, observer: InvariantChecker())
            world.run()
            var d = StateDigest()
            d.add(parts: world.stateParts())
            d.add(parts: world.observer.stateParts())
            #expect(d.references == 0)
            #expect(d.words > 100, "every part is read, not skipped")
            return d
        }
        let open = ExploreStep(time: Ms.minute, action: .person(.open, .device(group: "photos", index: 1)))
        let close = ExploreStep(time: Ms.minute, action: .person(.close, .device(group: "photos", index: 1)))
        let reset = ExploreStep(time: Ms.minute, action: .person(.reset, .device(group: "photos", index: 1)))
        #expect(try digest([open]) == digest([open]))
        #expect(try digest([reset]) != digest([close]))
    }

    /// The pending events a world lists are the ones its run then handles, in order, and
    /// listing them leaves the world as it was.
    @Test func pendingEventsLeaveTheWorldUnchanged() throws {
        let explorer = try Explorer(options: Self.options())
        let path = [ExploreStep(time: Ms.minute, action: .person(.reset, .device(group: "photos", index: 1)))]
        let compiled = try ScenarioCompiler.compile(explorer.scenario(path: path, duration: Ms.minute + 5))
        var world = World<ReferenceSDK, NoObserver>(setup: compiled.setup, observer: NoObserver())
        world.run()
        let pending = world.pendingEvents()
        #expect(!pending.isEmpty)
        #expect(pending == world.pendingEvents())
        #expect(zip(pending, pending.dropFirst()).allSatisfy { !Event.precedes($1, $0) })
        #expect(world.queue.count == pending.count)
        #expect(world.queue.nextTime == pending.first?.time)
    }

    @Test func commandExitCodes() throws {
        let help = try SimkitProcess.run(["explore", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("usage: simkit explore"))
        #expect(try SimkitProcess.run(["explore", "--devices", "4"]).status == 2)
        #expect(try SimkitProcess.run(["explore", "--persons", "open,jump"]).status == 2)
        #expect(try SimkitProcess.run(["explore", "--sdk", "mutant:nope"]).status == 2)
        #expect(try SimkitProcess.run(["explore", "--boundary-moments", "before,exactly"]).status == 2)
        #expect(try SimkitProcess.run(["explore", "--dashboard", "revoke-acount"]).status == 2)
        let exhausted = try SimkitProcess.run(["explore", "--devices", "1", "--actions", "1"])
        #expect(exhausted.status == 0)
        #expect(exhausted.stdout.contains("EXHAUSTED"))
        let incomplete = try SimkitProcess.run(["explore", "--devices", "1", "--actions", "3", "--max-runs", "20"])
        #expect(incomplete.status == 3)
        #expect(incomplete.stdout.contains("INCOMPLETE"))
        let out = try SimkitProcess.write("explore-cx.scenario", "")
        let found = try SimkitProcess.run(["explore", "--devices", "1", "--actions", "2", "--bfs", "--sdk", "mutant:lock-on-offline",
                                           "--out", out, "--json", "-"])
        #expect(found.status == 1)
        #expect(found.stdout.contains("\"status\" : \"violation\""))
        #expect(found.stdout.contains("never-lock-on-transient"))
        let replay = try SimkitProcess.run(["run", out])
        #expect(replay.status == 1)
        #expect(replay.stdout.contains("never-lock-on-transient"))
    }
}
