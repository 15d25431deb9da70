import SimKit

/// Keeps the first run's trace records in memory (up to `limit`), so that a second run of
/// the same scenario can be compared with it record by record (`TraceComparer`).
///
/// Used only by the determinism guard, on the seeds it checks: a normal run never keeps
/// its trace. A record takes `MemoryLayout<TraceRecord>.stride` bytes (a fuzz seed's
/// trace, some 10,000 records, under a megabyte); past `limit` records are only counted.
@usableFromInline package struct TraceTape: TraceObserver {
    /// The records kept, in trace order.
    @usableFromInline package private(set) var records: [TraceRecord] = []
    /// Every record seen, kept or not.
    @usableFromInline package private(set) var count: UInt64 = 0
    /// The most records kept.
    @usableFromInline package let limit: Int
    /// The world's facts, to name devices in reports.
    @usableFromInline package private(set) var facts: WorldFacts?

    /// The default bound: 2^21 records (about 100 MB), far above any fuzz seed's trace.
    @usableFromInline package static let defaultLimit = 1 << 21

    @usableFromInline package init(limit: Int = TraceTape.defaultLimit) {
        precondition(limit >= 0, "a tape's limit cannot be negative")
        self.limit = limit
    }

    /// Whether every record of the run was kept.
    @usableFromInline package var complete: Bool { count == UInt64(records.count) }

    @usableFromInline package mutating func begin(_ facts: WorldFacts) { self.facts = facts }

    /// - Complexity: amortised O(1).
    @usableFromInline package mutating func observe(_ record: TraceRecord) {
        if records.count < limit { records.append(record) }
        count &+= 1
    }
}

/// Watches a second run of the same scenario and finds the first record in which it
/// differs from the first run's `TraceTape`. It only compares; the run goes on to its end
/// either way (the world has no early stop for observers), which costs one more run at
/// most, and only on a seed that is already failing.
@usableFromInline package struct TraceComparer: TraceObserver {
    /// The first run's records.
    @usableFromInline package let expected: [TraceRecord]
    /// Whether the tape holds every record of the first run (else records past it are
    /// not compared; the fingerprints still are).
    @usableFromInline package let expectedComplete: Bool
    /// Records seen in this run.
    @usableFromInline package private(set) var count: UInt64 = 0
    /// The 0-based index of the first record that differs, if one did (within the tape).
    @usableFromInline package private(set) var firstDifference: Int?
    /// This run's record at `firstDifference`; nil when this run had ended there.
    @usableFromInline package private(set) var theirs: TraceRecord?

    @usableFromInline package init(_ tape: TraceTape) {
        expected = tape.records
        expectedComplete = tape.complete
    }

    /// - Complexity: O(1).
    @usableFromInline package mutating func observe(_ record: TraceRecord) {
        let i = Int(truncatingIfNeeded: count)
        count &+= 1
        guard firstDifference == nil else { return }
        if i < expected.count {
            if expected[i] != record { firstDifference = i; theirs = record }
        } else if expectedComplete {
            firstDifference = i; theirs = record   // this run goes on where the first one ended
        }
    }

    /// At the end of the run: a run that ended while the first one went on differs there.
    @usableFromInline package mutating func finish(at time: SimTime) {
        if firstDifference == nil, count < UInt64(expected.count) { firstDifference = Int(count); theirs = nil }
    }
}
