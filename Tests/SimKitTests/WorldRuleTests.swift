import Testing
@testable import SimKit

/// Issue 3's acceptance tests: each SPEC rule driven through the whole world (engine,
/// network, faults, server, reference SDK), judged on the devices' disks and reported
/// states, the server's records and the recorded trace. Topic files extend this suite.
///
/// Timing with `WT.latency` = 100 ms and 400 photos, from a launch at 0: register served
/// at 50 ms, answered ~100 ms; model download served ~150 ms; place data served ~250 ms;
/// photo chunks at ~10.3 s and ~20.3 s; the run report is served ~20.35 s.
@Suite struct WorldRuleTests {}

// MARK: - D2, D3: every lock error, from every request kind

struct LockCase: Sendable, CustomTestStringConvertible {
    let name: String
    let error: Answer
    let kind: RequestKind
    var secondApp = false
    /// Photos indexed when the lock comes, for locks after the first run got going.
    var indexedAtLock: UInt32? = nil
    let schedule: [ScheduledAction]
    var testDescription: String { name }
}

private let h = WT.h, s = WT.s

private let lockCases: [LockCase] = [
    // app_key_invalid: a key never issued, or a key stopped by a rotation.
    LockCase(name: "invalid (unknown key) at register", error: .appKeyInvalid, kind: .register, schedule: [
        .at(0, WT.update(key: WT.keyUnknown)), .at(0, WT.person(.launch))]),
    LockCase(name: "invalid (unknown key) at launch check", error: .appKeyInvalid, kind: .check, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.update(key: WT.keyUnknown)), .at(2 * h, WT.person(.launch))]),
    LockCase(name: "invalid (stopped key) at launch check", error: .appKeyInvalid, kind: .check, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.rotateStopNow), .at(2 * h, WT.person(.launch))]),
    LockCase(name: "invalid (stopped key) at background-run check", error: .appKeyInvalid, kind: .check, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.rotateStopNow), .at(2 * h, WT.person(.background))]),
    LockCase(name: "invalid (stopped key) at model download", error: .appKeyInvalid, kind: .modelDownload, schedule: [
        .at(0, WT.person(.launch)), .at(120, WT.rotateStopNow)]),
    LockCase(name: "invalid (stopped key) at place data", error: .appKeyInvalid, kind: .placeData, schedule: [
        .at(0, WT.person(.launch)), .at(220, WT.rotateStopNow)]),
    LockCase(name: "invalid (stopped key) at query", error: .appKeyInvalid, kind: .query, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.rotateStopNow), .at(2 * h, WT.person(.query))]),
    LockCase(name: "invalid (stopped key) at profile", error: .appKeyInvalid, kind: .profile, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.rotateStopNow), .at(2 * h, WT.person(.profile))]),
    LockCase(name: "invalid (stopped key) at run report", error: .appKeyInvalid, kind: .runReport, schedule: [
        .at(0, WT.person(.launch)), .at(15 * s, WT.rotateStopNow)]),
    // app_disabled: the developer disables the app.
    LockCase(name: "disabled at register", error: .appDisabled, kind: .register, schedule: [
        .at(0, WT.disable), .at(0, WT.person(.launch))]),
    LockCase(name: "disabled at launch check", error: .appDisabled, kind: .check, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.disable), .at(2 * h, WT.person(.launch))]),
    LockCase(name: "disabled at background-run check", error: .appDisabled, kind: .check, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.disable), .at(2 * h, WT.person(.background))]),
    LockCase(name: "disabled at model download", error: .appDisabled, kind: .modelDownload, schedule: [
        .at(0, WT.person(.launch)), .at(120, WT.disable)]),
    LockCase(name: "disabled at place data", error: .appDisabled, kind: .placeData, schedule: [
        .at(0, WT.person(.launch)), .at(220, WT.disable)]),
    LockCase(name: "disabled at query", error: .appDisabled, kind: .query, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.disable), .at(2 * h, WT.person(.query))]),
    LockCase(name: "disabled at profile", error: .appDisabled, kind: .profile, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.disable), .at(2 * h, WT.person(.profile))]),
    LockCase(name: "disabled at query in the middle of a run", error: .appDisabled, kind: .query, indexedAtLock: 200, schedule: [
        .at(0, WT.person(.launch)), .at(12 * s, WT.disable), .at(15 * s, WT.person(.query))]),
    LockCase(name: "disabled at run report", error: .appDisabled, kind: .runReport, schedule: [
        .at(0, WT.person(.launch)), .at(15 * s, WT.disable)]),
    // app_key_mismatch: an update ships app B's valid key to a device app A registered.
    // Only a request with a credential can get it, and an update restarts the app, whose
    // first request is then a check: register (attestation) and in-run kinds are not reachable.
    LockCase(name: "mismatch at launch check", error: .appKeyMismatch, kind: .check, secondApp: true, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.update(WT.dev(0), key: WT.keyB)), .at(2 * h, WT.person(.launch, WT.dev(0)))]),
    LockCase(name: "mismatch at background-run check", error: .appKeyMismatch, kind: .check, secondApp: true, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.update(WT.dev(0), key: WT.keyB)), .at(2 * h, WT.person(.background, WT.dev(0)))]),
]

