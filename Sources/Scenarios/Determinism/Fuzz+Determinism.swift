import SimKit
import Invariants

extension Fuzz {
    /// Generates and runs one seed on the SDK core `sdk` (a mutant's flaws, if `options`
    /// name one, reach it through `SDKConfig`) with every invariant checked. With
    /// `checkDeterminism` the seed then runs a second time and the two traces are compared
    /// record by record (`DeterminismCheck`): a difference sets `nondeterminism`, and the
    /// seed fails with the verdict NONDETERMINISTIC.
    ///
    /// Unchecked, this is `run(seed:options:)` on another core. Checked, the first run keeps
    /// its trace (`TraceTape`) beside the checker, in a world of its own type, so unchecked
    /// seeds pay nothing for the guard.
    /// - Complexity: one simulation, two when checked.
    public static func run<SDK: SDKCore>(seed: UInt64, options: GeneratorOptions, sdk: SDK.Type,
                                         checkDeterminism: Bool) -> (SeedResult, ScenarioFile, [Violation]) {
        let scenario = ScenarioGenerator.generate(seed: seed, options: options)
        var setup: WorldSetup
        do {
            setup = try ScenarioCompiler.compile(scenario).setup
        } catch {
            // A generated scenario that does not compile is a generator bug: report it loudly.
            let result = SeedResult(seed: seed, sdk: sdkName(options.sdk), fingerprint: "", events: 0,
                                    broken: ["generator-error"], firstViolation: "\(error)", coverage: [])
            return (result, scenario, [])
        }
        setup.ringDepth = 0   // the checker keeps its own rings
        guard checkDeterminism else {
            var world = World<SDK, InvariantChecker>(setup: setup, observer: InvariantChecker(ringDepth: 12))
            world.run()
            let result = seedResult(seed: seed, options: options, checker: world.observer, fingerprint: world.fingerprint,
                                    events: world.eventsHandled, stopReason: world.stopReason)
            return (result, scenario, world.observer.violations)
        }
        var world = World<SDK, ObserverPair<InvariantChecker, TraceTape>>(
            setup: setup, observer: ObserverPair(InvariantChecker(ringDepth: 12), TraceTape()))
        world.run()
        var result = seedResult(seed: seed, options: options, checker: world.observer.first, fingerprint: world.fingerprint,
                                events: world.eventsHandled, stopReason: world.stopReason)
        // The first world stays alive through the second run (see `DeterminismCheck.compare`).
        result.nondeterminism = withExtendedLifetime(world) {
            DeterminismCheck.compare(setup, sdk: sdk, against: world.observer.second, fingerprint: world.fingerprint,
                                     events: world.eventsHandled, core: DeterminismCheck.coreName(sdk, choice: options.sdk))
        }
        return (result, scenario, world.observer.first.violations)
    }

    /// The verdict of a finished run, as `run(seed:options:)` records it.
    static func seedResult(seed: UInt64, options: GeneratorOptions, checker: InvariantChecker, fingerprint: Fingerprint,
                           events: UInt64, stopReason: String?) -> SeedResult {
        SeedResult(seed: seed, sdk: sdkName(options.sdk), fingerprint: fingerprint.description, events: events,
                   broken: checker.broken.map(\.rawValue), firstViolation: checker.violations.first?.headline,
                   coverage: checker.coverage.counts, stopReason: stopReason)
    }
}
