/// The effects of one SDK step, in order: the append-only buffer an `SDKCore` writes and
/// the engine reads, empties before each step and reuses, so a step allocates nothing.
///
/// Not an `Array`: every `append` to an array asks the runtime whether its storage is
/// shared, a call per effect. This buffer asks only when its owner says so (`makeUnique`,
/// which `World.run` calls before its loop). So a copy shares the storage of the value it was
/// copied from, and what one of them writes after `removeAll` overwrites what the other
/// reads: an SDK gets the buffer `inout` for one call and must not keep or copy it (a
/// kept copy would show the next steps' effects, never an unsafe access; debug builds stop
/// at the next append with an assertion).
///
/// At most `limit` effects fit: an SDK that asks for more in one step is stopped with a
/// message rather than allowed to eat the machine's memory.
/// determinism: shared only by copies, written through one; SimKit runs on one thread
public struct EffectBuffer: RandomAccessCollection, @unchecked Sendable {
    @usableFromInline var storage: EffectStorage
    /// `storage`'s memory and size, kept here so that an append reads no object.
    @usableFromInline var base: UnsafeMutablePointer<Effect>
    @usableFromInline var capacity: Int
    /// Effects appended since the last `removeAll`.
    @usableFromInline var used = 0

    /// The most effects one step may ask for.
    public static let limit = 1 << 20

    /// An empty buffer with room for `capacity` effects (1 to `limit`) before it grows.
    public init(capacity: Int = 16) {
        storage = EffectStorage(capacity: Swift.min(Swift.max(capacity, 1), EffectBuffer.limit))
        base = storage.base
        self.capacity = storage.capacity
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { used }
    @inlinable public var count: Int { used }

    /// Effect `i` of those appended.
    @inlinable public subscript(i: Int) -> Effect {
        precondition(i >= 0 && i < used, "effect \(i) of \(used)")
        return base[i]
    }

    /// Adds `effect` after the others.
    @inlinable @inline(__always)
    public mutating func append(_ effect: Effect) {
        assert(isKnownUniquelyReferenced(&storage), "an EffectBuffer appended to while a copy shares its storage: makeUnique() first")
        if used == capacity { grow() }
        (base + used).initialize(to: effect)
        used += 1
    }

    /// Forgets every effect and keeps the memory.
    @inlinable @inline(__always)
    public mutating func removeAll() { used = 0 }

    /// Gives this buffer a storage of its own if a copy shares it: call before appending
    /// to a buffer that may have been copied.
    public mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { moveTo(capacity: capacity) }
    }

    /// Twice the room, the effects so far copied over.
    @usableFromInline @inline(never)
    mutating func grow() {
        precondition(used < EffectBuffer.limit, "an SDK step asked for more than \(EffectBuffer.limit) effects")
        moveTo(capacity: Swift.min(2 * capacity, EffectBuffer.limit))
    }

    mutating func moveTo(capacity newCapacity: Int) {
        let fresh = EffectStorage(capacity: newCapacity)
        fresh.base.initialize(from: base, count: used)
        storage = fresh
        base = fresh.base
        capacity = newCapacity
    }
}

/// The memory of an `EffectBuffer`. `Effect` holds no references, so slots need no
/// deinitialising.
/// determinism: see `EffectBuffer`; no shared writes
@usableFromInline final class EffectStorage: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<Effect>
    @usableFromInline let capacity: Int

    init(capacity: Int) {
        assert(_isPOD(Effect.self), "effects are never deinitialised")
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }
}
