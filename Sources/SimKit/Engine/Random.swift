/// SimKit's own pseudo-random generator: xoshiro256** seeded through split-mix64,
/// with its own sampling, so a seed gives the same stream on every toolchain.
///
/// Components never share a stream: each forks its own with `fork(_:)` from a stable
/// key (a device index, a component tag), and a fork depends only on the root seed and
/// the key, never on how much the parent has drawn. Adding a device or an action
/// therefore does not shift the randomness of any other device.
@usableFromInline package struct SimRandom: RandomStream, Sendable {
    /// The seed this stream was made from; forks derive from it, not from the state.
    @usableFromInline package let seed: UInt64
    @usableFromInline var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    /// A stream from `seed`; the four state words are split-mix64 outputs.
    @inlinable
    package init(seed: UInt64) {
        self.seed = seed
        var sm = seed
        s0 = SimRandom.splitMix(&sm); s1 = SimRandom.splitMix(&sm)
        s2 = SimRandom.splitMix(&sm); s3 = SimRandom.splitMix(&sm)
        precondition(s0 | s1 | s2 | s3 != 0, "xoshiro state must not be all zero")
    }

    /// One split-mix64 step: advances `state` and returns a well-mixed word.
    @inlinable
    package static func splitMix(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An independent stream for `key`, derived from this stream's seed and the key only.
    @inlinable
    package func fork(_ key: UInt64) -> SimRandom {
        var sm = seed ^ 0x6A09_E667_F3BC_C909
        _ = SimRandom.splitMix(&sm)
        var k = key &+ SimRandom.splitMix(&sm)
        return SimRandom(seed: SimRandom.splitMix(&k))
    }

    /// An independent stream for a pair of keys, e.g. (component, device index).
    @inlinable
    package func fork(_ a: UInt64, _ b: UInt64) -> SimRandom { fork(a).fork(b) }

    /// The next 64 random bits (xoshiro256**).
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    package mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = (s3 << 45) | (s3 >> 19)
        return result
    }

    /// `k` distinct indices from `0..<n`, sorted ascending (Floyd's algorithm, then sorted).
    /// - Complexity: O(k log k).
    @usableFromInline package mutating func pick(_ k: Int, of n: Int) -> [Int] {
        precondition(k >= 0 && k <= n, "cannot pick \(k) of \(n)")
        if k == n { return Array(0..<n) }
        var chosen = Set<Int>(minimumCapacity: k)   // determinism: membership test only; the output order comes from sort()
        var out: [Int] = []
        out.reserveCapacity(k)
        for j in (n - k)..<n {
            let t = Int(below(UInt64(j + 1)))
            if chosen.insert(t).inserted { out.append(t) } else { chosen.insert(j); out.append(j) }
        }
        out.sort()   // the Set is only a membership test; the order comes from `sort`
        return out
    }
}

/// A source of random words, and SimKit's own sampling on top of it (the same on every
/// toolchain, unlike the standard library's).
@usableFromInline package protocol RandomStream {
    /// The next 64 random bits.
    mutating func next() -> UInt64
}

extension RandomStream {
    /// An unbiased integer in `0..<bound` (Lemire's multiply-and-reject); `bound` > 0.
    @inlinable @inline(__always)
    package mutating func below(_ bound: UInt64) -> UInt64 {
        precondition(bound > 0, "below(0) has no value to return")
        var m = next().multipliedFullWidth(by: bound)
        if m.low < bound {
            let threshold = (0 &- bound) % bound
            while m.low < threshold { m = next().multipliedFullWidth(by: bound) }
        }
        return m.high
    }

    /// An unbiased integer in the closed range `lo...hi`.
    @inlinable @inline(__always)
    package mutating func int(in range: ClosedRange<UInt64>) -> UInt64 {
        let span = range.upperBound &- range.lowerBound
        if span == UInt64.max { return next() }
        return range.lowerBound &+ below(span &+ 1)
    }

    /// True with probability `numerator / denominator`, an exact integer ratio.
    @inlinable @inline(__always)
    package mutating func chance(_ numerator: UInt64, outOf denominator: UInt64) -> Bool {
        precondition(denominator > 0 && numerator <= denominator, "chance \(numerator)/\(denominator) is not a ratio")
        if numerator == 0 { return false }
        if numerator == denominator { return true }
        return below(denominator) < numerator
    }
}

/// A short stream for one decision (a person's delay within a statement's jitter; a
/// request's latency and injected faults): split-mix64 from a point of its sequence picked
/// by a key unique to the decision. Starting one costs a multiply where a `fork` of a
/// `SimRandom` costs seven split-mix rounds, and the engine starts one for most of its
/// events; a few draws is all it is for.
@usableFromInline package struct KeyedRandom: RandomStream, Sendable {
    @usableFromInline var state: UInt64
    /// A stream for `key`, starting at `key × multiplier` of split-mix's sequence, so nearby
    /// keys (device 7, device 8) start far apart rather than one step apart: keys closer
    /// than 2^58 never start within 32 steps of each other (the odd multiplier is a
    /// spectrally good one of Steele and Vigna's; a test checks the distance).
    @inlinable package init(key: UInt64) {
        state = key &* KeyedRandom.multiplier
    }
    @usableFromInline static let multiplier: UInt64 = 0xD1B5_4A32_D192_ED03
    @inlinable @inline(__always) package mutating func next() -> UInt64 { SimRandom.splitMix(&state) }
}
