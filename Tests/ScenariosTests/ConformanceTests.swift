import Foundation
import Testing
import SimKit
import Scenarios

/// The conformance kit runs SimKit's own scenarios (but the mutants') and a fuzz sweep on a
/// core, and names each rule it breaks once, with where.
@Suite struct ConformanceTests {
    @Test func aCoreThatKeepsTheRulesConforms() {
        let report = SimKitTest.conformance(OtherConstantsSDK.self, seeds: 0..<10)
        #expect(report.passed, "\(report)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: PackageRoot.path + "/scenarios")) ?? []
        let stated = files.filter { $0.hasSuffix(".scenario") && !$0.hasPrefix("mutant-") }
        #expect(report.scenarioFiles == stated.count && stated.count > 30, "\(report.scenarioFiles) of \(stated.count)")
        #expect(report.seeds == 10)
        #expect(report.core == "custom:other-constants-sdk")
    }

    @Test func aBuggyCoreIsToldWhichRulesItBreaks() throws {
        // Two of SimKit's files and a mutant's (which the kit must leave out).
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-conformance-\(ProcessInfo.processInfo.processIdentifier)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for file in ["pending-app.scenario", "leaked-key-stopped-at-once.scenario", "mutant-never-purge.scenario"] {
            try? FileManager.default.removeItem(atPath: dir + "/" + file)
            try FileManager.default.copyItem(atPath: PackageRoot.path + "/scenarios/" + file, toPath: dir + "/" + file)
        }
        let report = SimKitTest.conformance(LocksOn5xxCore.self, name: "buggy", scenarios: dir, seeds: 0..<30)
        #expect(!report.passed)
        #expect(report.scenarioFiles == 2)
        let rules = report.findings.map(\.rule)
        #expect(rules.contains("never-lock-on-transient"), "\(report)")
        #expect(rules == rules.sorted() && Set(rules).count == rules.count)
        let line = try #require(report.lines.first { $0.hasPrefix("BROKEN never-lock-on-transient (D6): ") })
        #expect(line.contains("seed "), "\(line)")
        #expect("\(report)".hasPrefix("conformance of custom:buggy: 2 scenario files, 30 fuzz seeds: "))
        #expect(SimKitTest.conformance(LocksOn5xxCore.self, scenarios: dir + "/none", seeds: 0..<0).problems.count == 1)
    }
}