extension WorldRuleTests {
    @Test("D2/D3: a lock error locks the SDK, keeping its data", arguments: lockCases)
    func lockError(_ c: LockCase) {
        let world = WT.run(secondApp: c.secondApp, c.schedule)
        let t = DeviceTrace(world, 0)
        let disk = world.devices[0].disk
        guard let lock = t.firstLock else {
            Issue.record("never locked; deliveries: \(t.delivered.map { "\($0.kind)=\($0.answer)" })")
            return
        }
        #expect(lock.kind == c.kind)
        #expect(lock.answer == c.error)
        #expect(disk.locked)
        #expect(world.devices[0].reportedState == .locked)
        #expect(t.states.last?.state == .locked)
        #expect(disk.lockedSince == lock.time)
        // D3: background tasks cancelled, nothing deleted, nothing indexed after the lock.
        #expect(!disk.backgroundScheduled)
        #expect(t.stores.allSatisfy { !$0.op.isDelete })
        #expect(t.stores(where: { if case .indexPhotos = $0 { true } else { false } }).allSatisfy { $0 <= lock.time })
        #expect(!t.records.contains { r in r.time > lock.time && r.event == .runStarted(background: false) })
        #expect(!t.records.contains { r in r.time > lock.time && r.event == .runStarted(background: true) })
        // D3: only checks go out while locked (no data request after the lock).
        #expect(t.sent.filter { $0.time > lock.time }.allSatisfy { $0.kind == .check || $0.kind == .register })
        if let call = c.kind.apiCall {
            #expect(t.callResults.contains { $0.call == call && $0.outcome == .threwAccessRevoked })
        }
        // The indexing done before the lock is kept.
        #expect(disk.indexedCount == t.indexRanges.reduce(0) { $0 + UInt32($1.count) })
        if let expected = c.indexedAtLock ?? (c.kind == .runReport || c.kind == .query || c.kind == .profile ? 400 : nil) {
            #expect(disk.indexedCount == expected)
            #expect(disk.modelsPresent && disk.placeDataPresent)
        }
    }
}

// MARK: - D6: what never locks

struct NoLockCase: Sendable, CustomTestStringConvertible {
    let name: String
    /// The answer the device must have been given at least once.
    let answer: Answer
    var pending = false
    let schedule: [ScheduledAction]
    var testDescription: String { name }
}

/// After a healthy first launch (registered, indexed), the fault window from 1 h, then a
/// launch, a query, a profile, a background run and a re-activation inside it.
private func underFault(_ fault: WorldAction) -> [ScheduledAction] {
    [.at(0, WT.person(.launch)), .at(h, fault),
     .at(h + WT.m, WT.person(.launch)), .at(h + 2 * WT.m, WT.person(.query)),
     .at(h + 3 * WT.m, WT.person(.profile)), .at(h + 4 * WT.m, WT.person(.background)),
     .at(h + 5 * WT.m, WT.person(.close)), .at(h + 6 * WT.m, WT.person(.addPhotos, arg: 200)),
     .at(h + 7 * WT.m, WT.person(.open))]
}

private let noLockCases: [NoLockCase] = [
    NoLockCase(name: "offline", answer: .offline, schedule: underFault(.offline(.all, forMs: h))),
    NoLockCase(name: "timeouts 100%", answer: .timedOut, schedule: underFault(.timeouts(rateBp: 10_000, forMs: h))),
    NoLockCase(name: "server errors 100%", answer: .serverError,
               schedule: underFault(.serverErrors(rateBp: 10_000, status: 503, forMs: h))),
    NoLockCase(name: "server down", answer: .serverError, schedule: underFault(.serverDown(forMs: h))),
    NoLockCase(name: "offline at the first launch", answer: .offline, schedule: [
        .at(0, .offline(.all, forMs: h)), .at(0, WT.person(.launch)), .at(WT.m, WT.person(.query)),
        .at(2 * WT.m, WT.person(.close)), .at(3 * WT.m, WT.person(.open))]),
    NoLockCase(name: "app_pending", answer: .appPending, pending: true, schedule: [
        .at(0, WT.person(.launch)), .at(h, WT.person(.query)), .at(2 * h, WT.person(.close)),
        .at(27 * h, WT.person(.open)), .at(28 * h, WT.person(.launch))]),
]

