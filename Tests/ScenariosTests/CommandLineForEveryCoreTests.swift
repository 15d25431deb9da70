import Foundation
import Testing
import SimKit
import Scenarios
import SimKitCommand

/// The command line for every core, not only the reference: `--help` names `custom:NAME`
/// wherever `--sdk` is taken, `run --trace` writes a custom core's trace, `--baseline`
/// compares a campaign with another core seed by seed, and a command embedded in another
/// program refuses to start that program again for a custom core (an executable built
/// with `SimKitCommand.main(sdks:)` starts itself; `Examples/AsyncSDK`'s tests run that).
@Suite struct CommandLineForEveryCoreTests {
    @Test func everyCommandThatTakesAnSDKNamesCustomCores() throws {
        for command in ["fuzz", "run", "replay", "timeline", "corpus", "fingerprint", "explore"] {
            let r = try SimkitProcess.run([command, "--help"])
            #expect(r.status == 0, "\(command): \(r.stderr)")
            #expect(r.stdout.contains("custom:NAME"), "\(command) --help does not name custom:NAME:\n\(r.stdout)")
        }
    }

    @Test func runWritesACustomCoresTrace() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-every-core-\(ProcessInfo.processInfo.processIdentifier)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/custom.scenario", trace = dir + "/custom.trace", reference = dir + "/reference.trace"
        try CustomCoreTests.scenario.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(SimKitCommand.run(["run", "--quiet", "--trace", trace, file], cores: CustomCoreTests.cores) == 0)
        #expect(SimKitCommand.run(["run", "--quiet", "--sdk", "reference", "--trace", reference, file], cores: CustomCoreTests.cores) == 0)
        let custom = try String(contentsOfFile: trace, encoding: .utf8), ref = try String(contentsOfFile: reference, encoding: .utf8)
        #expect(custom.hasPrefix("# simkit trace: seed "), "\(custom.prefix(200))")
        // The core's own constants show in its trace: it is not the reference's.
        #expect(custom != ref)
        // Embedded in this test runner, another process would be the runner itself: refused.
        #expect(SimKitCommand.run(["run", "--check-determinism", "--processes", file], cores: CustomCoreTests.cores) == 2)
    }

    @Test func aBaselineFailsTheCampaignOnlyForWhatItDoesNotBreak() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-baseline-\(ProcessInfo.processInfo.processIdentifier)").path
        let json = dir + "/baseline.json"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // The seeds lock-on-5xx breaks on its own (the reference breaks none of the first 20).
        let alone = dir + "/alone.json"
        #expect(SimKitCommand.run(["fuzz", "--sdk", "mutant:lock-on-5xx", "--seeds", "20", "--quiet", "--no-shrink", "--out", dir, "--json", alone]) == 1)
        let aloneReport = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: alone))) as? [String: Any])
        let results = try #require(aloneReport["results"] as? [[String: Any]])
        let breaks = results.filter { (($0["broken"] as? [Any]) ?? []).isEmpty == false }.compactMap { ($0["seed"] as? NSNumber)?.uint64Value }.sorted()
        #expect(!breaks.isEmpty)
        let worse = SimKitCommand.run(["fuzz", "--sdk", "mutant:lock-on-5xx", "--baseline", "reference", "--seeds", "20", "--quiet",
                                       "--no-shrink", "--out", dir, "--json", json])
        #expect(worse == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let baseline = try #require(report["baseline"] as? [String: Any], "\(report.keys)")
        #expect(baseline["core"] as? String == "reference")
        #expect((baseline["onlyCore"] as? [NSNumber])?.map(\.uint64Value) == breaks, "\(baseline)")
        #expect((baseline["onlyBaseline"] as? [NSNumber])?.isEmpty == true, "\(baseline)")
        // Compared with itself, what it breaks is known: the campaign passes.
        #expect(SimKitCommand.run(["fuzz", "--sdk", "mutant:lock-on-5xx", "--baseline", "mutant:lock-on-5xx", "--seeds", "20", "--quiet",
                                   "--no-shrink", "--out", dir]) == 0)
        // The other way round, what only the baseline breaks does not fail the core under test.
        #expect(SimKitCommand.run(["fuzz", "--baseline", "mutant:lock-on-5xx", "--seeds", "20", "--quiet", "--no-shrink", "--out", dir]) == 0)
        #expect(SimKitCommand.run(["fuzz", "--baseline", "mutant:no-such", "--seeds", "1", "--quiet"]) == 2)
        #expect(SimKitCommand.run(["fuzz", "--baseline", "reference", "--guided", "--seeds", "1", "--quiet"]) == 2)
    }
}
