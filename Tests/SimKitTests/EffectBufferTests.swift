import Testing
@testable import SimKit

/// The buffer SDK steps append to: order kept across growth, emptied without losing its
/// memory, and split from a copy by `makeUnique` (the world calls it before a run, since
/// appends do not check for sharing).
@Suite struct EffectBufferTests {
    static func effect(_ n: Int) -> Effect { .setTimer(.indexChunk, at: SimTime(n), arg: UInt32(n)) }

    @Test func keepsOrderWhenItGrows() {
        var buffer = EffectBuffer(capacity: 2)
        for n in 0..<100 { buffer.append(Self.effect(n)) }
        #expect(buffer.count == 100)
        #expect(Array(buffer) == (0..<100).map(Self.effect))
    }

    @Test func removeAllEmptiesAndKeepsMemory() {
        var buffer = EffectBuffer(capacity: 4)
        for n in 0..<10 { buffer.append(Self.effect(n)) }
        let grown = buffer.capacity
        buffer.removeAll()
        #expect(buffer.isEmpty)
        buffer.append(.runEnded)
        #expect(Array(buffer) == [.runEnded])
        #expect(buffer.capacity == grown)
    }

    /// No buffer holds more than `limit` effects, whatever room it was made with: the
    /// append past it stops the process with a message.
    @Test func holdsAtMostTheLimit() async {
        #expect(EffectBuffer(capacity: .max).capacity == EffectBuffer.limit)
        #expect(EffectBuffer(capacity: 0).capacity == 1)
        await #expect(processExitsWith: .failure) {
            var buffer = EffectBuffer(capacity: EffectBuffer.limit)
            for n in 0...EffectBuffer.limit { buffer.append(.setTimer(.indexChunk, at: SimTime(n), arg: 0)) }
        }
    }

    @Test func makeUniqueSplitsACopy() {
        var original = EffectBuffer(capacity: 8)
        original.append(Self.effect(1))
        var copy = original
        copy.makeUnique()
        copy.append(Self.effect(2))
        original.append(Self.effect(3))
        #expect(Array(original) == [Self.effect(1), Self.effect(3)])
        #expect(Array(copy) == [Self.effect(1), Self.effect(2)])
    }
}