extension WorldRuleTests {
    @Test("D6: offline, timeouts, 5xx and app_pending never lock", arguments: noLockCases)
    func neverLocks(_ c: NoLockCase) {
        let world = WT.run(pending: c.pending, c.schedule)
        let t = DeviceTrace(world, 0)
        #expect(t.answers.contains { $0.answer == c.answer })
        #expect(t.storeTimes(.lock).isEmpty)
        #expect(!world.devices[0].disk.locked)
        #expect(world.devices[0].disk.lockedSince == LocalData.never)
        #expect(!world.devices[0].reportedState.isAccessRevoked)
        #expect(!t.states.contains { $0.state.isAccessRevoked })
        #expect(!t.callResults.contains { $0.outcome == .threwAccessRevoked })
        #expect(t.stores.allSatisfy { !$0.op.isDelete || $0.op == .deleteCredential })
    }

    @Test("D6: once the fault ends, the SDK finishes its work", arguments: noLockCases.prefix(4))
    func recoversAfterFault(_ c: NoLockCase) {
        // The world of `neverLocks`, run 1 day longer, with an activation after the window.
        let schedule = c.schedule + [.at(2 * h, WT.person(.close)), .at(3 * h, WT.person(.background))]
        let world = WT.run(WT.setup(until: 4 * h, schedule))
        let disk = world.devices[0].disk
        #expect(!disk.locked)
        #expect(disk.indexedCount == 600)
        #expect(disk.modelDownloads == 1)
        #expect(disk.reportsQueued == 0)
        #expect(world.server.knows(disk.credential))
        expectContiguousIndex(DeviceTrace(world, 0), total: 600)
    }

    @Test("D6: device_unknown at a check or a query registers the device again", arguments: [PersonAction.launch, .query, .profile, .background])
    func deviceUnknownRegistersAgain(_ action: PersonAction) {
        let world = WT.run([.at(0, WT.person(.launch)), .at(h, .forgetDevice(.all)), .at(2 * h, WT.person(action))])
        let t = DeviceTrace(world, 0)
        let disk = world.devices[0].disk
        let first = t.storeTimes(.setCredential(Credential(device: 0, generation: 1)))
        #expect(first.count == 1)
        guard let unknown = t.answers.first(where: { $0.answer == .deviceUnknown }) else {
            Issue.record("no device_unknown delivered"); return
        }
        #expect(unknown.time > 2 * h)
        // A register follows in the same step, and the new credential is stored and live.
        let registers = t.sent(.register).filter { $0.time >= unknown.time }
        #expect(registers.count == 1)
        #expect(registers.first?.time == unknown.time)
        #expect(disk.credential == Credential(device: 0, generation: 2))
        #expect(world.server.knows(disk.credential))
        #expect(world.server.deviceRecord(0)?.owner == WT.appA)
        #expect(!disk.locked)
        #expect(world.devices[0].reportedState == .idle)
        #expect(t.storeTimes(.lock).isEmpty)
        #expect(disk.indexedCount == 400 && disk.modelDownloads == 1)
        if let call = action == .query ? APICall.query : action == .profile ? .profile : nil {
            #expect(t.callResults.contains { $0.call == call && $0.outcome == .failed })
        }
    }
}

// MARK: - D3: a locked SDK is inert

extension WorldRuleTests {
    @Test("D3: locked search/query/profile throw accessRevoked without a request")
    func lockedCallsThrow() {
        let world = WT.run([
            .at(0, WT.person(.launch)), .at(h, WT.disable), .at(2 * h, WT.person(.launch)),
            .at(3 * h, WT.person(.search)), .at(3 * h, WT.person(.query)), .at(3 * h, WT.person(.profile)),
            // From the background the call brings the app forward first (an activation check).
            .at(4 * h, WT.person(.close)), .at(5 * h, WT.person(.query)),
            .at(6 * h, WT.person(.close)), .at(7 * h, WT.person(.profile)),
        ])
        let t = DeviceTrace(world, 0)
        guard let lock = t.firstLock else { Issue.record("never locked"); return }
        #expect(lock.time > 2 * h && lock.time < 3 * h)
        let after = t.callResults.filter { $0.time > lock.time }
        #expect(after.map(\.call) == [.search, .query, .profile, .query, .profile])
        #expect(after.allSatisfy { $0.outcome == .threwAccessRevoked })
        #expect(t.sent(.query, .profile).isEmpty)
        // The activations checked again, and nothing else went out.
        #expect(t.sent.filter { $0.time > lock.time }.map(\.kind) == [.check, .check])
        #expect(world.devices[0].reportedState == .locked)
    }
}
