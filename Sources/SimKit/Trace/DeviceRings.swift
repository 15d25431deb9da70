/// The last few trace records of every device, for failure reports: `depth` slots a
/// device in one flat block, written round-robin, so memory is fixed up front.
///
/// Each device has one 32-bit word: the slot written next (low 16 bits) and how many
/// slots are filled (high 16 bits), so a push needs no division.
///
/// A push is on the hot path of every checked run (once per trace record), so the slots
/// and cursors share one storage object: one uniqueness check a push instead of one per
/// array. Copies are still values: a shared storage is copied before it is written.
@usableFromInline package struct DeviceRings: Sendable {
    @usableFromInline package let depth: Int
    @usableFromInline var storage: RingStorage

    /// Rings for `devices` devices, `depth` records each (0 keeps nothing).
    @usableFromInline package init(devices: Int, depth: Int) {
        precondition(depth >= 0 && depth <= 256, "ring depth \(depth) is out of 0...256")
        self.depth = depth
        storage = RingStorage(devices: depth == 0 ? 0 : devices, depth: depth)
    }

    /// Keeps `record` in its device's ring; world records are not kept.
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    package mutating func push(_ record: TraceRecord) {
        let d = Int(record.device)
        guard d < storage.devices else { return }   // also when depth is 0 (no devices)
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        write(record, device: d)
    }

    /// Makes the storage this value's own (a copy if it is shared), so that `pushUnique`
    /// may write it: `World.run` calls it once before its loop, as for its device tables.
    @inlinable
    package mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    /// `push` for rings whose owner made them unique (`makeUnique()`) and has not copied
    /// them since: no uniqueness check, which would be a library call on every record of a
    /// checked run. Debug builds still check.
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    mutating func pushUnique(_ record: TraceRecord) {
        let d = Int(record.device)
        guard d < storage.devices else { return }
        assert(isKnownUniquelyReferenced(&storage), "pushUnique on shared rings: call makeUnique() first")
        write(record, device: d)
    }

    /// Writes `record` in slot `next` of device `d`'s ring and moves its cursor on.
    @inlinable @inline(__always)
    func write(_ record: TraceRecord, device d: Int) {
        let s = storage
        let c = s.cursors[d]
        let next = c & 0xFFFF
        s.slots[d &* depth &+ Int(next)] = record
        let filled = c >> 16
        let wrapped: UInt32 = next &+ 1 == UInt32(truncatingIfNeeded: depth) ? 0 : next &+ 1
        s.cursors[d] = (filled < UInt32(truncatingIfNeeded: depth) ? filled &+ 1 : filled) << 16 | wrapped
    }

    /// A hint: `device` is about to get a record (see `Prefetch`).
    @inlinable
    package func prefetch(device: DeviceIndex) {
        let d = Int(device)
        guard d < storage.devices else { return }
        Prefetch.line(UnsafeRawPointer(storage.cursors + d))
        Prefetch.line(UnsafeRawPointer(storage.slots + d &* depth))
    }

    /// The device's kept records, oldest first.
    /// - Complexity: O(depth).
    @usableFromInline package func last(of device: DeviceIndex) -> [TraceRecord] {
        guard Int(device) < storage.devices else { return [] }
        let d = Int(device)
        let next = Int(storage.cursors[d] & 0xFFFF), filled = Int(storage.cursors[d] >> 16)
        let oldest = filled < depth ? 0 : next
        return (0..<filled).map { storage.slots[d * depth + (oldest + $0) % depth] }
    }
}

/// The rings' memory: `devices × depth` record slots and `devices` cursors, allocated once.
/// Only `DeviceRings` writes it, and only when it holds the sole reference.
@usableFromInline
final class RingStorage: @unchecked Sendable {   // determinism: written only through DeviceRings after a uniqueness check (copy on write), like Array
    @usableFromInline let devices: Int
    @usableFromInline let depth: Int
    @usableFromInline let slots: UnsafeMutablePointer<TraceRecord>
    @usableFromInline let cursors: UnsafeMutablePointer<UInt32>

    init(devices: Int, depth: Int) {
        self.devices = devices
        self.depth = depth
        slots = .allocate(capacity: devices * depth)
        slots.initialize(repeating: TraceRecord(time: 0, device: 0, event: .stepEnd), count: devices * depth)
        cursors = .allocate(capacity: devices)
        cursors.initialize(repeating: 0, count: devices)
    }

    /// A copy that shares nothing with this one.
    @usableFromInline
    func copy() -> RingStorage {
        let c = RingStorage(devices: devices, depth: depth)
        c.slots.update(from: slots, count: devices * depth)
        c.cursors.update(from: cursors, count: devices)
        return c
    }

    deinit {
        slots.deallocate()
        cursors.deallocate()
    }
}
