import Foundation
import ScenarioSearch

/// `simkit merge`: one summary from the JSON results of many shards or machines, which
/// says plainly when shards or seeds are missing.
enum MergeCommand {
    static let help = """
    usage: simkit merge FILE.json... [--json OUT] [--junit OUT]

    Combines the --json results of 'simkit fuzz --shard I/N' runs (shards of a CI matrix,
    indexed Kubernetes jobs) into one summary, and optionally one JSON and one JUnit file.
    Every file says its shard, its seed range and the options that change results
    (--sdk, --devices, --duration, shrinking); all files must be shards of the same
    campaign: the same N, range and options. A file given twice, or two files of the same
    shard, are refused. Shards with no file and seeds with no result (an interrupted
    shard) are listed by number.

    Exit: 0 every shard and seed is there and none failed, 1 a seed failed, 2 bad input
    (unreadable, duplicate or disagreeing files), 3 shards or seeds missing and none of
    the seeds present failed, 4 none failed but a required "sometimes" situation was
    never reached by the merged seeds (see 'simkit fuzz --help').

    """

    static func run(_ argv: [String]) throws -> Int32 {
        let a = try Arguments(argv, switches: [], options: ["json", "junit"])
        if a.has("help") { print(help, terminator: ""); return 0 }
        guard !a.positionals.isEmpty else { throw UsageError("expected one or more JSON files from 'simkit fuzz --json'") }
        for flag in ["json", "junit"] { if let path = a.string(flag) { try checkWritableFile(path) } }

        try checkDistinct(a.positionals)

        var plan: FuzzPlan?
        var firstPath = ""
        var byShard: [Int: String] = [:]
        var bySeed: [UInt64: SeedResult] = [:]
        var stops: [String] = []
        var seconds = 0.0
        for path in a.positionals {
            let report = try readReport(path)
            let p = report.plan
            if let first = plan {
                if let difference = differences(first, p) {
                    throw UsageError("'\(path)' is not a shard of the same campaign as '\(firstPath)': \(difference)")
                }
            } else {
                plan = p; firstPath = path
            }
            if let other = byShard[p.shard.index] {
                throw UsageError("'\(other)' and '\(path)' are both shard \(p.shardText)")
            }
            byShard[p.shard.index] = path
            if let by = report.stoppedBy { stops.append("shard \(p.shardText) by \(by)") }
            seconds = max(seconds, report.seconds)
            for r in report.results {
                // A result outside its shard's seeds would be counted against another shard.
                guard p.contains(r.seed) else {
                    throw UsageError("'\(path)' has a result for seed \(r.seed), which is not one of shard \(p.shardText)'s seeds")
                }
                if let old = bySeed[r.seed], old.fingerprint != r.fingerprint {
                    throw UsageError("seed \(r.seed) has fingerprint \(old.fingerprint) in one file and \(r.fingerprint) in '\(path)'")
                }
                bySeed[r.seed] = r
            }
        }
        let shardPlan = plan!
        let whole = FuzzPlan(range: shardPlan.range, shard: .init(index: 1, count: 1), options: shardPlan.options)
        var summary = FuzzSummary(results: Array(bySeed.values), plan: whole, planned: Int(whole.range.count), seconds: seconds,
                                  stoppedBy: stops.isEmpty ? nil : stops.joined(separator: ", "))
        summary.shardsTotal = shardPlan.shard.count
        summary.mergedShards = byShard.keys.sorted()
        summary.missingShards = (1...shardPlan.shard.count).filter { byShard[$0] == nil }
        summary.missingSeeds = max(0, Int(whole.range.count) - bySeed.count)
        if summary.missingSeeds > 0 { summary.missingSeedsDetail = missingSeedsLine(whole, present: bySeed) }
        print(summary.text(jobs: a.positionals.count, command: "simkit merge"), terminator: "")
        if let path = a.string("json") { try writeAtomically(summary.json(), to: path) }
        if let path = a.string("junit") { try writeAtomically(summary.junit(), to: path) }
        return summary.exitStatus
    }

