import Testing
@testable import SimKit

/// `SDKCore.answerLost`: the world tells a core that hears lost answers (an async SDK's
/// host, which delivers late answers and leaves the timeout to the SDK) which answers the
/// network lost, each once, and only those of its own process; the reference is not told.
@Suite struct LostAnswerTests {
    /// The reference SDK, noting the lost answers it is told of.
    struct HearingSDK: SDKCore {
        var core = ReferenceSDK()
        var lost: [UInt32] = []
        init() {}
        static var hearsLostAnswers: Bool { true }
        mutating func answerLost(id: UInt32) { lost.append(id) }
        mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                             effects: inout EffectBuffer) {
            core.handle(input, now: now, context: context, config: config, disk: disk, effects: &effects)
        }
        func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool { core.ignoresTimer(kind, arg: arg) }
    }

    static let m = Ms.minute
    /// Half the answers lost for 30 minutes; a relaunch 10 ms after the first launch, so
    /// the first process's registration reaches the server (and may be lost) after it ended.
    static let schedule: [ScheduledAction] = [
        .at(0, .lostResponses(rateBp: 5_000, forMs: 30 * m)),
        .at(0, WT.person(.launch)), .at(10, WT.person(.launch)),
        ScheduledAction(firstAtMs: m, periodMs: m, untilMs: 25 * m, action: WT.person(.query)),
        // The app goes to the background and is opened again: each activation checks its
        // key, or registers, the last registration's answer having been lost.
        ScheduledAction(firstAtMs: 90 * Ms.second, periodMs: 2 * m, untilMs: 25 * m, action: WT.person(.background)),
        ScheduledAction(firstAtMs: 100 * Ms.second, periodMs: 2 * m, untilMs: 25 * m, action: WT.person(.open)),
    ]

    @Test("the core is told exactly the answers its process lost", arguments: [7, 8, 9] as [UInt64])
    func toldExactlyItsLostAnswers(seed: UInt64) {
        var world = World<HearingSDK, TraceRecorder>(setup: WT.setup(seed: seed, until: 2 * Ms.hour, Self.schedule), observer: TraceRecorder())
        world.run()
        let records = world.observer.records.filter { $0.device == 0 }
        // The second process's requests reach the server from 10 ms + latency / 2 on; the
        // first one's registration reached it at latency / 2.
        let secondFrom: SimTime = 10 + WT.latency / 2
        var expected: [UInt32] = [], served = 0
        for (k, r) in records.enumerated() {
            guard case .served(let id, _, _, _, _, _) = r.event, r.time >= secondFrom else { continue }
            served += 1
            let arrived = records[(k + 1)...].contains {
                if case .delivered(id, _, _, false, _, _, _) = $0.event { true } else { false }
            }
            if !arrived { expected.append(id) }
        }
        #expect(world.sdks[0].lost == expected)
        #expect(expected.count >= 3 && expected.count < served, "\(expected.count) of \(served) answers lost")
    }

    /// The same world, traced the same way: being told changes nothing the world does.
    @Test("hearing lost answers changes no record of the run")
    func hearingChangesNothing() {
        var hearing = World<HearingSDK, TraceRecorder>(setup: WT.setup(until: 2 * Ms.hour, Self.schedule), observer: TraceRecorder())
        hearing.run()
        let reference = WT.run(WT.setup(until: 2 * Ms.hour, Self.schedule))
        #expect(hearing.observer.records == reference.observer.records)
    }
}
