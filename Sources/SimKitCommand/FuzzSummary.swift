import Foundation
import SimKit
import Invariants
import Scenarios
import ScenarioSearch

/// What a fuzz run was asked to do, as its JSON says it: the seed range, the shard, and
/// every option that changes results. `simkit merge` checks that shards agree on all of it
/// and finds missing shards and seeds from it. Timing options (`--jobs`, `--time-limit`)
/// are not here: they never change a seed's result.
struct FuzzPlan: Codable, Equatable {
    /// The whole campaign's range, `--from` and `--seeds`, before sharding.
    struct Range: Codable, Equatable { var from: UInt64; var count: UInt64 }
    /// Shard `index` of `count`, 1-based; an unsharded run is shard 1 of 1.
    struct Shard: Codable, Equatable { var index: Int; var count: Int }
    /// The options that change what a seed does or what its result records.
    struct Options: Codable, Equatable {
        var sdk: String
        var devices: Int
        var durationDays: Int
        var shrink: Bool
        /// `--guided` (nil in files from before it existed: plain fuzzing).
        var guided: Bool?
        /// The guided campaign's starting corpus, as `--corpus` named it.
        var corpus: String?
        /// `--server custom:NAME`, or nil for the reference server.
        var server: String?
        var isGuided: Bool { guided ?? false }
    }
    var range: Range
    var shard: Shard
    var options: Options

    /// The seeds of this shard: every N-th seed of the range, starting with its (I-1)-th.
    /// Guided, a shard takes whole lanes instead (`GuidedFuzz.lane(of:)` mod N is I-1), so
    /// each lane's seeds run in order in one place and results do not depend on sharding.
    var seeds: [UInt64] {
        options.isGuided
            ? (range.from..<range.from + range.count).filter(contains)
            : Array(stride(from: range.from + UInt64(shard.index - 1), to: range.from + range.count, by: shard.count))
    }
    /// Whether `seed` is one of this shard's seeds.
    func contains(_ seed: UInt64) -> Bool {
        guard seed >= range.from, seed - range.from < range.count else { return false }
        let slot = options.isGuided ? GuidedFuzz.lane(of: seed) : seed - range.from
        return slot % UInt64(shard.count) == UInt64(shard.index - 1)
    }
    var planned: Int {
        if options.isGuided { return seeds.count }
        return shard.index > range.count ? 0 : Int((range.count - UInt64(shard.index - 1) + UInt64(shard.count) - 1) / UInt64(shard.count))
    }
    var shardText: String { "\(shard.index)/\(shard.count)" }
}

/// The end of a fuzz campaign (or of merged shards): totals, violations by invariant,
/// "sometimes" coverage, whether it finished, and the JSON and JUnit renderings that CI and
/// `simkit merge` read. A run that did not finish says so in all three, with how many of
/// its seeds ran.
struct FuzzSummary {
    var results: [SeedResult]
    var plan: FuzzPlan
    /// Seeds this summary was meant to cover (one shard's, or the whole range when merged).
    var planned: Int
    var seconds: Double
    /// Why the run stopped before its last seed (`SIGTERM`, `SIGINT`, `--time-limit`), or nil.
    var stoppedBy: String?
    /// For a merge: shards (1-based) with no file, and seeds that no file has a result for.
    var missingShards: [Int] = []
    var missingSeeds: Int = 0
    /// For a merge: a line naming the first missing seeds, printed under the INCOMPLETE line.
    var missingSeedsDetail: String?
    /// For a merge: the shards that were merged, of how many.
    var mergedShards: [Int] = []
    var shardsTotal = 1
    /// A line on the determinism guard, printed after the first line when set (see
    /// `FuzzCommand.determinismLine`).
    var determinism: String?
    /// A line on the guided campaign's corpus, printed after the first line when set.
    var guidedLine: String?
    /// What the process running the campaign warned about itself (`CampaignNotes`: memory
    /// or open files that grew seed after seed).
    var warnings: [String] = []
    /// The comparison with a baseline core, seed by seed (`fuzz --baseline`).
    var baseline: BaselineComparison?

    var sdk: String { plan.options.sdk }

    init(results: [SeedResult], plan: FuzzPlan, planned: Int, seconds: Double, stoppedBy: String?) {
        self.results = results.sorted { $0.seed < $1.seed }
        self.plan = plan; self.planned = planned; self.seconds = seconds; self.stoppedBy = stoppedBy
    }

