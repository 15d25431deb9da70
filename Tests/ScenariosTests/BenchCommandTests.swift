import Foundation
import Testing

/// `simkit bench` on a tiny size: the three workloads run, the world and the checked world
/// run the same events (the checker only watches), and bad sizes are refused. No speed is
/// asserted: unit tests must not depend on the machine's speed.
@Suite("Command line: bench", .serialized)
struct BenchCommandTests {
    @Test func benchRunsEveryWorkloadOnTheSameEvents() throws {
        let r = try SimkitProcess.run(["bench", "--sizes", "300:3", "--json", "-"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let rows = try #require(json["results"] as? [[String: Any]])
        #expect(rows.compactMap { $0["workload"] as? String } == ["queue", "world", "checked"])
        let world = rows[1], checked = rows[2]
        #expect(world["events"] as? Int == checked["events"] as? Int)
        #expect(world["fingerprint"] as? String == checked["fingerprint"] as? String)
        #expect((world["queuePeak"] as? Int ?? 0) > 0)
        #expect((rows[0]["events"] as? Int) == (world["events"] as? Int))
        #expect(json["checkerRingDepth"] as? Int == 0)
    }

    /// The huge-page tunable of the children changes where memory lies, never a result.
    @Test func pageSizeChangesNoResult() throws {
        func fingerprints(_ extra: [String]) throws -> [String] {
            let r = try SimkitProcess.run(["bench", "--sizes", "300:2", "--json", "-"] + extra)
            #expect(r.status == 0, "\(r.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let rows = try #require(json["results"] as? [[String: Any]])
            #expect(rows.allSatisfy { $0["hugePagesKiB"] is Int })
            return rows.compactMap { "\($0["events"] ?? "")/\($0["fingerprint"] ?? "")" }
        }
        let huge = try fingerprints([]), small = try fingerprints(["--small-pages"])
        #expect(huge.count == 3)
        #expect(huge == small)
    }

    /// `--repeat` keeps the fastest of its runs, which agree on what they ran.
    @Test func repeatKeepsTheFastestOfAgreeingRuns() throws {
        let r = try SimkitProcess.run(["bench", "--sizes", "200:2", "--repeat", "3", "--json", "-"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(json["repeats"] as? Int == 3)
        let rows = try #require(json["results"] as? [[String: Any]])
        #expect(rows.compactMap { $0["workload"] as? String } == ["queue", "world", "checked"])
        #expect(rows.allSatisfy { $0["runs"] as? Int == 3 })
        let bad = try SimkitProcess.run(["bench", "--sizes", "200:2", "--repeat", "0"])
        #expect(bad.status == 2, "\(bad.stderr)")
    }

    /// Without `--repeat`, a size under a million device-days keeps the fastest of 5 runs
    /// of each workload (its runs are short and easily disturbed), and says so.
    @Test func smallSizesRunFiveTimesByDefault() throws {
        let r = try SimkitProcess.run(["bench", "--sizes", "200:2", "--json", "-"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(json["repeats"] == nil)
        let rows = try #require(json["results"] as? [[String: Any]])
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { $0["runs"] as? Int == 5 })
        let text = try SimkitProcess.run(["bench", "--sizes", "200:2"])
        #expect(text.stdout.contains("the fastest of 5 runs"), "\(text.stdout)")
    }

    @Test func badSizesAreRefused() throws {
        let r = try SimkitProcess.run(["bench", "--sizes", "0:3"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("bad size"))
    }
}
