import SimKitTestSupport
import Testing
@testable import SimKit

/// The plain reference: an unsorted array, popped by a linear scan for the least
/// (time, seq). Slow and obviously right.
private struct ReferenceQueue {
    var items: [Event] = []
    var nextSeq: UInt64 = 0
    let capacityLimit: Int

    mutating func push(_ e: Event) -> Bool {
        guard items.count < capacityLimit else { return false }
        var e = e
        e.seq = nextSeq
        nextSeq += 1
        items.append(e)
        return true
    }

    mutating func pop() -> Event? {
        guard var best = items.indices.first else { return nil }
        for i in items.indices where items[i].time < items[best].time
            || (items[i].time == items[best].time && items[i].seq < items[best].seq) { best = i }
        return items.remove(at: best)
    }

    var nextTime: SimTime? { items.map(\.time).min() }
}

/// What the sweeps need of a queue: the calendar queue and the heap it overflows into
/// are checked by the same sweeps.
protocol SweptQueue {
    init(capacityLimit: Int, reserving: Int)
    mutating func push(_ event: Event) -> Bool
    mutating func pop() -> Event?
    mutating func removeAll()
    var count: Int { get }
    var isEmpty: Bool { get }
    var nextTime: SimTime? { get }
    var pushedTotal: UInt64 { get }
    /// Every structural check the queue has.
    func checkStructure() -> String?
}
extension EventQueue: SweptQueue {
    func checkStructure() -> String? { checkInvariants() ?? checkLevels() }
}
extension EventHeap: SweptQueue {
    func checkStructure() -> String? { checkInvariants() }
}
/// An `EventQueue` that walks ahead (`walkAhead`) before every push and pop, as `World.run`
/// does for big worlds: the walk is a cache hint and must change nothing.
struct WalkingQueue: SweptQueue {
    var q: EventQueue
    init(capacityLimit: Int, reserving: Int) {
        q = EventQueue(capacityLimit: capacityLimit, reserving: reserving)
        q.prefetches = true
    }
    mutating func push(_ event: Event) -> Bool { q.walkAhead(); return q.push(event) }
    mutating func pop() -> Event? { q.walkAhead(); return q.pop() }
    mutating func removeAll() { q.removeAll() }
    var count: Int { q.count }
    var isEmpty: Bool { q.isEmpty }
    var nextTime: SimTime? { q.nextTime }
    var pushedTotal: UInt64 { q.pushedTotal }
    func checkStructure() -> String? { q.checkStructure() }
}

/// Seed chunks for the sweep: 10 chunks of 500 sequences = 5,000 random sequences.
private let sweepChunks = Array(0..<10)
private let sequencesPerChunk = 500

@Suite struct EventQueueTests {
    /// A time drawn to make ties common and to reach the far future.
    static func time(_ r: inout SimRandom, now: SimTime) -> SimTime {
        switch r.below(8) {
        case 0, 1, 2: return now + r.below(3)                  // many exact ties
        case 3: return now                                     // ties with the current time
        case 4: return now + r.below(1_000_000)
        case 5: return UInt64.max / 2 + r.below(2)             // far future, with ties there too
        case 6: return r.chance(1, outOf: 4) ? .max : UInt64.max - r.below(4)
        default: return r.below(UInt64.max / 4)
        }
    }

    /// Random push/pop/removeAll sequences checked step by step against the reference:
    /// popped events (time, seq and payload), `count`, `isEmpty`, `nextTime`,
    /// `pushedTotal`, the heap invariant, and refusal at `capacityLimit`.
    @Test(arguments: sweepChunks)
    func calendarQueueMatchesSortedReference(chunk: Int) throws {
        try sweep(EventQueue.self, chunk: chunk)
    }

    @Test(arguments: sweepChunks)
    func walkingAheadChangesNoOrder(chunk: Int) throws {
        try sweep(WalkingQueue.self, chunk: chunk)
    }

    @Test(arguments: sweepChunks)
    func heapMatchesSortedReference(chunk: Int) throws {
        try sweep(EventHeap.self, chunk: chunk)
    }

