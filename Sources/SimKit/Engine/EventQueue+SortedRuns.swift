/// Sorted runs: many events pushed at once, as when a scheduled statement sends every
/// device its own jittered moment (`EventQueue.pushRun`).
///
/// Pushed one by one, each such event takes a node, a relink into a bucket's list, and a
/// sort when its bucket opens; at a million devices every one of those is a cache miss.
/// A run instead sorts its events once (a radix sort over one array, in passes that read
/// and write in order) and pops them from that array, taking the earlier of its head and
/// the calendar's next event each time.
///
/// Order: a run's events are ordered as the same events pushed one at a time, in the
/// order of their targets, would be. They carry the run's first sequence number (`seq`
/// of a popped run event is that of the run, not its own), which orders them against
/// every other pending event exactly: those were pushed before the run or after it.
/// `entries` points into a buffer of `QueueRuns.buffers`, written only when the run is
/// made, and copied with the queue's other buffers (`makeUnique`).
/// determinism: a pointer into a buffer copied on write, as `QueueBuffer`
@usableFromInline struct QueueRun: @unchecked Sendable {
    /// `offset << 32 | target` in ascending order; `next..<count` are still pending.
    @usableFromInline var entries: UnsafeMutablePointer<UInt64>
    @usableFromInline var next: Int
    @usableFromInline var count: Int
    /// Every event of the run is at `time + offset`, with this kind and argument.
    @usableFromInline var time: SimTime
    @usableFromInline var seq: UInt64
    @usableFromInline var kind: UInt8
    @usableFromInline var arg: UInt32

    /// The time of the next pending event.
    @inlinable var headTime: SimTime { time &+ entries[next] &>> 32 }
}

/// The runs of an `EventQueue`: at most `EventQueue.runsMax` at once, each in a buffer of
/// its own (kept for reuse when it ends), with the earliest head found after every change.
@usableFromInline
struct QueueRuns: Sendable {
    /// The runs with events pending, in `0..<count`; their entries live in `buffers`.
    @usableFromInline var slots = QueueBuffer<QueueRun>(count: EventQueue.runsMax)
    @usableFromInline var count = 0
    /// `buffers[i]` holds the entries of `slots[i]` (`i < count`); the rest are spare.
    @usableFromInline var buffers: [QueueBuffer<UInt64>] = []
    /// The earliest head among the runs, its run's sequence and slot; `.max` with no run.
    @usableFromInline var firstTime: SimTime = .max
    @usableFromInline var firstSeq: UInt64 = 0
    @usableFromInline var firstSlot = 0
    /// Events pending in all runs.
    @usableFromInline var pending = 0
    /// The radix sort's buffers (see `sort`): the first pass's output, and its digit counts.
    @usableFromInline var scratch = QueueBuffer<UInt64>(count: 0)
    @usableFromInline var counts = QueueBuffer<UInt32>(count: 0)

    /// Finds the earliest head again, after a pop or a new run.
    @inlinable @inline(__always)
    mutating func findFirst() {
        if count == 1 {
            firstTime = slots.base[0].headTime
            firstSeq = slots.base[0].seq
            firstSlot = 0
            return
        }
        findFirstOfMany()
    }

    @inlinable
    mutating func findFirstOfMany() {
        firstTime = .max
        for i in 0..<count {
            let t = slots.base[i].headTime
            let s = slots.base[i].seq
            if t < firstTime || (t == firstTime && s < firstSeq) {
                firstTime = t
                firstSeq = s
                firstSlot = i
            }
        }
    }

    /// Run `i` has no events left: its slot and buffer go to the end, the buffer spare.
    @usableFromInline @inline(never)
    mutating func end(_ i: Int) {
        let last = count - 1
        if i != last {
            slots.base[i] = slots.base[last]
            buffers.swapAt(i, last)
        }
        count = last
        if count == 0 { firstTime = .max } else { findFirstOfMany() }
    }

    /// A buffer of at least `n` slots for a new run, placed at index `count` of `buffers`:
    /// a spare one if one is big enough, else a new one.
    @usableFromInline
    mutating func takeBuffer(_ n: Int) -> QueueBuffer<UInt64> {
        if let k = buffers[count...].firstIndex(where: { $0.count >= n }) {
            buffers.swapAt(count, k)
        } else {
            var size = 64
            while size < n { size <<= 1 }
            let b = QueueBuffer<UInt64>(count: size)
            if buffers.count > count { buffers[count] = b } else { buffers.append(b) }
        }
        return buffers[count]
    }

