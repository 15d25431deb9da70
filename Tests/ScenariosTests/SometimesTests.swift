import Foundation
import SimKitTestSupport
import Testing
import SimKit
import Invariants
import Scenarios

/// "Sometimes" situations as properties (issue 20): a campaign that never reaches a
/// situation a campaign of its size must reach fails with exit 4 and a BLIND SPOT line.
@Suite("Sometimes situations are required", .serialized)
struct SometimesTests {
    @Test("the table names every situation, in declaration order, and requires each one from some size")
    func tableMatchesCoverage() {
        #expect(SometimesRequirements.table.map(\.name) == Coverage.allCases.map(\.description))
        for c in Coverage.allCases { #expect(SometimesRequirements.requiredFrom(c) != nil, "\(c) is never required") }
        let smallest = SometimesRequirements.table.map(\.fromSeeds).filter { $0 > 0 }.min()!
        #expect(SometimesRequirements.required(seeds: smallest - 1).isEmpty)
        #expect(SometimesRequirements.required(seeds: smallest).map(\.description)
                == SometimesRequirements.table.filter { $0.fromSeeds == smallest }.map(\.name))
        #expect(SometimesRequirements.required(seeds: 1_000_000).count == Coverage.allCases.count)
    }

    @Test("the reference reaches every situation required of 600 seeds; the same results without 'purge' are a blind spot", .tags(.slow), .slowTier)
    func blindSpotFailsTheCampaign() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sometimes-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = dir.appendingPathComponent("all.json").path
        let run = try SimkitProcess.run(["fuzz", "--seeds", "600", "--no-shrink", "--quiet", "--json", json, "--out", dir.path])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(!run.stdout.contains("BLIND SPOT"), "\(run.stdout)")
        #expect(SometimesRequirements.required(seeds: 600).contains(.purge))

        // The same 600 results with every purge count set to zero: what a core that lost
        // its purge path (and broke nothing else) would give. `simkit merge` judges them.
        let data = try #require(FileManager.default.contents(atPath: json))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var rows = try #require(object["results"] as? [[String: Any]])
        for i in rows.indices {
            var counts = try #require(rows[i]["coverage"] as? [Int])
            counts[Coverage.purge.rawValue] = 0
            rows[i]["coverage"] = counts
        }
        object["results"] = rows
        let blind = dir.appendingPathComponent("blind.json").path
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: blind))
        let merged = try SimkitProcess.run(["merge", blind])
        #expect(merged.status == 4, "\(merged.stdout)\(merged.stderr)")
        #expect(merged.stdout.contains("no invariant broken"), "\(merged.stdout)")
        #expect(merged.stdout.contains("BLIND SPOT: 1 required situation never reached in 600 seeds: purge (required from \(SometimesRequirements.requiredFrom(.purge)!) seeds)"),
                "\(merged.stdout)")

        // With other generator options the table does not apply: fewer days make a purge impossible.
        let short = try SimkitProcess.run(["fuzz", "--seeds", "100", "--duration", "3d", "--no-shrink", "--quiet", "--out", dir.path])
        #expect(short.status == 0, "\(short.stdout)\(short.stderr)")
        #expect(short.stdout.contains("never reached: ") && !short.stdout.contains("BLIND SPOT"), "\(short.stdout)")
    }
}