    var failures: [SeedResult] { results.filter(\.failed) }

    /// Seeds whose run stopped before the end of its scenario (event budget, queue or
    /// memory bound) and broke nothing: not a pass.
    var stoppedEarly: [SeedResult] { results.filter { $0.incomplete && !$0.failed } }

    /// True when every planned seed ran to its end (and, merged, every shard was there).
    var complete: Bool {
        stoppedBy == nil && results.count >= planned && missingShards.isEmpty && missingSeeds == 0 && stoppedEarly.isEmpty
    }

    /// The exit status: 1 when a seed failed (a failure found is a verdict even if the run
    /// stopped early), else 3 when the run did not finish, else 4 when a required
    /// "sometimes" situation was never reached (a blind spot), else 0.
    /// With a baseline, only a seed where the core under test breaks what the baseline does
    /// not is a failure.
    var exitStatus: Int32 {
        let failed = baseline.map { !$0.newFailures.isEmpty } ?? !failures.isEmpty
        return failed ? 1 : !complete ? exitIncomplete : blindSpots.isEmpty ? 0 : exitBlindSpot
    }

    /// Whether the "sometimes" requirements apply: they were measured with the default
    /// generator options, and other options can make a situation impossible.
    var sometimesRequired: Bool {
        plan.options.devices == Int(GeneratorOptions().maxDevicesPerGroup)
            && plan.options.durationDays == Int(GeneratorOptions().maxDurationDays)
    }

    /// Situations a campaign of this many seeds must reach (`SometimesRequirements`) that
    /// no seed reached.
    var blindSpots: [Coverage] {
        sometimesRequired ? SometimesRequirements.unreached(coverage, seeds: results.count) : []
    }

    /// The line that explains exit 4, or nil.
    var blindSpotLine: String? {
        let missed = blindSpots
        guard !missed.isEmpty else { return nil }
        let list = missed.map { "\($0) (required from \(grouped(SometimesRequirements.requiredFrom($0) ?? 0)) seeds)" }
        return "BLIND SPOT: \(plural(missed.count, "required situation")) never reached in \(plural(results.count, "seed")): "
            + list.joined(separator: ", ") + "; the core may have lost a path, or the generator no longer reaches it"
    }

    /// Seeds that broke each invariant, by invariant name.
    var byInvariant: [(String, [UInt64])] {
        var map: [String: [UInt64]] = [:]
        for r in results { for inv in r.broken { map[inv, default: []].append(r.seed) } }
        return map.keys.sorted().map { ($0, map[$0]!) }
    }

    var coverage: CoverageCounts {
        var total = CoverageCounts()
        for r in results where r.coverage.count == total.counts.count {
            var c = CoverageCounts(); c.counts = r.coverage; total.merge(c)
        }
        return total
    }

    /// One line on what did not run, or nil for a complete run.
    var incompleteLine: String? {
        guard !complete else { return nil }
        var parts: [String] = []
        if let by = stoppedBy { parts.append("stopped by \(by)") }
        if !missingShards.isEmpty {
            parts.append("missing shard\(missingShards.count == 1 ? "" : "s") \(missingShards.map(String.init).joined(separator: ", ")) of \(shardsTotal)")
        }
        let notRun = max(planned - results.count, missingSeeds)
        if notRun > 0 || parts.isEmpty == false { parts.append("\(plural(notRun, "seed")) of \(grouped(planned)) not run") }
        let early = stoppedEarly
        if let first = early.first {
            parts.append("\(plural(early.count, "seed")) stopped early (first: seed \(first.seed), \(first.stopReason ?? "stopped"))")
        }
        return "INCOMPLETE: " + parts.joined(separator: "; ") + "; the verdict covers only the seeds that ran\n"
    }

