import Foundation
import SimKit
import Invariants

/// The three workloads of `simkit bench`, each run alone in a child process so that its
/// resident memory is its own (see `BenchCommand`).
enum BenchWorkload: String, CaseIterable, Codable {
    /// The bare event queue: the same number of events as the world, pushed and popped in a
    /// hold model with a delay mix like the standard workload's. The engine's ceiling.
    case queue
    /// The full world (reference SDK, server, network, faults, fingerprint), no checkers.
    case world
    /// The full world with every invariant checked (`InvariantChecker`).
    case checked
}

/// What one workload measured; one JSON line on the child's standard output.
struct BenchResult: Codable {
    var workload: BenchWorkload
    var devices: UInt64
    var days: UInt64
    var events: UInt64
    var seconds: Double
    /// VmRSS before the world (or queue) was built, and VmHWM (peak) after the run, in KiB.
    var rssBaseKiB: UInt64
    var rssPeakKiB: UInt64
    var fingerprint: String
    /// The most events the queue held at once (its node pool's high-water mark).
    var queuePeak: Int = 0
    /// Resident memory in transparent huge pages right after the run, while the world (or
    /// queue) still lives (AnonHugePages of /proc/self/smaps_rollup), to show whether the
    /// huge-page tunable took effect. (Read after the world is freed, it would show only a
    /// small part of them.)
    var hugePagesKiB: UInt64 = 0

    var eventsPerSecond: Double { Double(events) / max(seconds, 1e-9) }
    var deviceDaysPerSecond: Double { Double(devices * days) / max(seconds, 1e-9) }
    /// Resident bytes the workload added per device: (peak − base) / devices.
    var bytesPerDevice: Double { Double(rssPeakKiB &- min(rssBaseKiB, rssPeakKiB)) * 1024 / Double(devices) }
}

enum BenchChild {
    /// Runs one workload in this process and prints its `BenchResult` as one JSON line.
    static func run(_ workload: BenchWorkload, devices: UInt64, days: UInt64, seed: UInt64,
                    ringDepth: Int, events: UInt64) -> BenchResult {
        let base = procStatusKiB("VmRSS")
        var result = BenchResult(workload: workload, devices: devices, days: days, events: 0, seconds: 0,
                                 rssBaseKiB: base, rssPeakKiB: 0, fingerprint: "")
        switch workload {
        case .queue:
            let (n, secs, check) = holdModel(devices: devices, events: events, seed: seed, hugePagesKiB: &result.hugePagesKiB)
            result.events = n; result.seconds = secs; result.fingerprint = check
        case .world:
            _ = runWorld(observer: NoObserver(), devices: devices, days: days, seed: seed, into: &result)
        case .checked:
            let checker = runWorld(observer: InvariantChecker(ringDepth: ringDepth), devices: devices, days: days,
                                   seed: seed, into: &result)
            if !checker.broken.isEmpty {
                printError("bench: invariants broken: \(checker.broken.map(\.rawValue))")
            }
        }
        result.rssPeakKiB = procStatusKiB("VmHWM")
        return result
    }

    /// Runs the standard workload with `observer`, timing `run()` alone, and fills in the
    /// events, seconds, fingerprint and queue peak; returns the observer after the run.
    static func runWorld<Observer: TraceObserver>(observer: Observer, devices: UInt64, days: UInt64, seed: UInt64,
                                                  into result: inout BenchResult) -> Observer {
        var world = World<ReferenceSDK, Observer>(
            setup: StandardWorkload.setup(seed: seed, devices: UInt32(devices), days: days, ringDepth: 0),
            observer: observer)
        let t0 = monotonicSeconds()
        world.run()
        result.seconds = monotonicSeconds() - t0
        result.events = world.eventsHandled
        result.fingerprint = world.fingerprint.description
        result.queuePeak = world.queue.poolHighWater
        result.hugePagesKiB = hugePagesKiB()
        return world.observer
    }

    /// The bare queue: `2 × devices` events pending, each pop pushes one event later by a
    /// delay drawn from a mix like the world's (round trips, 10 s indexing chunks, 30 s
    /// timeouts, hours of jitter, some at once), until `events` have been popped. Returns
    /// (events, seconds, a checksum of pop order).
    ///
    /// The standard workload keeps far fewer pending on average than at its peak, most of
    /// them in sorted runs (`pushRun`), which this model does not use. With fewer pending
    /// this model runs faster, so the ceiling, and the ratio to it, depend on this choice
    /// (figures in docs/performance.md).
    static func holdModel(devices: UInt64, events: UInt64, seed: UInt64, hugePagesKiB: inout UInt64) -> (UInt64, Double, String) {
        var r = SimRandom(seed: seed)
        let pending = Int(2 * devices)
        var queue = EventQueue(capacityLimit: max(1 << 20, pending * 64), reserving: pending)
        for i in 0..<pending {
            queue.push(Event(time: r.below(8 * Ms.hour), target: UInt32(i % Int(devices)), kind: 5))
        }
        var checksum = Fingerprint()
        var popped: UInt64 = 0
        let t0 = monotonicSeconds()
        while popped < events, let e = queue.pop() {
            popped &+= 1
            let x = r.next()
            let pick = x & 127
            let delay: SimTime
            if pick < 6 { delay = 0 }
            else if pick < 64 { delay = 10 + (x >> 8) % 400 }
            else if pick < 90 { delay = 10 * Ms.second }
            else if pick < 100 { delay = 30 * Ms.second }
            else if pick < 124 { delay = (x >> 8) % (2 * Ms.hour) }
            else { delay = (x >> 8) % Ms.day }
            queue.push(Event(time: e.time + delay, target: e.target, kind: e.kind))
            if popped & 0xFFFF == 0 { checksum.mix(e.time ^ e.seq) }
        }
        let seconds = monotonicSeconds() - t0
        hugePagesKiB = self.hugePagesKiB()
        return (popped, seconds, checksum.description)
    }

    /// This process's resident memory in transparent huge pages, in KiB.
    static func hugePagesKiB() -> UInt64 { procStatusKiB("AnonHugePages", file: "/proc/self/smaps_rollup") }

    /// A field of /proc/self/status (or another /proc file of `field: N kB` lines) in KiB
    /// (`VmRSS`, `VmHWM`), or 0 where there is none.
    static func procStatusKiB(_ field: String, file: String = "/proc/self/status") -> UInt64 {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter(\.isNumber)
            return UInt64(digits) ?? 0
        }
        return 0
    }
}
