extension EventHeap {
    /// Checks the heap property over the whole array; for tests and debug builds.
    /// - Complexity: O(n).
    @usableFromInline package func checkInvariants() -> String? {
        for i in 1..<Swift.max(heap.count, 1) {
            let parent = (i - 1) >> 2
            if Event.precedes(heap[i], heap[parent]) {
                return "heap order broken: child \(i) (t=\(heap[i].time), seq=\(heap[i].seq)) precedes parent \(parent) (t=\(heap[parent].time), seq=\(heap[parent].seq))"
            }
        }
        return nil
    }
}