    /// The summary printed at the end: its first line is the run, never a blank line.
    func text(jobs: Int, command: String = "simkit fuzz") -> String {
        var s = ""
        let rate = Double(results.count) / max(seconds, 1e-6)
        let events = results.reduce(0) { $0 + $1.events }
        let shardText = (plan.options.server.map { " --server " + ServerCores.shellQuoted($0) } ?? "") + (plan.options.isGuided ? " --guided" : "") + (plan.shard.count > 1 && mergedShards.isEmpty ? " --shard \(plan.shardText)" : "")
        s += "\(command) --sdk \(sdk)\(shardText): \(grouped(results.count)) of \(plural(planned, "seed")) in \(String(format: "%.1f", seconds)) s (\(grouped(Int(rate.rounded()))) seeds/s, \(String(format: "%.2f", Double(events) / max(seconds, 1e-6) / 1e6)) M events/s, \(plural(jobs, command == "simkit merge" ? "file" : "job")))\n"
        if let line = incompleteLine { s += line }
        if let detail = missingSeedsDetail { s += detail + "\n" }
        if let determinism { s += determinism + "\n" }
        if let guidedLine { s += guidedLine + "\n" }
        for w in warnings { s += "warning: \(w)\n" }
        if let baseline { s += baseline.line(coreName: sdk) + "\n" }
        let nondeterministic = results.filter { $0.nondeterminism != nil }
        if failures.isEmpty {
            s += "no invariant broken\n"
        } else {
            s += "\(plural(failures.count, "failing seed")); violations by invariant:\n"
            for (inv, seeds) in byInvariant {
                s += "  \(inv.padding(toLength: 36, withPad: " ", startingAt: 0)) \(plural(seeds.count, "seed")) (first: \(seeds[0]))\n"
            }
            if let first = nondeterministic.first {
                s += "  \("NONDETERMINISTIC".padding(toLength: 36, withPad: " ", startingAt: 0)) \(plural(nondeterministic.count, "seed")) (first: \(first.seed))\n"
            }
            for r in failures.prefix(20) {
                if let path = r.reproducer {
                    s += "  seed \(r.seed): simkit run \(path)   (\(plural(r.reproducerStatements ?? 0, "statement")), \(plural(Int(r.reproducerDevices ?? 0), "device")))\n"
                }
            }
            if failures.count > 20 { s += "  … and \(failures.count - 20) more\n" }
        }
        let cov = coverage
        let reached = Coverage.allCases.count - cov.missing.count
        s += "sometimes coverage: \(reached) of \(Coverage.allCases.count) situations reached"
        s += cov.missing.isEmpty ? "\n" : "; never reached: \(cov.missing.map(\.description).joined(separator: ", "))\n"
        if let line = blindSpotLine { s += line + "\n" }
        return s
    }

    /// The `--json` file. `simkit-fuzz/2` added the plan (range, shard, options), whether the
    /// run finished, and how many seeds ran; `simkit merge` reads only this format.
    struct JSONReport: Codable {
        static let currentFormat = "simkit-fuzz/2"
        var format = JSONReport.currentFormat
        var simkit: String
        var sdk: String
        var range: FuzzPlan.Range
        var shard: FuzzPlan.Shard
        var options: FuzzPlan.Options
        var planned: Int
        var seedsRun: Int
        var interrupted: Bool
        var stoppedBy: String?
        var complete: Bool
        var missingShards: [Int]?
        var missingSeeds: Int?
        var mergedShards: [Int]?
        var seconds: Double
        var coverageNames: [String]
        /// Required "sometimes" situations never reached (exit 4); absent before this field existed.
        var blindSpots: [String]?
        /// What the process warned about itself (`CampaignNotes`); absent when nothing.
        var warnings: [String]?
        /// The comparison with `--baseline`'s core, seed by seed; absent without one.
        var baseline: BaselineComparison?
        var results: [SeedResult]

        var plan: FuzzPlan { FuzzPlan(range: range, shard: shard, options: options) }
    }

    func json() throws -> String {
        let merged = !mergedShards.isEmpty
        let report = JSONReport(simkit: SimKitVersion.number, sdk: sdk, range: plan.range, shard: plan.shard, options: plan.options,
                                planned: planned, seedsRun: results.count, interrupted: stoppedBy != nil, stoppedBy: stoppedBy,
                                complete: complete, missingShards: merged ? missingShards : nil, missingSeeds: merged ? missingSeeds : nil, mergedShards: merged ? mergedShards : nil,
                                seconds: seconds, coverageNames: Coverage.allCases.map(\.description),
                                blindSpots: blindSpots.map(\.description), warnings: warnings.isEmpty ? nil : warnings, baseline: baseline, results: results)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return String(decoding: try encoder.encode(report), as: UTF8.self) + "\n"
    }

