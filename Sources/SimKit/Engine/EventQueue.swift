/// The simulation's pending work, ordered by (time, insertion sequence), so events due at
/// the same time run first-in first-out: a calendar queue that resizes itself.
///
/// Time is cut into buckets of `1 << shift` ms; `cursor` is the absolute bucket number
/// (`time >> shift`) being worked on. Its events, and any pushed earlier than it, sit in a
/// small 4-ary heap (`open`) ordered by (time, seq). The next `bucketCount - 1` buckets
/// hold their events unsorted, as lists in one node pool (`nodes`, `links`), with a bitmap
/// of the buckets that hold any; a bucket is sorted (moved into `open`) only when the
/// cursor reaches it, so a burst of events in one bucket costs a heap of that size, never
/// a quadratic insertion. Events beyond the window wait in a far heap (`far`) and move in
/// as the window slides forward.
///
/// When the queue outgrows the window, or most events sit in the far heap, it rebuilds:
/// twice the buckets, and a bucket width matched to the density of the nearest events,
/// so push and pop are O(1) on average.
///
/// Storage only grows to the high-water mark: once warm, push and pop allocate nothing.
/// The size is bounded by `capacityLimit`, and `push` refuses to go past it (a runaway
/// schedule is a bug, not a slow run).
public struct EventQueue: Sendable {
    /// The open bucket: events with `time >> shift <= cursor`.
    @usableFromInline var open = EventHeap()
    /// Pooled events of the other buckets and, beside each, the next node of its bucket
    /// (`EventQueue.none` ends a list).
    @usableFromInline var nodes: [Event] = []
    @usableFromInline var links: [UInt32] = []
    /// The head of the free-node list.
    @usableFromInline var freeNode: UInt32 = EventQueue.none
    /// The first node of each bucket; bucket `cursor & mask` is always empty (it is `open`).
    @usableFromInline var heads: [UInt32] = []
    /// Bit b of word b/64 is set when bucket b holds events.
    @usableFromInline var occupied: [UInt64] = []
    /// log2 of the bucket width in ms, and `bucketCount - 1` (a power of two minus one).
    @usableFromInline var shift: UInt64 = 10
    @usableFromInline var mask: UInt64 = 0
    /// The absolute bucket number (`time >> shift`) of the open bucket.
    @usableFromInline var cursor: UInt64 = 0
    /// Events in the unsorted buckets.
    @usableFromInline var bucketed = 0
    /// Events beyond the window.
    @usableFromInline var far = EventHeap()
    @usableFromInline var nextSeq: UInt64 = 0
    /// Pushes since the last rebuild (a rebuild for width waits for enough of them).
    @usableFromInline var pushesSinceRebuild = 0
    /// Buckets opened, and the events they held, since the width was last judged.
    @usableFromInline var opens = 0
    @usableFromInline var opened = 0
    /// Opens between two judgements of the bucket width.
    @usableFromInline static let opensPerJudgement = 512
    /// The most events that may be pending at once.
    public let capacityLimit: Int

    @usableFromInline static let none = UInt32.max
    /// Bounds of the window's size, in buckets.
    @usableFromInline static let bucketsMin = 256
    @usableFromInline static let bucketsMax = 1 << 24

    /// An empty queue of at most `capacityLimit` events, with room for `reserving`.
    public init(capacityLimit: Int = 1 << 28, reserving: Int = 0) {
        precondition(capacityLimit > 0, "capacityLimit must be positive")
        precondition(capacityLimit < Int(EventQueue.none), "capacityLimit must fit a node index")
        self.capacityLimit = capacityLimit
        let n = min(reserving, capacityLimit)
        nodes.reserveCapacity(n)
        links.reserveCapacity(n)
        var buckets = EventQueue.bucketsMin
        while buckets < n / 2, buckets < EventQueue.bucketsMax { buckets <<= 1 }
        makeBuckets(buckets)
    }

