import Testing
@testable import SimKit

/// The engine's storage types write without a per-write copy-on-write check (full checks
/// cost 4.8% of the instructions; docs/performance.md), so a copy shares its storage until
/// the owner calls `makeUnique()`. These tests hold both halves of that: after
/// `makeUnique()` a copy behaves as a value, and in a debug build a write while a copy
/// still shares the storage stops the process instead of changing the copy.
@Suite struct SharedStorageTests {
    static func slot(device: UInt32) -> RequestPool.Slot {
        let request = Request(kind: .check, key: 0, credential: .none, device: device, attestedApp: nil)
        return RequestPool.Slot(request: request, sentAt: 0, id: 1, epoch: 0)
    }

    @Test func aTableMadeUniqueIsAValue() {
        var table = DeviceTable(repeating: 0, count: 4)
        var copy = table
        copy.makeUnique()
        copy[1] = 7
        table[2] = 9
        #expect(Array(table) == [0, 0, 9, 0])
        #expect(Array(copy) == [0, 7, 0, 0])
    }

    @Test func aPoolMadeUniqueIsAValue() {
        var pool = RequestPool()
        let first = pool.add(Self.slot(device: 1))
        var copy = pool
        copy.makeUnique()
        copy.setReply(ServerReply(.appDisabled), of: first)
        #expect(pool[first].reply == ServerReply(.ok))
        #expect(copy[first].reply == ServerReply(.appDisabled))
    }

    #if DEBUG
    @Test func aSharedTableIsNotWritten() async {
        await #expect(processExitsWith: .failure) {
            var table = DeviceTable(repeating: 0, count: 4)
            let copy = table
            table[1] = 7
            _ = copy
        }
    }

    @Test func aSharedPoolIsNotWritten() async {
        await #expect(processExitsWith: .failure) {
            var pool = RequestPool()
            let first = pool.add(Self.slot(device: 1))
            let copy = pool
            pool.release(first)
            _ = copy
        }
    }

    @Test func aSharedEffectBufferIsNotAppendedTo() async {
        await #expect(processExitsWith: .failure) {
            var buffer = EffectBuffer(capacity: 8)
            let copy = buffer
            buffer.append(.runEnded)
            _ = copy
        }
    }
    #endif
}