    func sweep<Q: SweptQueue>(_: Q.Type, chunk: Int) throws {
        var refusals = 0, tiedPops = 0, farPops = 0   // coverage of the cases that matter
        for s in 0..<sequencesPerChunk {
            let seed = UInt64(chunk * sequencesPerChunk + s)
            var r = SimRandom(seed: seed)
            let limit = r.chance(1, outOf: 3) ? Int(r.int(in: 1...24)) : 1 << 20
            var q = Q(capacityLimit: limit, reserving: Int(r.below(8)))
            var ref = ReferenceQueue(capacityLimit: limit)
            var now: SimTime = 0
            var payload: UInt32 = 0
            let steps = Int(r.int(in: 1...160))
            let pushBias = r.int(in: 1...9)   // out of 10: some sequences grow, some drain
            for step in 0..<steps {
                let where_ = "seed \(seed) step \(step)"
                if r.chance(1, outOf: 200) {
                    q.removeAll(); ref.items.removeAll()
                } else if r.chance(pushBias, outOf: 10) {
                    payload += 1
                    let e = Event(time: Self.time(&r, now: now), seq: r.next(), target: payload,
                                  kind: UInt8(truncatingIfNeeded: payload), arg: payload &* 7)
                    let full = ref.items.count == limit
                    let accepted = q.push(e)
                    try #require(accepted == ref.push(e), "\(where_): push accepted \(accepted) with count \(q.count) of \(limit)")
                    try #require(accepted == !full, "\(where_): push must refuse exactly when full")
                    if !accepted { refusals += 1 }
                } else {
                    let got = q.pop(), want = ref.pop()
                    try #require(got == want, "\(where_): popped \(String(describing: got)), expected \(String(describing: want))")
                    if let got {
                        if ref.items.contains(where: { $0.time == got.time }) { tiedPops += 1 }
                        if got.time >= UInt64.max / 2 { farPops += 1 }
                        now = max(now, min(got.time, UInt64.max - 1_000_000))
                    }
                }
                try #require(q.count == ref.items.count, "\(where_): count \(q.count) != \(ref.items.count)")
                try #require(q.isEmpty == ref.items.isEmpty, "\(where_)")
                try #require(q.nextTime == ref.nextTime, "\(where_): nextTime \(String(describing: q.nextTime)) != \(String(describing: ref.nextTime))")
                try #require(q.pushedTotal == ref.nextSeq, "\(where_): pushedTotal")
                if let broken = q.checkStructure() { Issue.record("\(where_): \(broken)"); return }
            }
            // Drain: everything comes out in (time, seq) order.
            var last: Event?
            while let want = ref.pop() {
                let got = q.pop()
                try #require(got == want, "seed \(seed) drain: popped \(String(describing: got)), expected \(want)")
                if let last { try #require(Event.precedes(last, want), "seed \(seed): reference order") }
                last = want
            }
            try #require(q.pop() == nil && q.isEmpty && q.nextTime == nil, "seed \(seed): queue not empty after drain")
        }
        #expect(refusals > 100 && tiedPops > 1_000 && farPops > 1_000,
                "sweep coverage: \(refusals) refusals, \(tiedPops) pops with a tie left behind, \(farPops) far-future pops")
    }

    @Test func equalTimesComeOutFirstInFirstOut() {
        var q = EventQueue()
        for i in 0..<1_000 as Range<UInt32> {
            // Interleave two times so the heap really reorders.
            q.push(Event(time: i % 2 == 0 ? 50 : 10, target: i, kind: 0))
        }
        var order: [UInt32] = []
        while let e = q.pop() { order.append(e.target) }
        let odds = (0..<1_000 as Range<UInt32>).filter { $0 % 2 == 1 }
        let evens = (0..<1_000 as Range<UInt32>).filter { $0 % 2 == 0 }
        #expect(order == odds + evens)
    }

    @Test func pushStampsSequenceIgnoringCallersValue() {
        var q = EventQueue()
        q.push(Event(time: 5, seq: 999, target: 0, kind: 0))
        q.push(Event(time: 5, seq: 0, target: 1, kind: 0))
        #expect(q.pop()?.seq == 0)
        #expect(q.pop()?.seq == 1)
        #expect(q.pushedTotal == 2)
    }

    @Test func farFutureTimesOrderCorrectly() {
        var q = EventQueue()
        let times: [SimTime] = [.max, UInt64.max / 2, 0, UInt64.max / 2 + 1, UInt64.max - 1, UInt64.max / 2, 1, .max]
        for (i, t) in times.enumerated() { q.push(Event(time: t, target: UInt32(i), kind: 0)) }
        #expect(q.nextTime == 0)
        var out: [SimTime] = []
        while let e = q.pop() { out.append(e.time) }
        #expect(out == times.sorted())
    }

