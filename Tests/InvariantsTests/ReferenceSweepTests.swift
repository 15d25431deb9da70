import SimKitTestSupport
import Testing
import SimKit
import Invariants

/// The standard workload with everything else a world can do on top: resets, Photos
/// revoked and granted, forgotten devices, lost responses, clones, API calls, a stopped
/// old key, a rotation that stops the old key now, updates (one shipping an unissued key),
/// a Rollup account revoke and restore, an app rejected and approved again.
enum ChaosWorkload {
    static func setup(seed: UInt64, devices: UInt32 = 100, days: UInt64 = 60) -> WorldSetup {
        var s = StandardWorkload.setup(seed: seed, devices: devices, days: days)
        let d = Ms.day, h = Ms.hour
        let share = { (bp: UInt32) in DeviceSelection(group: 0, mode: .shareBp(bp)) }
        s.keyNames += ["rk_live_C", "rk_live_D"]
        s.groups.append(GroupSpec(name: "clones", app: 0, count: 5, clones: true))
        s.schedule += [
            .init(firstAtMs: 3 * h, periodMs: 3 * d, jitterMs: d, action: .person(.reset, share(200), arg: 0)),
            .init(firstAtMs: 5 * h, periodMs: 4 * d, jitterMs: d, action: .person(.revokePhotos, share(300), arg: 0)),
            .init(firstAtMs: 2 * d, periodMs: 4 * d, jitterMs: d, action: .person(.grantPhotos, .all, arg: 0)),
            .init(firstAtMs: 7 * h, periodMs: 5 * d, action: .forgetDevice(share(300))),
            .init(firstAtMs: d, periodMs: 6 * d, action: .lostResponses(rateBp: 3_000, forMs: 6 * h)),
            .init(firstAtMs: h, periodMs: 8 * h, jitterMs: 2 * h, action: .person(.launch, DeviceSelection(group: 1, mode: .every), arg: 0)),
            .init(firstAtMs: 2 * d, periodMs: 2 * d, jitterMs: d, action: .person(.profile, share(1_000), arg: 0)),
            .init(firstAtMs: 2 * d, periodMs: 2 * d, jitterMs: d, action: .person(.search, share(1_000), arg: 0)),
            .at(14 * d, .dashboard(.stopOldKey(app: 0, key: 0))),
            .at(20 * d, .dashboard(.rotate(app: 0, newKey: 2, graceMs: nil))),
            .at(21 * d, .person(.update, share(3_000), arg: 0)),
            .at(25 * d, .dashboard(.rollupAccount(.revoke, account: 0))),
            .at(26 * d, .dashboard(.rollupAccount(.restore, account: 0))),
            .at(27 * d, .dashboard(.rollupApp(.reject, app: 0))),
            .at(27 * d + 6 * h, .dashboard(.rollupApp(.approve, app: 0))),
            .at(30 * d, .person(.update, share(5_000), arg: 0)),
            .at(32 * d, .person(.update, share(500), arg: 3 + 1)),
        ]
        return s
    }
}

/// The reference SDK and server break no invariant in the standard workload: a rotation,
/// a disable and enable, a Rollup revoke and restore, partitions, 5xx, timeouts, an
/// outage, updates, queries and background runs — 20 seeds of 200 devices for 60 days.
@Suite struct ReferenceSweepTests {
    @Test("the reference breaks no invariant over the standard workload", .tags(.slow), .slowTier, arguments: 1...20 as ClosedRange<UInt64>)
    func referenceIsClean(seed: UInt64) {
        let setup = StandardWorkload.setup(seed: seed, devices: 200, days: 60)
        var world = World<ReferenceSDK, InvariantChecker>(setup: setup, observer: InvariantChecker())
        world.run()
        let checker = world.observer
        #expect(!world.stoppedByBudget)
        #expect(checker.broken.isEmpty, "seed \(seed) broke \(checker.broken.map(\.rawValue)): \(checker.violations.prefix(5).map(\.headline))")
        // The sweep must reach the interesting paths, or it proves little.
        for point in [Coverage.lockByDisabled, .unlock, .checkAnswered5xx, .checkTimedOut, .checkDuringPartition, .oldKeyServedInGrace, .backgroundRun] {
            #expect(checker.coverage[point] > 0, "seed \(seed) never reached \(point)")
        }
    }

    @Test("the reference breaks no invariant in the chaos workload", arguments: 1...6 as ClosedRange<UInt64>)
    func referenceIsCleanInChaos(seed: UInt64) {
        let checker = MutantWorlds.run(ChaosWorkload.setup(seed: seed))
        #expect(checker.broken.isEmpty, "seed \(seed) broke \(checker.broken.map(\.rawValue)): \(checker.violations.prefix(5).map(\.headline))")
        for point in [Coverage.purge, .reRegistration, .cloneRefused, .resetRetried, .photosRevokedIndexDeleted, .responseLost, .lockByKeyInvalid, .lockedThrewOnCall] {
            #expect(checker.coverage[point] > 0, "seed \(seed) never reached \(point)")
        }
    }

    @Test("in the chaos workload, every mutant breaks only invariants its bug plausibly breaks", .tags(.slow), .slowTier, arguments: Mutants.names)
    func mutantsInChaos(_ name: String) throws {
        let mutant = try #require(Mutants.named(name))
        let allowed = Set([mutant.expected] + mutant.alsoPlausible)
        let checker = MutantWorlds.run(ChaosWorkload.setup(seed: 1), mutant)
        let unexpected = checker.broken.filter { !allowed.contains($0) }
        #expect(unexpected.isEmpty, "\(name) broke \(unexpected.map(\.rawValue)): \(checker.violations.filter { unexpected.contains($0.invariant) }.prefix(3).map(\.headline))")
    }
}
