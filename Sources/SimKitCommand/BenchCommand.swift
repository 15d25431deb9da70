import Foundation
import Scenarios
import ScenarioSearch
import ServerWire
import SimKit

/// `simkit bench`: throughput and memory of the engine on this machine.
///
/// Each workload runs alone in a child process (this executable again, with the hidden
/// `--child` option), so its resident memory is measured on its own: VmRSS before the
/// world is built, VmHWM (the peak) after the run, both from /proc/self/status.
enum BenchCommand {
    static let help = """
    usage: simkit bench [--quick] [--sizes N:D,N:D…] [--seed N] [--ring-depth N] [--repeat N] [--json FILE|-]

    For each size (devices × days) runs three workloads, each in its own process:
      queue    the bare event queue, the same number of events in a hold model
               (the ceiling)
      world    the full world (reference SDK, server, network, faults) without checkers
      checked  the full world with every invariant checked
    and prints events/s, device-days/s, resident bytes per device (peak VmHWM minus
    VmRSS before building, divided by devices), the checker overhead checked/world and
    the engine efficiency checked/queue. Build with -c release for meaningful figures;
    pin with `taskset -c 1 simkit bench` on a shared machine.

    The children run with glibc's malloc asking for transparent huge pages
    (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, unless GLIBC_TUNABLES is set already):
    a million devices' state is hundreds of MB touched at random, and with 4 KiB pages
    nearly every event misses the TLB (about 15% of the CPU time at 1M devices). Set
    the same variable for your own big runs.

    options:
      --sizes S        devices:days pairs (default 1000:60,10000:60,100000:60,1000000:30)
      --quick          1000:60,10000:60 only
      --seed N         seed (default 1)
      --ring-depth N   records kept per device by the checker for failure reports
                       (default 0 here: rings only add context to a report, they
                       check nothing; `simkit run` and `fuzz` keep 12; 2 adds
                       about 100 bytes a device and costs about 15% of the speed)
      --repeat N       run each workload N times (1-20) and keep the fastest, the run
                       least disturbed by the rest of the machine; the runs of a size
                       go in rounds of all three workloads, so the ratios compare runs
                       made close in time. Default: 5 for sizes under a million
                       device-days (a run takes about a second or less, and one run of
                       the queue was seen 22% slow), 1 from there up. The runs
                       must agree on the events and the fingerprint (exit 1 if not:
                       a determinism bug)
      --json FILE      also write the results as JSON (`-` for standard output only)
      --small-pages    run the children without the huge-page tunable, to compare
      --wire SERVER    instead: the messages per second to a server on the wire
                       (process:CMD or http://HOST:PORT, docs/server-protocol.md) over
                       --seeds N fuzz seeds (default 20) on one job, the server's work
                       included; in batches when the server announces them
                       (process:'simkit serve-reference' measures the wire alone)

    """

    static func run(_ argv: [String]) throws -> Int32 {
        let a = try Arguments(argv, switches: ["quick", "small-pages"], options: ["sizes", "seed", "ring-depth", "repeat", "json", "child", "devices", "days", "events", "wire", "seeds"])
        if a.has("help") { print(help, terminator: ""); return 0 }
        if let wire = a.string("wire") { return try wireBench(wire, seeds: try a.uint("seeds", default: 20, range: 1...100_000)) }
        let seed = try a.uint("seed", default: 1)
        let ringDepth = Int(try a.uint("ring-depth", default: 0, range: 0...256))
        if let child = a.string("child") {
            guard let workload = BenchWorkload(rawValue: child) else { throw UsageError("unknown workload '\(child)'") }
            let result = BenchChild.run(workload, devices: try a.uint("devices", default: 10_000, range: 1...1_000_000),
                                        days: try a.uint("days", default: 60, range: 1...3_650), seed: seed,
                                        ringDepth: ringDepth, events: try a.uint("events", default: 10_000_000))
            let data = try JSONEncoder().encode(result)
            print(String(decoding: data, as: UTF8.self))
            return 0
        }
        let sizes = try parseSizes(a.has("quick") ? "1000:60,10000:60" : a.string("sizes") ?? "1000:60,10000:60,100000:60,1000000:30")
        let json = a.string("json")
        if let json, json != "-" { try checkWritableFile(json) }   // before minutes of measuring, not after
        let hugePages = !a.has("small-pages")
        let repeats: Int? = a.string("repeat") == nil ? nil : Int(try a.uint("repeat", default: 1, range: 1...20))
        var rows: [BenchRow] = []
        var ratios: [BenchRatios] = []
        if json != "-" {
            if let repeats { if repeats > 1 { print("each row: the fastest of \(repeats) runs") } }
            else if sizes.contains(where: { defaultRuns(devices: $0.0, days: $0.1) > 1 }) {
                print("rows under a million device-days: the fastest of \(defaultRuns(devices: 1, days: 1)) runs")
            }
            print(header)
        }
        // Runs that disagree on what they ran are a determinism bug found (exit 1), not bad input.
        do {
            for (devices, days) in sizes {
                let runs = repeats ?? defaultRuns(devices: devices, days: days)
                let (queue, world, checked) = try measure(runs: runs) { w, events in
                    try runChild(w, devices: devices, days: days, seed: seed, ringDepth: ringDepth, events: events, hugePages: hugePages)
                }
                for r in [queue, world, checked] {
                    rows.append(BenchRow(r, runs: runs))
                    if json != "-" { print(line(r)) }
                }
                ratios.append(BenchRatios(devices: devices, days: days,
                                          checkerOverhead: checked.eventsPerSecond / world.eventsPerSecond,
                                          engineEfficiency: checked.eventsPerSecond / queue.eventsPerSecond))
                if json != "-" {
                    print("\(devices) x \(days) d: " + String(format: "checker overhead checked/world %.2f, engine efficiency checked/queue %.2f",
                                 checked.eventsPerSecond / world.eventsPerSecond,
                                 checked.eventsPerSecond / queue.eventsPerSecond))
                }
            }
        } catch let e as RunsDisagree {
            printError("simkit bench: \(e)")
            return 1
        }
        if let json {
            let out = BenchReport(seed: seed, checkerRingDepth: ringDepth, results: rows, ratios: ratios, repeats: repeats)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(out)
            if json == "-" { print(String(decoding: data, as: UTF8.self)) } else { try writeAtomically(String(decoding: data, as: UTF8.self), to: json) }
        }
        return 0
    }

