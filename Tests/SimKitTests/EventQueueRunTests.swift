import SimKitTestSupport
import Testing
@testable import SimKit

/// The reference for runs: every event pushed one at a time into a plain array, each with
/// its own sequence, popped by a linear scan for the least (time, seq).
private struct RunReference {
    var items: [Event] = []
    var nextSeq: UInt64 = 0

    mutating func push(_ e: Event) {
        var e = e
        e.seq = nextSeq
        nextSeq += 1
        items.append(e)
    }

    mutating func pop() -> Event? {
        guard var best = items.indices.first else { return nil }
        for i in items.indices where items[i].time < items[best].time
            || (items[i].time == items[best].time && items[i].seq < items[best].seq) { best = i }
        return items.remove(at: best)
    }
}

/// Seed chunks for the run sweep: 10 chunks of 200 sequences.
private let runChunks = Array(0..<10)
private let runSequencesPerChunk = 200

/// What a popped event is, without its sequence: a run's events carry the run's first.
private func same(_ a: Event?, _ b: Event?) -> Bool {
    a?.time == b?.time && a?.target == b?.target && a?.kind == b?.kind && a?.arg == b?.arg
}

@Suite struct EventQueueRunTests {
    /// A run's entries: `offset << 32 | target`, targets increasing, offsets drawn from a
    /// span that makes ties common (a few ms) or rare (up to the largest 32-bit offset).
    static func entries(_ r: inout SimRandom, count n: Int) -> [UInt64] {
        let span: UInt64
        switch r.below(4) {
        case 0: span = r.below(4)
        case 1: span = r.below(1_000)
        case 2: span = r.below(8 * 3_600_000)
        default: span = UInt64(UInt32.max)
        }
        var target = r.below(5)
        var out: [UInt64] = []
        for _ in 0..<n {
            out.append(r.int(in: 0...span) << 32 | target)
            target += 1 + r.below(3)
        }
        return out
    }

    /// Random pushes, pops and runs checked step by step against events pushed one at a
    /// time: every popped event, `count`, `nextTime`, the structure (runs included), and
    /// the bound. A refused run is pushed one by one, as `World` does.
    @Test(.tags(.slow), .slowTier, arguments: runChunks)
    func runsPopAsIfPushedOneByOne(chunk: Int) throws {
        var taken = 0, refused = 0, runPops = 0, tiesWithRuns = 0
        for s in 0..<runSequencesPerChunk {
            let seed = UInt64(chunk * runSequencesPerChunk + s)
            var r = SimRandom(seed: seed ^ 0x52_554E)
            let limit = r.chance(1, outOf: 4) ? Int(r.int(in: 64...600)) : 1 << 20
            var q = EventQueue(capacityLimit: limit, reserving: Int(r.below(64)))
            q.prefetches = r.chance(1, outOf: 2)
            var ref = RunReference()
            var now: SimTime = 0
            var payload: UInt32 = 0
            let steps = Int(r.int(in: 1...400))
            for step in 0..<steps {
                let where_ = "seed \(seed) step \(step)"
                q.walkAhead()
                _ = q.runTarget(ahead: Int(r.below(10)))
                let pick = r.below(100)
                if pick < 4 {
                    // A run at about now (or at a tie with pending events), maybe refused.
                    let n = Int(r.int(in: 1...300))
                    var e = Self.entries(&r, count: n)
                    let at = r.chance(1, outOf: 2) ? now + r.below(3) : min(EventQueueTests.time(&r, now: now), UInt64.max / 2)
                    payload += 1
                    let original = e
                    let before = q.count
                    if q.pushRun(at: at, kind: 2, arg: payload, entries: &e) {
                        taken += 1
                        try #require(q.count == before + n, "\(where_): run of \(n) counted \(q.count - before)")
                        for v in original {
                            ref.push(Event(time: at + v >> 32, target: UInt32(truncatingIfNeeded: v), kind: 2, arg: payload))
                        }
                    } else {
                        refused += 1
                        try #require(e == original, "\(where_): a refused run's entries are left as they were")
                        for v in original {
                            let ev = Event(time: at + v >> 32, target: UInt32(truncatingIfNeeded: v), kind: 2, arg: payload)
                            guard q.count < limit else { break }
                            let pushed = q.push(ev)
                            try #require(pushed, "\(where_): push under the bound refused")
                            ref.push(ev)
                        }
                    }
                } else if pick < 50 {
                    guard q.count < limit else { continue }
                    payload += 1
                    let e = Event(time: min(EventQueueTests.time(&r, now: now), UInt64.max / 2), target: payload, kind: 1, arg: payload)
                    let pushed = q.push(e)
                    try #require(pushed, "\(where_): push under the bound refused")
                    ref.push(e)
                } else if pick < 51 {
                    q.removeAll(); ref.items.removeAll()
                } else {
                    let got = q.pop(), want = ref.pop()
                    try #require(same(got, want), "\(where_): popped \(String(describing: got)), expected \(String(describing: want))")
                    if let got {
                        if got.kind == 2 { runPops += 1 }
                        if ref.items.contains(where: { $0.time == got.time && $0.kind != got.kind }) { tiesWithRuns += 1 }
                        now = max(now, got.time)
                    }
                }
                try #require(q.count == ref.items.count, "\(where_): count \(q.count) != \(ref.items.count)")
                try #require(q.nextTime == ref.items.map(\.time).min(), "\(where_): nextTime")
                if step % 7 == 0, let broken = q.checkInvariants() ?? q.checkLevels() { Issue.record("\(where_): \(broken)"); return }
            }
            while let want = ref.pop() {
                let got = q.pop()
                try #require(same(got, want), "seed \(seed) drain: popped \(String(describing: got)), expected \(want)")
            }
            try #require(q.pop() == nil && q.isEmpty && q.nextTime == nil, "seed \(seed): queue not empty after drain")
        }
        let coverage = "sweep coverage: \(taken) runs taken, \(refused) refused, \(runPops) run pops, \(tiesWithRuns) ties between a run and other events"
        #expect(taken > 500, "\(coverage)")
        #expect(refused > 200, "\(coverage)")
        #expect(runPops > 3_000, "\(coverage)")
        #expect(tiesWithRuns > 1_000, "\(coverage)")
    }

