#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fixed-size block of trivial values (events, nodes, bucket heads, bitmap words) for the
/// hot paths of `EventQueue`: reads and writes go straight to memory, with no uniqueness
/// check and, in release builds, no bounds check.
///
/// It is a class so that its memory is freed with the last queue that holds it. Copies of a
/// queue share their buffers, so nothing may write to a buffer before the queue has made
/// sure it is their only holder: `EventQueue.makeUnique()` copies every buffer when the
/// queue's `owner` token is shared, once per operation (an Array checks on every write).
/// That discipline is what makes `@unchecked Sendable` sound: memory that two values can
/// see is never written. `Element` must be a trivial type: memory is never deinitialised.
///
/// The memory comes from `malloc`, so that `grow` can `realloc` it: a big buffer is then
/// moved by the kernel, not copied, and the old and the new are never both resident (a
/// million devices' open bucket grows large in the launch storm's timeouts).
/// determinism: copy-on-write as above, and SimKit runs on one thread; no shared writes
@usableFromInline final class QueueBuffer<Element>: RandomAccessCollection, @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<Element>
    /// Slots in the buffer; those beyond what the queue has written hold no value yet.
    @usableFromInline let count: Int
    /// Whether `deinit` frees `base`: false once `grow` has handed the memory on.
    private var ownsMemory = true

    /// A buffer of `count` uninitialised slots (for a trivial `Element`, writing one is
    /// initialising it).
    @usableFromInline init(count: Int) {
        precondition(count >= 0, "negative buffer size")
        self.count = count
        base = QueueBuffer.allocate(count)
    }

    /// A buffer that takes over `base`, `count` slots from `malloc`.
    private init(adopting base: UnsafeMutablePointer<Element>, count: Int) {
        self.base = base
        self.count = count
    }

    /// A buffer of `count` copies of `value`.
    @usableFromInline convenience init(repeating value: Element, count: Int) {
        self.init(count: count)
        base.initialize(repeating: value, count: count)
    }

    deinit { if ownsMemory { free(base) } }

    /// Room for `count` slots (at least one) from `malloc`.
    private static func allocate(_ count: Int) -> UnsafeMutablePointer<Element> {
        assert(_isPOD(Element.self), "queue buffers hold trivial values only")
        let bytes = Swift.max(count, 1).multipliedReportingOverflow(by: MemoryLayout<Element>.stride)
        precondition(!bytes.overflow, "queue buffer of \(count) slots is too big")
        guard let raw = malloc(bytes.partialValue) else { fatalError("out of memory: \(bytes.partialValue) bytes for a queue buffer") }
        return raw.bindMemory(to: Element.self, capacity: Swift.max(count, 1))
    }

    /// A new buffer of `count` slots whose first `used` hold copies of these.
    @usableFromInline func copy(count newCount: Int, used: Int) -> QueueBuffer<Element> {
        precondition(used <= count && used <= newCount, "copying \(used) of \(count) slots into \(newCount)")
        let b = QueueBuffer(count: newCount)
        b.base.initialize(from: base, count: used)
        return b
    }

    /// `buffer` with room for `newCount` slots, its first `used` kept. A buffer held
    /// alone is resized in place (`realloc`); a shared one is copied, as `copy` does.
    @usableFromInline static func grow(_ buffer: inout QueueBuffer<Element>, to newCount: Int, used: Int) {
        guard isKnownUniquelyReferenced(&buffer) else {
            buffer = buffer.copy(count: newCount, used: used)
            return
        }
        precondition(used <= buffer.count && used <= newCount, "keeping \(used) of \(buffer.count) slots in \(newCount)")
        let bytes = Swift.max(newCount, 1).multipliedReportingOverflow(by: MemoryLayout<Element>.stride)
        precondition(!bytes.overflow, "queue buffer of \(newCount) slots is too big")
        guard let raw = realloc(buffer.base, bytes.partialValue) else {
            fatalError("out of memory: \(bytes.partialValue) bytes for a queue buffer")
        }
        buffer.ownsMemory = false   // realloc freed or moved it; the new buffer owns it now
        buffer = QueueBuffer(adopting: raw.bindMemory(to: Element.self, capacity: Swift.max(newCount, 1)), count: newCount)
    }

    @inlinable var startIndex: Int { 0 }
    @inlinable var endIndex: Int { count }

    /// Slot `i`. Only the queue that holds this buffer alone may set it. (The bounds check
    /// reads `count` into a local so that debug builds capture no reference in it.)
    @inlinable subscript(i: Int) -> Element {
        get {
            let slots = count
            assert(i >= 0 && i < slots, "buffer slot out of range")
            return base[i]
        }
        set {
            let slots = count
            assert(i >= 0 && i < slots, "buffer slot out of range")
            base[i] = newValue
        }
    }
}