    static let header = "workload   devices  days       events       s    M events/s  device-days/s  bytes/device  pending peak  huge MiB"

    static func line(_ r: BenchResult) -> String {
        r.workload.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0) + String(format: " %9llu %5llu %12llu %7.2f %12.2f %14.0f %13.0f %13d %9llu", r.devices, r.days,
               r.events, r.seconds, r.eventsPerSecond / 1e6, r.deviceDaysPerSecond, r.bytesPerDevice, r.queuePeak,
               r.hugePagesKiB / 1024)
    }

    static func parseSizes(_ s: String) throws -> [(UInt64, UInt64)] {
        try s.split(separator: ",").map { pair in
            let parts = pair.split(separator: ":")
            guard parts.count == 2, let n = UInt64(parts[0]), let d = UInt64(parts[1]), (1...1_000_000).contains(n), (1...3_650).contains(d) else {
                throw UsageError("bad size '\(pair)'; expected DEVICES:DAYS, e.g. 10000:60")
            }
            return (n, d)
        }
    }

    /// Runs per workload when `--repeat` is not given: a size under a million device-days
    /// runs in about a second or less (10,000 × 60 days: 0.67 s checked), so one
    /// disturbance of the machine moves its row by tens of percent.
    static func defaultRuns(devices: UInt64, days: UInt64) -> Int { devices * days < 1_000_000 ? 5 : 1 }

    /// The fastest of `runs` runs (`run`) of each workload of one size, made in rounds of all
    /// three (world, queue, checked), so that a slow stretch of the machine hits every
    /// workload alike rather than the one that ran then. The queue runs as many events
    /// as the world. Throws if two runs of a workload disagree on what they ran (events
    /// or fingerprint), which would be a determinism bug, not noise.
    static func measure(runs: Int, _ run: (BenchWorkload, _ events: UInt64) throws -> BenchResult) throws
        -> (queue: BenchResult, world: BenchResult, checked: BenchResult) {
        var world = try run(.world, 0)
        var queue = try run(.queue, world.events)
        var checked = try run(.checked, 0)
        for _ in 1..<max(runs, 1) {
            world = try faster(world, run(.world, 0))
            queue = try faster(queue, run(.queue, world.events))
            checked = try faster(checked, run(.checked, 0))
        }
        return (queue, world, checked)
    }

    /// The faster of two runs of one workload, which must agree on what they ran.
    static func faster(_ best: BenchResult, _ r: BenchResult) throws -> BenchResult {
        guard r.events == best.events, r.fingerprint == best.fingerprint else {
            throw RunsDisagree(description: "two runs of '\(r.workload.rawValue)' differ: \(best.events) events, fingerprint \(best.fingerprint), then \(r.events), \(r.fingerprint)")
        }
        return r.seconds < best.seconds ? r : best
    }

    /// Two runs of one workload (`--repeat`) that ran different events or traces.
    struct RunsDisagree: Error, CustomStringConvertible { let description: String }

    static func runChild(_ w: BenchWorkload, devices: UInt64, days: UInt64, seed: UInt64, ringDepth: Int, events: UInt64,
                         hugePages: Bool) throws -> BenchResult {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        p.arguments = ["bench", "--child", w.rawValue, "--devices", "\(devices)", "--days", "\(days)", "--seed", "\(seed)",
                       "--ring-depth", "\(ringDepth)", "--events", "\(max(events, 1))"]
        // Huge pages for the child's malloc (see `help`), unless the caller tunes glibc itself.
        var environment = ProcessInfo.processInfo.environment
        if hugePages, environment["GLIBC_TUNABLES"] == nil { environment["GLIBC_TUNABLES"] = "glibc.malloc.hugetlb=1" }
        p.environment = environment
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0, let r = try? JSONDecoder().decode(BenchResult.self, from: data) else {
            throw UsageError("bench child '\(w.rawValue)' failed (status \(p.terminationStatus))")
        }
        return r
    }
}