    @Test(arguments: [1, 2, 4, 5, 17])
    func capacityLimitRefusesWhenFull(limit: Int) {
        var q = EventQueue(capacityLimit: limit)
        for i in 0..<limit {
            let accepted = q.push(Event(time: UInt64(limit - i), target: UInt32(i), kind: 0))
            #expect(accepted)
        }
        #expect(q.count == limit)
        let before = q.pushedTotal
        let refused = !q.push(Event(time: 0, target: 99, kind: 0))
        #expect(refused, "push past capacityLimit must return false")
        #expect(q.count == limit && q.pushedTotal == before, "a refused push changes nothing")
        #expect(q.nextTime == 1)
        #expect(q.pop()?.target == UInt32(limit - 1))
        let acceptedAgain = q.push(Event(time: 0, target: 99, kind: 0))
        #expect(acceptedAgain, "room again after a pop")
        #expect(q.pop()?.target == 99)
        #expect(q.checkInvariants() == nil)
    }

    @Test func removeAllKeepsSequenceCounting() {
        var q = EventQueue()
        for i in 0..<10 { q.push(Event(time: UInt64(i), target: 0, kind: 0)) }
        q.removeAll()
        #expect(q.isEmpty && q.count == 0 && q.nextTime == nil && q.pop() == nil)
        q.push(Event(time: 3, target: 1, kind: 0))
        #expect(q.pop()?.seq == 10, "sequence numbers are never reused")
    }

    /// One deep heap (several levels of a 4-ary tree) with many duplicate times.
    @Test func largeHeapDrainsInOrder() throws {
        var r = SimRandom(seed: 2026)
        var q = EventQueue(reserving: 20_000)
        for i in 0..<20_000 as Range<UInt32> { q.push(Event(time: r.below(500), target: i, kind: 0)) }
        #expect(q.checkInvariants() == nil)
        let first = q.pop()
        var last = try #require(first)
        while let e = q.pop() {
            try #require(Event.precedes(last, e), "(\(last.time), \(last.seq)) before (\(e.time), \(e.seq))")
            last = e
        }
    }

    @Test func checkInvariantsReportsABrokenHeap() {
        var q = EventQueue()
        for t in [1, 2, 3, 4, 5] as [SimTime] { q.push(Event(time: t, target: 0, kind: 0)) }
        #expect(q.checkInvariants() == nil)
        q.open.sorted[q.open.end - 1].time = 1 << 40   // corrupt it through the internal storage
        let message = q.checkInvariants()
        #expect(message != nil)
        #expect(message?.contains("t=\(1 << 40)") == true)
        var h = EventHeap()
        for t in [1, 2, 3, 4, 5] as [SimTime] { h.push(Event(time: t, target: 0, kind: 0)) }
        h.heap[0].time = 100
        #expect(h.checkInvariants()?.contains("t=100") == true)
    }

