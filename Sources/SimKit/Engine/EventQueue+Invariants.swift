extension EventQueue {
    /// Checks the whole structure: the open bucket a heap holding only events at or before
    /// the cursor's bucket, every other bucket holding only its own events, the bitmap and
    /// the counts in step with the lists, and every far event beyond the window. For tests
    /// and debug builds.
    /// - Complexity: O(n + buckets).
    public func checkInvariants() -> String? {
        if let broken = open.checkInvariants() { return "open bucket: \(broken)" }
        for e in open.heap where e.time >> shift > cursor {
            return "open bucket holds t=\(e.time) (seq=\(e.seq)), after its bucket \(cursor) (shift \(shift))"
        }
        var listed = 0
        for b in heads.indices {
            let bit = occupied[b >> 6] >> UInt64(b & 63) & 1 == 1
            if bit != (heads[b] != EventQueue.none) { return "bucket \(b): occupied bit \(bit) but head \(heads[b])" }
            var n = heads[b]
            while n != EventQueue.none {
                let e = nodes[Int(n)]
                let abs = e.time >> shift
                if abs <= cursor || abs &- cursor > mask || Int(abs & mask) != b {
                    return "bucket \(b) holds t=\(e.time) (seq=\(e.seq)), which belongs elsewhere (cursor \(cursor), shift \(shift))"
                }
                listed += 1
                n = links[Int(n)]
            }
        }
        if listed != bucketed { return "bucketed \(bucketed) but the buckets hold \(listed)" }
        if let broken = far.checkInvariants() { return "far heap: \(broken)" }
        for e in far.heap where (e.time >> shift) <= cursor || (e.time >> shift) &- cursor <= mask {
            return "far event t=\(e.time) (seq=\(e.seq)) lies within the window (cursor \(cursor), shift \(shift))"
        }
        return nil
    }
}