    /// A usage error when two paths name the same file (by any spelling): its seeds would
    /// count twice.
    static func checkDistinct(_ paths: [String]) throws {
        var seenPaths: [String: String] = [:]
        for path in paths {
            let key = URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
            if let first = seenPaths[key] {
                throw UsageError(first == path ? "'\(path)' is given twice" : "'\(first)' and '\(path)' are the same file")
            }
            seenPaths[key] = path
        }
    }

    /// The `simkit fuzz --json` report in `path`; a usage error for a file that cannot be
    /// read, is not such a report, or is one of another format.
    static func readReport(_ path: String) throws -> FuzzSummary.JSONReport {
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read '\(path)'") }
        let report: FuzzSummary.JSONReport
        do { report = try JSONDecoder().decode(FuzzSummary.JSONReport.self, from: data) } catch {
            if let format = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["format"] as? String,
               format != FuzzSummary.JSONReport.currentFormat {
                throw UsageError("'\(path)' is a \(format) file from an older simkit; run its shard again (this one reads \(FuzzSummary.JSONReport.currentFormat))")
            }
            throw UsageError("'\(path)' is not a 'simkit fuzz --json' file")
        }
        guard report.format == FuzzSummary.JSONReport.currentFormat else { throw UsageError("'\(path)': unknown format '\(report.format)'") }
        return report
    }

    /// What makes two files shards of different campaigns, in words, or nil when they agree.
    static func differences(_ a: FuzzPlan, _ b: FuzzPlan) -> String? {
        var out: [String] = []
        if a.shard.count != b.shard.count { out.append("it is one of \(b.shard.count) shards, not \(a.shard.count)") }
        if a.range != b.range {
            out.append("its seeds are --from \(b.range.from) --seeds \(b.range.count), not --from \(a.range.from) --seeds \(a.range.count)")
        }
        if a.options.sdk != b.options.sdk { out.append("it ran --sdk \(b.options.sdk), not \(a.options.sdk)") }
        if a.options.devices != b.options.devices { out.append("it ran --devices \(b.options.devices), not \(a.options.devices)") }
        if a.options.durationDays != b.options.durationDays {
            out.append("it ran --duration \(b.options.durationDays)d, not \(a.options.durationDays)d")
        }
        if a.options.server != b.options.server {
            out.append("it ran --server \(b.options.server ?? "reference"), not \(a.options.server ?? "reference")")
        }
        if a.options.isGuided != b.options.isGuided { out.append(b.options.isGuided ? "it ran --guided, the other did not" : "the other ran --guided, it did not") }
        if a.options.corpus != b.options.corpus { out.append("it started from --corpus \(b.options.corpus ?? "(none)"), not \(a.options.corpus ?? "(none)")") }
        if a.options.shrink != b.options.shrink { out.append(b.options.shrink ? "it shrank failures, the other did not (--no-shrink)" : "it ran --no-shrink, the other shrank") }
        return out.isEmpty ? nil : out.joined(separator: "; ")
    }

    /// `missing seeds: 1,234 (first: 1000, 1003, 1006, …)`: the count and the first few, so
    /// the gap can be run again with `--from`.
    static func missingSeedsLine(_ plan: FuzzPlan, present: [UInt64: SeedResult]) -> String {
        var first: [UInt64] = []
        var seed = plan.range.from
        let end = plan.range.from + plan.range.count
        while seed < end, first.count < 5 {   // bounded: stops at the range's end or five seeds
            if present[seed] == nil { first.append(seed) }
            seed += 1
        }
        let missing = Int(plan.range.count) - present.count
        return "missing seeds: \(grouped(missing)) (first: \(first.map(String.init).joined(separator: ", "))\(missing > first.count ? ", …" : ""))"
    }
}
