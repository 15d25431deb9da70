import SimKit

/// Streams the full trace as text, one `TraceText` line per record, to `sink` in chunks of
/// about `chunkBytes`: a long run never holds its trace in memory. The sink does the I/O
/// (a file handle in the command line), so the simulation itself stays pure.
package struct TraceWriter: TraceObserver {
    let sink: (String) -> Void
    let chunkBytes: Int
    var buffer = ""
    var facts: WorldFacts?
    package private(set) var records: UInt64 = 0

    package init(chunkBytes: Int = 1 << 16, sink: @escaping (String) -> Void) {
        precondition(chunkBytes > 0, "chunkBytes must be positive")
        self.chunkBytes = chunkBytes
        self.sink = sink
        buffer.reserveCapacity(chunkBytes + 256)
    }

    package mutating func begin(_ facts: WorldFacts) {
        self.facts = facts
        buffer += "# simkit trace: seed \(facts.seed), \(facts.deviceCount) devices, \(DurationText.format(facts.durationMs))\n"
    }

    package mutating func observe(_ record: TraceRecord) {
        records += 1
        buffer += TraceText.line(record, facts: facts)
        buffer += "\n"
        if buffer.utf8.count >= chunkBytes { flush() }
    }

    package mutating func finish(at time: SimTime) {
        buffer += "# end at \(DurationText.clock(time)), \(records) records\n"
        flush()
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        sink(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
