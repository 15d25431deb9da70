import Testing
@testable import SimKit

/// P5 (`background-limit`): the launch's time counts from the OS's firing of the background
/// task, whatever the SDK does first (issue 47). A run the SDK starts a step later (after
/// its key check's answer, as an async SDK does) is asked to stop when the launch's time is
/// up; an SDK with no run going then is asked nothing and not killed; one that ignores the
/// request is killed after the grace; an SDK that reports only its states has its runs
/// seen by them.
@Suite struct BackgroundLimitTests {
    /// How a test SDK meets the OS's firing of its background task.
    protocol Habit: Sendable {
        /// Its run starts this long after the firing (0: in the firing's own step; nil: never).
        static var runDelayMs: SimTime? { get }
        /// Whether it reports `runStarted` / `runEnded` (otherwise only its states).
        static var reportsRunEvents: Bool { get }
        /// Whether its expiration handler ends its run (otherwise the request goes unheard).
        static var hearsExpiry: Bool { get }
    }

    /// The reference SDK, meeting the firing by `H`: a delayed run waits on a timer of its
    /// own (a `resetRetry` with an argument the reference never sets; these worlds reset nothing).
    struct HabitSDK<H: Habit>: SDKCore {
        var core = ReferenceSDK()
        var runDue = false
        static var wake: UInt32 { 0xB6_0001 }
        init() {}

        mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                             effects: inout EffectBuffer) {
            switch input {
            case .backgroundRun where H.runDelayMs != 0:
                guard let delay = H.runDelayMs else { return }
                runDue = true
                effects.append(.setTimer(.resetRetry, at: now + delay, arg: Self.wake))
            case .timer(.resetRetry, let arg) where arg == Self.wake:
                guard runDue else { return }
                runDue = false
                core.handle(.backgroundRun, now: now, context: context, config: config, disk: disk, effects: &effects)
            case .backgroundExpiring where !H.hearsExpiry:
                return
            default:
                core.handle(input, now: now, context: context, config: config, disk: disk, effects: &effects)
            }
            if !H.reportsRunEvents {
                let all = Array(effects)
                effects.removeAll()
                for e in all {
                    switch e {
                    case .runStarted, .runEnded: break
                    default: effects.append(e)
                    }
                }
            }
        }