    /// Long world-like runs: time only moves forward, delays from 0 ms to the far future,
    /// many ties, and counts large enough to resize the calendar (thousands of buckets)
    /// and to slide its window across the far heap. Checked against a sorted array.
    @Test(.tags(.slow), .slowTier, arguments: sweepChunks)
    func calendarQueueMatchesSortedReferenceOverLongRuns(chunk: Int) throws {
        var rebuiltWide = 0, farPops = 0
        for s in 0..<200 {
            let seed = UInt64(1_000_000 + chunk * 200 + s)
            var r = SimRandom(seed: seed)
            var q = EventQueue(reserving: Int(r.below(3_000)))
            var sorted: [Event] = []   // the reference, ascending by (time, seq)
            var seq: UInt64 = 0
            var now: SimTime = 0
            let steps = Int(r.int(in: 100...4_000))
            let grow = r.int(in: 5...9)
            let scale = r.int(in: 0...40)
            for step in 0..<steps {
                if sorted.isEmpty || r.chance(grow, outOf: 10) {
                    let delay: SimTime
                    switch r.below(10) {
                    case 0, 1: delay = 0
                    case 2: delay = r.below(3)
                    case 3, 4, 5: delay = r.below(UInt64(1) << (scale / 2 + 1))
                    case 6, 7: delay = r.below(UInt64(1) << scale + 1)
                    case 8: delay = UInt64(1) << scale
                    default: delay = r.chance(1, outOf: 20) ? UInt64.max - now : r.below(UInt64(1) << 50)
                    }
                    let e = Event(time: now > UInt64.max - delay ? .max : now + delay, target: UInt32(step), kind: 1)
                    let accepted = q.push(e)
                    #expect(accepted)
                    var stamped = e
                    stamped.seq = seq
                    seq += 1
                    var lo = sorted.startIndex, hi = sorted.endIndex
                    while lo < hi { let mid = (lo + hi) / 2; if Event.precedes(sorted[mid], stamped) { lo = mid + 1 } else { hi = mid } }
                    sorted.insert(stamped, at: lo)
                } else {
                    let want = sorted.removeFirst()
                    let got = q.pop()
                    try #require(got == want, "seed \(seed) step \(step): popped \(String(describing: got)), expected \(want)")
                    now = want.time
                    if now >= UInt64.max / 2 { farPops += 1 }
                }
                try #require(q.count == sorted.count && q.nextTime == sorted.first?.time, "seed \(seed) step \(step)")
                if step % 97 == 0, let broken = q.checkStructure() { Issue.record("seed \(seed) step \(step): \(broken)"); return }
            }
            if q.bucketCount > 256 { rebuiltWide += 1 }
            while let want = sorted.first {
                sorted.removeFirst()
                let got = q.pop()
                try #require(got == want, "seed \(seed) drain")
            }
            try #require(q.isEmpty && q.pop() == nil, "seed \(seed): not empty after drain")
        }
        #expect(rebuiltWide > 10 && farPops > 10, "coverage: \(rebuiltWide) runs resized, \(farPops) far pops")
    }
}

/// An `EventQueue` driven in step with a sorted array (ascending (time, seq)): every pop is
/// compared with the reference, and the whole structure is checked as it goes.
private struct PairedQueue {
    var q: EventQueue
    var sorted: [Event] = []
    var nextSeq: UInt64 = 0
    var target: UInt32 = 0

    init(_ q: EventQueue = EventQueue()) { self.q = q }

    mutating func push(_ time: SimTime) throws {
        target &+= 1
        let e = Event(time: time, target: target, kind: 3, arg: target &* 3)
        let accepted = q.push(e)
        try #require(accepted, "push at t=\(time) refused")
        var stamped = e
        stamped.seq = nextSeq
        nextSeq += 1
        var lo = sorted.startIndex, hi = sorted.endIndex
        while lo < hi { let mid = (lo + hi) / 2; if Event.precedes(sorted[mid], stamped) { lo = mid + 1 } else { hi = mid } }
        sorted.insert(stamped, at: lo)
    }

    @discardableResult
    mutating func pop() throws -> Event? {
        let got = q.pop()
        let want = sorted.isEmpty ? nil : sorted.removeFirst()
        try #require(got == want, "popped \(String(describing: got)), expected \(String(describing: want))")
        try #require(q.count == sorted.count && q.nextTime == sorted.first?.time, "count or nextTime out of step")
        return got
    }

    func check() throws {
        if let broken = q.checkInvariants() ?? q.checkLevels() { Issue.record("\(broken)"); throw CheckFailed() }
    }

    mutating func drain() throws {
        while !sorted.isEmpty { try pop() }
        try #require(q.pop() == nil && q.isEmpty, "queue not empty after the reference drained")
    }

    struct CheckFailed: Error {}
}

/// The edges of the calendar: bursts into the open bucket, pushes before the cursor,
/// oversized buckets, block changes, the far heap, resizes in the middle of a run, and
/// copies.
@Suite struct EventQueueEdgeTests {
    /// Thousands of events pushed at one time into the open bucket overflow the sorted
    /// array's scan into the burst heap; they must still come out first-in first-out and
    /// interleaved correctly with the sorted events around them.
    @Test func burstAtOneTimeIntoTheOpenBucket() throws {
        var p = PairedQueue()
        for t in 100..<110 as Range<SimTime> { try p.push(t) }   // the open bucket (cursor 0)
        try p.pop()                                              // t=100; the bucket is open
        var burstSeen = 0
        for i in 0..<5_000 {
            try p.push(105)
            if i % 7 == 0 { try p.push(101) }                    // earlier than the burst
            if i % 11 == 0 { try p.push(200) }                   // later than the burst
            if i % 13 == 0 { try p.pop() }
            burstSeen = max(burstSeen, p.q.open.burst.count)
        }
        try p.check()
        #expect(burstSeen > 1_000, "the burst must overflow into the burst heap (saw \(burstSeen))")
        try p.drain()
    }

