import Testing
@testable import SimKit

/// `SDKCore.ignoresTimer`: the engine drops a timer firing the SDK says it would ignore,
/// and the reference SDK says so exactly for the timeouts it would ignore (D9).
@Suite struct IgnoredTimerTests {
    /// The reference SDK with the protocol's default `ignoresTimer` (false): every firing
    /// reaches `handle`, as for a user's core that does not answer it.
    struct EveryTimerSDK: SDKCore {
        var core = ReferenceSDK()
        init() {}
        mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                             effects: inout EffectBuffer) {
            core.handle(input, now: now, context: context, config: config, disk: disk, effects: &effects)
        }
    }

    static func records<SDK: SDKCore>(_ sdk: SDK.Type, seed: UInt64) -> [TraceRecord] {
        var world = World<SDK, TraceRecorder>(setup: StandardWorkload.setup(seed: seed, devices: 40, days: 14, ringDepth: 0),
                                              observer: TraceRecorder())
        world.run()
        #expect(world.observer.dropped == 0)
        return world.observer.records
    }

    /// Dropping a firing leaves out its `delivered` and `stepEnd` records and changes
    /// nothing else: every other record of the run is the same, in the same order.
    @Test("the world drops only timeouts that do nothing, and the rest of the trace is unchanged", arguments: [1, 2, 3] as [UInt64])
    func dropsOnlyNoOpTimeouts(seed: UInt64) {
        let every = Self.records(EveryTimerSDK.self, seed: seed)
        let kept = Self.records(ReferenceSDK.self, seed: seed)
        var j = 0, i = 0, dropped = 0
        while i < every.count {
            if j < kept.count, every[i] == kept[j] { i += 1; j += 1; continue }
            guard case .delivered(_, _, .timedOut, true, _, _, _) = every[i].event, i + 1 < every.count,
                  every[i + 1].event == .stepEnd, every[i + 1].device == every[i].device else {
                Issue.record("record \(i) (\(every[i])) is missing or changed where no timeout was dropped")
                return
            }
            dropped += 1
            i += 2
        }
        #expect(j == kept.count, "the run with drops has records the full run lacks")
        // Most requests are answered before their timeout: most timeouts are dropped.
        let timeouts = every.filter { if case .delivered(_, _, _, true, _, _, _) = $0.event { true } else { false } }.count
        #expect(dropped > timeouts / 2, "\(dropped) of \(timeouts) timeouts dropped")
    }

    /// Every field of the SDK's state, in words, to compare two copies.
    static func state(_ sdk: ReferenceSDK) -> [String] { Mirror(reflecting: sdk).children.map { "\($0.label ?? ""): \($0.value)" } }

    /// Drives one reference SDK through random inputs; at each point, asks about the
    /// timeout of every recent request and checks the answer on a copy.
    @Test("the reference SDK says it ignores a timeout exactly when handling it would do nothing")
    func referenceAgreesWithHandle() {
        var random = SimRandom(seed: 11)
        var sdk = ReferenceSDK()
        var disk = LocalData()
        var now: SimTime = 1_000
        var ignored = 0, handled = 0
        let kinds = RequestKind.allCases
        let answers: [Answer] = [.ok, .ok, .ok, .serverError, .offline, .timedOut, .appDisabled, .deviceUnknown]
        func run(_ sdk: inout ReferenceSDK, _ input: SDKInput, _ disk: inout LocalData) -> [Effect] {
            var effects = EffectBuffer()
            sdk.handle(input, now: now, context: SDKContext(device: 0, photoCount: 500, photosAllowed: true),
                       config: SDKConfig(), disk: disk, effects: &effects)
            for case .store(let op) in effects { disk.apply(op) }
            return Array(effects)
        }
        for _ in 0..<1_500 {
            now += random.int(in: 1...40_000)
            let recent = UInt64(min(sdk.nextRequestID, 40))
            let id = sdk.nextRequestID - 1 - UInt32(random.below(recent))
            let kind = kinds[Int(random.below(UInt64(kinds.count)))]
            let input: SDKInput
            switch random.below(10) {
            case 0: input = .launch(inBackground: random.below(2) == 0)
            case 1: input = .becameActive
            case 2: input = .wentToBackground
            case 3: input = .backgroundRun
            case 4: input = .call(random.below(2) == 0 ? .query : .search)
            case 5: input = .timer(.indexChunk, arg: 0)
            case 6: input = .timer(.requestTimeout, arg: id << 3 | UInt32(kind.rawValue))
            default: input = .response(id: id, kind: kind, reply: ServerReply(answers[Int(random.below(UInt64(answers.count)))]))
            }
            if case .launch = input { sdk = ReferenceSDK() }   // a cold start is a new process
            _ = run(&sdk, input, &disk)
            // Every request id of this process so far (and one not sent yet), every kind.
            for probe in UInt32(1)...sdk.nextRequestID {
                for k in kinds {
                    let arg = probe << 3 | UInt32(k.rawValue)
                    var copy = sdk, copyDisk = disk
                    let effects = run(&copy, .timer(.requestTimeout, arg: arg), &copyDisk)
                    let didNothing = effects.isEmpty && Self.state(copy) == Self.state(sdk)
                    #expect(sdk.ignoresTimer(.requestTimeout, arg: arg) == didNothing,
                            "request \(probe) (\(k)): ignoresTimer \(sdk.ignoresTimer(.requestTimeout, arg: arg)), handling it did \(didNothing ? "nothing" : "something")")
                    if didNothing { ignored += 1 } else { handled += 1 }
                }
            }
            for k in TimerKind.allCases where k != .requestTimeout { #expect(!sdk.ignoresTimer(k, arg: 0)) }
        }
        #expect(ignored > 1_000 && handled > 1_000, "ignored \(ignored), handled \(handled)")
    }
}

/// A request's timeout travels in a timer's `arg` without its users knowing the layout.
@Suite struct RequestTimeoutTests {
    @Test func roundTripsEveryKindAndIdRange() {
        for kind in RequestKind.allCases {
            for id: UInt32 in [1, 2, 1_000, (1 << 29) - 1] {
                let timeout = RequestTimeout(id: id, kind: kind)
                #expect(RequestTimeout(arg: timeout.arg) == timeout)
                #expect(RequestTimeout.id(inArg: timeout.arg) == id)
                #expect(Effect.setTimeout(of: id, kind: kind, at: 5) == .setTimer(.requestTimeout, at: 5, arg: timeout.arg))
            }
        }
    }
}
