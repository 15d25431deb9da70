import Testing
@testable import SimKit

/// Terse worlds for the rule tests (issue 3).
///
/// Keys: 0 `rk_live_A` (app 0's first key), 1 `rk_live_B` (app 1's key, when there is a
/// second app), 2 `rk_live_A2` (the key app 0 rotates to), 3 `rk_live_X` (never issued).
/// Group 0 is `count` genuine installs of app 0; with `secondApp`, group 1 is `secondCount`
/// installs of app 1; with `clones`, the last group is that many clones of app 0.
/// Network latency is fixed (a request reaches the server `latency / 2` after it is sent),
/// every device starts with exactly `photos` photos.
enum WT {
    typealias TestWorld = World<ReferenceSDK, TraceRecorder>

    static let keyA: KeyID = 0, keyB: KeyID = 1, keyA2: KeyID = 2, keyUnknown: KeyID = 3
    static let appA: AppID = 0, appB: AppID = 1
    static let h = Ms.hour, d = Ms.day, m = Ms.minute, s = Ms.second
    static let latency: SimTime = 100

    static func setup(devices count: UInt32 = 1, photos: UInt32 = 400, secondApp: Bool = false,
                      secondCount: UInt32 = 0, pending: Bool = false, clones: UInt32 = 0,
                      seed: UInt64 = 7, until: SimTime? = nil, sdk: SDKConfig = SDKConfig(),
                      _ schedule: [ScheduledAction]) -> WorldSetup {
        var apps = [AppSpec(name: "photos", account: 0, initialKey: keyA, pending: pending)]
        var groups = [GroupSpec(name: "photos", app: appA, count: count, photosMin: photos, photosMax: photos)]
        if secondApp {
            apps.append(AppSpec(name: "other", account: 0, initialKey: keyB))
            groups.append(GroupSpec(name: "other", app: appB, count: secondCount, photosMin: photos, photosMax: photos))
        }
        if clones > 0 {
            groups.append(GroupSpec(name: "clones", app: appA, count: clones, clones: true, photosMin: photos, photosMax: photos))
        }
        let last = schedule.map(\.firstAtMs).max() ?? 0
        return WorldSetup(seed: seed, durationMs: until ?? last + h,
                          keyNames: ["rk_live_A", "rk_live_B", "rk_live_A2", "rk_live_X"],
                          accounts: [AccountSpec(name: "acme")], apps: apps, groups: groups,
                          network: NetworkSpec(latencyMinMs: latency, latencyMaxMs: latency),
                          sdk: sdk, schedule: schedule)
    }

    /// Builds and runs a world to its end.
    static func run(_ setup: WorldSetup) -> TestWorld {
        var world = TestWorld(setup: setup, observer: TraceRecorder())
        world.run()
        #expect(world.observer.dropped == 0)
        #expect(!world.stoppedByBudget)
        return world
    }

    static func run(devices: UInt32 = 1, photos: UInt32 = 400, secondApp: Bool = false, secondCount: UInt32 = 0,
                    pending: Bool = false, clones: UInt32 = 0, until: SimTime? = nil,
                    _ schedule: [ScheduledAction]) -> TestWorld {
        run(setup(devices: devices, photos: photos, secondApp: secondApp, secondCount: secondCount,
                  pending: pending, clones: clones, until: until, schedule))
    }

    // MARK: Schedule shorthands

    static func person(_ action: PersonAction, _ selection: DeviceSelection = .all, arg: UInt32 = 0) -> WorldAction {
        .person(action, selection, arg: arg)
    }
    /// One device of a group, by 0-based index.
    static func dev(_ i: UInt32, group: Int = 0) -> DeviceSelection { DeviceSelection(group: group, mode: .single(i)) }
    static func group(_ g: Int) -> DeviceSelection { DeviceSelection(group: g, mode: .every) }
    /// `update` shipping `key` (the `arg` encoding of `WorldAction.person`).
    static func update(_ selection: DeviceSelection = .all, key: KeyID) -> WorldAction {
        .person(.update, selection, arg: UInt32(key) + 1)
    }
    static func dash(_ action: DashboardAction) -> WorldAction { .dashboard(action) }
    static let disable = WorldAction.dashboard(.disable(app: appA))
    static let enable = WorldAction.dashboard(.enable(app: appA))
    static let rotateStopNow = WorldAction.dashboard(.rotate(app: appA, newKey: keyA2, graceMs: nil))
    static func rotateKeep(_ graceMs: SimTime = 30 * Ms.day) -> WorldAction {
        .dashboard(.rotate(app: appA, newKey: keyA2, graceMs: graceMs))
    }
}

/// A device's trace, with the questions the tests ask of it.
struct DeviceTrace {
    let device: DeviceIndex
    let records: [TraceRecord]

    init(_ world: WT.TestWorld, _ device: DeviceIndex) {
        self.device = device
        records = world.observer.records.filter { $0.device == device }
    }