    /// Pushes into the open bucket compare times only (a push carries the newest sequence);
    /// at the last millisecond of time that would pass the sentinel, so such events go to
    /// the burst heap instead, and still come out first-in first-out.
    @Test func eventsAtTheEndOfTimeStayFirstInFirstOut() throws {
        var p = PairedQueue()
        try p.push(SimTime.max)
        try p.push(SimTime.max - 1)
        try p.pop()                                              // the cursor is at the last bucket
        for i in 0..<100 {
            try p.push(i % 3 == 0 ? SimTime.max - 1 : SimTime.max)
            if i % 10 == 0 { try p.pop() }
        }
        try p.check()
        try p.drain()
    }

    /// Pushes earlier than the open bucket (the cursor has moved on to a later bucket) go
    /// into the open bucket and come out first; ties with the cursor's time stay FIFO.
    @Test func pushesEarlierThanTheCursor() throws {
        var p = PairedQueue()
        try p.push(50_000_000)
        try p.push(50_000_000)
        try p.push(90_000_000)
        try p.pop()                                              // the cursor is at 50,000 s now
        #expect(p.q.cursor > 0)
        for t in [5, 0, 50_000_000, 49_999_999, 5, 70_000_000] as [SimTime] { try p.push(t) }
        try p.check()
        let next = try p.pop()
        #expect(next?.time == 0)
        try p.drain()
    }

    /// A fine bucket holding more events than the insertion sort takes is sorted whole when
    /// it opens; many of them tie.
    @Test func oversizedBucketIsSortedWhenOpened() throws {
        var r = SimRandom(seed: 77)
        var p = PairedQueue()
        for _ in 0..<600 { try p.push(4_096 + r.below(300)) }   // one bucket ahead (width 1,024 ms)
        try p.check()
        #expect(p.q.bucketed == 600)
        try p.pop()
        #expect(p.q.open.sortedCount > OpenBucket.insertionSortMax, "the bucket must open as one sorted run")
        try p.check()
        try p.drain()
    }

    /// Events days apart cross many blocks, fill the coarse level and overflow into the far
    /// heap; popping walks block to block and refills the coarse level from the far heap.
    @Test func blocksCoarseListsAndTheFarHeap() throws {
        var r = SimRandom(seed: 9)
        var p = PairedQueue()
        for _ in 0..<3_000 { try p.push(r.below(40 * Ms.day)) }
        try p.check()
        #expect(p.q.far.count > 0 && p.q.coarsed > 0, "far \(p.q.far.count), coarse \(p.q.coarsed)")
        var now: SimTime = 0
        for step in 0..<6_000 {
            if let e = try p.pop() { now = e.time }
            if step % 2 == 0 { try p.push(now + r.below(3 * Ms.day)) }
            if step % 500 == 0 { try p.check() }
        }
        try p.drain()
    }

    /// The bucket count doubles and the width changes while events sit in every level,
    /// the open bucket and its burst heap included; the order must not change.
    @Test func resizesInTheMiddleOfARun() throws {
        var r = SimRandom(seed: 2024)
        var p = PairedQueue()
        let buckets = p.q.bucketCount
        for _ in 0..<1_500 { try p.push(r.below(600_000)) }      // more than 2 per bucket
        #expect(p.q.bucketCount > buckets, "the block must have grown")
        var shifts: [UInt64] = [p.q.shift]
        var now: SimTime = 0
        // Phases long enough for judgements in each: the width halves only after twice as
        // many arrivals as events pending, and doubles only after 32 times as many.
        for step in 0..<96_000 {
            let dense = (step / 24_000) % 2 == 1                     // sparse and dense phases
            now = try p.pop()?.time ?? now
            switch r.below(8) {
            case 0: try p.push(now)                                  // ties at the cursor
            case 1: if step % 50 == 0 { for _ in 0..<40 { try p.push(now + 1) } } else { try p.push(now + 1) }
            case 2: try p.push(now + r.below(10 * Ms.day))           // coarse and far
            default: try p.push(now + (dense ? r.below(16) : r.below(Ms.hour)))
            }
            if !shifts.contains(p.q.shift) { shifts.append(p.q.shift) }
            if step % 1_000 == 0 { try p.check() }
        }
        #expect(shifts.count > 2, "the width must have changed mid-run: \(shifts)")
        try p.drain()
    }

