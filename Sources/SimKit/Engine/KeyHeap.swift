/// A binary min-heap of `UInt64` keys. The world packs (time, statement index) into one
/// key so that statements due at the same time come out in file order.
@usableFromInline package struct KeyHeap: Sendable {
    @usableFromInline var keys: [UInt64] = []
    package init() {}
    @inlinable package var isEmpty: Bool { keys.isEmpty }
    @inlinable package var count: Int { keys.count }
    @inlinable package var min: UInt64? { keys.first }

    /// - Complexity: O(log n).
    @usableFromInline package mutating func push(_ key: UInt64) {
        keys.append(key)
        var i = keys.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard key < keys[parent] else { break }
            keys[i] = keys[parent]
            i = parent
        }
        keys[i] = key
    }

    /// - Complexity: O(log n).
    @usableFromInline package mutating func pop() -> UInt64? {
        guard let last = keys.popLast() else { return nil }
        guard let top = keys.first else { return last }
        var i = 0
        let n = keys.count
        while true {
            let l = 2 * i + 1
            if l >= n { break }
            var c = l
            if l + 1 < n, keys[l + 1] < keys[l] { c = l + 1 }
            guard keys[c] < last else { break }
            keys[i] = keys[c]
            i = c
        }
        keys[i] = last
        return top
    }
}
