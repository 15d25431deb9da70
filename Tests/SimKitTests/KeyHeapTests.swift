import Testing
@testable import SimKit

@Suite("KeyHeap")
struct KeyHeapTests {
    @Test("pops keys in ascending order, against a sorted reference, over 2,000 seeds")
    func matchesSortedReference() {
        for seed in 0..<2_000 as Range<UInt64> {
            var r = SimRandom(seed: seed)
            var heap = KeyHeap()
            var reference: [UInt64] = []
            for _ in 0..<Int(r.below(200)) {
                if r.chance(2, outOf: 3) {
                    let k = r.chance(1, outOf: 4) ? r.below(8) : r.next()   // many duplicates too
                    heap.push(k); reference.append(k)
                } else {
                    reference.sort()
                    let expected = reference.isEmpty ? nil : reference.removeFirst()
                    #expect(heap.pop() == expected, "seed \(seed)")
                }
                #expect(heap.count == reference.count)
                #expect(heap.min == reference.min())
            }
        }
    }
}
