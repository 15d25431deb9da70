import Foundation
import Testing

/// `simkit explore`'s default world (2 devices, at most 4 actions, the whole default
/// alphabet) searched whole in the slow tier (issue 45 part 5: explore found a bug in the
/// reference server there, and no tier ran it). It is tens of millions of runs, so it runs
/// the slow tier's release `simkit` (`ReleaseSimkit`, which `Packaging` checks too).
@Suite("simkit explore's default world", .tags(.slow), .slowTier, .serialized)
struct ExploreSlowTests {
    /// `simkit explore ARGS --json -`: its exit status and its JSON report.
    static func explore(_ args: [String]) throws -> (status: Int32, report: [String: Any]) {
        let binary = try ReleaseSimkit.path.get()
        let r = try Command.run(binary, ["explore"] + args + ["--json", "-"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any], "not JSON: \(r.output)")
        return (r.status, json)
    }

    /// `simkit explore` with no options: exhausted, no violation, exit 0.
    @Test("the default world (2 devices x 4 actions) is exhausted with no violation", .timeLimit(.minutes(60)))
    func defaultWorldIsClean() throws {
        let (status, report) = try Self.explore([])
        #expect(status == 0, "\(report)")
        #expect(report["status"] as? String == "exhausted")
        #expect(report["devices"] as? Int == 2 && report["maxActions"] as? Int == 4 && report["maxDepth"] as? Int == 4)
        #expect((report["runs"] as? Int ?? 0) > 30_000_000, "\(report)")
    }

    /// The same world finds the server bug explore first found there (S2: a stop dated from
    /// the first request after an update). That `--jobs` changes nothing is shown at small
    /// scale in `ExploreLeafTests`; here one search on both cores keeps the tier short.
    @Test("the default world finds date-update-from-first-request in 4 actions", .timeLimit(.minutes(30)))
    func defaultWorldFindsTheDatingMutant() throws {
        let name = "date-update-from-first-request"
        var seen: [String] = []
        for jobs in ["2"] {
            let (status, report) = try Self.explore(["--sdk", "mutant:\(name)", "--jobs", jobs])
            #expect(status == 1, "\(report)")
            #expect(report["status"] as? String == "violation")
            #expect(report["broken"] as? [String] == ["server-enforces-access"], "\(report)")
            #expect((report["path"] as? [String])?.count == 4, "\(report)")
            seen.append("\(report["runs"] ?? "-") \(report["distinctStates"] ?? "-") \(report["path"] ?? "-")")
        }
        #expect(seen.count == 1)
    }
}