    /// A re-layout takes the fine lists through the bitmap when they are sparse (at most
    /// half as many events as buckets) and keeps a same-size block's heads; otherwise it
    /// reads every head into a new block. Both, to the same and to twice the size, wider
    /// and narrower, with events in every level: the order must not change.
    @Test(arguments: [(dense: false, grow: false), (dense: false, grow: true),
                      (dense: true, grow: false), (dense: true, grow: true)])
    func relayoutKeepsTheOrder(dense: Bool, grow: Bool) throws {
        for newShiftDelta in [-2, -1, 1, 2] {
            var r = SimRandom(seed: (dense ? 1_000 : 0) &+ UInt64(newShiftDelta + 2))
            var p = PairedQueue(EventQueue(reserving: 4_096))
            try p.push(0)
            try p.pop()                                              // the open bucket is the first
            for _ in 0..<100 {
                switch r.below(4) {
                case 0: try p.push(r.below(2_000))                   // the open bucket and the next
                case 1: try p.push(r.below(20 * Ms.day))             // coarse and far
                default: try p.push(r.below(2 * Ms.hour))            // fine
                }
            }
            // Dense: more listed events than half the buckets (pushes past twice the
            // buckets grow the block, so this ends).
            var pushes = 0
            while dense, p.q.bucketed <= p.q.bucketCount / 2, pushes < 100_000 {
                try p.push(2_000 + r.below(UInt64(p.q.bucketCount) * 1_024 / 2)); pushes += 1
            }
            let buckets = p.q.bucketCount
            #expect((p.q.bucketed > buckets / 2) == dense, "\(p.q.bucketed) listed in \(buckets) buckets")
            p.q.relayout(shift: UInt64(Int(p.q.shift) + newShiftDelta), buckets: grow ? 2 * buckets : buckets)
            #expect(p.q.bucketCount == (grow ? 2 * buckets : buckets))
            try p.check()
            for _ in 0..<p.sorted.count / 2 { try p.pop() }
            try p.check()
            try p.drain()
        }
    }

    /// Widening waits for 32 times as many arrivals as events are pending, narrowing for
    /// twice as many: sparse buckets keep their width for 31 × pending pops before they
    /// double it, while crowded ones halve it at the first judgement that finds them so
    /// (after `arrivalsPerJudgement` arrivals, here 6 × pending).
    @Test func widensLateAndNarrowsSoon() {
        var r = SimRandom(seed: 77)
        let pending = 2_000
        var q = EventQueue(reserving: 2 * pending)   // a block big enough not to grow
        for _ in 0..<pending { q.push(Event(time: r.below(2_000_000), target: 0, kind: 1)) }
        let start = q.shift
        var popped = 0
        // Sparse: about one event per bucket opened, so every judgement asks to widen.
        while q.shift == start, popped < 40 * pending, let e = q.pop() {
            popped += 1
            q.push(Event(time: e.time + 1_000_000 + r.below(2_000_000), target: 0, kind: 1))
        }
        #expect(popped >= 31 * pending, "widened after \(popped) pops of \(pending) pending")
        #expect(q.shift == start + 1, "shift \(q.shift), was \(start)")
        // Crowded: each event within 40 ms of the last, about 100 to a bucket.
        let wide = q.shift
        popped = 0
        while q.shift == wide, popped < 40 * pending, let e = q.pop() {
            popped += 1
            q.push(Event(time: e.time + r.below(40), target: 0, kind: 1))
        }
        #expect(q.shift < wide, "never narrowed in \(popped) pops")
        #expect(popped <= 8 * pending, "narrowed only after \(popped) pops of \(pending) pending")
        #expect(q.checkInvariants() == nil && q.checkLevels() == nil)
    }

