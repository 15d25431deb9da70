import Testing
import SimKit
@testable import ScenarioLanguage
@testable import ScenarioSearch

@Suite("Scenario generator")
struct GeneratorTests {
    @Test("a seed generates the same script twice")
    func sameSeedSameScript() {
        for seed in [0, 1, 42, 9_999] as [UInt64] {
            let a = ScenarioGenerator.generate(seed: seed)
            let b = ScenarioGenerator.generate(seed: seed)
            #expect(a == b)
            #expect(ScenarioPrinter.print(a) == ScenarioPrinter.print(b))
        }
        #expect(ScenarioGenerator.generate(seed: 1) != ScenarioGenerator.generate(seed: 2))
    }

    @Test("every generated scenario is valid and survives printing and parsing")
    func generatedScenariosAreValid() {
        for seed in 0..<1_500 as Range<UInt64> {
            let scenario = ScenarioGenerator.generate(seed: seed)
            let problems = ScenarioValidator.validate(scenario, context: .init())
            #expect(problems.isEmpty, "seed \(seed): \(problems.map(\.message))\n\(ScenarioPrinter.print(scenario))")
            let text = ScenarioPrinter.print(scenario)
            let reparsed = ScenarioParser.parse(text, file: "seed-\(seed).scenario")
            #expect(reparsed.scenario == scenario, "seed \(seed) does not round-trip:\n\(reparsed.rendered)")
            if !problems.isEmpty { break }
        }
    }

    @Test("swarm testing reaches every feature within a few hundred seeds")
    func swarmReachesEveryFeature() {
        var seen = Set<Int>()
        for seed in 0..<300 as Range<UInt64> {
            var g = ScenarioGenerator(seed: seed, options: .init())
            _ = g.make(seed: seed)
            for f in ScenarioGenerator.Feature.allCases where g.has(f) { seen.insert(f.rawValue) }
        }
        #expect(seen.count == ScenarioGenerator.Feature.allCases.count)
    }
}