    /// Sorts the `n` entries at `a` ascending into `out` (of room for `n`), leaving `a` as
    /// it was. An entry's low half is its target, increasing through the input, so a stable
    /// sort by offset sorts the lot: least significant digit radix sort over the bits that
    /// `maxOffset` (< 2^32) needs, in one or two passes of up to 16 bits. The digits of both
    /// passes are counted in one read of `a`; a first of two passes writes `scratch`, so
    /// the second ends in `out` with no copy. The caller has made these buffers unique.
    mutating func sort(_ a: UnsafePointer<UInt64>, into out: UnsafeMutablePointer<UInt64>, count n: Int, maxOffset: UInt64) {
        precondition(maxOffset >> 32 == 0, "a run's offsets have 32 bits")
        let bits = 64 - maxOffset.leadingZeroBitCount
        guard bits > 0 else { out.update(from: a, count: n); return }
        let passes = bits > 16 ? 2 : 1
        let digit = (bits + passes - 1) / passes
        let radix = 1 << digit
        let m = UInt64(radix - 1)
        if counts.count < 2 * radix { counts = QueueBuffer(count: 2 * radix) }
        let low = counts.base, high = low + radix
        low.update(repeating: 0, count: 2 * radix)
        if passes == 1 {
            for i in 0..<n { low[Int(truncatingIfNeeded: a[i] &>> 32 & m)] &+= 1 }
        } else {
            if scratch.count < n { scratch = QueueBuffer(count: n) }
            for i in 0..<n {
                let offset = a[i] &>> 32
                low[Int(truncatingIfNeeded: offset & m)] &+= 1
                high[Int(truncatingIfNeeded: offset &>> UInt64(digit) & m)] &+= 1
            }
        }
        var from = a
        for pass in 0..<passes {
            let k = pass == 0 ? low : high
            let to = pass == passes - 1 ? out : scratch.base
            var sum: UInt32 = 0
            for d in 0..<radix { let c = k[d]; k[d] = sum; sum &+= c }
            let shift = UInt64(32 + pass * digit)
            for i in 0..<n {
                let v = from[i]
                let d = Int(truncatingIfNeeded: v &>> shift & m)
                to[Int(truncatingIfNeeded: k[d])] = v
                k[d] &+= 1
            }
            from = UnsafePointer(to)
        }
    }

    /// Copies of the runs' buffers that these runs hold alone (see `EventQueue.makeUnique`);
    /// spare buffers may be shared, so they are dropped (with the sort's scratch).
    @usableFromInline
    mutating func copyBuffers() {
        let old = slots
        slots = old.copy(count: old.count, used: count)
        var copies: [QueueBuffer<UInt64>] = []
        for i in 0..<count {
            let run = slots.base[i]
            let b = buffers[i].copy(count: run.count, used: run.count)
            slots.base[i].entries = b.base
            copies.append(b)
        }
        buffers = copies
        scratch = QueueBuffer(count: 0)
        counts = QueueBuffer(count: 0)
    }

    /// Removes every run, keeping the buffers.
    @usableFromInline
    mutating func removeAll() {
        count = 0
        pending = 0
        firstTime = .max
    }

    /// Checks every run's entries ascending and non-empty, the counts adding up, and the
    /// earliest head found.
    func checkInvariants() -> String? {
        var total = 0
        var best: (SimTime, UInt64) = (.max, 0)
        for i in 0..<count {
            let r = slots.base[i]
            if r.next >= r.count { return "run \(i) is listed with no events left" }
            if r.entries != buffers[i].base { return "run \(i) does not use its own buffer" }
            for j in r.next + 1 ..< r.count where r.entries[j] <= r.entries[j - 1] {
                return "run \(i) is out of order at \(j)"
            }
            total += r.count - r.next
            if r.headTime < best.0 || (r.headTime == best.0 && r.seq < best.1) { best = (r.headTime, r.seq) }
        }
        if total != pending { return "runs hold \(total) events but count \(pending)" }
        if count > 0, (firstTime, firstSeq) != best { return "first head t=\(firstTime) (seq=\(firstSeq)), not t=\(best.0) (seq=\(best.1))" }
        if count == 0, firstTime != .max { return "no run but a first head at t=\(firstTime)" }
        return nil
    }
}

