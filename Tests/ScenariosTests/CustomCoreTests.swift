import Foundation
import Testing
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch
import SimKitTesting
import SimKitCommand

/// A user's core with a bug of its own: it treats a 5xx as a lock error (the flaw of the
/// mutant `lock-on-5xx`, but plugged in as a core of its own, not named as a mutant).
struct LocksOn5xxCore: SDKCore {
    var core = ReferenceSDK(flaws: .locksOn5xx)
    mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                         effects: inout EffectBuffer) {
        core.handle(input, now: now, context: context, config: config, disk: disk, effects: &effects)
    }
    func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool { core.ignoresTimer(kind, arg: arg) }
}

/// Custom cores run everywhere the reference does, by name: the runner (`sdk custom NAME`),
/// the fuzzer and shrinker, `SimKitTest`, the timeline and the command line; whatever names a
/// failure (reproducer, replay command) names the core that failed.
@Suite struct CustomCoreTests {
    static let cores: SDKCores = ["buggy": LocksOn5xxCore.self, "other": OtherConstantsSDK.self]

    static let scenario = """
    scenario "custom"
    sdk custom other
    account acme
    app photos account acme key rk_live_A
    devices 3 app photos
    at 0s launch all
    at 1d disable photos
    at 1d1h open all
    at 1d2h expect all photos locked

    """

    /// The first of the default fuzz seeds on which the buggy core breaks `never-lock-on-transient`.
    static let failingSeed: UInt64 = {
        for seed in 0..<200 as Range<UInt64> where SimKitTest.seed(seed, sdk: .custom("buggy"), cores: cores)
            .broken.contains(.neverLockOnTransient) { return seed }
        return .max
    }()

    @Test func registryIsSortedAndChecksNames() {
        let cores: SDKCores = ["zeta": OtherConstantsSDK.self, "alpha": ReferenceSDK.self, "mid": LocksOn5xxCore.self]
        #expect(cores.names == ["alpha", "mid", "zeta"])
        #expect(cores.type(named: "mid") == LocksOn5xxCore.self)
        #expect(cores.type(named: "nope") == nil)
        #expect(SDKCores.problem(withName: "Mine") != nil)
        #expect(SDKCores.problem(withName: "reference") != nil)
        #expect(SDKCores.problem(withName: "my-sdk_2") == nil)
        #expect(SDKCores.defaultName(for: OtherConstantsSDK.self) == "other-constants-sdk")
        #expect(cores.parse("custom:mid") == .custom("mid"))
        #expect(cores.parse("custom:nope") == nil)
        #expect(cores.parse("mutant:lock-on-5xx") == .mutant("lock-on-5xx"))
    }

    @Test func aScenarioRunsTheCoreItNames() throws {
        let run = try SimKitTest.scenario(source: Self.scenario, file: "custom.scenario", cores: Self.cores)
        #expect(run.passed, "\(run)")
        // It ran `OtherConstantsSDK`: the same world on that core directly gives the same trace.
        let direct = try Fuzz.check(run.scenario, sdk: OtherConstantsSDK.self)
        #expect(run.outcome.fingerprint == "\(direct.fingerprint)")
        let reference = try SimKitTest.scenario(source: Self.scenario, sdk: .reference, cores: Self.cores)
        #expect(reference.outcome.fingerprint != run.outcome.fingerprint)
    }

    @Test func anUnknownCoreIsALocatedError() {
        let parsed = ScenarioParser.parse(Self.scenario, file: "c.scenario", context: ScenarioRunner.standardContext(cores: ["othr": OtherConstantsSDK.self]))
        #expect(parsed.hasErrors)
        #expect(parsed.rendered.contains("c.scenario:2:12: error: unknown sdk core 'other'"), "\(parsed.rendered)")
        #expect(parsed.rendered.contains("othr"), "a did-you-mean or the list of known cores: \(parsed.rendered)")
        #expect(throws: ScenarioRunError.self) { try SimKitTest.scenario(source: Self.scenario) }
        #expect(throws: ScenarioRunError.self) { try SimKitTest.scenario(source: Self.scenario, sdk: .custom("nope"), cores: Self.cores) }
    }

