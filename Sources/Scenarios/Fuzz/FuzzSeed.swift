import SimKit
import Invariants
import ServerWire
import ScenarioLanguage
import Scenarios

/// The verdict of one fuzz seed: what broke, the run's fingerprint, and its coverage.
public struct SeedResult: Sendable, Codable, Equatable {
    public var seed: UInt64
    /// `reference`, `mutant:NAME` or `custom:NAME`.
    public var sdk: String
    /// The server core, `custom:NAME`, when it is not the reference (nil: the reference;
    /// absent from results written before server cores existed).
    public var server: String?
    /// Sixteen hex digits over the whole trace.
    public var fingerprint: String
    public var events: UInt64
    /// Invariants broken, by name, sorted.
    public var broken: [String]
    /// The first violation's headline, if any.
    public var firstViolation: String?
    /// "Sometimes" coverage counts, in `Coverage.allCases` order.
    public var coverage: [UInt64]
    /// Set after shrinking: the reproducer's file name, statements and devices.
    public var reproducer: String?
    public var reproducerStatements: Int?
    public var reproducerDevices: UInt64?
    /// Why the run stopped before its end (`StopReason.description`); nil when it reached it.
    public var stopReason: String?
    /// Set when the determinism guard ran the seed twice and the traces differed: the
    /// verdict NONDETERMINISTIC, a failure of its own (`DeterminismCheck`).
    public var nondeterminism: Nondeterminism?
    /// Set for a seed of `simkit fuzz --guided`: its scenario came from the lane's corpus
    /// and history, not from the seed alone, so `simkit replay SEED` does not rebuild it;
    /// its reproducer file does (nil in results of plain fuzzing).
    public var guided: Bool?

    /// An invariant broke, or the seed did not reproduce (NONDETERMINISTIC).
    public var failed: Bool { !broken.isEmpty || nondeterminism != nil }
    /// The run stopped early: what it did not reach was not tested.
    public var incomplete: Bool { stopReason != nil }
    /// Nothing broke and the run reached its end.
    public var passed: Bool { !failed && !incomplete }
    /// The flags that select this seed's cores: `--sdk X`, and `--server custom:NAME` when
    /// a custom server core ran it (for replay commands).
    public var coreFlags: String { "--sdk \(sdk)" + (server.map { " --server " + ServerCores.shellQuoted($0) } ?? "") }
}

/// Running scenarios for the fuzzer: one seed, or one scenario, with every invariant checked
/// (the namespace and the core names the runner needs too are in Runner/Fuzz.swift).
extension Fuzz {
    /// Runs `scenario` with every invariant checked (expectations are not judged).
    ///
    /// Written out for the concrete cores, not through the generic `check(_:sdk:server:)`:
    /// through that chain (typed throws and a closure) the optimiser left the world's
    /// `run()` unspecialised, so every fuzzed, shrunk and mutant seed ran the generic
    /// engine, metadata look-ups and witness calls per event (`FuzzSpecialisationTests`
    /// shows the two give the same runs).
    package static func check(_ scenario: ScenarioFile, ringDepth: Int = 12) throws(CompileError) -> World<ReferenceSDK, InvariantChecker> {
        var compiled = try ScenarioCompiler.compile(scenario)
        compiled.setup.ringDepth = 0   // the checker keeps its own rings
        var world = World<ReferenceSDK, InvariantChecker>(setup: compiled.setup, observer: InvariantChecker(ringDepth: ringDepth))
        world.run()
        return world
    }

    /// Runs `scenario` on the SDK core `sdk` (its mutant flaws, if the scenario names a
    /// mutant, reach it through `WorldSetup.sdkFlaws`) and the reference server, with every
    /// invariant checked.
    package static func check<SDK: SDKCore>(_ scenario: ScenarioFile, sdk: SDK.Type,
                                           ringDepth: Int = 12) throws(CompileError) -> World<SDK, InvariantChecker> {
        try check(scenario, sdk: sdk, server: ServerModel.self, ringDepth: ringDepth)
    }

    /// Runs `scenario` on the SDK core `sdk` and the server core `server` (a mutant's
    /// flaws reach the reference cores, `WorldSetup.sdkFlaws`) with every invariant checked.
    package static func check<SDK: SDKCore, Server: ServerCore>(
        _ scenario: ScenarioFile, sdk: SDK.Type, server: Server.Type, ringDepth: Int = 12
    ) throws(CompileError) -> SimWorld<SDK, Server, InvariantChecker> {
        var compiled = try ScenarioCompiler.compile(scenario)
        compiled.setup.ringDepth = 0   // the checker keeps its own rings
        return WireRun.run { SimWorld<SDK, Server, InvariantChecker>(setup: compiled.setup, observer: InvariantChecker(ringDepth: ringDepth)) }
    }

    /// Runs `scenario` on the cores its `sdk` and `server` lines name (the reference, a
    /// mutant of it, or cores of `cores`) with every invariant checked. An unknown custom
    /// name is a `CompileError` that lists the known ones.
    package static func check(_ scenario: ScenarioFile, cores: SDKCores, ringDepth: Int = 12) throws(CompileError) -> CheckedRun {
        let resolved = try cores.resolve(sdk: scenario.sdk, server: scenario.server)
        if resolved.isReference { return CheckedRun(try check(scenario, ringDepth: ringDepth)) }
        return try checkedRun(scenario, resolved.sdk, resolved.server, ringDepth: ringDepth)
    }

