import SimKitPrefetch

/// Cache hints for the engine's hot loop: at a million devices every event touches a
/// different device, so `World.run` asks for the next event's device state while it
/// handles the current one. A hint never changes a result, only when memory arrives.
@usableFromInline package enum Prefetch {
    /// Starts loading the cache lines of `array[index]` (all of them, for an element that
    /// straddles lines); does nothing for an index out of range.
    @inlinable @inline(__always)
    package static func element<T>(of array: [T], at index: Int) {
        array.withUnsafeBufferPointer { buffer in
            guard index < buffer.count, let base = buffer.baseAddress else { return }
            bytes(UnsafeRawPointer(base + index), count: MemoryLayout<T>.size)
        }
    }

    /// `element(of:at:)` for a `DeviceTable`.
    @inlinable @inline(__always)
    package static func element<T>(of table: DeviceTable<T>, at index: Int) {
        guard index < table.count else { return }
        bytes(UnsafeRawPointer(table.baseAddress + index), count: MemoryLayout<T>.size)
    }

    /// Starts loading every cache line of the `count` bytes at `start`. Every one, not the
    /// first and last: a value of more than 64 bytes (the checker's 136-byte `DeviceTruth`,
    /// an 88-byte `DeviceState` that starts late in a line) spans three lines, and a hint
    /// for its ends would leave the middle one a miss, a stall on a hot load (see
    /// docs/performance.md).
    @inlinable @inline(__always)
    package static func bytes(_ start: UnsafeRawPointer, count: Int) {
        forEachHint(count: count) { simkit_prefetch(start + $0) }
    }

    /// The offsets `bytes` hints for a value of `count` bytes: one every 64 bytes from
    /// the first, and the last byte. No two are more than a line apart, so whatever the
    /// value's alignment no line it spans is skipped (`PrefetchTests` checks this for every
    /// alignment). `count` is a size known when compiled, so the loop unrolls to its two to
    /// four hints.
    @inlinable @inline(__always)
    static func forEachHint(count: Int, _ hint: (Int) -> Void) {
        var offset = 0
        while offset < count {
            hint(offset)
            offset &+= lineBytes
        }
        hint(count - 1)
    }

    /// The cache line's size on the machines SimKit runs on (x86-64, and most ARM64).
    @inlinable static var lineBytes: Int { 64 }

    /// Starts loading the cache line at `pointer`.
    @inlinable @inline(__always)
    package static func line(_ pointer: UnsafeRawPointer) {
        simkit_prefetch(pointer)
    }
}