/// The token whose uniqueness tells an `EventQueue` that its buffers are its own.
@usableFromInline
final class QueueOwner: Sendable {
    @usableFromInline init() {}
}

/// An event as `EventQueue` stores it, in its node pool (with the next node of its list)
/// and in its open bucket: `Event`'s fields packed into whole words, 32 bytes.
///
/// Why not `Event` itself: the compiler copies an `Event` field by field (seven loads and
/// seven stores, its bytes taken apart and put back), where these words copy as four, and
/// the queue copies each event three or four times (figures in docs/performance.md).
@usableFromInline
struct QueuedEvent: Sendable {
    @usableFromInline var time: SimTime
    @usableFromInline var seq: UInt64
    /// `target` in the low 32 bits, `arg` in the high 32.
    @usableFromInline var targetAndArg: UInt64
    /// `kind` in bits 0-7, `sub` in bits 8-15, `aux` in bits 16-31.
    @usableFromInline var kindSubAux: UInt32
    /// The next node of its list in the pool (`EventQueue.none` ends a list); meaningless
    /// in the open bucket.
    @usableFromInline var next: UInt32

    /// `e` with insertion sequence `seq`, ahead of node `next`.
    @inlinable @inline(__always)
    init(_ e: Event, seq: UInt64, next: UInt32 = EventQueue.none) {
        time = e.time
        self.seq = seq
        targetAndArg = UInt64(e.target) | UInt64(e.arg) &<< 32
        kindSubAux = UInt32(e.kind) | UInt32(e.sub) &<< 8 | UInt32(e.aux) &<< 16
        self.next = next
    }

    /// `e` as it is, sequence included.
    @inlinable @inline(__always)
    init(_ e: Event) { self.init(e, seq: e.seq) }

    /// The event these words hold.
    @inlinable var event: Event {
        Event(time: time, seq: seq, target: UInt32(truncatingIfNeeded: targetAndArg),
              kind: UInt8(truncatingIfNeeded: kindSubAux), arg: UInt32(truncatingIfNeeded: targetAndArg &>> 32),
              sub: UInt8(truncatingIfNeeded: kindSubAux &>> 8), aux: UInt16(truncatingIfNeeded: kindSubAux &>> 16))
    }

    /// The queue's order, as `Event.precedes`: earlier time first, then earlier insertion.
    @inlinable @inline(__always)
    static func precedes(_ a: QueuedEvent, _ b: QueuedEvent) -> Bool {
        a.time < b.time || (a.time == b.time && a.seq < b.seq)
    }
}

/// The open bucket of `EventQueue`: the events due first, kept so that the earliest is
/// always at hand.
///
/// Most of them sit in `sorted`, in descending (time, seq) order, so popping the earliest
/// is reading the last one and decrementing `sortedCount`. An event pushed into the open
/// bucket is inserted by scanning from the end: it carries the largest sequence yet, so it
/// goes just before every event due at or before its time, which for the usual short
/// delays is a few steps away.
///
/// A burst (many events pushed at one time, or deep into a big bucket) would make those
/// insertions quadratic, so an insertion that would move more than `scanLimit` events goes
/// into a small heap (`burst`) instead, and popping takes the earlier of the two. The heap
/// is empty in the common case, which costs one test per pop.
///
/// `sorted` is a `QueueBuffer`: the owning queue makes it unique before any write. Its
/// slot 0 holds `sentinel`, which precedes no event, and the events follow: the insertion
/// sort in `fill` stops there without testing for the start of the array.
@usableFromInline
struct OpenBucket: Sendable {
    /// `sentinel`, then events in descending (time, seq) order in `1..<end`; later slots
    /// are spare. It only grows, from room for twice `insertionSortMax`.
    @usableFromInline var sorted = QueueBuffer<QueuedEvent>(count: 2 * OpenBucket.insertionSortMax + 1)
    /// One past the last event in `sorted` (1 when it holds none). Counting the sentinel
    /// keeps the hot paths free of a +1 offset.
    @usableFromInline var end = 1
    /// Events whose insertion into `sorted` would have moved too many others.
    @usableFromInline var burst = EventHeap()

