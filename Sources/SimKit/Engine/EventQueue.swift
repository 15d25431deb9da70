/// The simulation's pending work, ordered by (time, insertion sequence), so events due at
/// the same time run first-in first-out: a two-level calendar queue that resizes itself.
///
/// Time is cut into buckets of `1 << shift` ms, and buckets into blocks of `bucketCount`
/// buckets. `cursor` is the absolute bucket number (`time >> shift`) being worked on:
/// - the open bucket (`open`) holds its events, and any pushed earlier than it, sorted so
///   that popping takes the last of an array (see `OpenBucket`);
/// - the rest of the cursor's block is the fine level: one unsorted list per bucket, in a
///   node pool (`nodes`), with a bitmap of the buckets that hold any. A bucket is sorted
///   only when the cursor reaches it and it becomes the open bucket;
/// - the next `coarseCount` blocks are the coarse level: one unsorted list per block, in
///   the same pool. When the fine level runs dry the cursor moves to the next block that
///   holds events and its list is spread over the fine buckets;
/// - events beyond that wait in a heap (`far`), which refills the coarse level as the
///   cursor moves from block to block.
/// So an event costs O(1) to push and pop, plus one relink when it crosses a block
/// boundary; only events more than `coarseCount` blocks ahead pay O(log n).
///
/// Beside the calendar, up to `runsMax` sorted runs (`pushRun`, `EventQueue+Runs.swift`)
/// hold events pushed all at once, such as a jittered statement's moment for every
/// device: each pop takes the earlier of the calendar's next event and the earliest run
/// head. A batch sorted once costs far less than its events pushed one by one, which
/// matters most at a million devices (see docs/performance.md).
///
/// Opening a bucket walks its list, one dependent load per node: at a million devices each
/// is a cache miss. So a big world's loop walks the next bucket's list ahead, one node per
/// pop (`walkAhead`, with `prefetches` set); two nodes per pop stall on the second, and at
/// 10k, where the pool stays in cache, it gains nothing. Two chains per bucket, walked side
/// by side, would help big worlds but slow small ones and the bare queue and cost bytes a
/// device, so a bucket keeps one list (figures in docs/performance.md).
///
/// Every `opensPerJudgement` opened buckets the queue judges the bucket width from the
/// events each opened bucket took: it narrows it when buckets get crowded and widens it
/// when they hold few. It doubles the buckets of a block when the pending events outnumber
/// them twice. Each change re-lays the events in place (nodes are relinked, not copied),
/// so a resize needs no room beyond the new bucket heads (or, with few events listed, a
/// list of their lists), and width changes wait until as many events have gone by as a
/// re-layout moves.
///
/// The pool, the heads, the bitmap and the open bucket live in `QueueBuffer`s, written
/// without per-access checks; copies of a queue share them until one of them writes
/// (`makeUnique`, once per push and per opened bucket; `World.run` makes its queue unique
/// once and then pushes with `pushUnique`, skipping the runtime call). Storage only grows to the
/// high-water mark: once warm, push and pop allocate nothing. The size is bounded by
/// `capacityLimit`, and `push` refuses to go past it (a runaway schedule is a bug, not a
/// slow run).
@usableFromInline package struct EventQueue: Sendable {
    /// The open bucket: events with `time >> shift <= cursor`.
    @usableFromInline var open = OpenBucket()
    /// The pooled events of the fine and coarse lists, each with the next node of its
    /// list; slots `0..<nodesUsed` have been handed out (to a list or to the free list).
    @usableFromInline var nodes: QueueBuffer<QueuedEvent>
    @usableFromInline var nodesUsed = 0
    /// The head of the free-node list (linked through `next` as well).
    @usableFromInline var freeNode: UInt32 = EventQueue.none
    /// The first node of each fine bucket: bucket `b` holds the events of bucket number
    /// `block << blockShift | b`; those up to the cursor's are empty.
    @usableFromInline var heads: QueueBuffer<UInt32>
    /// Bit b of word b/64 is set when fine bucket b holds events.
    @usableFromInline var occupied: QueueBuffer<UInt64>
    /// The first node of each coarse list: list `k` holds the events of the block
    /// `k (mod coarseCount)` among the `coarseCount` blocks after the cursor's.
    @usableFromInline var coarseHeads: QueueBuffer<UInt32>
    /// Bit k is set when coarse list k holds events.
    @usableFromInline var coarseOccupied: UInt64 = 0
    /// Shared by copies of this queue; unique when the buffers above are this queue's alone.
    @usableFromInline var owner = QueueOwner()
    /// log2 of the bucket width in ms; log2 of the buckets in a block, and that count - 1.
    @usableFromInline var shift: UInt64 = 10
    @usableFromInline var blockShift: UInt64 = 8
    @usableFromInline var mask: UInt64 = 255
    /// The absolute bucket number (`time >> shift`) of the open bucket, and of the last
    /// bucket of its block (`cursor | mask`, kept so `place` tells the levels apart with
    /// two comparisons).
    @usableFromInline var cursor: UInt64 = 0
    @usableFromInline var blockEnd: UInt64 = 255
    /// The pending count beyond which the block doubles (`pendingPerBucketMax` a bucket).
    @usableFromInline var pendingToGrow = 512
    /// `min(pendingToGrow + runs.pending, capacityLimit)`, with `runs.pending` as it was
    /// when a run began or ended: from this pending count on, `push` takes the path that
    /// refuses or grows, so the common push makes one comparison for both.
    @usableFromInline var pendingForSlowPush = 512
    /// Events in the fine buckets, and in the coarse lists.
    @usableFromInline var bucketed = 0
    @usableFromInline var coarsed = 0
    /// Events beyond the coarse level.
    @usableFromInline var far = EventHeap()
    /// Sorted runs of events pushed at once (see `pushRun`).
    @usableFromInline var runs = QueueRuns()
    /// Whether `pushRun` takes runs at all (tests turn it off to compare the two ways),
    /// and how many it has taken.
    var takesRuns = true
    @usableFromInline package internal(set) var runsTaken = 0
    /// Events pending in all (the runs' too), kept so `push` checks the bound cheaply.
    @usableFromInline var pending = 0
    @usableFromInline var nextSeq: UInt64 = 0
    /// Since the last judgement of the width: buckets opened, and events that entered the
    /// open bucket (opened or pushed into it); and the latter since the last re-layout.
    @usableFromInline var opens = 0
    @usableFromInline var arrivals = 0
    @usableFromInline var arrivalsSinceLayout = 0
    /// The most events that may be pending at once.
    @usableFromInline package let capacityLimit: Int
    /// Whether the queue gives itself cache hints, for a pool too big for the cache (a world
    /// sets it from 32,768 devices): `advance` aims `lookahead` at the next bucket's list
    /// (see `walkAhead`), and taking a node off the free list requests the next one (a burst
    /// of pushes otherwise waits on a miss for each). Off, they cost a test: at 10k they gain
    /// nothing.
    @usableFromInline package var prefetches = false
    /// A node of the list of the next bucket to open, which `walkAhead` follows one node
    /// a call; only a cache hint (any node, or `none`, is safe: nothing reads it for order).
    @usableFromInline var lookahead: UInt32 = EventQueue.none

    @usableFromInline static let none = UInt32.max
    /// Bounds of a block, in buckets.
    @usableFromInline static let bucketsMin = 256
    @usableFromInline static let bucketsMax = 1 << 24
    /// Pending events per bucket of a block beyond which the block doubles.
    @usableFromInline static let pendingPerBucketMax = 2
    /// Blocks in the coarse level (one bitmap word).
    @usableFromInline static let coarseCount: UInt64 = 64
    /// Opens between two judgements of the width, and arrivals that bring one sooner.
    @usableFromInline static let opensPerJudgement = 512
    @usableFromInline static let arrivalsPerJudgement = opensPerJudgement * Int(crowdedArrivals)
    /// Arrivals per opened bucket above which the width halves, and below which it doubles.
    /// [6, 24] suits the bare queue better than [4, 16] at about the same cost to the world;
    /// [8, 32] is worse on the world, whose crowded open buckets then spill into the burst
    /// heap (figures in docs/performance.md).
    @usableFromInline static let crowdedArrivals: UInt64 = 24
    @usableFromInline static let sparseArrivals: UInt64 = 6
    /// Arrivals per pending event since the last re-layout before the width may halve, and
    /// before it may double (see `judge`).
    @usableFromInline static let arrivalsPerNarrowing = 2
    @usableFromInline static let arrivalsPerWidening = 32
    /// The widest bucket, as log2 of ms (2^40 ms is about 35 years).
    @usableFromInline static let shiftMax: UInt64 = 40

    /// An empty queue of at most `capacityLimit` events, with room for `reserving`.
    @usableFromInline package init(capacityLimit: Int = 1 << 28, reserving: Int = 0) {
        precondition(capacityLimit > 0, "capacityLimit must be positive")
        precondition(capacityLimit < Int(EventQueue.none), "capacityLimit must fit a node index")
        self.capacityLimit = capacityLimit
        let n = min(reserving, capacityLimit)
        nodes = QueueBuffer(count: max(n, 64))
        var buckets = EventQueue.bucketsMin
        while buckets < n / EventQueue.pendingPerBucketMax, buckets < EventQueue.bucketsMax { buckets <<= 1 }
        blockShift = UInt64(buckets.trailingZeroBitCount)
        mask = UInt64(buckets - 1)
        blockEnd = mask
        pendingToGrow = EventQueue.pendingPerBucketMax * buckets
        pendingForSlowPush = min(pendingToGrow, capacityLimit)
        heads = QueueBuffer(repeating: EventQueue.none, count: buckets)
        occupied = QueueBuffer(repeating: 0, count: buckets / 64)
        coarseHeads = QueueBuffer(repeating: EventQueue.none, count: Int(EventQueue.coarseCount))
    }

    /// The number of pending events.
    @inlinable package var count: Int { pending }
    @inlinable package var isEmpty: Bool { pending == 0 }
    /// How many events have been pushed in all; also the next insertion sequence.
    @inlinable package var pushedTotal: UInt64 { nextSeq }
    /// Buckets in a block (for tests and tuning).
    @usableFromInline package var bucketCount: Int { heads.count }

    /// The time of the earliest pending event.
    /// - Complexity: O(1) when the open bucket holds events; else a scan of one list.
    @usableFromInline package var nextTime: SimTime? {
        let listed = listedNextTime
        guard runs.count > 0 else { return listed }
        return Swift.min(listed ?? .max, runs.firstTime)
    }

    /// The time of the earliest pending event outside the runs.
    var listedNextTime: SimTime? {
        if let first = open.first { return first.time }
        if bucketed > 0 { return earliestTime(in: heads[Int(firstSet(in: occupied.base, words: occupied.count, from: cursor & mask))]) }
        if coarsed > 0 { return earliestTime(in: coarseHeads[Int(firstCoarse(from: block(cursor) &+ 1))]) }
        return far.first?.time
    }

    /// The earliest time in the list that starts at node `n`.
    func earliestTime(in list: UInt32) -> SimTime {
        var n = list
        var best = SimTime.max
        while n != EventQueue.none { best = Swift.min(best, nodes[Int(n)].time); n = nodes[Int(n)].next }
        return best
    }

    /// Schedules `event`, stamping its insertion sequence; false when the queue is full.
    /// Always inlined: as a call, saving and restoring registers would be a good part of its
    /// instructions.
    /// - Complexity: O(1) on average; O(log n) for an event beyond the coarse level.
    @inlinable @inline(__always) @discardableResult
    package mutating func push(_ event: Event) -> Bool {
        makeUnique()
        return pushUnique(event)
    }

    /// `push` for a queue whose owner made it unique (`makeUnique()`) and has not copied it
    /// since: `World.run` does so once before its loop, and nothing copies a world while it
    /// runs, so its pushes skip the uniqueness check (a call into the Swift runtime).
    @inlinable @inline(__always) @discardableResult
    mutating func pushUnique(_ event: Event) -> Bool {
        if pending >= pendingForSlowPush { return pushAtBound(event) }
        let e = QueuedEvent(event, seq: nextSeq)
        nextSeq &+= 1
        pending &+= 1
        place(e, newest: true)
        return true
    }

    /// `push` once `pending` reaches `pendingForSlowPush`: refuses at `capacityLimit`,
    /// grows the block past `pendingToGrow`. Kept out of line so the common push is short.
    @usableFromInline @inline(never)
    mutating func pushAtBound(_ event: Event) -> Bool {
        guard pending < capacityLimit else { return false }
        makeUnique()
        let e = QueuedEvent(event, seq: nextSeq)
        nextSeq &+= 1
        pending &+= 1
        place(e, newest: true)
        if pending &- runs.pending > pendingToGrow { grow() }
        pendingForSlowPush = Swift.min(pendingToGrow &+ runs.pending, capacityLimit)
        return true
    }

    /// Removes and returns the earliest event.
    /// - Complexity: O(1) on average.
    @inlinable
    package mutating func pop() -> Event? { pop(notAfter: .max) }

    /// Removes and returns the earliest event if it is due at or before `limit`.
    /// - Complexity: O(1) on average.
    @inlinable
    package mutating func pop(notAfter limit: SimTime) -> Event? {
        if runs.firstTime != .max { return popMergingRunsMakingUnique(notAfter: limit) }
        return popCalendar(notAfter: limit)
    }

    /// `pop(notAfter:)` for a queue made unique (see `pushUnique`): `World.run`'s, where
    /// runs often hold events, so their merge is inlined here.
    @inlinable @inline(__always)
    mutating func popUnique(notAfter limit: SimTime) -> Event? {
        if runs.firstTime != .max { return popMergingRuns(notAfter: limit) }
        return popCalendar(notAfter: limit)
    }

    /// `popMergingRuns` for `pop`, out of line: a queue used without runs (the bare queue of
    /// `simkit bench`) keeps its pop as short as if there were no runs: inlined there, the
    /// merge would slow the bench's loop.
    @usableFromInline @inline(never)
    mutating func popMergingRunsMakingUnique(notAfter limit: SimTime) -> Event? {
        makeUnique()   // taking a run's event writes its cursor
        return popMergingRuns(notAfter: limit)
    }

    /// `pop(notAfter:)` when only the calendar holds events. Reads the open bucket only,
    /// or advances (which makes the buffers unique itself).
    @inlinable @inline(__always)
    mutating func popCalendar(notAfter limit: SimTime) -> Event? {
        if open.isEmpty {
            advance()
            if open.isEmpty { return nil }
        }
        guard let e = open.pop(notAfter: limit) else { return nil }
        pending &-= 1
        return e
    }

    /// A cache hint for big queues, called once per pop: loads the node `lookahead` names
    /// (its line was requested by the previous call) and requests the next node of its list.
    /// Opening a bucket walks its list one dependent load per node, and at a million devices
    /// each is a miss; walked ahead a node per pop while the bucket before it is consumed,
    /// the list is in cache when it opens. Changes no result.
    @inlinable @inline(__always)
    package mutating func walkAhead() {
        let n = lookahead
        guard n != EventQueue.none, Int(n) < nodesUsed else { return }
        let next = nodes.base[Int(n)].next
        lookahead = next
        if next != EventQueue.none, Int(next) < nodesUsed { Prefetch.line(UnsafeRawPointer(nodes.base + Int(next))) }
    }

    /// Removes every pending event, keeping the storage and the sequence count.
    /// - Complexity: O(buckets).
    @usableFromInline package mutating func removeAll() {
        makeUnique()
        open.removeAll()
        far.removeAll()
        runs.removeAll()
        nodesUsed = 0
        freeNode = EventQueue.none
        bucketed = 0
        coarsed = 0
        pending = 0
        heads.base.update(repeating: EventQueue.none, count: heads.count)
        occupied.base.update(repeating: 0, count: occupied.count)
        coarseHeads.base.update(repeating: EventQueue.none, count: coarseHeads.count)
        coarseOccupied = 0
        resetJudgement()
    }

    // MARK: - Storage

    /// Makes the buffers this queue's alone before it writes to them: a copy of the queue
    /// shares them until then.
    @inlinable
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&owner) { copyBuffers() }
    }

    /// Copies every buffer, for `makeUnique`.
    @usableFromInline
    mutating func copyBuffers() {
        nodes = nodes.copy(count: nodes.count, used: nodesUsed)
        heads = heads.copy(count: heads.count, used: heads.count)
        occupied = occupied.copy(count: occupied.count, used: occupied.count)
        coarseHeads = coarseHeads.copy(count: coarseHeads.count, used: coarseHeads.count)
        open.copySorted()
        runs.copyBuffers()
        owner = QueueOwner()
    }

    /// A node for `e` at the head of the list that `next` starts: off the free list, or
    /// the next unused slot of the pool (which doubles when full).
    @inlinable @inline(__always)
    mutating func newNode(_ e: QueuedEvent, next: UInt32) -> UInt32 {
        let n: UInt32
        if freeNode != EventQueue.none {
            n = freeNode
            freeNode = nodes.base[Int(n)].next
            // The free list runs through nodes freed all over the pool: ask for the next
            // one now, or a burst of pushes waits on a miss for each.
            if prefetches, freeNode != EventQueue.none { Prefetch.line(UnsafeRawPointer(nodes.base + Int(freeNode))) }
        } else {
            if nodesUsed == nodes.count { growPool() }
            n = UInt32(nodesUsed)
            nodesUsed += 1
        }
        var node = e
        node.next = next
        nodes.base[Int(n)] = node
        return n
    }

    /// Doubles the node pool, keeping the slots in use (out of line: it runs only until
    /// the pool reaches its high-water mark).
    @usableFromInline @inline(never)
    mutating func growPool() {
        QueueBuffer.grow(&nodes, to: 2 * nodes.count, used: nodesUsed)
    }

    /// Puts node `n` back on the free list.
    @inlinable @inline(__always)
    mutating func freeNode(_ n: UInt32) {
        nodes.base[Int(n)].next = freeNode
        freeNode = n
    }

    /// The first set bit at or after bit `start` of the `words`-word bitmap at `bits`,
    /// wrapping around its end. The bitmap must have a bit set.
    @inlinable @inline(__always)
    func firstSet(in bits: UnsafeMutablePointer<UInt64>, words: Int, from start: UInt64) -> UInt64 {
        var w = Int(truncatingIfNeeded: start &>> 6)
        var word = bits[w] & (~0 &<< (start & 63))
        var scanned = 0
        while word == 0 {
            w = w + 1 == words ? 0 : w + 1
            word = bits[w]
            scanned += 1
            precondition(scanned <= words, "event queue bitmap is empty with events listed")
        }
        return UInt64(w << 6 | word.trailingZeroBitCount)
    }

    /// The first coarse list that holds events at or after list `start` (mod
    /// `coarseCount`), wrapping around. Some list must hold events.
    @inlinable
    func firstCoarse(from start: UInt64) -> UInt64 {
        let s = start & (EventQueue.coarseCount - 1)
        let rotated = coarseOccupied &>> s | coarseOccupied &<< (EventQueue.coarseCount - s)
        precondition(rotated != 0, "event queue coarse bitmap is empty with events listed")
        return (s &+ UInt64(rotated.trailingZeroBitCount)) & (EventQueue.coarseCount - 1)
    }

    /// The absolute bucket number of `time`.
    @inlinable @inline(__always)
    func bucket(_ time: SimTime) -> UInt64 { time &>> shift }

    /// The block number of bucket number `abs`.
    @inlinable @inline(__always)
    func block(_ abs: UInt64) -> UInt64 { abs &>> blockShift }

    // MARK: - Levels

    /// Puts `e` (already stamped) in the open bucket, a fine bucket, a coarse list or the
    /// far heap; `newest` when it was stamped just now (see `OpenBucket.insert`). The
    /// buffers are unique.
    @inlinable @inline(__always)
    mutating func place(_ e: QueuedEvent, newest: Bool = false) {
        let abs = bucket(e.time)
        if abs <= cursor {
            open.insert(e, newest: newest)
            arrivals &+= 1
            return
        }
        if abs <= blockEnd {
            let b = Int(truncatingIfNeeded: abs & mask)
            let head = heads.base[b]
            heads.base[b] = newNode(e, next: head)
            if head == EventQueue.none { occupied.base[b &>> 6] |= 1 &<< (abs & 63) }
            bucketed &+= 1
        } else {
            placeBeyondBlock(e)
        }
    }

    /// `place` for an event after the cursor's block: a coarse list or the far heap.
    @usableFromInline
    mutating func placeBeyondBlock(_ e: QueuedEvent) {
        guard block(bucket(e.time)) &- block(cursor) <= EventQueue.coarseCount else {
            far.insert(e.event)
            return
        }
        let k = block(bucket(e.time)) & (EventQueue.coarseCount - 1)
        coarseHeads.base[Int(truncatingIfNeeded: k)] = newNode(e, next: coarseHeads.base[Int(truncatingIfNeeded: k)])
        coarseOccupied |= 1 &<< k
        coarsed &+= 1
    }

    /// The open bucket is empty: moves the cursor to the next fine bucket that holds
    /// events (first to the next block that holds any, when this one has run dry) and
    /// opens it.
    @usableFromInline
    mutating func advance() {
        makeUnique()
        if bucketed == 0 {
            guard enterNextBlock() else { return }
            if !open.isEmpty {   // some of the block's events fell in its first bucket
                countOpen()
                return
            }
        }
        let b = firstSet(in: occupied.base, words: occupied.count, from: cursor & mask)
        cursor = cursor & ~mask | b
        let head = heads.base[Int(b)]
        heads.base[Int(b)] = EventQueue.none
        occupied.base[Int(truncatingIfNeeded: b &>> 6)] &= ~(1 &<< (b & 63))
        let (taken, tail) = open.fill(from: nodes.base, head: head)
        // The whole list joins the free list at once.
        nodes.base[Int(tail)].next = freeNode
        freeNode = head
        bucketed &-= taken
        arrivals &+= taken
        if prefetches { aimLookahead() }
        countOpen()
    }

    /// Points `lookahead` at the list of the next fine bucket that holds events (none when
    /// the block has run dry) and requests its first node (see `walkAhead`).
    @usableFromInline
    mutating func aimLookahead() {
        lookahead = EventQueue.none
        guard bucketed > 0 else { return }
        let b = firstSet(in: occupied.base, words: occupied.count, from: cursor & mask)
        lookahead = heads.base[Int(b)]
        if lookahead != EventQueue.none { Prefetch.line(UnsafeRawPointer(nodes.base + Int(lookahead))) }
    }

    /// Counts an opened bucket, and judges the width every `opensPerJudgement` opens, or
    /// sooner when crowded buckets have taken that many opens' worth of arrivals.
    @inlinable @inline(__always)
    mutating func countOpen() {
        opens &+= 1
        if opens == EventQueue.opensPerJudgement || arrivals >= EventQueue.arrivalsPerJudgement { judge() }
    }

    /// The fine level is empty: moves the cursor to the start of the next block that holds
    /// events (a coarse list's, or the far heap's first), spreads that block's list over the
    /// fine buckets (events in its first bucket go to the open bucket), and refills the
    /// coarse level from the far heap. False when nothing is pending beyond the open bucket.
    /// - Complexity: O(events moved), plus O(log n) for each that leaves the far heap.
    @usableFromInline
    mutating func enterNextBlock() -> Bool {
        let after = block(cursor) &+ 1
        let nextBlock: UInt64
        var list = EventQueue.none
        if coarsed > 0 {
            let k = firstCoarse(from: after)
            nextBlock = after &+ ((k &- after) & (EventQueue.coarseCount - 1))
            list = coarseHeads.base[Int(k)]
            coarseHeads.base[Int(k)] = EventQueue.none
            coarseOccupied &= ~(1 &<< k)
        } else if let first = far.first {
            nextBlock = block(bucket(first.time))
        } else {
            return false
        }
        cursor = nextBlock &<< blockShift
        blockEnd = cursor | mask
        spread(list)
        refill()
        return true
    }

    /// Spreads the coarse list that starts at `head`, whose events all lie in the cursor's
    /// block (just entered), over the fine buckets: those of the cursor's bucket go to the
    /// open bucket. `relink` for this one case, in a loop: calling `relink` per node would
    /// add its tests for the other levels and its call to every node.
    /// - Complexity: O(events in the list).
    @usableFromInline
    mutating func spread(_ head: UInt32) {
        let pool = nodes.base
        var n = head
        var moved = 0
        var listed = 0
        while n != EventQueue.none {
            let e = pool[Int(n)]
            let abs = bucket(e.time)
            assert(block(abs) == block(cursor), "a coarse list holds the events of one block")
            if abs <= cursor {
                open.insert(e)
                freeNode(n)
            } else {
                let b = Int(truncatingIfNeeded: abs & mask)
                pool[Int(n)].next = heads.base[b]
                heads.base[b] = n
                occupied.base[b &>> 6] |= 1 &<< (abs & 63)
                listed &+= 1
            }
            moved &+= 1
            n = e.next
        }
        coarsed &-= moved
        bucketed &+= listed
    }

    /// Moves far events that the coarse level now covers into it (or into the fine level
    /// or the open bucket, when they fall in the cursor's block).
    @usableFromInline
    mutating func refill() {
        let current = block(cursor)
        while let first = far.first, block(bucket(first.time)) &- current <= EventQueue.coarseCount {
            place(QueuedEvent(far.pop()!))
        }
    }

    /// Puts node `n` (no longer in any list) where its event belongs under the current
    /// shape: a fine bucket or a coarse list (relinked, not copied), or the open bucket or
    /// the far heap (copied there, and the node freed).
    @usableFromInline
    mutating func relink(_ n: UInt32) {
        let e = nodes.base[Int(n)]
        let abs = bucket(e.time)
        if abs <= cursor || block(abs) &- block(cursor) > EventQueue.coarseCount {
            if abs <= cursor { open.insert(e) } else { far.insert(e.event) }
            freeNode(n)
        } else if abs <= blockEnd {
            let b = Int(abs & mask)
            nodes.base[Int(n)].next = heads.base[b]
            heads.base[b] = n
            occupied.base[b &>> 6] |= 1 &<< (abs & 63)
            bucketed &+= 1
        } else {
            let k = block(abs) & (EventQueue.coarseCount - 1)
            nodes.base[Int(n)].next = coarseHeads.base[Int(k)]
            coarseHeads.base[Int(k)] = n
            coarseOccupied |= 1 &<< k
            coarsed &+= 1
        }
    }

    // MARK: - Shape

    /// More than `pendingPerBucketMax` events pending per bucket: doubles the buckets of a
    /// block, up to `bucketsMax`, so a block spans more time and fewer events cross into
    /// the next. (At the maximum, every push past the bound calls this and returns.)
    @usableFromInline
    mutating func grow() {
        if heads.count < EventQueue.bucketsMax { relayout(shift: shift, buckets: heads.count * 2) }
    }

    /// Every `opensPerJudgement` opens (or `arrivalsPerJudgement` arrivals): halves the
    /// bucket width when more than `crowdedArrivals` events entered the open bucket per
    /// opened bucket (sorting and insertions grow), doubles it when fewer than
    /// `sparseArrivals` did (the fixed cost of opening dominates).
    ///
    /// The measure is per open, not per bucket width the cursor crossed: empty buckets cost
    /// a bit each in the bitmap scan, not an open, so gaps between clumps of events (the
    /// world starts with thousands of events within a few ms) must not widen the buckets
    /// only to have the clumps crowd them. Ties crowd a bucket however narrow; the width
    /// then shrinks to 1 ms and stays. A change re-lays every pending event, so it waits
    /// until many events have gone through the open bucket since the last one: however the
    /// judgements swing (the world's density changes tenfold between day and night),
    /// re-laying costs at most half a relink per event.
    ///
    /// Narrowing waits for twice as many arrivals as events are pending, widening for 32
    /// times as many. A bucket too wide is urgent: a million devices launched at once crowd
    /// the first buckets with millions of events, which must be sorted and held at once
    /// (waiting longer to narrow raises a big world's resident peak). A bucket too narrow
    /// only costs some more opens, while at a million devices every re-layout is millions
    /// of cache misses: waiting as long to widen as to narrow lets the width swing with the
    /// daily rhythm (figures in docs/performance.md). The width never changes the pop
    /// order, so it never changes a fingerprint.
    @usableFromInline
    mutating func judge() {
        let perOpen = UInt64(arrivals / Swift.max(opens, 1))
        var newShift = shift
        if perOpen > EventQueue.crowdedArrivals, shift > 0 {
            newShift = shift - 1
        } else if perOpen < EventQueue.sparseArrivals, shift < EventQueue.shiftMax {
            newShift = shift + 1
        }
        arrivalsSinceLayout &+= arrivals
        let perPending = newShift < shift ? EventQueue.arrivalsPerNarrowing : EventQueue.arrivalsPerWidening
        if newShift != shift, arrivalsSinceLayout >= perPending * pending {
            relayout(shift: newShift, buckets: heads.count)
        } else {
            resetJudgement()
        }
    }

    /// Starts counting afresh for the next judgement.
    @usableFromInline
    mutating func resetJudgement() {
        opens = 0
        arrivals = 0
    }

    /// Lays every listed and far event out again over blocks of `buckets` buckets of
    /// `1 << shift` ms. The open bucket keeps its events: the new cursor is the new bucket
    /// holding the last millisecond of the old open bucket, so they are all still at or
    /// before it, and every other event is still after it. Listed nodes are relinked where
    /// they are. When the fine level is sparse its lists are found through the bitmap, not
    /// by reading every head, and a block of the same size keeps its heads (emptied as
    /// their lists are taken): the width swings a few times a day, and a block of 65,536
    /// buckets then holds a few thousand events, so reading and refilling every head would
    /// be mostly wasted work. The buffers are unique.
    /// - Complexity: O(n + buckets / 64) when sparse and the block size is unchanged, else
    ///   O(n + buckets); plus O(log n) for each event that enters or leaves the far heap.
    @usableFromInline
    mutating func relayout(shift newShift: UInt64, buckets: Int) {
        precondition(buckets.nonzeroBitCount == 1 && buckets >= 64, "bucket count \(buckets) must be a power of two >= 64")
        let lastMs = cursor << shift | (1 << shift - 1)
        // At most half as many listed events as buckets (10k devices: a few thousand in
        // 65,536): take the lists found through the bitmap, and keep the heads; the list of
        // lists takes at most half the room of the heads. More (a million devices
        // launching: millions): read every head of the old block into a new one, so the
        // list of lists does not add to the peak.
        let sparse = bucketed <= heads.count / 2
        var lists: [UInt32] = []
        lists.reserveCapacity((sparse ? bucketed : 0) + Int(EventQueue.coarseCount))
        var oldHeads: QueueBuffer<UInt32>? = nil
        if sparse {
            for w in 0..<occupied.count {
                var word = occupied.base[w]
                while word != 0 {
                    let b = w << 6 | word.trailingZeroBitCount
                    lists.append(heads.base[b])
                    heads.base[b] = EventQueue.none
                    word &= word &- 1
                }
            }
        } else {
            oldHeads = heads
        }
        for k in 0..<coarseHeads.count where coarseHeads.base[k] != EventQueue.none {
            lists.append(coarseHeads.base[k])
            coarseHeads.base[k] = EventQueue.none
        }
        if sparse, buckets == heads.count {
            occupied.base.update(repeating: 0, count: occupied.count)
        } else {
            heads = QueueBuffer(repeating: EventQueue.none, count: buckets)
            occupied = QueueBuffer(repeating: 0, count: buckets / 64)
        }
        coarseOccupied = 0
        shift = newShift
        blockShift = UInt64(buckets.trailingZeroBitCount)
        mask = UInt64(buckets - 1)
        pendingToGrow = EventQueue.pendingPerBucketMax * buckets
        pendingForSlowPush = Swift.min(pendingToGrow &+ runs.pending, capacityLimit)
        cursor = lastMs >> newShift
        blockEnd = cursor | mask
        bucketed = 0
        coarsed = 0
        if let old = oldHeads { for head in old where head != EventQueue.none { relinkList(head) } }
        for head in lists { relinkList(head) }
        refill()
        resetJudgement()
        arrivalsSinceLayout = 0
    }

    /// Relinks every node of the list that starts at `head` (see `relink`).
    @usableFromInline
    mutating func relinkList(_ head: UInt32) {
        var n = head
        while n != EventQueue.none {
            let next = nodes.base[Int(n)].next
            relink(n)
            n = next
        }
    }
}
