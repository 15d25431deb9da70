import Foundation
import Testing

/// The reference SDK's and server's files hold the rules and nothing else: a deliberate bug
/// lives in `Sources/SimKit/Mutants` and reaches the reference only through a named
/// decision point (a `mutant…` call). A flaw tested in a rule file fails this suite.
@Suite struct ReferenceReadsAsRulesTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources/SimKit")

    static func ruleFiles() throws -> [URL] {
        let server = try FileManager.default.contentsOfDirectory(at: sources.appendingPathComponent("Server"),
                                                                 includingPropertiesForKeys: nil)
        return [sources.appendingPathComponent("SDK/ReferenceSDK.swift")]
            + server.filter { $0.lastPathComponent.hasPrefix("ServerModel") }.sorted { $0.path < $1.path }
    }

    @Test func ruleFilesTestNoFlaw() throws {
        let files = try Self.ruleFiles()
        #expect(files.count >= 4)
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (n, line) in lines.enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                let names = ["flaws.contains", "flaws.isEmpty", "Flaws."].filter { code.contains($0) }
                #expect(names.isEmpty, "\(file.lastPathComponent):\(n + 1) tests a flaw in rule code: \(line)")
            }
        }
    }

    /// Every decision point the rule files call is defined in the mutants' folder.
    @Test func decisionPointsLiveWithTheMutants() throws {
        let mutants = try ["ReferenceSDK+Mutants.swift", "ServerModel+Mutants.swift"].map {
            try String(contentsOf: Self.sources.appendingPathComponent("Mutants/\($0)"), encoding: .utf8)
        }.joined()
        var called = Set<String>()
        for file in try Self.ruleFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: /\b(mutant[A-Z][A-Za-z]*)\(/) { called.insert(String(match.1)) }
        }
        #expect(called.count >= 30)
        for name in called.sorted() { #expect(mutants.contains("func \(name)("), "\(name) is not defined in Sources/SimKit/Mutants") }
    }
}
