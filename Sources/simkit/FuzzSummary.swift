import Foundation
import SimKit
import Invariants
import Scenarios

/// The end of a fuzz campaign: totals, violations by invariant, "sometimes" coverage,
/// and the JSON and JUnit renderings that CI and `simkit merge` read.
struct FuzzSummary {
    var results: [SeedResult]
    var planned: Int
    var seconds: Double
    var sdk: String

    init(results: [SeedResult], planned: Int, seconds: Double, sdk: SDKChoice) {
        self.init(results: results, planned: planned, seconds: seconds, sdkName: Fuzz.sdkName(sdk))
    }

    init(results: [SeedResult], planned: Int, seconds: Double, sdkName: String) {
        self.results = results.sorted { $0.seed < $1.seed }
        self.planned = planned; self.seconds = seconds; self.sdk = sdkName
    }

    var failures: [SeedResult] { results.filter(\.failed) }

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

    func text(jobs: Int) -> String {
        var s = "\n"
        let rate = Double(results.count) / max(seconds, 1e-6)
        let events = results.reduce(0) { $0 + $1.events }
        s += "simkit fuzz --sdk \(sdk): \(results.count) of \(planned) seeds in \(String(format: "%.1f", seconds)) s (\(String(format: "%.1f", rate)) seeds/s, \(String(format: "%.2f", Double(events) / max(seconds, 1e-6) / 1e6)) M events/s, \(jobs) job\(jobs == 1 ? "" : "s"))\n"
        if results.count < planned { s += "stopped early: \(planned - results.count) seeds not run\n" }
        if failures.isEmpty {
            s += "no invariant broken\n"
        } else {
            s += "\(failures.count) failing seed\(failures.count == 1 ? "" : "s"); violations by invariant:\n"
            for (inv, seeds) in byInvariant {
                s += "  \(inv.padding(toLength: 36, withPad: " ", startingAt: 0)) \(seeds.count) seed\(seeds.count == 1 ? "" : "s") (first: \(seeds[0]))\n"
            }
            for r in failures.prefix(20) {
                if let path = r.reproducer { s += "  seed \(r.seed): simkit run \(path)   (\(r.reproducerStatements ?? 0) statements, \(r.reproducerDevices ?? 0) devices)\n" }
            }
            if failures.count > 20 { s += "  … and \(failures.count - 20) more\n" }
        }
        let cov = coverage
        let reached = Coverage.allCases.count - cov.missing.count
        s += "sometimes coverage: \(reached) of \(Coverage.allCases.count) situations reached"
        s += cov.missing.isEmpty ? "\n" : "; never reached: \(cov.missing.map(\.description).joined(separator: ", "))\n"
        return s
    }

    struct JSONReport: Codable {
        var format = "simkit-fuzz/1"
        var sdk: String
        var planned: Int
        var seconds: Double
        var coverageNames: [String]
        var results: [SeedResult]
    }

    func json() throws -> String {
        let report = JSONReport(sdk: sdk, planned: planned, seconds: seconds,
                                coverageNames: Coverage.allCases.map(\.description), results: results)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return String(decoding: try encoder.encode(report), as: UTF8.self) + "\n"
    }

    func junit() -> String {
        let esc = XMLText.escape
        var s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        s += "<testsuites name=\"simkit fuzz\" tests=\"\(results.count)\" failures=\"\(failures.count)\" time=\"\(String(format: "%.3f", seconds))\">\n"
        s += "  <testsuite name=\"simkit.fuzz.\(esc(sdk))\" tests=\"\(results.count)\" failures=\"\(failures.count)\" errors=\"0\" skipped=\"0\" time=\"\(String(format: "%.3f", seconds))\">\n"
        for r in results {
            s += "    <testcase classname=\"simkit.fuzz.\(esc(sdk))\" name=\"seed \(r.seed)\""
            if r.failed {
                s += ">\n      <failure message=\"\(esc(r.broken.joined(separator: ", ")))\" type=\"invariant\">"
                s += esc("\(r.firstViolation ?? "")\nreplay: simkit replay \(r.seed) --sdk \(r.sdk)" + (r.reproducer.map { "\nreproducer: simkit run \($0)" } ?? ""))
                s += "</failure>\n    </testcase>\n"
            } else {
                s += "/>\n"
            }
        }
        s += "  </testsuite>\n</testsuites>\n"
        return s
    }
}
