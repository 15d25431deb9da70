/// A pooled event of an unsorted bucket of `EventQueue`, with the next node of its list
/// (`EventQueue.none` ends a list). `next` fits in the event's tail padding, so a node
/// takes 32 bytes, no more than the event alone.
@usableFromInline
struct BucketNode: Sendable {
    @usableFromInline var event: Event
    @usableFromInline var next: UInt32

    @inlinable init(event: Event, next: UInt32) {
        self.event = event
        self.next = next
    }

    /// The event's time and sequence (what `checkInvariants` reads of a node).
    var time: SimTime { event.time }
    var seq: UInt64 { event.seq }
}

/// The simulation's pending work, ordered by (time, insertion sequence), so events due at
/// the same time run first-in first-out: a calendar queue that resizes itself.
///
/// Time is cut into buckets of `1 << shift` ms; `cursor` is the absolute bucket number
/// (`time >> shift`) being worked on. Its events, and any pushed earlier than it, sit in the
/// open bucket (`open`), sorted so that popping takes the last of an array (see
/// `OpenBucket`). The next `bucketCount - 1` buckets hold their events unsorted, as lists in
/// one node pool (`nodes`), with a bitmap of the buckets that hold any; a bucket is sorted
/// only when the cursor reaches it and it becomes the open bucket. Events beyond the window
/// wait in a far heap (`far`) and move in as the window slides forward.
///
/// Every `opensPerJudgement` opened buckets the queue judges its shape: it halves the bucket
/// width when buckets get crowded, doubles it when they are nearly empty, and doubles the
/// bucket count when many pushes land beyond the window; it also doubles the bucket count
/// when the pending events outnumber the buckets twice. Each change re-lays the events in
/// place (nodes are relinked, not copied), so push and pop stay O(1) on average and a
/// resize needs no room beyond the new bucket heads.
///
/// Storage only grows to the high-water mark: once warm, push and pop allocate nothing.
/// The size is bounded by `capacityLimit`, and `push` refuses to go past it (a runaway
/// schedule is a bug, not a slow run).
public struct EventQueue: Sendable {
    /// The open bucket: events with `time >> shift <= cursor`.
    @usableFromInline var open = OpenBucket()
    /// The pooled events of the other buckets, each with the next node of its list.
    @usableFromInline var nodes: [BucketNode] = []
    /// The head of the free-node list (linked through `next` as well).
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
    /// Events pending in all (open + bucketed + far), kept so `push` checks the bound cheaply.
    @usableFromInline var pending = 0
    @usableFromInline var nextSeq: UInt64 = 0
    /// Since the last judgement of the shape: buckets opened, events that entered the open
    /// bucket (opened or pushed into it), the cursor where the count started, pushes, and
    /// the events placed beyond the window.
    @usableFromInline var opens = 0
    @usableFromInline var arrivals = 0
    @usableFromInline var judgedCursor: UInt64 = 0
    @usableFromInline var pushes = 0
    @usableFromInline var farPlaced = 0
    /// The most events that may be pending at once.
    public let capacityLimit: Int

    @usableFromInline static let none = UInt32.max
    /// Bounds of the window's size, in buckets.
    @usableFromInline static let bucketsMin = 256
    @usableFromInline static let bucketsMax = 1 << 24
    /// Opens between two judgements of the shape.
    @usableFromInline static let opensPerJudgement = 512
    /// Arrivals per bucket width above which the width halves, and below which it doubles.
    @usableFromInline static let crowdedArrivals: UInt64 = 8
    @usableFromInline static let sparseArrivals: UInt64 = 2
    /// The widest bucket, as log2 of ms (2^40 ms is about 35 years).
    @usableFromInline static let shiftMax: UInt64 = 40

