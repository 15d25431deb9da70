import Foundation
import Invariants
import ScenarioLanguage
import Scenarios
@testable import ScenarioSearch
import SimKit
import Testing

/// The leaves' speed-ups (`ExplorerLeaves.swift`) held equal to the plain search: a leaf's
/// setup built from its parent's is the setup its whole scenario compiles to, and a search
/// with them, on any number of threads, makes the same runs, states, pruned paths and
/// counterexample as one that compiles every path and runs one leaf at a time.
@Suite struct ExploreLeafTests {
    /// Every field `SimWorld.canExtend(as:)` compares, and the rest of a `WorldSetup`.
    static func same(_ a: WorldSetup, _ b: WorldSetup) -> Bool {
        a.seed == b.seed && a.durationMs == b.durationMs && a.keyNames == b.keyNames && a.accounts == b.accounts
            && a.apps == b.apps && a.groups == b.groups && a.network == b.network && a.sdk == b.sdk
            && a.sdkFlaws == b.sdkFlaws && a.serverFlaws == b.serverFlaws && a.schedule == b.schedule
            && a.eventBudget == b.eventBudget && a.ringDepth == b.ringDepth && a.queueLimit == b.queueLimit
            && a.memoryBudgetBytes == b.memoryBudgetBytes && a.pinnedFates == b.pinnedFates
            && a.countsRequests == b.countsRequests
    }

    /// Worlds whose alphabets hold every kind of action: the default one on 2 devices, and
    /// 1 device with every extra part, the account actions and a mutant's flaws.
    static var worlds: [ExploreOptions] {
        var two = ExploreOptions()
        two.devices = 2
        var extras = ExploreOptions()
        extras.devices = 1
        extras.extras = ExploreExtra.allCases
        extras.dashboardKinds = ExploreDashboard.allCases
        extras.sdk = .mutant("never-purge")
        var fates = ExploreOptions()
        fates.devices = 1
        fates.maxFates = 1
        return [two, extras, fates]
    }

    /// For every child of the root, of each child of the root, and of paths with two
    /// rotations (whose key names grow), the leaf's setup from its parent's setup is the
    /// setup of its whole scenario; rotations are compiled whole (no table entry).
    @Test(arguments: 0..<3)
    func leafSetupIsTheCompiledSetup(_ world: Int) throws {
        let options = Self.worlds[world]
        let explorer = try Explorer(options: options)
        let table = explorer.leafActions()
        #expect(!table.entries.isEmpty)
        #expect(!table.entries.contains { if case .rotate = $0.action { true } else { false } })
        let rotateNow = explorer.actions(rotations: 0).first { if case .rotate(_, _, .stopNow) = $0 { true } else { false } }!
        let rotateNext = explorer.actions(rotations: 1).first { if case .rotate(_, _, .stopNow) = $0 { true } else { false } }!
        let rotated = [ExploreStep(time: 9, action: rotateNow), ExploreStep(time: 70_000, action: rotateNext)]
        var bases: [[ExploreStep]] = [[], rotated]
        var node = Explorer.NodeRun()
        node.pendingTimes = [10, 20, 30]
        node.lastChecks = Array(repeating: 5, count: options.devices)
        for (i, c) in explorer.children(of: [], node: node, table: table).enumerated() where i % 31 == 0 { bases.append([c]) }
        var compared = 0, incremental = 0
        for base in bases {
            let t = base.last?.time ?? 0
            let parent = explorer.setup(path: base, duration: t)
            for c in explorer.children(of: base, node: node, table: table) {
                let path = base + [c]
                let whole = explorer.setup(path: path, duration: c.time)
                compared += 1
                // With the step's cached action and without it (a lookup in the table).
                for step in [c, ExploreStep(time: c.time, action: c.action)] {
                    guard let built = explorer.leafSetup(path: base + [step], duration: c.time, parent: parent, table: table) else {
                        if case .rotate = c.action {} else if options.maxFates == 0 { Issue.record("no leaf setup for \(c)") }
                        continue
                    }
                    incremental += 1
                    #expect(Self.same(built, whole), "\(base) + \(c)")
                }
            }
        }
        #expect(compared > 200 && incremental > compared, "\(compared) compared, \(incremental) built")
    }