    /// A copy of a queue is a separate value: writes to either (which share buffers until
    /// then) leave the other as it was.
    @Test func copiesDoNotShareWrites() throws {
        var r = SimRandom(seed: 5)
        var a = PairedQueue()
        for _ in 0..<2_000 { try a.push(r.below(100_000)) }
        for _ in 0..<300 { try a.pop() }
        var b = a                                                  // shares a's buffers
        for _ in 0..<2_000 { try b.push(r.below(200_000)) }       // b copies them first
        for _ in 0..<500 { try b.pop() }
        var c = a
        for _ in 0..<500 { try a.pop() }                          // reading leaves c alone
        for _ in 0..<100 { try a.push(r.below(300_000)) }         // writing too
        try a.check(); try b.check(); try c.check()
        try a.drain()
        try b.drain()
        try c.drain()
    }
}

/// The queue gives back what a burst took: a drained burst heap or open bucket bigger than
/// it keeps frees its storage (so that a million devices' launch storm does not stay
/// resident beside the queue's later peaks), and buffers grow in place when held alone.
@Suite struct EventQueueMemoryTests {
    /// Pops every event, all due at one time, and checks they come out first in first out
    /// (their targets were pushed in increasing order).
    static func drainInPushOrder(_ q: inout EventQueue, count: Int) throws {
        var expected: UInt32 = 0
        while let e = q.pop() {
            try #require(e.target == expected, "popped target \(e.target), expected \(expected)")
            expected += 1
        }
        try #require(Int(expected) == count, "popped \(expected) of \(count)")
    }

    /// A burst into the open bucket, twice what an empty heap keeps, comes out in order and
    /// leaves the burst heap's storage freed.
    @Test func drainedBurstHeapFreesItsStorage() throws {
        var q = EventQueue()
        q.push(Event(time: 10, target: 0, kind: 1))
        _ = q.pop()                                              // the open bucket starts at 0
        let n = 2 * EventHeap.keptCapacity
        for i in 0..<n { q.push(Event(time: 500, target: UInt32(i), kind: 1)) }
        #expect(q.open.burst.heap.capacity > EventHeap.keptCapacity, "the burst must go to the burst heap")
        try Self.drainInPushOrder(&q, count: n)
        #expect(q.open.burst.heap.capacity <= EventHeap.keptCapacity, "kept \(q.open.burst.heap.capacity) slots")
        #expect(q.checkInvariants() == nil)
    }

    /// A bucket of more events than `sorted` keeps opens as one sorted run, drains in order,
    /// and the next bucket opened gets a small `sorted` again.
    @Test func drainedBigBucketFreesItsSortedStorage() throws {
        var q = EventQueue()
        let n = OpenBucket.keptCount + 1_000
        for i in 0..<n { q.push(Event(time: 30 * Ms.second, target: UInt32(i), kind: 1)) }
        let first = q.pop()
        #expect(first?.target == 0)
        #expect(q.open.sorted.count > OpenBucket.keptCount, "the bucket must open whole into sorted")
        var expected: UInt32 = 1
        while let e = q.pop() {
            try #require(e.target == expected, "popped target \(e.target), expected \(expected)")
            expected += 1
        }
        #expect(Int(expected) == n)
        q.push(Event(time: 60 * Ms.second, target: 7, kind: 1))
        q.push(Event(time: 60 * Ms.second + 1, target: 8, kind: 1))
        #expect(q.pop()?.target == 7)
        #expect(q.open.sorted.count <= OpenBucket.keptCount, "kept \(q.open.sorted.count) slots")
        #expect(q.pop()?.target == 8)
        #expect(q.checkInvariants() == nil)
    }

    /// `QueueBuffer.grow` keeps the slots in use: in place for a buffer held alone, as a
    /// copy for a shared one, which stays as it was.
    @Test func growKeepsSlotsAndLeavesSharedBuffersAlone() {
        var a = QueueBuffer<UInt64>(count: 4)
        for i in 0..<4 { a[i] = UInt64(i) * 11 }
        QueueBuffer.grow(&a, to: 1 << 20, used: 4)               // alone: realloc
        #expect(a.count == 1 << 20 && (0..<4).map { a[$0] } == [0, 11, 22, 33])
        a[(1 << 20) - 1] = 5
        let shared = a
        var b = a
        QueueBuffer.grow(&b, to: 1 << 21, used: 3)               // shared: copied
        #expect(b !== shared && b.count == 1 << 21 && (0..<3).map { b[$0] } == [0, 11, 22])
        b[0] = 99
        #expect(shared[0] == 0 && shared[3] == 33 && shared.count == 1 << 20)
    }
}