    /// The number of pending events.
    @inlinable public var count: Int { open.count + bucketed + far.count }
    @inlinable public var isEmpty: Bool { count == 0 }
    /// How many events have been pushed in all; also the next insertion sequence.
    @inlinable public var pushedTotal: UInt64 { nextSeq }
    /// Buckets in the window (for tests and tuning).
    public var bucketCount: Int { heads.count }

    /// The time of the earliest pending event.
    /// - Complexity: O(1) when the open bucket holds events; else a scan of the next bucket.
    public var nextTime: SimTime? {
        if let first = open.first { return first.time }
        if bucketed == 0 { return far.first?.time }
        var n = heads[nextOccupied()]
        var best = SimTime.max
        while n != EventQueue.none { best = Swift.min(best, nodes[Int(n)].time); n = links[Int(n)] }
        return best
    }

    /// Schedules `event`, stamping its insertion sequence; false when the queue is full.
    /// - Complexity: O(1) on average; O(log n) for an event beyond the window.
    @inlinable @discardableResult
    public mutating func push(_ event: Event) -> Bool {
        guard count < capacityLimit else { return false }
        var e = event
        e.seq = nextSeq
        nextSeq &+= 1
        pushesSinceRebuild &+= 1
        place(e)
        if count > 2 * heads.count, heads.count < EventQueue.bucketsMax {
            rebuild(buckets: heads.count * 2)
        } else if far.count > 64, far.count > count / 2, pushesSinceRebuild > 2 * count {
            rebuild(buckets: heads.count)
        }
        return true
    }

    /// Removes and returns the earliest event.
    /// - Complexity: O(1) on average.
    @inlinable
    public mutating func pop() -> Event? { pop(notAfter: .max) }

    /// Removes and returns the earliest event if it is due at or before `limit`.
    /// - Complexity: O(1) on average.
    @inlinable
    public mutating func pop(notAfter limit: SimTime) -> Event? {
        if open.isEmpty { advance() }
        guard let first = open.first, first.time <= limit else { return nil }
        return open.pop()
    }

    /// Empties every bucket, the open heap and the far heap, keeping capacity, with
    /// `buckets` empty buckets afterwards.
    mutating func clearStorage(buckets: Int) {
        open.removeAll()
        far.removeAll()
        nodes.removeAll(keepingCapacity: true)
        links.removeAll(keepingCapacity: true)
        freeNode = EventQueue.none
        bucketed = 0
        makeBuckets(buckets)
    }

    /// Removes every pending event, keeping the storage and the sequence count.
    /// - Complexity: O(n).
    public mutating func removeAll() {
        clearStorage(buckets: heads.count)
    }

    // MARK: - Buckets

    /// The open bucket is empty: moves the cursor to the next bucket that holds events
    /// (or to the far heap's first) and opens it.
    @usableFromInline
    mutating func advance() {
        if bucketed == 0 {
            guard let first = far.first else { return }
            cursor = first.time >> shift
            refill()
            if !open.isEmpty { return }
        }
        guard bucketed > 0 else { return }
        let b = nextOccupied()
        cursor &+= (UInt64(b) &- cursor) & mask
        var n = heads[b]
        heads[b] = EventQueue.none
        occupied[b >> 6] &= ~(1 << UInt64(b & 63))
        while n != EventQueue.none {
            open.insert(nodes[Int(n)])
            bucketed -= 1
            opened += 1
            let next = links[Int(n)]
            links[Int(n)] = freeNode
            freeNode = n
            n = next
        }
        refill()
        opens += 1
        if opens == EventQueue.opensPerJudgement { judgeWidth() }
    }

    /// Every `opensPerJudgement` opened buckets: halves the bucket width when they held
    /// more than 8 events on average (the open heap grows), doubles it when they held
    /// fewer than 2 and most events wait in the far heap.
    @usableFromInline
    mutating func judgeWidth() {
        let perOpen = opened / opens
        opens = 0
        opened = 0
        if perOpen > 8, shift > 0 {
            relayout(shift: shift - 1, buckets: heads.count)
        } else if perOpen < 2, far.count > count / 2, shift < 40 {
            relayout(shift: shift + 1, buckets: heads.count)
        }
    }

