/// Requests on the wire, in a pool of reusable slots so that a request costs no
/// allocation: an event carries only its slot number.
///
/// Like `DeviceTable`, the pool writes its memory without a uniqueness check per write
/// (with arrays, a request paid four calls into the runtime: add, reply, release and the
/// free list's pop). Copies of a pool share its storage until the owner calls
/// `makeUnique()`, which `World.run` does before its loop; growing makes a fresh storage.
/// Its four operations are always inlined: the engine is specialised in the executable's
/// module, and calls into this one on every request would cost measurably (see
/// docs/performance.md).
@usableFromInline struct RequestPool: Sendable {
    @usableFromInline struct Slot: Sendable {
        @usableFromInline var request: Request
        @usableFromInline var reply = ServerReply(.ok)
        @usableFromInline var sentAt: SimTime
        /// The request's id while the slot is in use; the next free slot while it is free.
        @usableFromInline var id: UInt32
        @usableFromInline var epoch: UInt16
        /// The timeout fault picked this request: its response comes only after the timeout.
        @usableFromInline var late = false
        /// Its pinned `RequestFate`'s raw value, or 0 (drawn as usual).
        @usableFromInline var fate: UInt8 = 0

        @inlinable init(request: Request, reply: ServerReply = ServerReply(.ok), sentAt: SimTime, id: UInt32, epoch: UInt16, late: Bool = false) {
            self.request = request; self.reply = reply; self.sentAt = sentAt; self.id = id; self.epoch = epoch; self.late = late
        }
    }

    @usableFromInline var storage = RequestSlots(capacity: 64)
    /// Slots `0..<used` have been handed out, to a request or to the free list.
    @usableFromInline var used = 0
    /// The first free slot below `used`, linked through `Slot.id`; `none` when empty.
    @usableFromInline var freeHead = RequestPool.none

    /// The most requests on the wire at once (a runaway is a bug).
    @usableFromInline static let limit = 1 << 26
    @usableFromInline static let none = UInt32.max

    /// Room for `count` requests without growing: a burst (every device launching at once)
    /// then fills reserved pages instead of doubling the storage, whose copy would double
    /// the resident peak. Reserved pages cost nothing until written.
    @inlinable mutating func reserve(_ count: Int) {
        let wanted = min(count, RequestPool.limit)
        if wanted > storage.capacity { storage = storage.copy(capacity: wanted, used: used) }
    }

    /// Gives this pool a storage of its own if a copy shares it: call before writing.
    @inlinable mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy(capacity: storage.capacity, used: used) }
    }

    /// Debug builds check the discipline that the writes below rely on (see the type's
    /// comment): a write while a copy shares the storage would change the copy too.
    @inline(__always)
    @inlinable mutating func assertUnique() {
        assert(isKnownUniquelyReferenced(&storage), "a RequestPool written while a copy shares its storage: makeUnique() first")
    }

    /// Puts `slot` on the wire; returns its slot number.
    @inline(__always)
    @inlinable mutating func add(_ slot: Slot) -> UInt32 {
        assertUnique()
        if freeHead != RequestPool.none {
            let i = freeHead
            freeHead = storage.base[Int(i)].id
            storage.base[Int(i)] = slot
            return i
        }
        precondition(used < RequestPool.limit, "more than \(RequestPool.limit) requests on the wire")
        if used == storage.capacity { storage = storage.copy(capacity: min(2 * used, RequestPool.limit), used: used) }
        storage.base[used] = slot
        used += 1
        return UInt32(used - 1)
    }

    /// The request in slot `i` (handed out and not yet released).
    @inline(__always)
    @inlinable subscript(i: UInt32) -> Slot {
        precondition(Int(i) < used, "request slot \(i) was never handed out")
        return storage.base[Int(i)]
    }

    /// Records the server's answer to request `i` (one field, not the whole slot).
    @inline(__always)
    @inlinable mutating func setReply(_ reply: ServerReply, of i: UInt32) {
        precondition(Int(i) < used, "request slot \(i) was never handed out")
        assertUnique()
        storage.base[Int(i)].reply = reply
    }

    /// Frees slot `i` for the next request.
    @inline(__always)
    @inlinable mutating func release(_ i: UInt32) {
        precondition(Int(i) < used, "request slot \(i) was never handed out")
        assertUnique()
        storage.base[Int(i)].id = freeHead
        freeHead = i
    }

    /// The address of slot `i`, for cache hints; nil beyond the slots handed out.
    @inlinable func address(of i: UInt32) -> UnsafeRawPointer? {
        Int(i) < used ? UnsafeRawPointer(storage.base + Int(i)) : nil
    }
}

/// The memory of a `RequestPool`: `capacity` slots, of which the pool has written a prefix.
/// `Slot` holds no references, so slots need no deinitialising.
/// determinism: copy-on-write as `RequestPool` says, and SimKit runs on one thread; no shared writes
@usableFromInline final class RequestSlots: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<RequestPool.Slot>
    @usableFromInline let capacity: Int

    @inlinable init(capacity: Int) {
        precondition(capacity > 0, "a request pool needs room")
        assert(_isPOD(RequestPool.Slot.self), "slots are never deinitialised")
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    /// A storage of `capacity` slots whose first `used` are copies of these.
    @inlinable func copy(capacity newCapacity: Int, used: Int) -> RequestSlots {
        let fresh = RequestSlots(capacity: max(newCapacity, used, 1))
        fresh.base.initialize(from: base, count: used)
        return fresh
    }

    deinit { base.deallocate() }
}