    /// An empty queue of at most `capacityLimit` events, with room for `reserving`.
    public init(capacityLimit: Int = 1 << 28, reserving: Int = 0) {
        precondition(capacityLimit > 0, "capacityLimit must be positive")
        precondition(capacityLimit < Int(EventQueue.none), "capacityLimit must fit a node index")
        self.capacityLimit = capacityLimit
        let n = min(reserving, capacityLimit)
        nodes.reserveCapacity(n)
        var buckets = EventQueue.bucketsMin
        while buckets < n / 2, buckets < EventQueue.bucketsMax { buckets <<= 1 }
        makeBuckets(buckets)
    }

    /// The number of pending events.
    @inlinable public var count: Int { pending }
    @inlinable public var isEmpty: Bool { pending == 0 }
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
        while n != EventQueue.none { best = Swift.min(best, nodes[Int(n)].event.time); n = nodes[Int(n)].next }
        return best
    }

    /// Schedules `event`, stamping its insertion sequence; false when the queue is full.
    /// - Complexity: O(1) on average; O(log n) for an event beyond the window.
    @inlinable @discardableResult
    public mutating func push(_ event: Event) -> Bool {
        guard pending < capacityLimit else { return false }
        var e = event
        e.seq = nextSeq
        nextSeq &+= 1
        pending += 1
        pushes &+= 1
        place(e)
        if pending > 2 * heads.count, heads.count < EventQueue.bucketsMax {
            relayout(shift: shift, buckets: heads.count * 2)
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
        if open.isEmpty {
            advance()
            if open.isEmpty { return nil }
        }
        guard let e = open.pop(notAfter: limit) else { return nil }
        pending -= 1
        return e
    }

    /// Removes every pending event, keeping the storage and the sequence count.
    /// - Complexity: O(buckets).
    public mutating func removeAll() {
        open.removeAll()
        far.removeAll()
        nodes.removeAll(keepingCapacity: true)
        freeNode = EventQueue.none
        bucketed = 0
        pending = 0
        for b in heads.indices { heads[b] = EventQueue.none }
        for w in occupied.indices { occupied[w] = 0 }
        resetJudgement()
    }

    // MARK: - Buckets

    /// Puts `e` (already stamped) in the open bucket, its own bucket, or the far heap.
    @inlinable
    mutating func place(_ e: Event) {
        let abs = e.time >> shift
        if abs <= cursor {
            open.insert(e)
            arrivals &+= 1
            return
        }
        guard abs &- cursor <= mask else {
            far.insert(e)
            farPlaced &+= 1
            return
        }
        let b = Int(abs & mask)
        let node = BucketNode(event: e, next: heads[b])
        let n: UInt32
        if freeNode != EventQueue.none {
            n = freeNode
            freeNode = nodes[Int(n)].next
            nodes[Int(n)] = node
        } else {
            n = UInt32(nodes.count)
            nodes.append(node)
        }
        heads[b] = n
        occupied[b >> 6] |= 1 << UInt64(b & 63)
        bucketed += 1
    }

    /// The open bucket is empty: moves the cursor to the next bucket that holds events
    /// (or to the far heap's first) and opens it.
    @usableFromInline
    mutating func advance() {
        if bucketed == 0 {
            guard let first = far.first else { return }
            cursor = first.time >> shift
            refill()
        } else {
            let b = nextOccupied()
            cursor &+= (UInt64(b) &- cursor) & mask
            let head = heads[b]
            heads[b] = EventQueue.none
            occupied[b >> 6] &= ~(1 << UInt64(b & 63))
            let (taken, tail) = nodes.withUnsafeBufferPointer { pool in open.fill(from: pool, head: head) }
            // The whole list joins the free list at once.
            nodes[Int(tail)].next = freeNode
            freeNode = head
            bucketed -= taken
            arrivals &+= taken
            refill()
        }
        opens += 1
        if opens == EventQueue.opensPerJudgement { judge() }
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

    /// Moves far events that the window now covers into their buckets.
    @inlinable
    mutating func refill() {
        while let first = far.first, (first.time >> shift) &- cursor <= mask {
            place(far.pop()!)
        }
    }

    // MARK: - Shape

    /// Every `opensPerJudgement` opens: halves the bucket width when more than
    /// `crowdedArrivals` events entered the open bucket per bucket width the cursor crossed
    /// (sorting and insertions grow), doubles it when fewer than `sparseArrivals` did (most
    /// of the work is finding the next bucket), up to three steps at once; and doubles the
    /// bucket count when more than one push in eight went beyond the window (each costs
    /// O(log n) in the far heap), as long as the buckets do not outnumber the pending events
    /// twice.
    @usableFromInline
    mutating func judge() {
        let crossed = Swift.max(cursor &- judgedCursor, 1)
        let entered = UInt64(arrivals)
        var newShift = shift
        var steps = 0
        while steps < 3, newShift > 0, crossed << steps < entered / EventQueue.crowdedArrivals {
            newShift -= 1
            steps += 1
        }
        while steps < 3, newShift < EventQueue.shiftMax, crossed >> steps > entered / EventQueue.sparseArrivals {
            newShift += 1
            steps += 1
        }
        var newBuckets = heads.count
        if farPlaced > pushes / 8, newBuckets < EventQueue.bucketsMax, newBuckets < 2 * pending {
            newBuckets *= 2
        }
        if newShift != shift || newBuckets != heads.count {
            relayout(shift: newShift, buckets: newBuckets)
        } else {
            resetJudgement()
        }
    }

    /// Starts counting afresh for the next judgement.
    @usableFromInline
    mutating func resetJudgement() {
        opens = 0
        arrivals = 0
        pushes = 0
        farPlaced = 0
        judgedCursor = cursor
    }

    /// Lays every bucketed and far event out again over `buckets` buckets of `1 << shift`
    /// ms. The open bucket keeps its events: the new cursor is the new bucket holding the
    /// last millisecond of the old open bucket, so they are all still at or before it, and
    /// every other event is still after it. Bucketed nodes are relinked where they are;
    /// only the bucket heads are allocated anew.
    /// - Complexity: O(n + buckets), plus O(log n) for each event that enters or leaves
    ///   the far heap.
    @usableFromInline
    mutating func relayout(shift newShift: UInt64, buckets: Int) {
        let lastMs = cursor << shift | (1 << shift - 1)
        let oldHeads = heads
        makeBuckets(buckets)
        shift = newShift
        cursor = lastMs >> newShift
        bucketed = 0
        for head in oldHeads where head != EventQueue.none {
            var n = head
            while n != EventQueue.none {
                let next = nodes[Int(n)].next
                relink(n)
                n = next
            }
        }
        refill()
        resetJudgement()
    }

    /// Puts node `n` (no longer in any list) in its bucket under the current shape, or,
    /// when its event belongs in the open bucket or the far heap, moves the event there
    /// and frees the node.
    @usableFromInline
    mutating func relink(_ n: UInt32) {
        let e = nodes[Int(n)].event
        let abs = e.time >> shift
        if abs <= cursor || abs &- cursor > mask {
            if abs <= cursor { open.insert(e) } else { far.insert(e) }
            nodes[Int(n)].next = freeNode
            freeNode = n
            return
        }
        let b = Int(abs & mask)
        nodes[Int(n)].next = heads[b]
        heads[b] = n
        occupied[b >> 6] |= 1 << UInt64(b & 63)
        bucketed += 1
    }

    /// Empty buckets, `count` of them (a power of two).
    mutating func makeBuckets(_ count: Int) {
        precondition(count.nonzeroBitCount == 1 && count >= 64, "bucket count \(count) must be a power of two >= 64")
        heads = Array(repeating: EventQueue.none, count: count)
        occupied = Array(repeating: 0, count: count / 64)
        mask = UInt64(count - 1)
    }

    /// The next nodes of the pool, by node index (what `checkInvariants` walks).
    var links: NodeLinks { NodeLinks(nodes: nodes) }
}

/// Read-only `next` links of a node pool, indexed like the pool.
struct NodeLinks {
    let nodes: [BucketNode]
    subscript(_ i: Int) -> UInt32 { nodes[i].next }
}
