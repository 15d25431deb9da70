import SimKit
import Invariants
import ServerWire
import ScenarioLanguage
import Scenarios

extension Fuzz {
    /// Generates and runs one seed on the SDK core `sdk` (a mutant's flaws, if `options`
    /// name one, reach it through `WorldSetup.sdkFlaws`) with every invariant checked. With
    /// `checkDeterminism` the seed then runs a second time and the two traces are compared
    /// record by record (`DeterminismCheck`): a difference sets `nondeterminism`, and the
    /// seed fails with the verdict NONDETERMINISTIC.
    ///
    /// Unchecked, this is `run(seed:options:)` on another core. Checked, the seed's run is
    /// the same as unchecked, and one more run without checkers compares fingerprints,
    /// record and event counts (`DeterminismCheck.again`); only a seed that differs pays
    /// for two more runs that keep and compare their traces to say where.
    /// - Complexity: one simulation; checked, one more without checkers (about 0.7 of one
    ///   with them), and two more for a seed that differs.
    package static func run<SDK: SDKCore>(seed: UInt64, options: GeneratorOptions, sdk: SDK.Type,
                                         checkDeterminism: Bool) -> (SeedResult, ScenarioFile, [Violation]) {
        run(seed: seed, options: options, sdk: sdk, server: ServerModel.self, checkDeterminism: checkDeterminism)
    }

    /// `run(seed:options:sdk:checkDeterminism:)` on the SDK core `sdk` and the server core
    /// `server` (the repeat runs of the determinism guard use the same two).
    package static func run<SDK: SDKCore, Server: ServerCore>(seed: UInt64, options: GeneratorOptions, sdk: SDK.Type,
                                                             server: Server.Type,
                                                             checkDeterminism: Bool) -> (SeedResult, ScenarioFile, [Violation]) {
        let scenario = ScenarioGenerator.generate(seed: seed, options: options)
        var setup: WorldSetup
        do {
            setup = try ScenarioCompiler.compile(scenario).setup
        } catch {
            // A generated scenario that does not compile is a generator bug: report it loudly.
            let result = SeedResult(seed: seed, sdk: sdkName(options.sdk), server: serverName(options.server), fingerprint: "", events: 0,
                                    broken: ["generator-error"], firstViolation: "\(error)", coverage: [])
            return (result, scenario, [])
        }
        setup.ringDepth = 0   // the checker keeps its own rings
        let world = WireRun.run { SimWorld<SDK, Server, InvariantChecker>(setup: setup, observer: InvariantChecker(ringDepth: 12)) }
        if let failure = CoreFailure.of(world) {
            var result = coreFailed(seed: seed, options: options, failure, events: world.eventsHandled)
            if checkDeterminism, !failure.isServer {
                // An SDK core's own verdict (an async SDK's escape) is rerun too: it must recur,
                // the same, naming the same step.
                result.nondeterminism = withExtendedLifetime(world) {
                    sameVerdict(setup, sdk: sdk, server: server, as: failure, core: DeterminismCheck.coreName(sdk, server: server, choice: options.sdk))
                }
            }
            return (result, scenario, [])
        }
        var result = seedResult(seed: seed, options: options, checker: world.observer, fingerprint: world.fingerprint,
                                events: world.eventsHandled, stopReason: world.stopReason)
        if checkDeterminism {
            // The first world stays alive through the others (see `DeterminismCheck.compare`).
            result.nondeterminism = withExtendedLifetime(world) {
                DeterminismCheck.again(setup, sdk: sdk, server: server, fingerprint: world.fingerprint, events: world.eventsHandled,
                                       core: DeterminismCheck.coreName(sdk, server: server, choice: options.sdk))
            }
        }
        return (result, scenario, world.observer.violations)
    }

    /// `run(seed:options:sdk:checkDeterminism:)` on the reference core (and its mutants),
    /// specialised here: called from another module (the command line), the generic
    /// version runs unspecialised, with a witness-table call for every step, which made
    /// the guard's sampled seeds cost twice what they should.
    package static func run(seed: UInt64, options: GeneratorOptions, checkDeterminism: Bool) -> (SeedResult, ScenarioFile, [Violation]) {
        run(seed: seed, options: options, sdk: ReferenceSDK.self, checkDeterminism: checkDeterminism)
    }

    /// `run(seed:options:sdk:server:checkDeterminism:)` on the cores `options.sdk` and
    /// `options.server` name: the reference (specialised, as above) or custom ones from `cores`.
    package static func run(seed: UInt64, options: GeneratorOptions, cores: SDKCores,
                           checkDeterminism: Bool) -> (SeedResult, ScenarioFile, [Violation]) {
        do {
            let resolved = try cores.resolve(sdk: options.sdk, server: options.server)
            if resolved.isReference { return run(seed: seed, options: options, checkDeterminism: checkDeterminism) }
            return run(seed: seed, options: options, sdk: resolved.sdk, server: resolved.server, checkDeterminism: checkDeterminism)
        } catch {
            // An unknown core never runs as another: the seed fails loudly, as `run(seed:options:cores:)` does.
            let scenario = ScenarioGenerator.generate(seed: seed, options: options)
            let result = SeedResult(seed: seed, sdk: sdkName(options.sdk), server: serverName(options.server), fingerprint: "", events: 0,
                                    broken: ["generator-error"], firstViolation: "\(error)", coverage: [])
            return (result, scenario, [])
        }
    }

    /// Runs `setup` once more and compares the verdict a core ended it with (`CoreFailure`)
    /// with `failure`, the first run's: nil when the same verdict recurs, naming the same step.
    package static func sameVerdict<SDK: SDKCore, Server: ServerCore>(_ setup: WorldSetup, sdk: SDK.Type, server: Server.Type,
                                                                     as failure: CoreFailure, core: String) -> Nondeterminism? {
        let second = WireRun.run { SimWorld<SDK, Server, NoObserver>(setup: setup, observer: NoObserver()) }
        let again = CoreFailure.of(second)
        if again == failure { return nil }
        return .unlocated(.coreVerdict, explanation: "the first run ended with \(failure.headline); the second "
                          + (again.map { "with \($0.headline)" } ?? "with no verdict of the core's own, after \(second.eventsHandled) events")
                          + ". An escape must be named at the step that made it, the same in every run (core: \(core)).",
                          names: ("run 1", "run 2"), core: core, detail: nil)
    }

    /// The verdict of a finished run, as `run(seed:options:)` records it.
    static func seedResult(seed: UInt64, options: GeneratorOptions, checker: InvariantChecker, fingerprint: Fingerprint,
                           events: UInt64, stopReason: String?) -> SeedResult {
        SeedResult(seed: seed, sdk: sdkName(options.sdk), server: serverName(options.server), fingerprint: fingerprint.description, events: events,
                   broken: checker.broken.map(\.rawValue), firstViolation: checker.violations.first?.headline,
                   coverage: checker.coverage.counts, stopReason: stopReason)
    }
}