        func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool {
            kind == .resetRetry && arg == Self.wake ? !runDue : core.ignoresTimer(kind, arg: arg)
        }
    }

    /// Starts its run 1 s after the firing (its key check's answer, say).
    enum LateRun: Habit {
        static var runDelayMs: SimTime? { Ms.second }
        static var reportsRunEvents: Bool { true }
        static var hearsExpiry: Bool { true }
    }
    /// The same, reporting only its states (as Examples/BlobSDK does).
    enum LateRunStatesOnly: Habit {
        static var runDelayMs: SimTime? { Ms.second }
        static var reportsRunEvents: Bool { false }
        static var hearsExpiry: Bool { true }
    }
    /// Starts no run when the OS fires its task.
    enum NoRun: Habit {
        static var runDelayMs: SimTime? { nil }
        static var reportsRunEvents: Bool { true }
        static var hearsExpiry: Bool { true }
    }
    /// Starts its run at once and never hears the request to stop.
    enum Deaf: Habit {
        static var runDelayMs: SimTime? { 0 }
        static var reportsRunEvents: Bool { true }
        static var hearsExpiry: Bool { false }
    }
    /// Starts its run 1 s after the firing and never hears the request to stop; reports only states.
    enum LateDeafStatesOnly: Habit {
        static var runDelayMs: SimTime? { Ms.second }
        static var reportsRunEvents: Bool { false }
        static var hearsExpiry: Bool { false }
    }

    static let h = Ms.hour, m = Ms.minute, s = Ms.second
    /// When the OS fires the background task.
    static let fired: SimTime = 2 * h + 2 * m
    /// The launch's time.
    static let limit: SimTime = 30 * s

    /// One phone: launched and indexed, closed, limited to 30 s, 1,000 new photos (a run of
    /// 50 s at the reference's pace), the task fired at 2h2m, the app opened at 3h.
    static var schedule: [ScheduledAction] {
        [
            .at(0, WT.person(.launch)),
            .at(h, WT.person(.close)),
            .at(2 * h, .backgroundLimit(.all, limitMs: UInt32(limit))),
            .at(2 * h + m, WT.person(.addPhotos, arg: 1_000)),
            .at(fired, WT.person(.background)),
            .at(3 * h, WT.person(.open)),
        ]
    }

    /// The phone's records from the firing on, until the app is opened.
    static func afterFiring<H: Habit>(_ habit: H.Type) -> [TraceRecord] {
        var world = World<HabitSDK<H>, TraceRecorder>(setup: WT.setup(until: 4 * h, schedule), observer: TraceRecorder())
        world.run()
        #expect(world.observer.dropped == 0)
        return world.observer.records.filter { $0.device == 0 && $0.time >= fired && $0.time < 3 * h }
    }

    static func times(_ records: [TraceRecord], _ event: TraceEvent) -> [SimTime] {
        records.filter { $0.event == event }.map(\.time)
    }
    static let expiring = TraceEvent.fault(BackgroundLimit.Record.expiring.fault)
    static let killed = TraceEvent.fault(BackgroundLimit.Record.killed.fault)

    @Test("a run started a step after the firing is asked to stop when the launch's time is up, counted from the firing")
    func lateRunIsAskedToStop() {
        let records = Self.afterFiring(LateRun.self)
        #expect(Self.times(records, .runStarted(background: true)) == [Self.fired + Self.s])
        #expect(Self.times(records, Self.expiring) == [Self.fired + Self.limit])
        #expect(Self.times(records, .input(.backgroundExpiring)) == [Self.fired + Self.limit])
        // Its expiration handler ends the run at once: nothing is killed.
        #expect(Self.times(records, .runEnded) == [Self.fired + Self.limit])
        #expect(Self.times(records, .processKilled).isEmpty)
        #expect(Self.times(records, Self.killed).isEmpty)
    }

    @Test("an SDK that reports only its states has its late run asked to stop, and its run's end seen: no kill")
    func statesOnlyRunIsSeen() {
        let records = Self.afterFiring(LateRunStatesOnly.self)
        #expect(Self.times(records, .runStarted(background: true)).isEmpty)
        #expect(Self.times(records, .state(.indexing)) == [Self.fired + Self.s])
        #expect(Self.times(records, Self.expiring) == [Self.fired + Self.limit])
        #expect(Self.times(records, .state(.idle)) == [Self.fired + Self.limit])
        #expect(Self.times(records, .processKilled).isEmpty)
    }

    @Test("an SDK with no run going when the time is up is asked nothing and not killed")
    func idleSDKIsLeftAlone() {
        let records = Self.afterFiring(NoRun.self)
        #expect(records.contains { $0.event == .input(.backgroundRun) })
        #expect(Self.times(records, Self.expiring).isEmpty)
        #expect(Self.times(records, .input(.backgroundExpiring)).isEmpty)
        #expect(Self.times(records, .processKilled).isEmpty)
    }

    @Test("a run that does not end when asked is killed after the grace, counted from the firing",
          arguments: [false, true])
    func unheardRequestKills(late: Bool) {
        let records = late ? Self.afterFiring(LateDeafStatesOnly.self) : Self.afterFiring(Deaf.self)
        let up = Self.fired + Self.limit
        #expect(Self.times(records, Self.expiring) == [up])
        #expect(Self.times(records, Self.killed) == [up + BackgroundLimit.graceMs])
        #expect(Self.times(records, .processKilled) == [up + BackgroundLimit.graceMs])
    }

    @Test("the reference, whose run starts at the firing, is asked to stop at its limit and ends its run")
    func referenceEndsItsRun() {
        var world = WT.TestWorld(setup: WT.setup(until: 4 * Self.h, Self.schedule), observer: TraceRecorder())
        world.run()
        let records = world.observer.records.filter { $0.device == 0 && $0.time >= Self.fired && $0.time < 3 * Self.h }
        #expect(Self.times(records, .runStarted(background: true)) == [Self.fired])
        #expect(Self.times(records, Self.expiring) == [Self.fired + Self.limit])
        #expect(Self.times(records, .runEnded) == [Self.fired + Self.limit])
        #expect(Self.times(records, .processKilled).isEmpty)
    }

    /// The reference's expiration handler with no run going asks for nothing.
    @Test("the reference asked to stop with no run going does nothing")
    func referenceIdleExpiry() {
        var core = ReferenceSDK()
        var effects = EffectBuffer()
        let context = SDKContext(device: 0, photoCount: 10, photosAllowed: true, wallClockOffsetSeconds: 0)
        core.handle(.backgroundExpiring, now: 1_000, context: context, config: SDKConfig(), disk: LocalData(), effects: &effects)
        #expect(effects.isEmpty)
    }
}
