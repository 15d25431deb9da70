import Testing
import SimKit
import Invariants

/// The reference SDK and server break no invariant in the standard workload: a rotation,
/// a disable and enable, a Rollup revoke and restore, partitions, 5xx, timeouts, an
/// outage, updates, queries and background runs — 20 seeds of 200 devices for 60 days.
@Suite struct ReferenceSweepTests {
    @Test("the reference breaks no invariant over the standard workload", arguments: 1...20 as ClosedRange<UInt64>)
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
}
