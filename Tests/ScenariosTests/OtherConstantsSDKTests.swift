import SimKitTestSupport
import Testing
import SimKit
import Invariants
import Scenarios
import ScenarioSearch

/// An SDK core that keeps every promise with other constants than the reference's: a
/// window of 6 awaited request ids (not 32), retries from 5 s up to 1 h (not 30 s up to
/// 6 h), a 20 s request timeout where the world allows longer, a check every 12 h when
/// active (more often than D1 asks), and indexing chunks of 50 photos every 3 s. The
/// checkers must pass it: an oracle that needs the reference's numbers judges the
/// implementation, not the promise (issue 18).
struct OtherConstantsSDK: SDKCore {
    var core = ReferenceSDK(requestWindow: 6)

    static func constants(_ world: SDKConfig) -> SDKConfig {
        var c = world
        c.retryFirstMs = 5 * Ms.second
        c.retryMaxMs = Ms.hour
        c.requestTimeoutMs = min(world.requestTimeoutMs, 20 * Ms.second)
        c.checkIntervalMs = 12 * Ms.hour
        c.chunkPhotos = 50
        c.chunkMs = 3 * Ms.second
        return c
    }

    mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                         effects: inout EffectBuffer) {
        core.handle(input, now: now, context: context, config: Self.constants(config), disk: disk, effects: &effects)
    }

    func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool { core.ignoresTimer(kind, arg: arg) }
}

@Suite struct OtherConstantsSDKTests {
    /// 1,000 default fuzz seeds, in 20 slices run side by side (2,000 cost the slow tier
    /// three minutes of CPU in a debug build, and CI has 40 minutes in all).
    @Test("an SDK with other constants within the rules passes 1,000 fuzz seeds", .tags(.slow), .slowTier, arguments: 0..<20 as Range<UInt64>)
    func passesTheFuzz(slice: UInt64) throws {
        for seed in slice * 50..<(slice + 1) * 50 {
            let scenario = ScenarioGenerator.generate(seed: seed)
            let world = try Fuzz.check(scenario, sdk: OtherConstantsSDK.self, ringDepth: 8)
            #expect(world.observer.broken.isEmpty, "seed \(seed): \(world.observer.violations.first?.headline ?? "")")
            #expect(world.stopReason == nil, "seed \(seed) stopped early")
        }
    }

    /// The constants really differ where they can show: its timeouts and retries come at
    /// other times than the reference's on the same seed.
    @Test func itIsNotTheReference() throws {
        let scenario = ScenarioGenerator.generate(seed: 0)
        let mine = try Fuzz.check(scenario, sdk: OtherConstantsSDK.self, ringDepth: 0)
        let reference = try Fuzz.check(scenario, ringDepth: 0)
        #expect(mine.fingerprint != reference.fingerprint)
    }
}
