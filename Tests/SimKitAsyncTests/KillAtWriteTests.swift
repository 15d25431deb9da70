import Testing
import SimKit
@testable import SimKitAsync

/// P1 through the async host's file port: a kill the world lands at one of a step's saves
/// (`SDKCore.killed(atEffect:)`) sets the SDK's own files back to what they held before
/// that save, so the next launch reads exactly the writes made before the kill.
@Suite struct KillAtWriteTests {
    /// A file "state" whose first byte is the index's progress and second the lock.
    static func observe(_ disk: SimDiskContents) -> DiskObservation? {
        let b = disk["state"] ?? [0, 0]
        return DiskObservation(indexedPhotos: UInt32(b[0]), locked: b[1] == 1)
    }

    /// A device of its own in the loop's disks (the other suites use device 0).
    static let index: DeviceIndex = 901

    func device() -> SimDevice {
        let device = SimDevice()
        device.diskMapping = Self.observe
        device.begin(now: 0, context: SDKContext(device: Self.index, photoCount: 10, photosAllowed: true),
                     config: SDKConfig(), disk: device.disk)
        return device
    }

    @Test func aKillSetsTheFilesBackToTheSaveItLandedAt() throws {
        SimLoop.shared.disks[Self.index] = nil
        var device = device()
        try device.files.write("state", [5, 0])        // effects 0: indexPhotos
        device.publish(.locked)                        // effects 1: a state, no write
        try device.files.write("state", [5, 1])        // effects 2: lock
        try device.files.write("other", [9])           // a save the checkers do not see
        #expect(device.effects.count == 3)
        device.undoWrites(fromEffect: 2)
        #expect(try device.files.read("state") == [5, 0])
        #expect(try device.files.read("other") == nil)
        #expect(device.diskSlot.seen == DiskObservation(indexedPhotos: 5))

        // A save the checkers do not see, made before the save the kill landed at, stays.
        SimLoop.shared.disks[Self.index] = nil
        device = self.device()
        try device.files.write("other", [9])
        try device.files.write("state", [3, 0])        // effects 0
        device.undoWrites(fromEffect: 0)
        #expect(try device.files.read("other") == [9])
        #expect(try device.files.read("state") == nil)
        SimLoop.shared.disks[Self.index] = nil
    }
}
