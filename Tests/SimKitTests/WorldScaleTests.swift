import SimKitTestSupport
import Testing
@testable import SimKit

extension WorldRuleTests {
    /// 10,000 devices over 60 virtual days of the standard workload (rotation, disable and
    /// enable, a Rollup revoke and restore, partitions, 5xx, timeouts, outages), in a debug
    /// build, with no observer: it finishes within its duration and does real work.
    @Test("Scale: 10,000 devices over 60 days run to the end", .tags(.slow), .slowTier)
    func tenThousandDevicesSixtyDays() {
        let setup = StandardWorkload.setup(seed: 2026, devices: 10_000, days: 60)
        var world = World<ReferenceSDK, NoObserver>(setup: setup, observer: NoObserver())
        let clock = ContinuousClock()
        let elapsed = clock.measure { world.run() }
        print("10,000 devices × 60 days: \(world.eventsHandled) events in \(elapsed)")
        #expect(!world.stoppedByBudget)
        #expect(world.now == 60 * Ms.day)
        #expect(world.eventsHandled > 10_000 * 60)
        let indexed = world.devices.filter { $0.disk.indexedCount > 0 }.count
        #expect(indexed > 5_000)
        #expect(world.devices.contains { $0.disk.indexedCount == $0.photoCount })
        #expect(world.devices.allSatisfy { $0.disk.modelDownloads <= 1 })
        #expect(world.server.checkInvariants() == nil)
    }
}

@Suite("World bounds")
struct WorldBoundsTests {
    @Test("a run whose events outgrow the queue's bound stops and says why, instead of losing events")
    func queueBoundStopsTheRun() {
        var setup = StandardWorkload.setup(seed: 3, devices: 200, days: 5)
        setup.queueLimit = 150
        var world = World<ReferenceSDK, NoObserver>(setup: setup, observer: NoObserver())
        world.run()
        #expect(world.stoppedByBudget)
        #expect(world.stopReason?.contains("more than 150 events were pending") == true, "\(world.stopReason ?? "nil")")
        #expect(world.now < 5 * Ms.day)

        var roomy = World<ReferenceSDK, NoObserver>(setup: StandardWorkload.setup(seed: 3, devices: 200, days: 5), observer: NoObserver())
        roomy.run()
        #expect(!roomy.stoppedByBudget && roomy.stopReason == nil)
        #expect(roomy.now == 5 * Ms.day)
    }
}