    /// What a search reports, for comparing two searches.
    static func summary(_ r: ExploreResult) -> String {
        "runs \(r.runs) states \(r.distinctStates) pruned \(r.pruned) pinned \(r.pinnedRuns) depth \(r.maxDepth) "
            + "incomplete \(r.incomplete ?? "-") broken \(r.counterexample?.broken.map(\.rawValue) ?? []) "
            + "headline \(r.counterexample?.headline ?? "-") story \(r.counterexample?.story ?? "-")\n"
            + (r.counterexample.map { ScenarioPrinter.print($0.scenario) } ?? "")
    }

    /// The plain search (every path compiled whole, one leaf at a time, and without forks)
    /// and the search with the leaves' speed-ups on 1, 2 (and, for 2 actions, 3) threads: the same figures
    /// and counterexample, for clean worlds, mutants found depth and breadth first, a
    /// budget that stops the search mid-level, and fates.
    @Test(arguments: [
        ("reference 2x2", 2, 2, SDKChoice.reference, false, UInt64(50_000_000), 0),
        ("lock-on-5xx 2x2 dfs", 2, 2, .mutant("lock-on-5xx"), false, 50_000_000, 0),
        ("budget", 2, 3, .reference, false, 2_345, 0),
        ("fates", 1, 2, .reference, false, 50_000_000, 1),
    ] as [(String, Int, Int, SDKChoice, Bool, UInt64, Int)])
    func sameSearchAsThePlainOne(_ name: String, _ devices: Int, _ actions: Int, _ sdk: SDKChoice, _ bfs: Bool,
                                 _ maxRuns: UInt64, _ fates: Int) throws {
        try Self.sameSearch(name, devices, actions, sdk, bfs, maxRuns, fates)
    }

    /// The same at 3 actions (about a minute of a debug build's CPU): the slow tier.
    @Test(.tags(.slow), .slowTier, arguments: [
        ("reference 1x3", 1, 3, SDKChoice.reference, false, UInt64(50_000_000), 0),
        ("never-purge dfs", 1, 3, .mutant("never-purge"), false, 50_000_000, 0),
        ("never-purge bfs", 1, 3, .mutant("never-purge"), true, 50_000_000, 0),
        ("disable-spares-grace-keys 1x3 dfs", 1, 3, .mutant("disable-spares-grace-keys"), false, 50_000_000, 0),
    ] as [(String, Int, Int, SDKChoice, Bool, UInt64, Int)])
    func sameSearchAsThePlainOneAtThreeActions(_ name: String, _ devices: Int, _ actions: Int, _ sdk: SDKChoice, _ bfs: Bool,
                                               _ maxRuns: UInt64, _ fates: Int) throws {
        try Self.sameSearch(name, devices, actions, sdk, bfs, maxRuns, fates)
    }

    static func sameSearch(_ name: String, _ devices: Int, _ actions: Int, _ sdk: SDKChoice, _ bfs: Bool,
                           _ maxRuns: UInt64, _ fates: Int) throws {
        var plain = ExploreOptions()
        plain.devices = devices
        plain.maxActions = actions
        plain.sdk = sdk
        plain.breadthFirst = bfs
        plain.maxRuns = maxRuns
        plain.maxFates = fates
        if fates > 0 { plain.faults = false; plain.dashboardKinds = [.disable, .enable] }
        plain.incrementalSetup = false
        plain.jobs = 1
        let expected = Self.summary(try Explorer(options: plain).run())
        #expect(expected.contains("runs "))
        for jobs in actions <= 2 ? [1, 2, 3] : [1, 2] {
            var fast = plain
            fast.incrementalSetup = true
            fast.jobs = jobs
            #expect(Self.summary(try Explorer(options: fast).run()) == expected, "\(name), \(jobs) jobs")
        }
        if actions <= 2 {
            var noFork = plain
            noFork.forking = false
            #expect(Self.summary(try Explorer(options: noFork).run()) == expected, "\(name), no forks")
        }
    }
}