extension EventQueue {
    /// Runs pending at once; a run beyond them is refused (and pushed one by one).
    @usableFromInline static let runsMax = 16
    /// Fewer events than this are not worth a run.
    @usableFromInline static let runMin = 64

    /// Schedules an event at `time + offset` with `kind` and `arg` for each entry
    /// `offset << 32 | target` of `entries`, whose targets must increase: the events pop as
    /// if pushed one by one in that order, but cost far less (see `QueueRun`). False, with
    /// nothing pushed, when the run is too short to be worth it, when `runsMax` runs are
    /// pending, when the queue would pass its bound, or when an event would fall at the
    /// last millisecond of time (`.max` marks "no run"): the caller then pushes the events
    /// one by one (and learns of the bound from `push`). `entries` are left as they were.
    /// A popped event of a run carries the run's first sequence number, not one of its own.
    /// - Complexity: O(n), a radix sort of the offsets in at most two passes.
    @usableFromInline package mutating func pushRun(at time: SimTime, kind: UInt8, arg: UInt32, entries: inout [UInt64]) -> Bool {
        let n = entries.count
        guard takesRuns, n >= EventQueue.runMin, runs.count < EventQueue.runsMax, pending &+ n <= capacityLimit else { return false }
        var maxOffset: UInt64 = 0
        var increasing = true
        var previous = UInt32(truncatingIfNeeded: entries[0])
        for (i, v) in entries.enumerated() {
            increasing = increasing && (i == 0 || UInt32(truncatingIfNeeded: v) > previous)
            previous = UInt32(truncatingIfNeeded: v)
            maxOffset = Swift.max(maxOffset, v >> 32)
        }
        precondition(increasing, "a run's targets must increase")
        return entries.withUnsafeBufferPointer { e in
            pushRun(at: time, kind: kind, arg: arg, entries: e.baseAddress!, count: e.count, maxOffset: maxOffset)
        }
    }

    /// `pushRun` of the `n` entries at `entries`, whose targets increase (asserted in debug
    /// builds) and whose offsets are at most `maxOffset`: for a caller that makes them so,
    /// such as the world's jittered statements, and saves the pass that checks it.
    @usableFromInline mutating func pushRun(at time: SimTime, kind: UInt8, arg: UInt32, entries e: UnsafePointer<UInt64>, count n: Int,
                          maxOffset: UInt64) -> Bool {
        guard takesRuns, n >= EventQueue.runMin, runs.count < EventQueue.runsMax, pending &+ n <= capacityLimit,
              maxOffset >> 32 == 0, time < SimTime.max - maxOffset else { return false }
        assert((1..<n).allSatisfy { UInt32(truncatingIfNeeded: e[$0]) > UInt32(truncatingIfNeeded: e[$0 - 1]) },
               "a run's targets must increase")
        assert((0..<n).allSatisfy { e[$0] >> 32 <= maxOffset }, "a run's offset is beyond maxOffset")
        makeUnique()
        let buffer = runs.takeBuffer(n)
        runs.sort(e, into: buffer.base, count: n, maxOffset: maxOffset)
        runs.slots.base[runs.count] = QueueRun(entries: buffer.base, next: 0, count: n, time: time, seq: nextSeq,
                                               kind: kind, arg: arg)
        runs.count += 1
        runsTaken += 1
        runs.pending &+= n
        nextSeq &+= UInt64(n)
        pending &+= n
        pendingForSlowPush = Swift.min(pendingToGrow &+ runs.pending, capacityLimit)
        runs.findFirstOfMany()
        return true
    }

    /// `pop(notAfter:)` while runs are pending: the earlier of the run head and the
    /// calendar's next event. The open bucket is filled only if its next bucket is not
    /// after the run head's; otherwise the cursor moves to the run head's bucket, so that
    /// the events its handling pushes land in buckets ahead of the cursor, not all in the
    /// open bucket. The buffers are unique.
    @inlinable @inline(__always)
    mutating func popMergingRuns(notAfter limit: SimTime) -> Event? {
        let headTime = runs.firstTime
        if open.isEmpty, bucket(headTime) > cursor { moveCursor(toward: bucket(headTime)) }
        if open.precedes(time: headTime, seq: runs.firstSeq) {
            guard let e = open.pop(notAfter: limit) else { return nil }
            pending &-= 1
            return e
        }
        guard headTime <= limit else { return nil }
        return popRun()
    }

