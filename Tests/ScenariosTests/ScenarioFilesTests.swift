import Foundation
import Testing
import Invariants
import ScenarioLanguage
import Scenarios

/// The package's root: the nearest folder above this file that holds `Package.swift`.
enum PackageRoot {
    static let path: String = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().path
    }()

    /// Every `*.scenario` under `scenarios/`, relative to the root, sorted.
    static var scenarioFiles: [String] {
        let dir = path + "/scenarios"
        guard let walker = FileManager.default.enumerator(atPath: dir) else { return [] }
        var files: [String] = []
        for case let relative as String in walker where relative.hasSuffix(".scenario") { files.append("scenarios/" + relative) }
        return files.sorted()
    }
}

@Suite("Scenario files")
struct ScenarioFilesTests {
    @Test("there are scenario files to run")
    func filesExist() {
        #expect(PackageRoot.scenarioFiles.count >= 25, "found \(PackageRoot.scenarioFiles.count) files under \(PackageRoot.path)/scenarios")
    }

    @Test("every scenario file passes", arguments: PackageRoot.scenarioFiles)
    func scenarioPasses(_ file: String) throws {
        let source = try String(contentsOfFile: PackageRoot.path + "/" + file, encoding: .utf8)
        let outcome = ScenarioRunner().run(file: file, source: source)
        try #require(outcome.verdict != .badInput, "\(outcome.errors)")
        #expect(outcome.passed, "\(ScenarioReport.block(outcome))")
    }

    @Test("every scenario file names the rules it exercises in a header comment", arguments: PackageRoot.scenarioFiles)
    func headerNamesRules(_ file: String) throws {
        let source = try String(contentsOfFile: PackageRoot.path + "/" + file, encoding: .utf8)
        let header = source.split(separator: "\n").prefix { $0.hasPrefix("#") }.joined(separator: "\n")
        #expect(header.contains("Rules:"), "\(file) has no 'Rules:' line in its header comment")
    }

    @Test("the scenario files together cover every S and D rule")
    func coverEveryRule() throws {
        var text = ""
        for file in PackageRoot.scenarioFiles {
            let source = try String(contentsOfFile: PackageRoot.path + "/" + file, encoding: .utf8)
            text += source.split(separator: "\n").prefix { $0.hasPrefix("#") }.joined(separator: "\n") + "\n"
        }
        for rule in (1...9).map({ "S\($0)" }) + (1...10).map({ "D\($0)" }) {
            let pattern = "\\b\(rule)\\b"
            #expect(text.range(of: pattern, options: .regularExpression) != nil, "no scenario names rule \(rule)")
        }
    }

    @Test("at least four scenarios run a mutant and expect its invariant broken")
    func mutantScenarios() throws {
        var count = 0
        for file in PackageRoot.scenarioFiles {
            let source = try String(contentsOfFile: PackageRoot.path + "/" + file, encoding: .utf8)
            let parsed = ScenarioParser.parse(source, file: file, context: ScenarioRunner.standardContext)
            guard let s = parsed.scenario, case .mutant(let name) = s.sdk else { continue }
            let mutant = try #require(Mutants.named(name))
            #expect(s.expectedViolations.map(\.invariant).contains(mutant.expected.rawValue),
                    "\(file) runs \(name) but does not expect \(mutant.expected.rawValue)")
            count += 1
        }
        #expect(count >= 4)
    }
}