    /// `check(_:sdk:server:ringDepth:)` for core types known only at run time.
    static func checkedRun<SDK: SDKCore, Server: ServerCore>(_ scenario: ScenarioFile, _ sdk: SDK.Type, _ server: Server.Type,
                                                            ringDepth: Int) throws(CompileError) -> CheckedRun {
        CheckedRun(try check(scenario, sdk: sdk, server: server, ringDepth: ringDepth))
    }

    /// Generates and runs one seed on the core `options.sdk` names (a custom one from `cores`).
    package static func run(seed: UInt64, options: GeneratorOptions,
                           cores: SDKCores = SDKCores()) -> (SeedResult, ScenarioFile, [Violation]) {
        let scenario = ScenarioGenerator.generate(seed: seed, options: options)
        let result: SeedResult
        let violations: [Violation]
        do {
            let world = try check(scenario, cores: cores)
            if let failure = world.coreFailure {
                return (coreFailed(seed: seed, options: options, failure, events: world.eventsHandled), scenario, [])
            }
            let checker = world.checker
            violations = checker.violations
            result = SeedResult(seed: seed, sdk: sdkName(options.sdk), server: serverName(options.server),
                                fingerprint: world.fingerprint.description,
                                events: world.eventsHandled, broken: checker.broken.map(\.rawValue),
                                firstViolation: checker.violations.first?.headline, coverage: checker.coverage.counts,
                                stopReason: world.stopReason)
        } catch {
            // A generated scenario that does not compile is a generator bug: report it loudly.
            violations = []
            result = SeedResult(seed: seed, sdk: sdkName(options.sdk), server: serverName(options.server), fingerprint: "", events: 0,
                                broken: ["generator-error"], firstViolation: "\(error)", coverage: [])
        }
        return (result, scenario, violations)
    }

    /// Shrinks a failing scenario to a minimal one that still breaks `invariant`, on the
    /// core its `sdk` line names (a custom one from `cores`). `invariant` may name an SDK
    /// core's own verdict (`CoreFailure`, e.g. `step-never-settles`): a candidate is kept
    /// when its run ends with the same verdict. A server's failure never keeps one.
    package static func shrink(_ scenario: ScenarioFile, invariant: String, maxAttempts: Int = 1_500,
                              cores: SDKCores = SDKCores()) -> (ScenarioFile, attempts: Int) {
        var shrinker = Shrinker(maxAttempts: maxAttempts) { candidate in
            guard let world = try? check(candidate, cores: cores, ringDepth: 0) else { return false }
            if let failure = world.coreFailure { return !failure.isServer && failure.name == invariant }
            return world.checker.broken.contains { $0.rawValue == invariant }
        }
        let small = shrinker.shrink(scenario)
        return (small, shrinker.attempts)
    }

    /// The verdict of a seed that a core ended (`CoreFailure`): a server that left the
    /// protocol (`server-protocol`, `server-unresponsive`, `server-exited`) or an SDK
    /// core's own verdict (`escape-foreign-thread`, `step-never-settles`, …). Its name is
    /// the seed's one broken name, never an invariant's and never a pass; the checkers'
    /// findings after it are not kept (the world went on without that core).
    package static func coreFailed(seed: UInt64, options: GeneratorOptions, _ failure: CoreFailure, events: UInt64) -> SeedResult {
        SeedResult(seed: seed, sdk: sdkName(options.sdk), server: serverName(options.server), fingerprint: "", events: events,
                   broken: [failure.name], firstViolation: failure.text.trimmingSuffixNewline, coverage: [])
    }

    /// Whether `name` is a verdict of a server on the wire, not an invariant.
    package static func isServerFailure(_ name: String) -> Bool { WireFailure.Kind(rawValue: name) != nil }

    /// Whether `name` is a core's own verdict (`CoreFailure`: a server's or an SDK core's),
    /// not an invariant's (nor the generator's error).
    package static func isCoreFailure(_ name: String) -> Bool { InvariantID(rawValue: name) == nil && name != "generator-error" }

    /// The text of a reproducer file: a comment saying what it shows and how to replay it,
    /// then the scenario.
    package static func reproducerText(_ scenario: ScenarioFile, invariant: String, seed: UInt64, sdk: SDKChoice, file: String) -> String {
        var s = scenario
        s.name = "\(invariant) (fuzz seed \(seed), shrunk)"
        return """
        # Found by `simkit fuzz` (seed \(seed), --sdk \(sdkName(sdk))\(ServerCores.flag(scenario.server))) and shrunk.
        # It breaks the invariant '\(invariant)'. Replay: simkit run \(file)

        """ + ScenarioPrinter.print(s)
    }
}

/// A finished checked run, whatever core ran it: what the checkers found and what the
/// world reports (`Fuzz.check(_:cores:ringDepth:)`).
package struct CheckedRun {
    /// The checkers after the run: violations, broken invariants, coverage.
    package var checker: InvariantChecker
    package var fingerprint: Fingerprint
    package var eventsHandled: UInt64
    /// Why the run stopped before its end; nil when it reached it.
    package var stop: StopReason?
    package var facts: WorldFacts
    /// `stop`'s description.
    package var stopReason: String? { stop?.description }
    /// Set when a core ended the run with a verdict of its own (`CoreFailure`: the server
    /// on the wire left the protocol, or an async SDK escaped): the run's verdict, whatever
    /// the checkers found.
    package var coreFailure: CoreFailure?

    /// What `world` found and reports.
    package init<SDK: SDKCore, Server: ServerCore>(_ world: SimWorld<SDK, Server, InvariantChecker>) {
        coreFailure = CoreFailure.of(world)
        checker = world.observer
        fingerprint = world.fingerprint
        eventsHandled = world.eventsHandled
        stop = world.stop
        facts = world.facts
    }
}

extension String {
    var trimmingSuffixNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}
