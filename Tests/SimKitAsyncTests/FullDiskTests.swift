import Testing
import SimKit
@testable import SimKitAsync

/// P3 through the async host's storage ports: on a full disk `SimDevice.write` refuses what
/// takes room (SimKit traces it as failed) and `SimDisk.write` throws, the file unchanged.
/// Serialized: the files live in the loop's shared table, by device index.
@Suite(.serialized) struct FullDiskTests {
    func step(_ device: SimDevice, full: Bool, locked: Bool = false, index: DeviceIndex = 0) {
        device.begin(now: 0, context: SDKContext(device: index, photoCount: 10, photosAllowed: true, diskFull: full, dataLocked: locked),
                     config: SDKConfig(), disk: device.disk)
    }

    @Test func aFullDiskRefusesWhatTakesRoomAndKeepsTheRest() {
        let device = SimDevice()
        step(device, full: true)
        #expect(!device.write(.queueReport))
        #expect(!device.write(.indexPhotos(from: 0, count: 10)))
        #expect(device.disk.reportsQueued == 0 && device.disk.indexedCount == 0)
        #expect(device.write(.lock))
        #expect(device.disk.locked)
        #expect(device.effects == [.store(.queueReport), .store(.indexPhotos(from: 0, count: 10)), .store(.lock)])
        #expect(throws: SimDiskError.full) { try device.files.write("state", [1, 2]) }
        step(device, full: false)
        #expect(device.write(.queueReport))
        #expect(device.disk.reportsQueued == 1)
    }

    /// Without a mapping, a full disk refuses a file that grows and takes one that does not
    /// (a record rewritten in place, a deletion), which frees or keeps room.
    @Test func aFullDiskRefusesOnlyAFileThatGrows() throws {
        let device = SimDevice()
        step(device, full: false, index: 1)
        try device.files.write("state", [1, 2, 3])
        step(device, full: true, index: 1)
        #expect(throws: SimDiskError.full) { try device.files.write("state", [1, 2, 3, 4]) }
        #expect(try device.files.read("state") == [1, 2, 3])
        try device.files.write("state", [9, 9])
        #expect(try device.files.read("state") == [9, 9])
        try device.files.remove("state")
        #expect(try device.files.read("state") == nil)
    }

    /// P4: before the first unlock after a restart the files can be neither read nor
    /// written (an error, not "no file"), and every store change but the background task's
    /// is refused; after the unlock they read as they were.
    @Test func lockedDataIsNotAbsent() throws {
        let device = SimDevice()
        step(device, full: false, index: 1)
        try device.files.write("state", [1, 2, 3])
        #expect(device.write(.setCredential(Credential(device: 0, generation: 1))))
        step(device, full: false, locked: true, index: 2)
        #expect(throws: SimDiskError.locked) { try device.files.read("state") }
        #expect(throws: SimDiskError.locked) { try device.files.write("state", [4]) }
        #expect(throws: SimDiskError.locked) { try device.files.remove("state") }
        #expect(!device.write(.deleteCredential))
        #expect(!device.write(.lock))
        #expect(device.write(.scheduleBackground))
        #expect(!device.disk.credential.isNone && !device.disk.locked && device.disk.backgroundScheduled)
        step(device, full: false, index: 1)
        #expect(try device.files.read("state") == [1, 2, 3])
    }
}
