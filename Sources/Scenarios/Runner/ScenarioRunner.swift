import Invariants
import ServerWire
import SimKit
import ScenarioLanguage

/// Runs scenario files: parse, validate, compile, run the reference SDK (or a mutant, or
/// a registered custom core: `sdk custom NAME`) with every invariant checked and the timed expectations judged, then give a verdict.
///
/// A scenario passes when the run reached its duration, every `expect` was judged and
/// holds, and the set of invariants broken is exactly the set of `expect violation` names
/// (SPEC §4). A run that stopped early without finding a failure is incomplete.
package struct ScenarioRunner: Sendable {
    /// Replaces the file's `sdk` line when set (`--sdk`).
    package var sdk: SDKChoice?
    /// Replaces the file's `server` line when set (`--server`).
    package var server: ServerChoice?
    /// Replaces the file's `seed` line when set (`--seed`).
    package var seed: UInt64?
    /// Names the validator accepts: every invariant, every mutant and every core of `cores`.
    package var context: ValidationContext
    /// The custom cores `sdk custom NAME` (or `sdk: .custom(NAME)`) may name.
    package let cores: SDKCores
    /// Replaces the run's event budget when set (a guard for runs of untrusted files).
    package var eventBudget: UInt64?
    /// The memory a run may use (`WorldSetup.memoryBudgetBytes`; `--max-memory`).
    package var memoryBudgetBytes: UInt64 = WorldSetup.defaultMemoryBudgetBytes
    /// Runs each scenario twice more and compares the traces (`DeterminismCheck`); a
    /// difference fails it with `ScenarioOutcome.nondeterminism` (`--check-determinism`).
    package var checkDeterminism = false

    /// A runner; `sdk`, `server` and `seed` override what files say; `cores` are the custom
    /// cores it knows (SDK cores, and server cores in `cores.servers`).
    package init(sdk: SDKChoice? = nil, server: ServerChoice? = nil, seed: UInt64? = nil, cores: SDKCores = SDKCores()) {
        self.sdk = sdk
        self.server = server
        self.seed = seed
        self.cores = cores
        context = ScenarioRunner.standardContext(cores: cores)
    }

    /// Every invariant and mutant name, and no custom core, for `ScenarioParser.parse(_:file:context:)`.
    package static var standardContext: ValidationContext { standardContext(cores: SDKCores()) }

    /// Every invariant and mutant name and the names of `cores`.
    package static func standardContext(cores: SDKCores) -> ValidationContext {
        ValidationContext(knownInvariants: InvariantID.allCases.map(\.rawValue), knownMutants: Mutants.names, knownCores: cores.names,
                          knownServers: cores.servers.names)
    }

    /// Parses `source` (named `file` in diagnostics) and runs it; bad input is a `.badInput` outcome.
    package func run(file: String, source: String) -> ScenarioOutcome {
        let parsed = ScenarioParser.parse(source, file: file, context: context)
        guard let scenario = parsed.scenario, !parsed.hasErrors else {
            return ScenarioOutcome(name: "", file: file, verdict: .badInput, errors: parsed.rendered)
        }
        return run(scenario: scenario, file: file)
    }

    /// Runs a parsed and validated scenario.
    /// - Complexity: one simulation: O(events × log queue) plus O(devices) per probe.
    package func run(scenario: ScenarioFile, file: String) -> ScenarioOutcome {
        var scenario = scenario
        if let server { scenario.server = server }
        let compiled: CompiledScenario
        do {
            compiled = try ScenarioCompiler.compile(scenario, sdk: sdk, seed: seed)
        } catch {
            return ScenarioOutcome(name: scenario.name, file: file, verdict: .badInput, errors: "\(file): error: \(error.message)")
        }
        var setup = compiled.setup
        if let eventBudget { setup.eventBudget = eventBudget }
        setup.memoryBudgetBytes = memoryBudgetBytes
        do {
            let resolved = try cores.resolve(sdk: sdk ?? scenario.sdk, server: scenario.server)
            if resolved.isReference {
                return run(ReferenceSDK.self, ServerModel.self, setup: setup, compiled: compiled, name: scenario.name, file: file,
                           choice: sdk ?? scenario.sdk)
            }
            return run(resolved.sdk, resolved.server, setup: setup, compiled: compiled, name: scenario.name, file: file,
                       choice: sdk ?? scenario.sdk)
        } catch {
            return ScenarioOutcome(name: scenario.name, file: file, verdict: .badInput, errors: "\(file): error: \(error.message)")
        }
    }

    /// Runs `setup` on the SDK core `sdk` and judges it.
    func run<SDK: SDKCore>(_ sdk: SDK.Type, setup: WorldSetup, compiled: CompiledScenario, name: String,
                           file: String, choice: SDKChoice? = nil) -> ScenarioOutcome {
        run(sdk, ServerModel.self, setup: setup, compiled: compiled, name: name, file: file, choice: choice)
    }

    /// Runs `setup` on the SDK core `sdk` and the server core `server` and judges it.
    func run<SDK: SDKCore, Server: ServerCore>(_ sdk: SDK.Type, _ server: Server.Type, setup: WorldSetup,
                                               compiled: CompiledScenario, name: String,
                                               file: String, choice: SDKChoice? = nil) -> ScenarioOutcome {
        let world = WireRun.run {
            SimWorld<SDK, Server, ObserverPair<InvariantChecker, ExpectationJudge>>(
                setup: setup, observer: ObserverPair(InvariantChecker(), ExpectationJudge(expectations: compiled.expectations)))
        }
        var outcome = judge(world: world, compiled: compiled, name: name, file: file)
        if let failure = CoreFailure.of(world) {
            // A core's own verdict (the server left the protocol, the SDK escaped): that is
            // the verdict (what the checkers saw after it was the world going on without it).
            outcome.coreFailure = failure
            outcome.verdict = .failed
            outcome.unexpected = []
            outcome.unexpectedViolations = []
            outcome.expectations = []
            outcome.unjudgedExpectations = []
            outcome.missingViolations = []
            return outcome
        }
        if checkDeterminism {
            // Kept alive through the check: the check's runs allocate elsewhere (see `DeterminismCheck.compare`).
            outcome.nondeterminism = withExtendedLifetime(world) {
                DeterminismCheck.twice(setup, sdk: SDK.self, server: Server.self,
                                       core: DeterminismCheck.coreName(SDK.self, server: Server.self, choice: choice))
            }
            if outcome.nondeterminism != nil { outcome.verdict = .failed }
        }
        return outcome
    }

    /// The verdict on a finished run.
    func judge<SDK: SDKCore, Server: ServerCore>(world: SimWorld<SDK, Server, ObserverPair<InvariantChecker, ExpectationJudge>>,
                             compiled: CompiledScenario, name: String, file: String) -> ScenarioOutcome {
        let checker = world.observer.first, judge = world.observer.second
        var outcome = ScenarioOutcome(name: name, file: file, verdict: .passed)
        outcome.seed = compiled.setup.seed
        outcome.broken = checker.broken
        outcome.unexpected = checker.broken.filter { !compiled.expectedViolations.contains($0.rawValue) }
        outcome.violations = checker.violations
        outcome.unexpectedViolations = checker.violations.filter { outcome.unexpected.contains($0.invariant) }
        outcome.missingViolations = compiled.expectedViolations.filter { n in !checker.broken.contains { $0.rawValue == n } }
        outcome.expectations = judge.results
        let judged = Set(judge.results.map(\.index))
        outcome.unjudgedExpectations = compiled.expectations.indices.filter { !judged.contains($0) }
            .map { compiled.expectations[$0].text + ": never judged (the run ended at \(DurationText.format(world.now)))" }
        outcome.fingerprint = "\(world.fingerprint)"
        outcome.eventsHandled = world.eventsHandled
        outcome.virtualDurationMs = world.now
        outcome.stop = world.stop
        outcome.facts = world.facts
        // What broke or failed before an early stop is a real failure; what was never
        // reached (a missing violation, an unjudged expectation) is only untested.
        let foundFailure = !outcome.unexpected.isEmpty || !outcome.failedExpectations.isEmpty
        let untested = !outcome.missingViolations.isEmpty || !outcome.unjudgedExpectations.isEmpty
        if foundFailure { outcome.verdict = .failed }
        else if world.stop != nil { outcome.verdict = .incomplete }
        else { outcome.verdict = untested ? .failed : .passed }
        return outcome
    }
}
