extension EventQueue {
    /// Checks the fine level: the open bucket in order and holding only events at or
    /// before the cursor's bucket, every fine bucket holding only its own events, and the
    /// bitmap and the count in step with the lists. For tests and debug builds.
    /// - Complexity: O(n + buckets).
    @usableFromInline package func checkInvariants() -> String? {
        if let broken = open.checkInvariants() { return "open bucket: \(broken)" }
        for e in open.events where e.time >> shift > cursor {
            return "open bucket holds t=\(e.time) (seq=\(e.seq)), after its bucket \(cursor) (shift \(shift))"
        }
        var listed = 0
        for b in heads.indices {
            let bit = occupied[b >> 6] >> UInt64(b & 63) & 1 == 1
            if bit != (heads[b] != EventQueue.none) { return "bucket \(b): occupied bit \(bit) but head \(heads[b])" }
            var n = heads[b]
            while n != EventQueue.none {
                let e = nodes[Int(n)].event
                let abs = e.time >> shift
                if abs <= cursor || abs &- cursor > mask || Int(abs & mask) != b {
                    return "bucket \(b) holds t=\(e.time) (seq=\(e.seq)), which belongs elsewhere (cursor \(cursor), shift \(shift))"
                }
                listed += 1
                n = nodes[Int(n)].next
            }
        }
        if listed != bucketed { return "bucketed \(bucketed) but the buckets hold \(listed)" }
        if let broken = far.checkInvariants() { return "far heap: \(broken)" }
        for e in far.heap where (e.time >> shift) <= cursor || (e.time >> shift) &- cursor <= mask {
            return "far event t=\(e.time) (seq=\(e.seq)) lies within the window (cursor \(cursor), shift \(shift))"
        }
        return nil
    }

    /// Checks what `checkInvariants` does not see: every coarse list holding only events
    /// of its block within the coarse level, its bit in step, the far heap beyond the
    /// coarse level, the runs in order, the counts adding up, and `pendingForSlowPush` no
    /// lower than the least of the two bounds it stands for and no higher than the queue's
    /// bound. For tests and debug builds.
    /// - Complexity: O(n).
    @usableFromInline package func checkLevels() -> String? {
        if blockEnd != cursor | mask { return "blockEnd \(blockEnd) is not the end of the cursor's block \(cursor | mask)" }
        // Runs that ended since it was set leave it above min(pendingToGrow + runs.pending,
        // capacityLimit), never beyond the bound.
        if pendingForSlowPush > capacityLimit || pendingForSlowPush < Swift.min(pendingToGrow &+ runs.pending, capacityLimit) {
            return "pendingForSlowPush \(pendingForSlowPush) is not within min(pendingToGrow \(pendingToGrow) + runs \(runs.pending), capacityLimit \(capacityLimit)) and the bound"
        }
        if let broken = runs.checkInvariants() { return "runs: \(broken)" }
        let current = block(cursor)
        var listed = 0
        for k in 0..<Int(EventQueue.coarseCount) {
            let bit = coarseOccupied >> UInt64(k) & 1 == 1
            if bit != (coarseHeads[k] != EventQueue.none) { return "coarse list \(k): occupied bit \(bit) but head \(coarseHeads[k])" }
            var n = coarseHeads[k]
            while n != EventQueue.none {
                let e = nodes[Int(n)].event
                let ahead = block(bucket(e.time)) &- current
                if ahead == 0 || ahead > EventQueue.coarseCount || Int(block(bucket(e.time)) & (EventQueue.coarseCount - 1)) != k {
                    return "coarse list \(k) holds t=\(e.time) (seq=\(e.seq)), \(ahead) blocks ahead of the cursor's"
                }
                listed += 1
                n = nodes[Int(n)].next
            }
        }
        if listed != coarsed { return "coarsed \(coarsed) but the coarse lists hold \(listed)" }
        for e in far.heap where block(bucket(e.time)) &- current <= EventQueue.coarseCount {
            return "far event t=\(e.time) (seq=\(e.seq)) lies within the coarse level"
        }
        let total = open.count + bucketed + coarsed + far.count + runs.pending
        if total != pending { return "pending \(pending) but the levels hold \(total)" }
        return nil
    }
}