    /// A cache hint: the target of the event `ahead` places behind the earliest run's
    /// head in that run, if it has one. Its moments are known in advance, unlike the
    /// calendar's, so a big world can ask for that device's state several events early.
    @inlinable @inline(__always)
    package func runTarget(ahead: Int) -> UInt32? {
        guard runs.count > 0 else { return nil }
        let r = runs.slots.base + runs.firstSlot
        let i = r.pointee.next &+ ahead
        guard i < r.pointee.count else { return nil }
        return UInt32(truncatingIfNeeded: r.pointee.entries[i])
    }

    /// Takes the head of the earliest run.
    @inlinable @inline(__always)
    mutating func popRun() -> Event {
        let i = runs.firstSlot
        let r = runs.slots.base + i
        let v = r.pointee.entries[r.pointee.next]
        r.pointee.next &+= 1
        let e = Event(time: r.pointee.time &+ v &>> 32, seq: r.pointee.seq, target: UInt32(truncatingIfNeeded: v),
                      kind: r.pointee.kind, arg: r.pointee.arg)
        runs.pending &-= 1
        pending &-= 1
        if r.pointee.next == r.pointee.count {
            runs.end(i)
            pendingForSlowPush = Swift.min(pendingToGrow &+ runs.pending, capacityLimit)
        } else {
            runs.findFirst()
        }
        return e
    }

    /// The open bucket is empty and the run head lies after the cursor's bucket, in bucket
    /// `target`: opens the next listed bucket if it comes no later than that, else moves
    /// the cursor to `target` (every bucket between is empty). Moving the cursor within
    /// its block writes no buffer, so only the other paths make the buffers unique
    /// (`advance` does so itself): the common move skips the runtime call.
    @usableFromInline
    mutating func moveCursor(toward target: UInt64) {
        if bucketed == 0, target > blockEnd {
            makeUnique()
            let next = nextListedBlock()
            guard next <= block(target) else {
                // Nothing is listed before the run head's block: go straight there.
                cursor = target
                blockEnd = cursor | mask
                refill()
                return
            }
            _ = enterNextBlock()
            if !open.isEmpty {   // some of the block's events fell in its first bucket
                countOpen()
                return
            }
        }
        // A listed bucket up to the target's (or any, when the target lies beyond the block)?
        if bucketed > 0, target > blockEnd || anyOccupied(after: cursor & mask, through: target & mask) {
            advance()
            return
        }
        // (Entering a block leaves its events listed or in the open bucket, so the target
        // lies in the cursor's block by now.)
        precondition(target <= blockEnd, "run head beyond the cursor's block with nothing listed")
        cursor = target
    }

    /// Whether a fine bucket in `first + 1 ... last` (positions in the block) holds events:
    /// the bitmap words between, not the whole block (the run head is usually a few
    /// buckets ahead, the next listed bucket may be thousands).
    @inlinable @inline(__always)
    func anyOccupied(after first: UInt64, through last: UInt64) -> Bool {
        guard last > first else { return false }
        let bits = occupied.base
        var w = Int(truncatingIfNeeded: (first &+ 1) &>> 6)
        let lastWord = Int(truncatingIfNeeded: last &>> 6)
        var word = bits[w] & (~0 &<< ((first &+ 1) & 63))
        while w < lastWord {
            if word != 0 { return true }
            w += 1
            word = bits[w]
        }
        let keep = last & 63 == 63 ? ~UInt64(0) : (1 &<< (last & 63 &+ 1)) &- 1
        return word & keep != 0
    }

    /// The block of the next event beyond the fine level (`.max` when there is none).
    @usableFromInline
    func nextListedBlock() -> UInt64 {
        if coarsed > 0 {
            let after = block(cursor) &+ 1
            let k = firstCoarse(from: after)
            return after &+ ((k &- after) & (EventQueue.coarseCount - 1))
        }
        if let first = far.first { return block(bucket(first.time)) }
        return .max
    }
}
