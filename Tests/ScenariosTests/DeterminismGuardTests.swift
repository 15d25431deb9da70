import Foundation
import SimKitTestSupport
import Testing
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios
import SimKitTesting

// Three SDK cores that leak something other than their input and state into their
// effects, the way users' cores do: each wraps the reference core and, when its leak says
// so, reports the state its step reported once more (an effect that keeps every promise, so only the
// determinism guard can tell). They leak only in a step that reported a state already, so
// the duplicate changes nothing the checkers read.

/// Keeps eight tags in a `Set<String>` (made with each app process) and reports its state
/// again when, in the set's iteration order, the tag at the place that the step's time
/// picks sorts before the next one: Swift seeds each set's hashing per process and per
/// table address, so the order, and with it the effects, change from run to run.
struct SetOrderSDK: SDKCore {
    var core = ReferenceSDK()
    let tags: Set<String> = ["check", "index", "report", "reset", "models", "places", "query", "profile"]

    mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                         effects: inout EffectBuffer) {
        let before = effects.count
        core.handle(input, now: now, context: context, config: config, disk: disk, effects: &effects)
        let reported = LeakSupport.lastState(in: effects, from: before)
        let order = Array(tags), place = Int(now / Ms.second % UInt64(order.count))
        if let s = reported, order[place] < order[(place + 1) % order.count] { effects.append(.state(s)) }
    }
    func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool { core.ignoresTimer(kind, arg: arg) }
}

/// Counts its steps in a global variable, which outlives a run: every 7th step of the
/// process reports its state again (if it reported one).
nonisolated(unsafe) var leakyStepsInThisProcess = 0

struct GlobalCounterSDK: SDKCore {
    var core = ReferenceSDK()

    mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                         effects: inout EffectBuffer) {
        let before = effects.count
        core.handle(input, now: now, context: context, config: config, disk: disk, effects: &effects)
        let reported = LeakSupport.lastState(in: effects, from: before)
        leakyStepsInThisProcess += 1
        if leakyStepsInThisProcess % 7 == 0, let s = reported { effects.append(.state(s)) }
    }
    func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool { core.ignoresTimer(kind, arg: arg) }
}

/// Draws from the system random generator: one step in 4 reports its state again (if it reported one).
struct SystemRandomSDK: SDKCore {
    var core = ReferenceSDK()

    mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                         effects: inout EffectBuffer) {
        let before = effects.count
        core.handle(input, now: now, context: context, config: config, disk: disk, effects: &effects)
        let reported = LeakSupport.lastState(in: effects, from: before)
        if UInt8.random(in: 0..<4) == 0, let s = reported { effects.append(.state(s)) }
    }
    func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool { core.ignoresTimer(kind, arg: arg) }
}

enum LeakSupport {
    /// The last state the core reported among `effects[from...]`.
    static func lastState(in effects: EffectBuffer, from: Int) -> SDKState? {
        var found: SDKState?
        for k in from..<effects.count { if case .state(let s) = effects[k] { found = s } }
        return found
    }
}

@Suite("Determinism guard: leaky cores are caught, the reference passes")
struct DeterminismGuardTests {
    /// What every report of a leak inside a step must show.
    static func expectCaughtInStep<Core: SDKCore>(_ run: SeedRun, _ type: Core.Type, core: String,
                                                  sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let n = try #require(run.nondeterminism, "seed \(run.seed) on \(core) was not caught", sourceLocation: sourceLocation)
        #expect(!run.passed, sourceLocation: sourceLocation)
        #expect(run.result.failed, sourceLocation: sourceLocation)
        #expect(run.broken.isEmpty, "the leak keeps every promise: \(run.result.broken)", sourceLocation: sourceLocation)
        #expect(n.cause == .coreStep, "\(n)", sourceLocation: sourceLocation)
        #expect(n.core == core, sourceLocation: sourceLocation)
        #expect(n.record > 0, sourceLocation: sourceLocation)
        // Both records at the first difference, side by side; one of them is the leaked
        // extra state report, and they differ.
        #expect(n.first != n.second, sourceLocation: sourceLocation)
        let leaked = [n.first, n.second].contains { (line: String?) in line?.contains("  state → ") == true }
        #expect(leaked, "\(n)", sourceLocation: sourceLocation)
        #expect(n.first.map { $0.hasPrefix(n.time + " " + n.device + "  ") } ?? true, "\(n)", sourceLocation: sourceLocation)
        #expect(!n.agreed.isEmpty && n.agreed.allSatisfy { $0.contains(" \(n.device)  ") }, "\(n)", sourceLocation: sourceLocation)
        let text = n.text()
        #expect(n.explanation.contains("the core's step for this input was not a function of its input and state (core: \(core))"),
                "\(text)", sourceLocation: sourceLocation)
        #expect(text.contains("NONDETERMINISTIC: run 3 and run 4 of the same run first differ at trace record #"), "\(text)",
                sourceLocation: sourceLocation)
        #expect(text.contains("the last records that agreed:"), sourceLocation: sourceLocation)
        // The cheap check (fingerprints of the checked run and one more) found it; the two
        // runs that located it are named, and the first pair's fingerprints are given.
        #expect(n.detail?.hasPrefix("runs 1 and 2 (the checked run and one more) differed: fingerprints ") == true, "\(text)",
                sourceLocation: sourceLocation)
        // The replay command names the core that ran (registered under its default name).
        #expect("\(run)".contains("simkit replay \(run.seed) --sdk custom:\(SDKCores.defaultName(for: Core.self)) --twice"),
                "\(run)", sourceLocation: sourceLocation)
        // The step named is the open one at the difference: its input is among the records that agreed.
        let explanation = n.explanation
        #expect(explanation.contains("'s step for '"), "\(explanation)", sourceLocation: sourceLocation)
    }

    @Test("a core that iterates a Set<String> is caught on the first seed")
    func setOrderIsCaught() throws {
        try Self.expectCaughtInStep(SimKitTest.seed(0, core: SetOrderSDK.self, checkDeterminism: true), SetOrderSDK.self, core: "SetOrderSDK")
    }

    @Test("a core that reads a global counter is caught on the first seed")
    func globalCounterIsCaught() throws {
        try Self.expectCaughtInStep(SimKitTest.seed(0, core: GlobalCounterSDK.self, checkDeterminism: true), GlobalCounterSDK.self, core: "GlobalCounterSDK")
    }

    @Test("a core that calls the system random generator is caught on the first seed")
    func systemRandomIsCaught() throws {
        try Self.expectCaughtInStep(SimKitTest.seed(0, core: SystemRandomSDK.self, checkDeterminism: true), SystemRandomSDK.self, core: "SystemRandomSDK")
    }

    @Test("without the check, a leaky core's seed passes: only the guard sees the leak")
    func uncheckedLeakPasses() {
        let run = SimKitTest.seed(0, core: SystemRandomSDK.self)
        #expect(run.passed, "\(run)")
        #expect(run.nondeterminism == nil)
    }

    /// 2,000 fuzz seeds of small worlds (at most 10 devices a group, 30 days), each run
    /// twice, in 20 slices side by side: about a minute in a debug build on 2 cores.
    @Test("the reference core passes 2,000 seeds under the check", .tags(.slow), .slowTier, arguments: 0..<20 as Range<UInt64>)
    func referencePasses(slice: UInt64) {
        for seed in slice * 100..<(slice + 1) * 100 {
            let run = SimKitTest.seed(seed, devices: 10, duration: 30 * Ms.day, checkDeterminism: true)
            #expect(run.nondeterminism == nil, "\(run)")
            #expect(run.passed, "\(run)")
        }
    }
}