    /// JUnit XML: a testcase per seed run, properties that say the plan and whether the run
    /// finished, and for an unfinished run one more testcase, `campaign incomplete`, with an
    /// error, so a CI page shows it even when no seed failed.
    func junit() -> String {
        let esc = XMLText.escape
        let incomplete = incompleteLine
        let blind = blindSpotLine
        let tests = results.count + (incomplete == nil ? 0 : 1) + (blind == nil ? 0 : 1)
        let errors = (incomplete == nil ? 0 : 1) + (blind == nil ? 0 : 1)
        let time = String(format: "%.3f", seconds)
        var s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        s += "<testsuites name=\"simkit fuzz\" tests=\"\(tests)\" failures=\"\(failures.count)\" errors=\"\(errors)\" time=\"\(time)\">\n"
        s += "  <testsuite name=\"simkit.fuzz.\(esc(sdk))\" tests=\"\(tests)\" failures=\"\(failures.count)\" errors=\"\(errors)\" skipped=\"0\" time=\"\(time)\">\n"
        s += "    <properties>\n"
        let properties: [(String, String)] = [
            ("simkit", SimKitVersion.number), ("sdk", sdk), ("server", plan.options.server ?? "reference"), ("shard", plan.shardText),
            ("from", "\(plan.range.from)"), ("seeds", "\(plan.range.count)"),
            ("devices", "\(plan.options.devices)"), ("duration", "\(plan.options.durationDays)d"),
            ("planned", "\(planned)"), ("seeds-run", "\(results.count)"),
            ("interrupted", stoppedBy == nil ? "false" : "true"), ("complete", complete ? "true" : "false"),
        ] + (stoppedBy.map { [("stopped-by", $0)] } ?? [])
        for (name, value) in properties { s += "      <property name=\"\(esc(name))\" value=\"\(esc(value))\"/>\n" }
        s += "    </properties>\n"
        if let incomplete {
            s += "    <testcase classname=\"simkit.fuzz.\(esc(sdk))\" name=\"campaign incomplete\">\n"
            s += "      <error message=\"\(esc(incomplete.trimmingCharacters(in: .newlines)))\" type=\"incomplete\"/>\n"
            s += "    </testcase>\n"
        }
        if let blind {
            s += "    <testcase classname=\"simkit.fuzz.\(esc(sdk))\" name=\"sometimes situations\">\n"
            s += "      <error message=\"\(esc(blind))\" type=\"blind-spot\"/>\n"
            s += "    </testcase>\n"
        }
        for r in results {
            s += "    <testcase classname=\"simkit.fuzz.\(esc(sdk))\" name=\"seed \(r.seed)\""
            if let n = r.nondeterminism, r.broken.isEmpty {
                s += ">\n      <failure message=\"\(esc(n.headline))\" type=\"nondeterministic\">"
                s += esc(n.text() + "replay: simkit replay \(r.seed) \(r.coreFlags) --twice")
                s += "</failure>\n    </testcase>\n"
            } else if r.failed {
                s += ">\n      <failure message=\"\(esc(r.broken.joined(separator: ", ")))\" type=\"invariant\">"
                s += esc("\(r.firstViolation ?? "")\nreplay: simkit replay \(r.seed) \(r.coreFlags)" + (r.reproducer.map { "\nreproducer: simkit run \($0)" } ?? ""))
                s += "</failure>\n    </testcase>\n"
            } else {
                s += "/>\n"
            }
        }
        s += "  </testsuite>\n</testsuites>\n"
        return s
    }
}

/// `12345` → `12,345`: counts in summaries and progress lines.
func grouped(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (n < 0 ? "-" : "") + out
}

/// `1 device`, `3 devices`, `12,345 seeds`: a count and its noun, singular only for one.
func plural(_ n: Int, _ noun: String) -> String { "\(grouped(n)) \(noun)\(n == 1 ? "" : "s")" }

/// A wall-clock span for progress lines: `45s`, `3m20s`, `1h05m`.
func shortSpan(_ seconds: Double) -> String {
    let s = Int(max(0, seconds).rounded())
    if s < 60 { return "\(s)s" }
    if s < 3_600 { return "\(s / 60)m\(String(format: "%02d", s % 60))s" }
    return "\(s / 3_600)h\(String(format: "%02d", s % 3_600 / 60))m"
}
