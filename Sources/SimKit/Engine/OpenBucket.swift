/// The open bucket of `EventQueue`: the events due first, kept so that the earliest is
/// always at hand.
///
/// Most of them sit in `sorted`, in descending (time, seq) order, so popping the earliest
/// is reading the last one and decrementing `sortedCount`: no sifting, no uniqueness check
/// of the array, no shrinking. An event pushed into the open bucket is inserted by scanning
/// from the end: it carries the largest sequence yet, so it goes just before every event
/// due at or before its time, which for the usual short delays is a few steps away.
///
/// A burst (many events pushed at one time, or deep into a big bucket) would make those
/// insertions quadratic, so an insertion that would move more than `scanLimit` events goes
/// into a small heap (`burst`) instead, and popping takes the earlier of the two. The heap
/// is empty in the common case, which costs one test per pop.
@usableFromInline
struct OpenBucket: Sendable {
    /// Events in descending (time, seq) order in `0..<sortedCount`; slots from
    /// `sortedCount` on are spare room (stale copies), kept so that storage only grows.
    @usableFromInline var sorted: [Event] = []
    @usableFromInline var sortedCount = 0
    /// Events whose insertion into `sorted` would have moved too many others.
    @usableFromInline var burst = EventHeap()

    /// The most events an insertion into `sorted` moves; deeper ones go into `burst`.
    @usableFromInline static let scanLimit = 32
    /// Buckets up to this size are sorted by insertion when opened; bigger ones by `sort`.
    @usableFromInline static let insertionSortMax = 24

    @usableFromInline init() {}

    @inlinable var count: Int { sortedCount + burst.count }
    @inlinable var isEmpty: Bool { sortedCount == 0 && burst.isEmpty }

    /// The earliest event, without removing it.
    @inlinable var first: Event? {
        guard sortedCount > 0 else { return burst.first }
        let last = sorted[sortedCount - 1]
        if let b = burst.first, Event.precedes(b, last) { return b }
        return last
    }

    /// Removes and returns the earliest event if it is due at or before `limit`.
    /// - Complexity: O(1) when `burst` is empty; O(log n) otherwise.
    @inlinable
    mutating func pop(notAfter limit: SimTime) -> Event? {
        if burst.isEmpty {
            guard sortedCount > 0 else { return nil }
            let e = sorted[sortedCount - 1]
            guard e.time <= limit else { return nil }
            sortedCount -= 1
            return e
        }
        return popMerging(notAfter: limit)
    }

    /// `pop(notAfter:)` when `burst` holds events: the earlier of its first and the last sorted.
    @usableFromInline
    mutating func popMerging(notAfter limit: SimTime) -> Event? {
        guard let b = burst.first else { return nil }
        if sortedCount > 0 {
            let last = sorted[sortedCount - 1]
            if Event.precedes(last, b) {
                guard last.time <= limit else { return nil }
                sortedCount -= 1
                return last
            }
        }
        guard b.time <= limit else { return nil }
        return burst.pop()
    }

    /// Inserts `e` after every event that precedes it. A new push carries the largest
    /// sequence yet, so that is after every event due at or before `e.time`; an event moved
    /// in from the far heap or a bucket by a resize may carry an older one, so the scan
    /// compares sequences too.
    /// - Complexity: O(`scanLimit`), or O(log n) when it goes into `burst`.
    @inlinable
    mutating func insert(_ e: Event) {
        let n = sortedCount
        if n == sorted.count { sorted.append(e) }   // one more slot; it is overwritten below
        let placed = sorted.withUnsafeMutableBufferPointer { s -> Bool in
            // The slots n-1, n-2, … hold the earliest events; find how many precede e,
            // giving up past scanLimit.
            let floor = Swift.max(0, n - OpenBucket.scanLimit)
            var p = n
            while p > floor, Event.precedes(s[p - 1], e) { p -= 1 }
            if p == floor, p > 0, Event.precedes(s[p - 1], e) { return false }
            var i = n
            while i > p { s[i] = s[i - 1]; i -= 1 }
            s[p] = e
            return true
        }
        if placed { sortedCount = n + 1 } else { burst.insert(e) }
    }

    /// Fills the empty open bucket from the list that starts at node `head` in `pool`
    /// (linked by `next`, ending at `EventQueue.none`) and sorts it; returns how many events
    /// it took and the list's last node (so the caller can free the whole list at once).
    /// - Complexity: O(k) for the walk, plus O(k²) for k ≤ `insertionSortMax`, else O(k log k).
    @inlinable
    mutating func fill(from pool: UnsafeBufferPointer<BucketNode>, head: UInt32) -> (count: Int, tail: UInt32) {
        precondition(isEmpty, "the open bucket is filled only when empty")
        var n = head
        var tail = head
        var k = 0
        while n != EventQueue.none {
            // Take as many nodes as the storage has room for, then grow it and go on.
            if k == sorted.count {
                sorted.append(contentsOf: repeatElement(pool[Int(n)].event, count: Swift.max(16, sorted.count)))
            }
            sorted.withUnsafeMutableBufferPointer { s in
                while n != EventQueue.none, k < s.count {
                    let node = pool[Int(n)]
                    s[k] = node.event
                    k += 1
                    tail = n
                    n = node.next
                }
            }
        }
        sortedCount = k
        sortDescending()
        return (k, tail)
    }

    /// Sorts `sorted[0..<sortedCount]` into descending (time, seq) order.
    @inlinable
    mutating func sortDescending() {
        let k = sortedCount
        sorted.withUnsafeMutableBufferPointer { s in
            if k <= OpenBucket.insertionSortMax {
                var i = 1
                while i < k {
                    let e = s[i]
                    var j = i
                    while j > 0, Event.precedes(s[j - 1], e) { s[j] = s[j - 1]; j -= 1 }
                    s[j] = e
                    i += 1
                }
            } else {
                var prefix = UnsafeMutableBufferPointer(rebasing: s[0..<k])
                prefix.sort { Event.precedes($1, $0) }
            }
        }
    }

    /// Removes every event, keeping the storage.
    @usableFromInline
    mutating func removeAll() {
        sortedCount = 0
        burst.removeAll()
    }

    /// Every event in the open bucket, in no particular order. (Named for the heap the open
    /// bucket used to be, which `EventQueue.checkInvariants` walks.)
    var heap: [Event] { Array(sorted[0..<sortedCount]) + burst.heap }

    /// Checks that `sorted` is in descending (time, seq) order and `burst` is a heap.
    func checkInvariants() -> String? {
        if sortedCount > sorted.count { return "sortedCount \(sortedCount) exceeds the storage \(sorted.count)" }
        for i in 1..<Swift.max(sortedCount, 1) where !Event.precedes(sorted[i], sorted[i - 1]) {
            return "sorted order broken at \(i): t=\(sorted[i].time) (seq=\(sorted[i].seq)) after t=\(sorted[i - 1].time) (seq=\(sorted[i - 1].seq))"
        }
        if let broken = burst.checkInvariants() { return "burst heap: \(broken)" }
        return nil
    }
}