    @Test func aBuggyCoreIsCaughtShrunkAndNamedInItsReproducer() throws {
        let seed = Self.failingSeed
        try #require(seed < 200, "the buggy core broke nothing in 200 seeds")
        let run = SimKitTest.seed(seed, sdk: .custom("buggy"), cores: Self.cores)
        #expect(run.result.sdk == "custom:buggy")
        #expect("\(run)".contains("replay: simkit replay \(seed) --sdk custom:buggy"), "\(run)")
        let reproducer = run.reproducer
        #expect(reproducer.contains("sdk custom buggy"), "\(reproducer)")
        #expect(reproducer.contains("--sdk custom:buggy"), "\(reproducer)")
        #expect(!reproducer.contains("sdk reference"))
        // The reproducer fails the same way on the buggy core, and not on the reference.
        let small = try SimKitTest.scenario(source: reproducer, cores: Self.cores)
        #expect(small.broken.contains(.neverLockOnTransient))
        // Seed 11 is an interleaving probe's script since the checks-answered-in-order probe
        // (a quiet app of its own with its stop, lift and opens): 14 statements after shrinking.
        #expect(small.scenario.statementCount <= 16, "\(reproducer)")
        let onReference = try SimKitTest.scenario(source: reproducer, sdk: .reference, cores: Self.cores)
        #expect(!onReference.broken.contains(.neverLockOnTransient))
        // The generic entry point names the core after its type unless told otherwise.
        let byType = SimKitTest.seed(seed, core: LocksOn5xxCore.self)
        #expect(byType.result.sdk == "custom:locks-on5xx-core")
        #expect(byType.result.fingerprint == run.result.fingerprint)
    }

    @Test func theTimelineDrawsACustomCore() throws {
        let scenario = try #require(ScenarioParser.parse(Self.scenario, file: "t", context: ScenarioRunner.standardContext(cores: Self.cores)).scenario)
        let page = try Timeline.run(scenario, cores: Self.cores)
        #expect(page.html.contains("sdk custom:other"))
        #expect(throws: CompileError.self) { try Timeline.run(scenario) }
    }

    @Test func theCommandLineKnowsTheRegisteredCores() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-custom-\(ProcessInfo.processInfo.processIdentifier)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/custom.scenario"
        try Self.scenario.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(SimKitCommand.run(["check", file], cores: Self.cores) == 0)
        #expect(SimKitCommand.run(["check", file]) == 2)
        #expect(SimKitCommand.run(["run", "--quiet", file], cores: Self.cores) == 0)
        #expect(SimKitCommand.run(["fuzz", "--seeds", "1", "--sdk", "custom:nope", "--quiet"], cores: Self.cores) == 2)
        let seed = Self.failingSeed
        try #require(seed < 200)
        #expect(SimKitCommand.run(["replay", "\(seed)", "--sdk", "custom:buggy"], cores: Self.cores) == 1)
        let out = dir + "/out"
        let status = SimKitCommand.run(["fuzz", "--seeds", "1", "--from", "\(seed)", "--sdk", "custom:buggy", "--jobs", "1",
                                        "--out", out, "--quiet"], cores: Self.cores)
        #expect(status == 1)
        let written = try String(contentsOfFile: out + "/never-lock-on-transient-seed\(seed).scenario", encoding: .utf8)
        #expect(written.contains("sdk custom buggy") && written.contains("--sdk custom:buggy"), "\(written)")
        #expect(SimKitCommand.run(["run", "--quiet", out + "/never-lock-on-transient-seed\(seed).scenario"], cores: Self.cores) == 1)
        #expect(SimKitCommand.run(["shrink", out + "/never-lock-on-transient-seed\(seed).scenario", "-o", out + "/again.scenario"],
                                  cores: Self.cores) == 1)
        #expect(try String(contentsOfFile: out + "/again.scenario", encoding: .utf8).contains("sdk custom buggy"))
    }
}