    /// Places every pending event again over `buckets` buckets of `1 << shift` ms.
    /// - Complexity: O(n + buckets), plus O(log n) for each event that lands in a heap.
    @usableFromInline
    mutating func relayout(shift newShift: UInt64, buckets: Int) {
        var all: [Event] = []
        all.reserveCapacity(count)
        all.append(contentsOf: open.heap)
        for b in heads.indices {
            var n = heads[b]
            while n != EventQueue.none { all.append(nodes[Int(n)]); n = links[Int(n)] }
        }
        all.append(contentsOf: far.heap)
        clearStorage(buckets: buckets)
        pushesSinceRebuild = 0
        let earliest = all.min(by: Event.precedes)?.time ?? cursor << shift
        shift = newShift
        cursor = earliest >> shift
        for e in all { place(e) }
    }

    /// The first bucket after the cursor that holds events, wrapping around the window.
    /// Only called when `bucketed > 0`.
    @inlinable
    func nextOccupied() -> Int {
        let start = Int(cursor & mask)
        var w = start >> 6
        var bits = occupied[w] & (~0 << UInt64(start & 63))
        let words = occupied.count
        var scanned = 0
        while bits == 0 {
            w = w + 1 == words ? 0 : w + 1
            bits = occupied[w]
            scanned += 1
            precondition(scanned <= words, "event queue bitmap is empty with \(bucketed) bucketed events")
        }
        return w << 6 | bits.trailingZeroBitCount
    }

    /// Puts `e` (already stamped) in the open bucket, its own bucket, or the far heap.
    @inlinable
    mutating func place(_ e: Event) {
        let abs = e.time >> shift
        if abs <= cursor { open.insert(e); return }
        guard abs &- cursor <= mask else { far.insert(e); return }
        let b = Int(abs & mask)
        let n: UInt32
        if freeNode != EventQueue.none {
            n = freeNode
            freeNode = links[Int(n)]
            nodes[Int(n)] = e
        } else {
            n = UInt32(nodes.count)
            nodes.append(e)
            links.append(EventQueue.none)
        }
        links[Int(n)] = heads[b]
        heads[b] = n
        occupied[b >> 6] |= 1 << UInt64(b & 63)
        bucketed += 1
    }

    /// Moves far events that the window now covers into their buckets.
    @inlinable
    mutating func refill() {
        while let first = far.first, (first.time >> shift) &- cursor <= mask {
            place(far.pop()!)
        }
    }

    /// Empty buckets, `count` of them (a power of two).
    mutating func makeBuckets(_ count: Int) {
        precondition(count.nonzeroBitCount == 1 && count >= 64, "bucket count \(count) must be a power of two >= 64")
        heads = Array(repeating: EventQueue.none, count: count)
        occupied = Array(repeating: 0, count: count / 64)
        mask = UInt64(count - 1)
    }

    /// Re-lays every pending event over `buckets` buckets whose width makes the nearest
    /// `buckets / 2` events about one a bucket.
    /// - Complexity: O(n log n); amortised over the pushes that trigger it.
    @usableFromInline
    mutating func rebuild(buckets: Int) {
        var times: [SimTime] = []
        times.reserveCapacity(count)
        times.append(contentsOf: open.heap.lazy.map(\.time))
        for b in heads.indices {
            var n = heads[b]
            while n != EventQueue.none { times.append(nodes[Int(n)].time); n = links[Int(n)] }
        }
        times.append(contentsOf: far.heap.lazy.map(\.time))
        times.sort()
        var newShift = shift
        if let first = times.first {
            let k = min(times.count - 1, buckets / 2)
            let width = max(1, (times[k] &- first) / UInt64(max(k, 1)))
            newShift = UInt64(63 - width.leadingZeroBitCount)   // the power of two at or below
        }
        relayout(shift: newShift, buckets: buckets)
    }
}
