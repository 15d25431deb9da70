import Testing
@testable import SimKitCommand

/// How `simkit bench` measures a size, with made-up runs in place of child processes: the
/// rounds go world, queue, checked; each row keeps the fastest of its runs; the queue runs
/// as many events as the world; and runs that disagree on what they ran are refused.
@Suite struct BenchMeasureTests {
    static func result(_ w: BenchWorkload, events: UInt64 = 100, seconds: Double, fingerprint: String = "f") -> BenchResult {
        BenchResult(workload: w, devices: 10, days: 1, events: events, seconds: seconds, rssBaseKiB: 0, rssPeakKiB: 0,
                    fingerprint: fingerprint)
    }

    @Test func roundsKeepTheFastestOfEachWorkload() throws {
        var calls: [String] = []
        let seconds: [BenchWorkload: [Double]] = [.world: [3, 1, 2], .queue: [2, 3, 1], .checked: [1, 2, 3]]
        var round: [BenchWorkload: Int] = [:]
        let (queue, world, checked) = try BenchCommand.measure(runs: 3) { w, events in
            calls.append("\(w.rawValue):\(events)")
            let k = round[w, default: 0]
            round[w] = k + 1
            return Self.result(w, seconds: seconds[w]![k])
        }
        #expect(calls == ["world:0", "queue:100", "checked:0", "world:0", "queue:100", "checked:0",
                          "world:0", "queue:100", "checked:0"])
        #expect(world.seconds == 1)
        #expect(queue.seconds == 1)
        #expect(checked.seconds == 1)
    }

    @Test func runsThatDisagreeAreRefused() {
        #expect(throws: BenchCommand.RunsDisagree.self) {
            try BenchCommand.faster(Self.result(.checked, seconds: 2), Self.result(.checked, seconds: 1, fingerprint: "g"))
        }
        #expect(throws: BenchCommand.RunsDisagree.self) {
            try BenchCommand.faster(Self.result(.world, seconds: 2), Self.result(.world, events: 99, seconds: 1))
        }
    }

    @Test func smallSizesRunFiveTimes() {
        #expect(BenchCommand.defaultRuns(devices: 10_000, days: 60) == 5)
        #expect(BenchCommand.defaultRuns(devices: 100_000, days: 60) == 1)
        #expect(BenchCommand.defaultRuns(devices: 99_999, days: 3_650) == 1)
    }
}
