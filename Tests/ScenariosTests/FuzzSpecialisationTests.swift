import Testing
import SimKit
import Invariants
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch

/// The reference's runs go through `Fuzz.check(_:ringDepth:)`, written out for the
/// concrete cores so that the engine runs specialised; the generic chain
/// (`check(_:sdk:server:ringDepth:)`) is what every other core takes. Both must give the
/// same run: the same fingerprint, events, violations and coverage, mutants included.
@Suite struct FuzzSpecialisationTests {
    @Test(arguments: [SDKChoice.reference, .mutant("lock-on-5xx"), .mutant("purge-only-on-check")])
    func theConcreteReferenceRunIsTheGenericOne(sdk: SDKChoice) throws {
        for seed in UInt64(0)..<12 {
            let scenario = ScenarioGenerator.generate(seed: seed, options: GeneratorOptions(sdk: sdk))
            let concrete = CheckedRun(try Fuzz.check(scenario))
            let generic = CheckedRun(try Fuzz.check(scenario, sdk: ReferenceSDK.self, server: ServerModel.self))
            #expect(concrete.fingerprint == generic.fingerprint, "seed \(seed)")
            #expect(concrete.eventsHandled == generic.eventsHandled, "seed \(seed)")
            #expect(concrete.eventsHandled > 0, "seed \(seed)")
            #expect(concrete.checker.violations.map(\.headline) == generic.checker.violations.map(\.headline), "seed \(seed)")
            #expect(concrete.checker.coverage.counts == generic.checker.coverage.counts, "seed \(seed)")
            #expect(concrete.stopReason == generic.stopReason, "seed \(seed)")
        }
    }
}

/// The same for guided runs: `GuidedFuzz.runReference` against the generic `run`.
@Suite struct GuidedSpecialisationTests {
    @Test func theConcreteGuidedRunIsTheGenericOne() throws {
        for seed in UInt64(0)..<8 {
            let scenario = ScenarioGenerator.generate(seed: seed, options: GeneratorOptions())
            let concrete = try GuidedFuzz.runReference(scenario)
            let generic = try GuidedFuzz.run(scenario, ReferenceSDK.self, ServerModel.self)
            #expect(concrete.2 == generic.2, "seed \(seed)")
            #expect(concrete.3 == generic.3 && concrete.3 > 0, "seed \(seed)")
            #expect(concrete.0.violations.map(\.headline) == generic.0.violations.map(\.headline), "seed \(seed)")
            #expect(concrete.1.features == generic.1.features, "seed \(seed)")
        }
    }
}
