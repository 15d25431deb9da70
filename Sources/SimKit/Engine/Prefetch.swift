import SimKitPrefetch

/// Cache hints for the engine's hot loop: at a million devices every event touches a
/// different device, so `World.run` asks for the next event's device state while it
/// handles the current one. A hint never changes a result, only when memory arrives.
public enum Prefetch {
    /// Starts loading the cache lines of `array[index]` (all of them, for an element that
    /// straddles two lines); does nothing for an index out of range.
    @inlinable @inline(__always)
    public static func element<T>(of array: [T], at index: Int) {
        array.withUnsafeBufferPointer { buffer in
            guard index < buffer.count, let base = buffer.baseAddress else { return }
            let start = UnsafeRawPointer(base + index)
            simkit_prefetch(start)
            simkit_prefetch(start + (MemoryLayout<T>.size - 1))
        }
    }

    /// `element(of:at:)` for a `DeviceTable`.
    @inlinable @inline(__always)
    public static func element<T>(of table: DeviceTable<T>, at index: Int) {
        guard index < table.count else { return }
        let start = UnsafeRawPointer(table.baseAddress + index)
        simkit_prefetch(start)
        simkit_prefetch(start + (MemoryLayout<T>.size - 1))
    }

    /// Starts loading the cache line at `pointer`.
    @inlinable @inline(__always)
    public static func line(_ pointer: UnsafeRawPointer) {
        simkit_prefetch(pointer)
    }
}
