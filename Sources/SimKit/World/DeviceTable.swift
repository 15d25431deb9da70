/// One value per device (its state, its SDK process), indexed by `DeviceIndex`: an array
/// whose writes make no uniqueness check of their own.
///
/// An `Array` checks that its buffer is unique on every write, a library call the engine
/// made several times an event. A table is a value too: copies share one buffer until
/// the owner writes, but the owner makes it unique once, with `makeUnique()`, before a
/// run of writes (`World.run` does before its loop, `World.init` holds a fresh one), and
/// then writes straight to memory. Only the module writes (`internal(set)`), so that
/// discipline is enforceable: outside SimKit a table is a read-only collection. Debug
/// builds check it on every write (a write while a copy shares the buffer stops with an
/// assertion); full copy-on-write checks cost 4.8% of the instructions (docs/performance.md).
@usableFromInline package struct DeviceTable<Element>: RandomAccessCollection {
    @usableFromInline var buffer: DeviceTableBuffer<Element>

    /// `count` copies of `value`.
    @inlinable init(repeating value: Element, count: Int) {
        buffer = DeviceTableBuffer(repeating: value, count: count)
    }

    /// The given values, in order.
    @inlinable init(_ values: [Element]) {
        buffer = DeviceTableBuffer(values)
    }

    @inlinable package var startIndex: Int { 0 }
    @inlinable package var endIndex: Int { buffer.count }

    /// Device `i`'s value. Set it only after `makeUnique()` (see the type's comment).
    @inlinable package internal(set) subscript(i: Int) -> Element {
        get {
            precondition(i >= 0 && i < buffer.count, "device \(i) out of range")
            return buffer.base[i]
        }
        _modify {
            precondition(i >= 0 && i < buffer.count, "device \(i) out of range")
            assert(isKnownUniquelyReferenced(&buffer), "a DeviceTable written while a copy shares its buffer: makeUnique() first")
            yield &buffer.base[i]
        }
    }

    /// Gives this table a buffer of its own if a copy shares it: call before writing.
    @inlinable mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&buffer) { buffer = buffer.copy() }
    }

    /// The address of the first value, for cache hints (`Prefetch`).
    @inlinable var baseAddress: UnsafeMutablePointer<Element> { buffer.base }
}

extension DeviceTable: Sendable where Element: Sendable {}

/// The memory of a `DeviceTable`: every slot holds a value from `init` to `deinit`.
/// determinism: copy-on-write as `DeviceTable` says, and SimKit runs on one thread; no shared writes
@usableFromInline final class DeviceTableBuffer<Element>: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<Element>
    @usableFromInline let count: Int

    @usableFromInline init(repeating value: Element, count: Int) {
        precondition(count >= 0, "negative device count")
        self.count = count
        base = .allocate(capacity: Swift.max(count, 1))
        base.initialize(repeating: value, count: count)
    }

    @usableFromInline init(_ values: [Element]) {
        count = values.count
        base = .allocate(capacity: Swift.max(count, 1))
        _ = UnsafeMutableBufferPointer(start: base, count: count).initialize(from: values)
    }

    private init(copying other: DeviceTableBuffer) {
        count = other.count
        base = .allocate(capacity: Swift.max(count, 1))
        base.initialize(from: other.base, count: count)
    }

    @usableFromInline func copy() -> DeviceTableBuffer { DeviceTableBuffer(copying: self) }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }
}
