extension EventQueue {
    /// The most events the node pool has held at once (its touched slots): what the queue
    /// costs in memory at its peak.
    @usableFromInline package var poolHighWater: Int { nodesUsed }
}