    /// The most events an insertion into `sorted` moves; deeper ones go into `burst`.
    @usableFromInline static let scanLimit = 32
    /// Opened buckets are sorted by insertion up to this size, by `sort` beyond it.
    @usableFromInline static let insertionSortMax = 32

    /// Slot 0 of `sorted`: later than any event (`precedes(sentinel, e)` is always false).
    @usableFromInline static let sentinel = QueuedEvent(Event(time: .max, seq: .max, target: 0, kind: 0))

    @usableFromInline init() { sorted.base[0] = OpenBucket.sentinel }

    /// The events in `sorted`.
    @inlinable var sortedCount: Int { end - 1 }
    @inlinable var count: Int { end - 1 + burst.count }
    @inlinable var isEmpty: Bool { end == 1 && burst.isEmpty }

    /// The earliest event, without removing it.
    @inlinable var first: Event? {
        guard end > 1 else { return burst.first }
        let last = sorted[end - 1].event
        if let b = burst.first, Event.precedes(b, last) { return b }
        return last
    }

    /// Whether the earliest event precedes (`time`, `seq`): false when there is none.
    @inlinable @inline(__always)
    func precedes(time: SimTime, seq: UInt64) -> Bool {
        if end > 1 {
            let last = sorted.base[end - 1]
            if last.time < time || (last.time == time && last.seq < seq) { return true }
        }
        guard let b = burst.first else { return false }
        return b.time < time || (b.time == time && b.seq < seq)
    }

    /// Removes and returns the earliest event if it is due at or before `limit`. Reads
    /// `sorted` only, so it needs no unique buffer.
    /// - Complexity: O(1) when `burst` is empty; O(log n) otherwise.
    @inlinable
    mutating func pop(notAfter limit: SimTime) -> Event? {
        if burst.isEmpty {
            guard end > 1 else { return nil }
            let e = sorted[end - 1]
            guard e.time <= limit else { return nil }
            end -= 1
            return e.event
        }
        return popMerging(notAfter: limit)
    }

    /// `pop(notAfter:)` when `burst` holds events: the earlier of its first and the last sorted.
    @usableFromInline
    mutating func popMerging(notAfter limit: SimTime) -> Event? {
        guard let b = burst.first else { return nil }
        if end > 1 {
            let last = sorted[end - 1].event
            if Event.precedes(last, b) {
                guard last.time <= limit else { return nil }
                end -= 1
                return last
            }
        }
        guard b.time <= limit else { return nil }
        return burst.pop()
    }

    /// Inserts `e` after every event that precedes it. A new push (`newest`) carries the
    /// largest sequence yet, so that is after every event due at or before `e.time`, and
    /// the scan compares times only; an event moved in from the far heap or a bucket by a
    /// resize may carry an older one, so its scan compares sequences too. The caller has
    /// made `sorted` unique.
    /// - Complexity: O(`scanLimit`), or O(log n) when it goes into `burst`.
    @inlinable @inline(__always)
    mutating func insert(_ e: QueuedEvent, newest: Bool = false) {
        let n = end
        if n == sorted.count { grow(keeping: n) }
        let s = sorted.base
        @inline(__always) func precedesE(_ a: QueuedEvent) -> Bool {
            newest ? a.time <= e.time : QueuedEvent.precedes(a, e)
        }
        // Slots n-1, n-2, … hold the earliest events; those that precede e move up one slot,
        // at most scanLimit of them. If e follows the slot just beyond that reach, it follows
        // every slot within it too (they are earlier still): it goes to `burst` at once, with
        // nothing moved. (At slot 1, that slot is the sentinel, which e does not follow; a
        // newest event at the last millisecond of time would, by time alone, and goes to
        // `burst`.) A launch storm sends many events there, each of which would otherwise
        // move scanLimit events up and back first.
        let floor = Swift.max(1, n - OpenBucket.scanLimit)
        if precedesE(s[floor - 1]) {
            insertBurst(e)
            return
        }
        var p = n
        while p > floor, precedesE(s[p - 1]) {
            s[p] = s[p - 1]
            p -= 1
        }
        s[p] = e
        end = n + 1
    }

    /// Adds `e` to the burst heap (out of line: an `Array` append is long and rare here).
    @usableFromInline @inline(never)
    mutating func insertBurst(_ e: QueuedEvent) {
        burst.insert(e.event)
    }

