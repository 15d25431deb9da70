import Testing
@testable import SimKit

/// The rings against a plain reference: every device's records, keep the last `depth`.
@Suite struct DeviceRingsTests {
    @Test(arguments: [0, 1, 2, 3, 4, 12, 256])
    func keepsTheLastRecordsOfEachDevice(depth: Int) {
        var r = SimRandom(seed: UInt64(depth) &+ 77)
        let devices = 5
        var rings = DeviceRings(devices: devices, depth: depth)
        var all: [[TraceRecord]] = Array(repeating: [], count: devices)
        for t in 0..<2_000 as Range<UInt64> {
            let d = DeviceIndex(r.below(UInt64(devices) + 1))   // some world records too
            let device = d == DeviceIndex(devices) ? Event.world : d
            let record = TraceRecord(time: t, device: device, event: .probe(arg: UInt32(t)))
            rings.push(record)
            if device != Event.world { all[Int(device)].append(record) }
            if t % 37 == 0 {
                for i in 0..<devices {
                    #expect(rings.last(of: DeviceIndex(i)) == Array(all[i].suffix(depth)), "depth \(depth) device \(i) after \(t)")
                }
            }
        }
        #expect(rings.last(of: Event.world).isEmpty)
    }
}

/// Rings are values: a copy keeps its records when the original goes on.
@Suite struct DeviceRingsValueTests {
    @Test func aCopyIsIndependent() {
        var a = DeviceRings(devices: 3, depth: 2)
        a.push(TraceRecord(time: 1, device: 1, event: .probe(arg: 1)))
        var b = a
        b.push(TraceRecord(time: 2, device: 1, event: .probe(arg: 2)))
        b.push(TraceRecord(time: 3, device: 1, event: .probe(arg: 3)))
        a.push(TraceRecord(time: 4, device: 2, event: .probe(arg: 4)))
        #expect(a.last(of: 1).map(\.time) == [1])
        #expect(b.last(of: 1).map(\.time) == [2, 3])
        #expect(a.last(of: 2).map(\.time) == [4])
        #expect(b.last(of: 2).isEmpty)
    }
}
