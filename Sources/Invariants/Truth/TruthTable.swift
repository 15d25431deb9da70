import SimKit

/// One value per device, indexed by `DeviceIndex`: the checker's `DeviceTruth`s (and its
/// coverage counts, one per `Coverage`), in an array whose writes make no uniqueness check
/// of their own.
///
/// An `Array` checks that its buffer is not shared on every write, a library call that
/// nearly every record made. A table's storage is made this checker's own once, when a run
/// begins (`InvariantChecker.begin` makes a fresh one), and then written straight to
/// memory, as SimKit's `DeviceTable` is for the engine. So copies of a checker made after
/// `begin` share their device truth: only one of them may go on observing (`World.run`
/// observes with its own checker, in place, from `begin` to `finish`). Debug builds check
/// that on every write: a write while a copy shares the storage stops with an assertion.
///
/// The table keeps its storage's address and count itself, not only in the storage object:
/// a handler's reads of them are then loads from the checker, which the optimiser keeps in
/// registers across its writes to the table, not loads through the object after each write.
@usableFromInline struct TruthTable<Element> {
    /// Owns the memory; `base` and `count` are its.
    private var storage: TruthTableStorage<Element>
    @usableFromInline let base: UnsafeMutablePointer<Element>
    @usableFromInline let count: Int

    /// `count` copies of `value`, in storage of its own.
    init(repeating value: Element, count: Int) {
        storage = TruthTableStorage(repeating: value, count: count)
        base = storage.base
        self.count = count
    }

    /// A table with the same values in storage of its own (for `InvariantChecker.forked()`).
    func copied() -> TruthTable {
        TruthTable(storage: TruthTableStorage(copying: base, count: count))
    }

    private init(storage: TruthTableStorage<Element>) {
        self.storage = storage
        base = storage.base
        count = storage.count
    }

    /// Device `i`'s value.
    subscript(i: Int) -> Element {
        @inline(__always) get {
            precondition(i >= 0 && i < count, "device \(i) out of range")
            return base[i]
        }
        @inline(__always) _modify {
            precondition(i >= 0 && i < count, "device \(i) out of range")
            assert(isKnownUniquelyReferenced(&storage), "a TruthTable written while a copy shares its storage: copy the checker with forked()")
            yield &base[i]
        }
    }

    /// A hint: device `i`'s value is read soon; starts loading its cache lines.
    @inlinable @inline(__always)
    func prefetch(_ i: Int) {
        guard i >= 0, i < count else { return }
        Prefetch.bytes(UnsafeRawPointer(base + i), count: MemoryLayout<Element>.size)
    }
}

/// The memory of a `TruthTable`: every slot holds a value from `init` to `deinit`.
final class TruthTableStorage<Element> {
    let base: UnsafeMutablePointer<Element>
    let count: Int

    init(repeating value: Element, count: Int) {
        precondition(count >= 0, "negative device count")
        self.count = count
        base = .allocate(capacity: Swift.max(count, 1))
        base.initialize(repeating: value, count: count)
    }

    init(copying source: UnsafeMutablePointer<Element>, count: Int) {
        self.count = count
        base = .allocate(capacity: Swift.max(count, 1))
        base.initialize(from: source, count: count)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }
}