    /// Fills the empty open bucket from the list that starts at node `head` in `pool`
    /// (linked by `next`, ending at `EventQueue.none`), sorting it; returns how many events
    /// it took and the list's last node (so the caller can free the whole list at once).
    /// The caller has made `sorted` unique.
    /// - Complexity: O(k²) for k ≤ `insertionSortMax`, else O(k log k).
    @inlinable @inline(__always)
    mutating func fill(from pool: UnsafeMutablePointer<QueuedEvent>, head: UInt32) -> (count: Int, tail: UInt32) {
        assert(isEmpty, "the open bucket is filled only when empty")
        assert(sorted.count > OpenBucket.insertionSortMax, "sorted has room for an insertion-sorted bucket")
        if sorted.count > OpenBucket.keptCount { releaseSorted() }
        let s = sorted.base
        var n = head
        var tail = head
        var k = 1   // the next free slot, after the sentinel
        // Up to insertionSortMax events: insertion sort as they come. The list runs newest
        // first, so equal times need no moves.
        while n != EventQueue.none, k <= OpenBucket.insertionSortMax {
            let node = pool[Int(n)]
            // Start loading the next node now: the sort below ends in a mispredicted
            // branch, which would throw away a load issued ahead of it.
            if node.next != EventQueue.none { Prefetch.line(pool + Int(node.next)) }
            // s[-1] is the sentinel, which node does not follow: no test for the start.
            var p = s + k
            while QueuedEvent.precedes(p[-1], node) { p[0] = p[-1]; p -= 1 }
            p[0] = node
            k += 1
            tail = n
            n = node.next
        }
        if n != EventQueue.none {
            // A big bucket: take the rest as they come, then sort the lot.
            while n != EventQueue.none {
                if k == sorted.count { grow(keeping: k) }
                let node = pool[Int(n)]
                sorted.base[k] = node
                k += 1
                tail = n
                n = node.next
            }
            var all = UnsafeMutableBufferPointer(start: sorted.base + 1, count: k - 1)
            all.sort { QueuedEvent.precedes($1, $0) }
        }
        end = k
        return (k - 1, tail)
    }

    /// The most slots `sorted` keeps once its bucket is drained: a bigger one (a bucket of
    /// a million timeouts set in the same millisecond) is freed before the next bucket is
    /// filled, so that its memory does not add to the queue's later peaks. 4 MiB of
    /// events; the buckets of 10,000 devices stay below it.
    @inlinable static var keptCount: Int { 1 << 17 }

    /// Replaces a drained, oversized `sorted` by a small fresh one (see `keptCount`).
    @usableFromInline @inline(never)
    mutating func releaseSorted() {
        sorted = QueueBuffer<QueuedEvent>(count: 2 * OpenBucket.insertionSortMax + 1)
        sorted.base[0] = OpenBucket.sentinel
    }

    /// Doubles the room of `sorted`, keeping its first `used` slots (the sentinel's too).
    @usableFromInline @inline(never)
    mutating func grow(keeping used: Int) {
        QueueBuffer.grow(&sorted, to: 2 * sorted.count, used: used)
    }

    /// A copy of `sorted` that this bucket holds alone (see `EventQueue.makeUnique`).
    @usableFromInline
    mutating func copySorted() {
        sorted = sorted.copy(count: sorted.count, used: end)
    }

    /// Removes every event, keeping the storage.
    @usableFromInline
    mutating func removeAll() {
        end = 1
        burst.removeAll()
    }

    /// Every event in the open bucket, in no particular order (for `checkInvariants`).
    var events: [Event] { (1..<Swift.max(end, 1)).map { sorted[$0].event } + burst.heap }

    /// Checks that `sorted` starts with the sentinel and then holds events in descending
    /// (time, seq) order, and that `burst` is a heap.
    func checkInvariants() -> String? {
        if end < 1 || end > sorted.count { return "end \(end) lies outside the storage 1...\(sorted.count)" }
        if sorted[0].time != .max || sorted[0].seq != .max { return "the sentinel is t=\(sorted[0].time) (seq=\(sorted[0].seq))" }
        let s = sorted.base
        for i in 2..<Swift.max(end, 2) where !QueuedEvent.precedes(s[i], s[i - 1]) {
            return "sorted order broken at \(i): t=\(s[i].time) (seq=\(s[i].seq)) after t=\(s[i - 1].time) (seq=\(s[i - 1].seq))"
        }
        if let broken = burst.checkInvariants() { return "burst heap: \(broken)" }
        return nil
    }
}
