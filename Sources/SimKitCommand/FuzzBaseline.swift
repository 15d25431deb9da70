import SimKit
import ScenarioLanguage
import Scenarios
import ScenarioSearch

/// `simkit fuzz --baseline CORE`: every seed of the campaign runs on the core under test
/// and on the baseline, and the two are compared seed by seed: the seeds that fail only
/// with the core under test, only with the baseline, or with both (and, of those, the ones
/// where the core under test breaks more than the baseline). What a team uses while it
/// fixes its first findings: it fails (exit 1) only when the core under test breaks
/// something the baseline does not.
struct BaselineComparison: Codable, Equatable {
    /// The baseline's name (`reference`, `mutant:NAME`, `custom:NAME`).
    var core: String
    /// Seeds that fail with the core under test and pass with the baseline.
    var onlyCore: [UInt64] = []
    /// Seeds that fail with the baseline and pass with the core under test.
    var onlyBaseline: [UInt64] = []
    /// Seeds that fail with both.
    var both: [UInt64] = []
    /// Of `both`, the seeds where the core under test breaks something the baseline does not.
    var moreThanBaseline: [UInt64] = []
    /// What the baseline broke, for each seed it failed.
    var baselineBroken: [BaselineSeed] = []

    struct BaselineSeed: Codable, Equatable { var seed: UInt64; var broken: [String] }

    /// Compares the core's results with the baseline's, seed by seed (both in seed order).
    init(core: String, results: [SeedResult], baseline: [SeedResult]) {
        self.core = core
        var bySeed: [UInt64: SeedResult] = [:]
        for b in baseline { bySeed[b.seed] = b }
        for r in results {
            guard let b = bySeed[r.seed] else { continue }
            if b.failed { baselineBroken.append(BaselineSeed(seed: b.seed, broken: Self.broken(b))) }
            switch (r.failed, b.failed) {
            case (true, false): onlyCore.append(r.seed)
            case (false, true): onlyBaseline.append(r.seed)
            case (true, true):
                both.append(r.seed)
                if Self.breaksMore(r, than: b) { moreThanBaseline.append(r.seed) }
            case (false, false): break
            }
        }
    }

    /// What a seed broke, NONDETERMINISTIC included.
    static func broken(_ r: SeedResult) -> [String] { r.broken + (r.nondeterminism == nil ? [] : ["NONDETERMINISTIC"]) }

    /// Whether `core` breaks something on its seed that `baseline` does not.
    static func breaksMore(_ core: SeedResult, than baseline: SeedResult) -> Bool {
        !Set(broken(core)).isSubset(of: Set(broken(baseline)))
    }

    /// Seeds where the core under test breaks what the baseline does not: the campaign's failures.
    var newFailures: [UInt64] { (onlyCore + moreThanBaseline).sorted() }

    /// The summary's line.
    func line(coreName: String) -> String {
        func first(_ seeds: [UInt64]) -> String { seeds.first.map { " (first: \($0))" } ?? "" }
        var s = "baseline --sdk \(core): \(plural(onlyCore.count, "seed")) fail only with \(coreName)\(first(onlyCore)), "
            + "\(grouped(onlyBaseline.count)) only with the baseline\(first(onlyBaseline)), \(grouped(both.count)) with both\(first(both))"
        if !moreThanBaseline.isEmpty {
            s += "; \(grouped(moreThanBaseline.count)) of those break more with \(coreName)\(first(moreThanBaseline))"
        }
        s += newFailures.isEmpty ? "; nothing broken that the baseline does not break" : ""
        return s
    }
}

extension Campaign {
    /// Runs seed `i` on the baseline core (checked as the campaign's core is, without the
    /// determinism guard and never shrunk).
    func runBaseline(_ i: Int) -> SeedResult? {
        guard let options = baseline else { return nil }
        return Fuzz.run(seed: seeds[i], options: options, cores: cores).0
    }
}
