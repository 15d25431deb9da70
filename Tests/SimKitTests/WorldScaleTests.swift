import Testing
@testable import SimKit

extension WorldRuleTests {
    /// 10,000 devices over 60 virtual days of the standard workload (rotation, disable and
    /// enable, a Rollup revoke and restore, partitions, 5xx, timeouts, outages), in a debug
    /// build, with no observer: it finishes within its duration and does real work.
    @Test("Scale: 10,000 devices over 60 days run to the end")
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
