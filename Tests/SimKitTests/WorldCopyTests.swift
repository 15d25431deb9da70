import Testing
@testable import SimKit

/// A world is a value: its device tables, request pool and queue are written without
/// per-write copy-on-write checks, so `World.run` makes them its own first. A copy taken
/// before a run must neither see the run nor change it.
@Suite struct WorldCopyTests {
    @Test func aCopyTakenBeforeARunKeepsItsOwnState() {
        let setup = StandardWorkload.setup(seed: 11, devices: 50, days: 3)
        var world = World<ReferenceSDK, NoObserver>(setup: setup, observer: NoObserver())
        let untouched = world
        var twin = world
        world.run()
        // The copy still holds the state before the run: nothing indexed, no process.
        #expect(untouched.devices.allSatisfy { $0.disk.indexedCount == 0 && !$0.hasProcess })
        #expect(untouched.queue.count == twin.queue.count)
        #expect(world.devices.contains { $0.disk.indexedCount > 0 })
        // Running the copy gives the same run, so the first run left the shared state alone.
        twin.run()
        #expect(twin.fingerprint == world.fingerprint)
        #expect(twin.eventsHandled == world.eventsHandled)
        #expect((0..<world.devices.count).allSatisfy { twin.devices[$0].disk == world.devices[$0].disk })
    }
}
