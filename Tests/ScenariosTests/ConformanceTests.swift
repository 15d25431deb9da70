import Foundation
import Testing
import SimKit
import Scenarios
import SimKitTesting

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

    /// A server core that hands every call to the reference keeps every rule: every file
    /// but the mutants' runs on it, and so do the fuzz seeds.
    @Test func aServerCoreThatKeepsTheRulesConforms() {
        let report = SimKitTest.conformance(server: DelegatingServer.self, seeds: 0..<6, devices: 8)
        #expect(report.passed, "\(report)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: PackageRoot.path + "/scenarios")) ?? []
        let stated = files.filter { $0.hasSuffix(".scenario") && !$0.hasPrefix("mutant-") }
        #expect(report.scenarioFiles == stated.count && stated.count > 30, "\(report.scenarioFiles) of \(stated.count)")
        #expect(report.seeds == 6)
        #expect(report.core == "server custom:delegating-server")
        #expect("\(report)".hasPrefix("conformance of server custom:delegating-server: \(stated.count) scenario files, 6 fuzz seeds: every rule kept"))
    }

    /// A server core that stores the dashboard's disable but never reads it (S4) is named by
    /// that rule's invariant, in the files that disable an app and in the fuzz seeds.
    @Test func aServerThatSkipsARuleIsToldWhichRule() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-conformance-server-\(ProcessInfo.processInfo.processIdentifier)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for file in ["disable-and-enable.scenario", "pending-app.scenario", "mutant-never-purge.scenario"] {
            try FileManager.default.copyItem(atPath: PackageRoot.path + "/scenarios/" + file, toPath: dir + "/" + file)
        }
        let report = SimKitTest.conformance(server: IgnoresDisableServer.self, name: "leaky", scenarios: dir, seeds: 0..<20, devices: 10)
        #expect(!report.passed)
        #expect(report.core == "server custom:leaky")
        #expect(report.scenarioFiles == 2)
        #expect(report.problems.isEmpty, "\(report)")
        let line = try #require(report.lines.first { $0.hasPrefix("BROKEN disable-stops-every-key (S4): ") }, "\(report)")
        #expect(line.contains("disable-and-enable.scenario"), "\(line)")
        // Only the rule it skips: the file without a disable keeps every rule.
        #expect(!report.lines.contains { $0.contains("pending-app.scenario") }, "\(report)")
        #expect(report.findings.allSatisfy { $0.rule == "disable-stops-every-key" || $0.rule.hasPrefix("expectations of disable-") },
                "\(report)")
        // The same files and seeds on the delegating server keep every rule.
        #expect(SimKitTest.conformance(server: DelegatingServer.self, scenarios: dir, seeds: 0..<20, devices: 10).passed)
    }

    /// A name the registry lacks is reported, never a trap; both custom cores are named.
    @Test func theSharedKitNamesWhatRan() {
        let unknown = SimKitTest.conformance(sdk: .reference, server: .custom("nope"), cores: SDKCores(), seeds: 0..<1)
        #expect(!unknown.passed)
        #expect(unknown.problems.count == 1 && unknown.problems[0].contains("unknown server core 'nope'"), "\(unknown)")
        #expect(unknown.core == "server custom:nope")
        let cores = SDKCores(["other": OtherConstantsSDK.self], servers: ["backend": DelegatingServer.self])
        let both = SimKitTest.conformance(sdk: .custom("other"), server: .custom("backend"), cores: cores, scenarios: PackageRoot.path + "/none",
                                          seeds: 0..<2, devices: 8)
        #expect(both.core == "custom:other, server custom:backend")
        #expect(both.seeds == 2 && both.findings.isEmpty, "\(both)")
    }
}
