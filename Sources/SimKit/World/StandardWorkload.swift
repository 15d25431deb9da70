/// A fixed, realistic world for benchmarks and engine tests: one approved app, people
/// opening the app a few times a day, nightly background runs, growing libraries, and a
/// steady mix of partitions, 5xx, timeouts and dashboard actions (a rotation, a disable
/// and enable, a Rollup revoke and restore).
public enum StandardWorkload {
    public static func setup(seed: UInt64, devices: UInt32, days: UInt64, ringDepth: Int = 8) -> WorldSetup {
        let d = Ms.day
        var schedule: [ScheduledAction] = [
            .at(0, .person(.launch, .all, arg: 0)),
            .init(firstAtMs: 8 * Ms.hour, periodMs: 8 * Ms.hour, jitterMs: 2 * Ms.hour, action: .person(.open, DeviceSelection(group: 0, mode: .shareBp(6_000)), arg: 0)),
            .init(firstAtMs: 9 * Ms.hour, periodMs: 8 * Ms.hour, jitterMs: 2 * Ms.hour, action: .person(.close, .all, arg: 0)),
            .init(firstAtMs: d, periodMs: d, jitterMs: 4 * Ms.hour, action: .person(.background, .all, arg: 0)),
            .init(firstAtMs: 2 * d, periodMs: 2 * d, jitterMs: 6 * Ms.hour, action: .person(.addPhotos, DeviceSelection(group: 0, mode: .shareBp(3_000)), arg: 40)),
            .init(firstAtMs: 3 * d, periodMs: 3 * d, jitterMs: d, action: .person(.query, DeviceSelection(group: 0, mode: .shareBp(1_000)), arg: 0)),
            .init(firstAtMs: 2 * d, periodMs: 5 * d, action: .offline(DeviceSelection(group: 0, mode: .shareBp(2_000)), forMs: 6 * Ms.hour)),
            .init(firstAtMs: 3 * d, periodMs: 7 * d, action: .serverErrors(rateBp: 5_000, status: 503, forMs: 2 * Ms.hour)),
            .init(firstAtMs: 4 * d, periodMs: 9 * d, action: .timeouts(rateBp: 1_000, forMs: 12 * Ms.hour)),
            .init(firstAtMs: 5 * d, periodMs: 11 * d, action: .serverDown(forMs: Ms.hour)),
        ]
        if days > 6 { schedule.append(.at(6 * d, .dashboard(.rotate(app: 0, newKey: 1, graceMs: 30 * d)))) }
        if days > 8 { schedule.append(.at(8 * d, .person(.update, DeviceSelection(group: 0, mode: .shareBp(5_000)), arg: 0))) }
        if days > 12 { schedule.append(.at(10 * d, .dashboard(.disable(app: 0)))); schedule.append(.at(12 * d, .dashboard(.enable(app: 0)))) }
        if days > 50 { schedule.append(.at(40 * d, .dashboard(.rollupApp(.revoke, app: 0)))); schedule.append(.at(45 * d, .dashboard(.rollupApp(.restore, app: 0)))) }
        return WorldSetup(
            seed: seed, durationMs: days * d, keyNames: ["rk_live_A", "rk_live_B"],
            accounts: [AccountSpec(name: "acme")],
            apps: [AppSpec(name: "photos", account: 0, initialKey: 0)],
            groups: [GroupSpec(name: "photos", app: 0, count: devices)],
            schedule: schedule, ringDepth: ringDepth)
    }
}
