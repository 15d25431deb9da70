import ServerWire
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios

/// Coverage-guided fuzzing (`simkit fuzz --guided`): a seed's scenario is either generated
/// fresh or made by mutating (`ScenarioMutator`) a script of the corpus, the scripts that
/// reached something new (`GuidanceObserver`'s features: a transition of one device, a
/// boundary bucket, a pair of rules in force at once, a "sometimes" situation).
///
/// A starting corpus is replayed first, as libFuzzer runs its seed corpus before it
/// mutates: the range's `i`-th seed (`firstSeed + i`) runs corpus script `i` itself,
/// unmutated, for `i` below the corpus size; mutation and fresh seeds follow.
///
/// Deterministic for a seed range and a starting corpus, whatever `--jobs` and `--shard`:
/// seeds are dealt to `lanes` fixed lanes (seed mod lanes); a lane runs its seeds in order
/// and learns only from its own earlier seeds, so a seed's scenario is a function of the
/// starting corpus and the seeds before it in its lane. Jobs and shards take whole lanes.
package enum GuidedFuzz {
    /// The number of lanes: seeds `k`, `k + lanes`, `k + 2·lanes`, … share a corpus. Fixed,
    /// so results do not depend on `--jobs` or `--shard` (at most this many shards).
    package static let lanes: UInt64 = 16
    /// One seed in this many is generated fresh even when the corpus has scripts.
    package static let freshOneIn: UInt64 = 4
    /// The most scripts a lane adds to its corpus (a bound on memory and on mutation's reach).
    package static let laneCorpusLimit = 512

    /// The lane of `seed`.
    package static func lane(of seed: UInt64) -> UInt64 { seed % lanes }

    /// One seed's outcome: its result, the scenario it ran, the violations, and whether the
    /// scenario joined the corpus.
    package struct Outcome {
        package var result: SeedResult
        package var scenario: ScenarioFile
        package var violations: [Violation]
        /// The scenario reached a feature its lane had not: it joined the lane's corpus.
        package var novel: Bool
        /// The scenario was made by mutating a corpus script (false: generated fresh).
        package var mutated: Bool
        /// The scenario is a starting-corpus script replayed as it is (see `Lane.replays`).
        package var replayed: Bool = false
    }

    /// Where a seed's scenario came from.
    package enum Origin: Equatable, Sendable {
        /// `ScenarioGenerator.generate(seed:)`: `simkit replay SEED` rebuilds it.
        case fresh
        /// A mutation of a corpus script.
        case mutated
        /// Starting-corpus script number `index`, unmutated.
        case replayed(index: Int)
    }

    /// One lane's walk through its seeds (in increasing order): the corpus it learns, and
    /// the union of the features its runs reached.
    package struct Lane {
        package let options: GeneratorOptions
        package let cores: SDKCores
        package private(set) var corpus: [ScenarioFile]
        /// Scripts this lane added (for `--corpus DIR`), in the order found.
        package private(set) var added: [ScenarioFile] = []
        package private(set) var seen = FeatureMap()
        /// The starting corpus, in order: seed `firstSeed + i` runs `replays[i]` unmutated
        /// (if that seed is in this lane), before any mutation can have learned anything.
        package let replays: [ScenarioFile]
        /// The first seed of the campaign's whole range (`--from`), not of this lane or shard,
        /// so that a script replays at the same seed under any `--jobs` and `--shard`.
        package let firstSeed: UInt64

        package init(start: [ScenarioFile], options: GeneratorOptions, cores: SDKCores = SDKCores(), firstSeed: UInt64 = 0) {
            self.options = options; self.cores = cores; self.firstSeed = firstSeed
            corpus = start.map { var s = $0; s.sdk = options.sdk; s.server = options.server; return s }
            replays = corpus
        }

        /// The index of the starting-corpus script that `seed` replays, if any.
        package func replayIndex(of seed: UInt64) -> Int? {
            guard seed >= firstSeed, seed - firstSeed < UInt64(replays.count) else { return nil }
            return Int(seed - firstSeed)
        }

        /// The scenario seed `seed` runs, given the corpus so far.
        package func scenario(for seed: UInt64) -> (ScenarioFile, mutated: Bool) {
            let (scenario, origin) = scenarioAndOrigin(for: seed)
            return (scenario, origin == .mutated)
        }

        /// The scenario seed `seed` runs, given the corpus so far, and where it came from.
        package func scenarioAndOrigin(for seed: UInt64) -> (ScenarioFile, Origin) {
            if let i = replayIndex(of: seed) { return (replays[i], .replayed(index: i)) }
            var r = SimRandom(seed: seed).fork(0x6775_6964_6564)   // "guided"
            let fresh = ScenarioGenerator.generate(seed: seed, options: options)
            guard !corpus.isEmpty, !r.chance(1, outOf: GuidedFuzz.freshOneIn) else { return (fresh, .fresh) }
            let parent = corpus[Int(r.below(UInt64(corpus.count)))]
            let donor = r.chance(1, outOf: 2) ? fresh : corpus[Int(r.below(UInt64(corpus.count)))]
            var mutator = ScenarioMutator(random: r.fork(1))
            var child = mutator.mutate(parent, donor: donor)
            child.name = "fuzz seed \(seed) (guided)"
            child.seed = seed
            child.sdk = options.sdk
            child.server = options.server
            // A child that is not a valid scenario file (a splice naming a group its parent
            // lacks, a rotation to a key already used) gives way to the fresh scenario: every
            // script run must print as a file that `simkit run` accepts, for its reproducer.
            guard GuidedFuzz.isValidFile(child, cores: cores) else { return (fresh, .fresh) }
            return (child, .mutated)
        }

        /// Runs `seed` and learns from it.
        package mutating func run(seed: UInt64) -> Outcome {
            let (scenario, origin) = scenarioAndOrigin(for: seed)
            let mutated = origin == .mutated, replayed = origin != .fresh && !mutated
            var (result, violations, features) = GuidedFuzz.check(scenario, seed: seed, options: options, cores: cores)
            let novel = seen.newFeatures(in: features) > 0 && result.passed
            seen.formUnion(features)
            // A replayed script is in the corpus already: it teaches the lane its features only.
            if novel, !replayed, added.count < GuidedFuzz.laneCorpusLimit {
                var kept = scenario
                kept.name = "corpus: fuzz seed \(seed)"
                corpus.append(kept)
                added.append(kept)
            }
            // A mutated or replayed script is not the seed's own: `simkit replay` cannot
            // rebuild it from the seed; its reproducer is the script.
            if mutated || replayed { result.guided = true }
            return Outcome(result: result, scenario: scenario, violations: violations, novel: novel, mutated: mutated,
                           replayed: replayed)
        }
    }

    /// Whether `scenario` printed is a file the parser accepts with no error, and compiles.
    package static func isValidFile(_ scenario: ScenarioFile, cores: SDKCores) -> Bool {
        printedAndParsed(scenario, cores: cores) != nil
    }

    /// `scenario` printed and parsed back, if that is a file the parser accepts with no
    /// error and it compiles: what a corpus file written from it will run.
    package static func printedAndParsed(_ scenario: ScenarioFile, cores: SDKCores) -> ScenarioFile? {
        let parsed = ScenarioParser.parse(ScenarioPrinter.print(scenario), file: "guided.scenario",
                                          context: ScenarioRunner.standardContext(cores: cores))
        guard let back = parsed.scenario, !parsed.hasErrors, (try? ScenarioCompiler.compile(back)) != nil else { return nil }
        return back
    }

    /// Runs `scenario` with every invariant checked and the guidance observer beside the
    /// checkers: its result, violations and features.
    package static func check(_ scenario: ScenarioFile, seed: UInt64, options: GeneratorOptions,
                             cores: SDKCores) -> (SeedResult, [Violation], FeatureMap) {
        let (result, violations, features, _) = measure(scenario, seed: seed, options: options, cores: cores)
        return (result, violations, features)
    }

    /// `check`, and the edge features apart (`GuidanceObserver.edges`, for `CorpusCompounder`).
    package static func measure(_ scenario: ScenarioFile, seed: UInt64, options: GeneratorOptions,
                               cores: SDKCores) -> (SeedResult, [Violation], FeatureMap, edges: FeatureMap) {
        do {
            let (checker, guidance, fingerprint, events, stop, failure) = try run(scenario, cores: cores)
            if let failure {   // a core's own verdict (the server left the protocol, the SDK escaped): it teaches nothing
                return (Fuzz.coreFailed(seed: seed, options: options, failure, events: events), [], FeatureMap(), FeatureMap())
            }
            var map = guidance.features
            for (i, c) in checker.coverage.counts.enumerated() where c > 0 { map.insertSituation(i) }
            let result = SeedResult(seed: seed, sdk: Fuzz.sdkName(options.sdk), server: Fuzz.serverName(options.server), fingerprint: fingerprint.description,
                                    events: events, broken: checker.broken.map(\.rawValue),
                                    firstViolation: checker.violations.first?.headline, coverage: checker.coverage.counts,
                                    stopReason: stop?.description)
            return (result, checker.violations, map, guidance.edges)
        } catch {
            let result = SeedResult(seed: seed, sdk: Fuzz.sdkName(options.sdk), server: Fuzz.serverName(options.server), fingerprint: "", events: 0,
                                    broken: ["generator-error"], firstViolation: "\(error)", coverage: [])
            return (result, [], FeatureMap(), FeatureMap())
        }
    }

    static func run(_ scenario: ScenarioFile, cores: SDKCores) throws(CompileError)
        -> (InvariantChecker, GuidanceObserver, Fingerprint, UInt64, StopReason?, CoreFailure?) {
        let resolved = try cores.resolve(sdk: scenario.sdk, server: scenario.server)
        if resolved.isReference { return try runReference(scenario) }
        return try open(scenario, resolved.sdk, resolved.server)
    }

    /// `run(_:_:_:)` written out for the reference's cores, so that its world runs
    /// specialised (as `Fuzz.check(_:ringDepth:)`; `FuzzSpecialisationTests`).
    static func runReference(_ scenario: ScenarioFile) throws(CompileError)
        -> (InvariantChecker, GuidanceObserver, Fingerprint, UInt64, StopReason?, CoreFailure?) {
        var compiled = try ScenarioCompiler.compile(scenario)
        compiled.setup.ringDepth = 0
        var world = SimWorld<ReferenceSDK, ServerModel, ObserverPair<InvariantChecker, GuidanceObserver>>(
            setup: compiled.setup, observer: ObserverPair(InvariantChecker(ringDepth: 12), GuidanceObserver()))
        world.run()
        return (world.observer.first, world.observer.second, world.fingerprint, world.eventsHandled, world.stop, CoreFailure.of(world))
    }

    static func open<SDK: SDKCore, Server: ServerCore>(_ scenario: ScenarioFile, _ sdk: SDK.Type, _ server: Server.Type) throws(CompileError)
        -> (InvariantChecker, GuidanceObserver, Fingerprint, UInt64, StopReason?, CoreFailure?) {
        try run(scenario, sdk, server)
    }

    static func run<SDK: SDKCore, Server: ServerCore>(_ scenario: ScenarioFile, _ sdk: SDK.Type, _ server: Server.Type) throws(CompileError)
        -> (InvariantChecker, GuidanceObserver, Fingerprint, UInt64, StopReason?, CoreFailure?) {
        var compiled = try ScenarioCompiler.compile(scenario)
        compiled.setup.ringDepth = 0
        let world = WireRun.run {
            SimWorld<SDK, Server, ObserverPair<InvariantChecker, GuidanceObserver>>(
                setup: compiled.setup, observer: ObserverPair(InvariantChecker(ringDepth: 12), GuidanceObserver()))
        }
        return (world.observer.first, world.observer.second, world.fingerprint, world.eventsHandled, world.stop, CoreFailure.of(world))
    }
}
