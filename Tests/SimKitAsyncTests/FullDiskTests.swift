import Testing
import SimKit
@testable import SimKitAsync

/// P3 through the async host's storage ports: on a full disk `SimDevice.write` refuses what
/// takes room (SimKit traces it as failed) and `SimDisk.write` throws, the file unchanged.
@Suite struct FullDiskTests {
    func step(_ device: SimDevice, full: Bool) {
        device.begin(now: 0, context: SDKContext(device: 0, photoCount: 10, photosAllowed: true, diskFull: full),
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
}