/// `simkit bench --json`: every workload's result, with how it was measured. Format 2
/// (this round of issue 8) added each row's `runs` and made `repeats` optional.
struct BenchReport: Codable {
    var format = "simkit-bench/2"
    var seed: UInt64
    var checkerRingDepth: Int
    var memory = "per workload in its own process: (VmHWM after the run - VmRSS before building) / devices"
    var results: [BenchRow]
    var ratios: [BenchRatios]
    /// `--repeat`, when given; without it each size ran its default (see each row's `runs`).
    var repeats: Int?
}

/// One workload's result with its derived rates, for `--json`.
struct BenchRow: Codable {
    var workload: BenchWorkload
    var devices: UInt64
    var days: UInt64
    var events: UInt64
    var seconds: Double
    var eventsPerSecond: Double
    var deviceDaysPerSecond: Double
    var bytesPerDevice: Double
    var rssBaseKiB: UInt64
    var rssPeakKiB: UInt64
    var fingerprint: String
    /// The most events pending at once (0 for the queue workload, which keeps 2 a device).
    var queuePeak: Int
    /// Resident memory in transparent huge pages at the end of the run.
    var hugePagesKiB: UInt64
    /// Runs of this workload at this size, of which this is the fastest.
    var runs: Int

    init(_ r: BenchResult, runs: Int) {
        self.runs = runs
        workload = r.workload; devices = r.devices; days = r.days; events = r.events; seconds = r.seconds
        eventsPerSecond = r.eventsPerSecond; deviceDaysPerSecond = r.deviceDaysPerSecond
        bytesPerDevice = r.bytesPerDevice; rssBaseKiB = r.rssBaseKiB; rssPeakKiB = r.rssPeakKiB
        fingerprint = r.fingerprint; queuePeak = r.queuePeak; hugePagesKiB = r.hugePagesKiB
    }
}

/// The two ratios of one size: checked/world (the checkers' cost) and checked/queue
/// (how close the full engine comes to the bare queue).
struct BenchRatios: Codable {
    var devices: UInt64
    var days: UInt64
    var checkerOverhead: Double
    var engineEfficiency: Double
}

extension BenchCommand {
    /// `simkit bench --wire SERVER`: fuzz seeds 0..<seeds on the server, one job, and the
    /// messages per second that crossed the wire (the server's work included): in batches
    /// when the server announces them (docs/server-protocol.md), each a round trip otherwise.
    static func wireBench(_ text: String, seeds: UInt64) throws -> Int32 {
        let choice = try serverChoice(text, cores: SDKCores())
        let endpoint: WireEndpoint
        switch choice {
        case .process(let c)?: endpoint = .process(c)
        case .http(let u)?: endpoint = .http(u)
        default: throw UsageError("--wire expects process:CMD or http://HOST:PORT, got '\(text)'")
        }
        var options = GeneratorOptions()
        options.server = choice!
        let session = WireSession.onThisThread(endpoint)
        let before = session.exchanged
        let (aheadBefore, againBefore) = (session.worldsAhead, session.worldsRunAgain)
        var events: UInt64 = 0, failed = 0
        let start = monotonicSeconds()
        for seed in 0..<seeds {
            let (result, _, _) = Fuzz.run(seed: seed, options: options, cores: SDKCores())
            events += result.events
            if !result.passed { failed += 1 }
        }
        let seconds = monotonicSeconds() - start
        let messages = session.exchanged - before
        print("wire \(endpoint): \(grouped(Int(messages))) messages in \(String(format: "%.2f", seconds)) s: "
              + "\(grouped(Int(Double(messages) / seconds))) messages/s (\(plural(Int(seeds), "seed")), \(grouped(Int(events))) events"
              + (failed > 0 ? ", \(failed) not passed" : "") + ")")
        let ahead = session.worldsAhead - aheadBefore, again = session.worldsRunAgain - againBefore
        print(session.batches
              ? "  batches: \(plural(Int(ahead), "world")) ran ahead of the replies, \(again) of them run again in lock step"
              : "  lock step: the server announced no batches (one message a round trip)")
        return failed > 0 ? 1 : 0
    }
}