    struct Sent { let time: SimTime; let id: UInt32; let kind: RequestKind; let key: KeyID; let credential: Credential }
    struct Served { let time: SimTime; let id: UInt32; let kind: RequestKind; let key: KeyID; let reply: ServerReply }
    struct Delivered { let index: Int; let time: SimTime; let id: UInt32; let kind: RequestKind; let answer: Answer; let viaTimer: Bool }

    var sent: [Sent] {
        records.compactMap {
            if case .requestSent(let id, let kind, let key, let cred) = $0.event {
                return Sent(time: $0.time, id: id, kind: kind, key: key, credential: cred)
            }
            return nil
        }
    }
    func sent(_ kinds: RequestKind...) -> [Sent] { sent.filter { kinds.contains($0.kind) } }

    var served: [Served] {
        records.compactMap {
            if case .served(let id, let kind, let key, _, let reply, _) = $0.event {
                return Served(time: $0.time, id: id, kind: kind, key: key, reply: reply)
            }
            return nil
        }
    }

    var delivered: [Delivered] {
        records.enumerated().compactMap { i, r in
            if case .delivered(let id, let kind, let answer, let viaTimer, _, _, _) = r.event {
                return Delivered(index: i, time: r.time, id: id, kind: kind, answer: answer, viaTimer: viaTimer)
            }
            return nil
        }
    }

    var stores: [(time: SimTime, op: StoreOp)] {
        records.compactMap { if case .store(let op) = $0.event { return ($0.time, op) }; return nil }
    }
    func stores(where match: (StoreOp) -> Bool) -> [SimTime] { stores.filter { match($0.op) }.map(\.time) }
    func storeTimes(_ op: StoreOp) -> [SimTime] { stores(where: { $0 == op }) }

    var states: [(time: SimTime, state: SDKState)] {
        records.compactMap { if case .state(let s) = $0.event { return ($0.time, s) }; return nil }
    }

    var callResults: [(time: SimTime, call: APICall, outcome: CallOutcome)] {
        records.compactMap { if case .callResult(let c, let o) = $0.event { return ($0.time, c, o) }; return nil }
    }

    /// `(from, count)` of every `indexPhotos`, in order.
    var indexRanges: [(from: UInt32, count: UInt16)] {
        stores.compactMap { if case .indexPhotos(let f, let c) = $0.op { return (f, c) }; return nil }
    }

    /// Index of the first record at or after `index` matching `event`.
    func firstIndex(of event: TraceEvent, from index: Int = 0) -> Int? {
        records[index...].firstIndex { $0.event == event }
    }

    /// The input a record was a reaction to: the last `delivered` at or before `index`
    /// within the same SDK step (nil when the step was not an answer).
    func triggeringDelivery(of index: Int) -> Delivered? {
        var i = index
        while i >= 0 {
            switch records[i].event {
            case .stepEnd: return nil
            case .delivered: return delivered.first { $0.index == i }
            default: i -= 1
            }
        }
        return nil
    }

    /// The answer (and its request kind) that first locked the SDK, and when.
    var firstLock: Delivered? {
        guard let i = firstIndex(of: .store(.lock)) else { return nil }
        return triggeringDelivery(of: i)
    }

    /// Deliveries split into the answers the SDK had to act on (the first delivery of each
    /// request id in a process) and the rest. The engine traces every request timer as a
    /// `timedOut` delivery, also after the answer came (the SDK ignores it), and a late
    /// answer after its timeout (D9: stale). Request ids restart with each process.
    var firstAndRepeated: (first: [Delivered], repeated: [Delivered]) {
        var seen = Set<UInt32>()
        var first: [Delivered] = [], repeated: [Delivered] = []
        let all = delivered
        var next = 0
        for (i, r) in records.enumerated() {
            if case .processStarted = r.event { seen.removeAll() }
            guard next < all.count, all[next].index == i else { continue }
            let dl = all[next]
            next += 1
            if seen.insert(dl.id).inserted { first.append(dl) } else { repeated.append(dl) }
        }
        return (first, repeated)
    }

    /// The answers the SDK had to act on: the first delivery of each request.
    var answers: [Delivered] { firstAndRepeated.first }

    /// Server answers that came after their request had timed out (D9).
    var staleDeliveries: [Delivered] { firstAndRepeated.repeated.filter { !$0.viaTimer } }

    /// The records of the SDK step that handled the record at `index` (up to its `stepEnd`).
    func step(at index: Int) -> ArraySlice<TraceRecord> {
        let end = records[index...].firstIndex { $0.event == .stepEnd } ?? records.endIndex - 1
        return records[index...end]
    }
}

extension StoreOp {
    var isDelete: Bool {
        switch self {
        case .deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .dropReports: true
        default: false
        }
    }
}

/// D4: every `indexPhotos` continues the index where it stood, and none repeats a photo.
func expectContiguousIndex(_ t: DeviceTrace, total: UInt32, sourceLocation: SourceLocation = #_sourceLocation) {
    var next: UInt32 = 0
    for r in t.indexRanges {
        #expect(r.from == next, "indexPhotos from \(r.from), expected \(next)", sourceLocation: sourceLocation)
        next = r.from + UInt32(r.count)
    }
    #expect(next == total, "indexed \(next) of \(total)", sourceLocation: sourceLocation)
}
