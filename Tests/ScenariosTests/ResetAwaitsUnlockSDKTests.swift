import SimKitTestSupport
import Testing
import SimKit
import Invariants
import Scenarios
import ScenarioSearch
import SimKitTesting

/// An SDK core that makes the other choice SPEC leaves open for a `reset()` called before
/// the first unlock after a restart (P4): instead of failing the call, it waits for its
/// data and resets at its first step that can read it, as an async SDK whose `reset()`
/// awaits its store does. The reset waits in memory, so it dies with the process. The
/// checkers must pass it as they pass the reference, which fails the call.
struct ResetAwaitsUnlockSDK: SDKCore {
    var core = ReferenceSDK()
    /// reset() was called before the unlock and is not done yet.
    var resetAwaited = false

    mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                         effects: inout EffectBuffer) {
        if case .reset = input, context.dataLocked {
            resetAwaited = true
            return
        }
        if resetAwaited, !context.dataLocked {
            // The reset first, then the step's own input on the disk it left.
            resetAwaited = false
            core.handle(.reset, now: now, context: context, config: config, disk: disk, effects: &effects)
            var after = disk
            for case .store(let op) in effects { after.apply(op) }
            core.handle(input, now: now, context: context, config: config, disk: after, effects: &effects)
            return
        }
        core.handle(input, now: now, context: context, config: config, disk: disk, effects: &effects)
    }

    func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool { !resetAwaited && core.ignoresTimer(kind, arg: arg) }
}

@Suite struct ResetAwaitsUnlockSDKTests {
    static let cores = SDKCores(["awaits": ResetAwaitsUnlockSDK.self])

    /// The scenarios of a reset before the unlock pass on it, and it is not the reference
    /// there: it did reset, after the unlock (its trace differs, the reference's does not
    /// reset at all).
    @Test("an SDK whose reset() waits for the unlock passes the reset-before-unlock scenario")
    func passesTheScenario() throws {
        let file = "scenarios/reset-before-unlock.scenario"
        let run = try SimKitTest.scenario(file: PackageRoot.path + "/" + file, sdk: .custom("awaits"), cores: Self.cores)
        #expect(run.passed, "\(run)")
        let mine = try Fuzz.check(run.scenario, sdk: ResetAwaitsUnlockSDK.self, ringDepth: 0)
        let reference = try Fuzz.check(run.scenario, ringDepth: 0)
        #expect(mine.observer.broken.isEmpty, "\(mine.observer.violations.first?.headline ?? "")")
        #expect(mine.fingerprint != reference.fingerprint, "it never reset after the unlock")
    }

    /// 1,000 default fuzz seeds, in 20 slices run side by side (2,000 cost the slow tier
    /// three minutes of CPU in a debug build, and CI has 40 minutes in all).
    @Test("an SDK whose reset() waits for the unlock passes 1,000 fuzz seeds", .tags(.slow), .slowTier, arguments: 0..<20 as Range<UInt64>)
    func passesTheFuzz(slice: UInt64) throws {
        for seed in slice * 50..<(slice + 1) * 50 {
            let scenario = ScenarioGenerator.generate(seed: seed)
            let world = try Fuzz.check(scenario, sdk: ResetAwaitsUnlockSDK.self, ringDepth: 8)
            #expect(world.observer.broken.isEmpty, "seed \(seed): \(world.observer.violations.first?.headline ?? "")")
            #expect(world.stopReason == nil, "seed \(seed) stopped early")
        }
    }
}
