import Testing
@testable import SimKit

/// `Prefetch.bytes` hints every cache line a value spans, whatever its size and alignment:
/// a hint for the first and last byte alone left the middle line of a 136-byte value a
/// miss at every event.
@Suite struct PrefetchTests {
    @Test func everyLineOfAValueIsHinted() {
        for count in 1...300 {
            for alignment in 0..<Prefetch.lineBytes {
                var hinted = Set<Int>()
                Prefetch.forEachHint(count: count) { offset in
                    #expect(offset >= 0 && offset < count, "hint outside the value: \(offset) of \(count)")
                    hinted.insert((alignment + offset) / Prefetch.lineBytes)
                }
                let spanned = Set(alignment / Prefetch.lineBytes...(alignment + count - 1) / Prefetch.lineBytes)
                #expect(hinted == spanned, "\(count) bytes at \(alignment): lines \(spanned.sorted()), hinted \(hinted.sorted())")
            }
        }
    }

    @Test func hintsAreFewForSmallValues() {
        var hints = 0
        Prefetch.forEachHint(count: 40) { _ in hints += 1 }
        #expect(hints == 2)
        hints = 0
        Prefetch.forEachHint(count: 136) { _ in hints += 1 }
        #expect(hints == 4)
    }
}