    /// More runs than `runsMax` at once: the extra ones are refused and nothing is lost.
    @Test func runsBeyondTheMostAtOnceAreRefused() {
        var q = EventQueue()
        var accepted = 0
        for k in 0..<(EventQueue.runsMax + 3) {
            var e = (0..<100).map { UInt64($0 % 7) << 32 | UInt64($0) }
            if q.pushRun(at: UInt64(k), kind: 2, arg: UInt32(k), entries: &e) { accepted += 1 }
        }
        #expect(accepted == EventQueue.runsMax)
        #expect(q.count == EventQueue.runsMax * 100)
        var last: (SimTime, UInt32, UInt32) = (0, 0, 0)
        var popped = 0
        while let e = q.pop() {
            #expect((last.0, last.2, last.1) <= (e.time, e.arg, e.target), "out of order at \(popped)")
            last = (e.time, e.target, e.arg)
            popped += 1
        }
        #expect(popped == EventQueue.runsMax * 100)
    }

    /// Runs too short to pay for themselves, past the bound, or reaching the last
    /// millisecond of time are refused whole.
    @Test func shortRunsAndRunsPastTheBoundAreRefused() {
        var q = EventQueue(capacityLimit: 100)
        var short = (0..<UInt64(EventQueue.runMin - 1)).map { $0 }
        #expect(!q.pushRun(at: 0, kind: 2, arg: 0, entries: &short))
        var long = (0..<101).map { UInt64($0) }
        #expect(!q.pushRun(at: 0, kind: 2, arg: 0, entries: &long))
        #expect(q.isEmpty)
        var endOfTime = (0..<100).map { UInt64($0) | UInt64($0 % 3) << 32 }
        let before = endOfTime
        #expect(!q.pushRun(at: SimTime.max - 2, kind: 2, arg: 0, entries: &endOfTime), "an event at .max")
        #expect(endOfTime == before)
        var fits = (0..<100).map { UInt64($0) }
        #expect(q.pushRun(at: 0, kind: 2, arg: 0, entries: &fits))
        let pushed = q.push(Event(time: 0, target: 0, kind: 1))
        #expect(!pushed, "the run's events count toward the bound")
    }

    /// The radix sort orders by offset and keeps the targets' order among equal offsets,
    /// for every number of passes it takes, leaves its input as it was, and sorts right
    /// again with the buffers a bigger sort left behind.
    @Test(arguments: [UInt64(0), 1, 255, 65_535, 65_536, 1 << 24, UInt64(UInt32.max)])
    func sortRunOrdersEntries(maxOffset: UInt64) {
        var r = SimRandom(seed: maxOffset)
        var runs = QueueRuns()
        for n in [5_000, 300] {
            let a = (0..<n).map { r.int(in: 0...maxOffset) << 32 | UInt64($0) }
            var out = [UInt64](repeating: 0, count: n)
            a.withUnsafeBufferPointer { a in
                out.withUnsafeMutableBufferPointer { o in
                    runs.sort(a.baseAddress!, into: o.baseAddress!, count: n, maxOffset: maxOffset)
                }
            }
            #expect(out == a.sorted(), "\(n) entries")
            #expect(a.map { $0 & 0xFFFF_FFFF } == (0..<n).map { UInt64($0) }, "the input is left as it was")
        }
    }

    /// A copy of a queue with runs pending is a separate value: popping either leaves the
    /// other's runs where they were.
    @Test func copiesDoNotShareRuns() {
        var a = EventQueue()
        var e = (0..<500).map { UInt64(499 - $0) << 32 | UInt64($0) }
        #expect(a.pushRun(at: 10, kind: 2, arg: 1, entries: &e))
        for t in 0..<50 { a.push(Event(time: UInt64(t * 10), target: 10_000 + UInt32(t), kind: 1)) }
        for _ in 0..<20 { _ = a.pop() }
        var b = a
        let fromA = (0..<300).compactMap { _ in a.pop() }
        var e2 = (0..<200).map { UInt64($0) << 32 | UInt64($0) }
        #expect(a.pushRun(at: 0, kind: 2, arg: 2, entries: &e2))
        let fromB = (0..<300).compactMap { _ in b.pop() }
        #expect(fromA.map(\.target) == fromB.map(\.target))
        #expect(a.checkLevels() == nil && b.checkLevels() == nil)
        #expect(b.count == 530 - 300)
    }
}
