/// A 4-ary min-heap of `Event` values ordered by (time, insertion sequence), with hole
/// sifting. `EventQueue` keeps here the events beyond its coarse level and the bursts its
/// open bucket cannot insert cheaply; it was the whole queue before the calendar queue,
/// and stays as a simple reference for the benchmarks.
///
/// Storage is one contiguous array that only grows to the high-water mark: pushing and
/// popping allocate nothing once it is warm. The size is bounded by `capacityLimit`,
/// and `push` refuses to go past it (a runaway schedule is a bug, not a slow run).
@usableFromInline package struct EventHeap: Sendable {
    @usableFromInline var heap: [Event] = []
    @usableFromInline var nextSeq: UInt64 = 0
    /// The most events that may be pending at once.
    @usableFromInline package let capacityLimit: Int

    @usableFromInline package init(capacityLimit: Int = 1 << 28, reserving: Int = 0) {
        precondition(capacityLimit > 0, "capacityLimit must be positive")
        self.capacityLimit = capacityLimit
        heap.reserveCapacity(min(reserving, capacityLimit))
    }

    /// The number of pending events.
    @inlinable package var count: Int { heap.count }
    @inlinable package var isEmpty: Bool { heap.isEmpty }
    /// The time of the earliest pending event.
    @inlinable package var nextTime: SimTime? { heap.first?.time }
    /// How many events have been pushed in all; also the next insertion sequence.
    @inlinable package var pushedTotal: UInt64 { nextSeq }

    /// Schedules `event`, stamping its insertion sequence; false when the heap is full.
    /// - Complexity: O(log n).
    @inlinable @discardableResult
    package mutating func push(_ event: Event) -> Bool {
        guard heap.count < capacityLimit else { return false }
        var e = event
        e.seq = nextSeq
        nextSeq &+= 1
        insert(e)
        return true
    }

    /// Inserts `e` with the sequence it already carries (for `EventQueue`'s far and burst heaps).
    /// - Complexity: O(log n).
    @inlinable
    mutating func insert(_ e: Event) {
        heap.append(e)
        siftUp(from: heap.count - 1, e)
    }

    /// The earliest event, without removing it.
    /// - Complexity: O(1).
    @inlinable var first: Event? { heap.first }

    /// Removes and returns the earliest event.
    /// - Complexity: O(log n).
    @inlinable
    package mutating func pop() -> Event? {
        guard let last = heap.popLast() else { return nil }
        if heap.isEmpty {
            if heap.capacity > EventHeap.keptCapacity { releaseStorage() }
            return last
        }
        let top = heap[0]
        siftDown(from: 0, last)
        return top
    }

    /// Removes every pending event, keeping the storage.
    @usableFromInline package mutating func removeAll() { heap.removeAll(keepingCapacity: true) }

    /// The most slots an empty heap keeps: a drained burst bigger than this (a million
    /// devices launching at once) gives its memory back, so that the queue's later peaks
    /// (a big bucket opened, a day's sorted runs) do not add to it. 4 MiB of events; the
    /// bursts of 10,000 devices stay below it.
    @inlinable static var keptCapacity: Int { 1 << 17 }

    /// Frees the storage of an empty heap (see `keptCapacity`).
    @usableFromInline @inline(never)
    mutating func releaseStorage() { heap = [] }

    /// Moves the hole at `index` up until `e` fits, then writes `e` once.
    @inlinable
    mutating func siftUp(from index: Int, _ e: Event) {
        var i = index
        heap.withUnsafeMutableBufferPointer { h in
            while i > 0 {
                let parent = (i - 1) >> 2
                guard Event.precedes(e, h[parent]) else { break }
                h[i] = h[parent]
                i = parent
            }
            h[i] = e
        }
    }

    /// Moves the hole at `index` down past its smallest child until `e` fits.
    @inlinable
    mutating func siftDown(from index: Int, _ e: Event) {
        heap.withUnsafeMutableBufferPointer { h in
            let n = h.count
            var i = index
            while true {
                let first = 4 * i + 1
                if first >= n { break }
                var best = first
                let end = Swift.min(first + 4, n)
                var c = first + 1
                while c < end {
                    if Event.precedes(h[c], h[best]) { best = c }
                    c += 1
                }
                guard Event.precedes(h[best], e) else { break }
                h[i] = h[best]
                i = best
            }
            h[i] = e
        }
    }
}
