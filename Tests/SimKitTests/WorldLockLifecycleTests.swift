import Testing
@testable import SimKit

// D4 (unlock resumes) and D5 (purge after 30 continuous days), through the whole world.

private let h = WT.h, s = WT.s, m = WT.m, d = WT.d
private let purgeAfter = SDKConfig().purgeAfterMs

/// How an unlocked SDK is woken after access returns.
enum Wake: String, Sendable, CaseIterable { case open, launch, query }

extension WorldRuleTests {
    /// 1,000 photos (five chunks, ~10.3 s … ~50.3 s); disabled at 22 s, a query at 25 s
    /// locks the SDK in the middle of the run with 400 photos indexed; enabled at 1 h.
    @Test("D4: unlock resumes the run: no model downloaded again, no photo indexed twice", arguments: Wake.allCases)
    func unlockResumes(_ wake: Wake) {
        var schedule: [ScheduledAction] = [
            .at(0, WT.person(.launch)), .at(22 * s, WT.disable), .at(25 * s, WT.person(.query)),
            .at(h, WT.enable), .at(h + m, WT.person(.close)),
        ]
        switch wake {
        case .open: schedule.append(.at(2 * h, WT.person(.open)))
        case .launch: schedule.append(.at(2 * h, WT.person(.launch)))
        case .query: schedule.append(.at(2 * h, WT.person(.query)))
        }
        let world = WT.run(photos: 1_000, schedule)
        let t = DeviceTrace(world, 0)
        let disk = world.devices[0].disk
        guard let lock = t.firstLock else { Issue.record("never locked"); return }
        #expect(lock.kind == .query && lock.answer == .appDisabled)
        #expect(t.stores(where: { if case .indexPhotos = $0 { true } else { false } }).filter { $0 <= lock.time }.count == 2)
        #expect(t.indexRanges.count == 5)
        guard let unlock = t.storeTimes(.unlock).first else { Issue.record("never unlocked"); return }
        #expect(unlock > 2 * h)
        // D3: nothing indexed while locked.
        #expect(t.stores(where: { if case .indexPhotos = $0 { true } else { false } }).allSatisfy { $0 <= lock.time || $0 >= unlock })
        // Resumed where it stopped, and finished.
        #expect(disk.indexedCount == 1_000)
        expectContiguousIndex(t, total: 1_000)
        #expect(t.indexRanges.contains { $0.from == 400 })
        #expect(disk.modelDownloads == 1)
        #expect(t.sent(.modelDownload).count == 1)
        #expect(t.sent(.placeData).count == 1)
        #expect(t.storeTimes(.saveModels).count == 1)
        #expect(!disk.locked && disk.lockedSince == LocalData.never)
        #expect(disk.backgroundScheduled)
        #expect(world.devices[0].reportedState == .idle)
        #expect(t.stores.allSatisfy { !$0.op.isDelete })
        // The report of the interrupted run and of the resumed one both reach the server.
        #expect(disk.reportsQueued == 0)
    }
}

// MARK: - D5: purge

/// Launched at 0 (registered, 400 photos indexed), disabled at 1 h, launched at 2 h: the
/// check locks the SDK (at `lockedSince`); sent to the background at 3 h.
private let lockedBase: [ScheduledAction] = [
    .at(0, WT.person(.launch)), .at(h, WT.disable), .at(2 * h, WT.person(.launch)), .at(3 * h, WT.person(.close)),
]

/// When the base world's device locks (its first lock error, ~2 h).
private func lockedAt() -> SimTime { WT.run(WT.setup(until: 4 * h, lockedBase)).devices[0].disk.lockedSince }

/// When the base world locks, and how long after an `open` its check's answer arrives
/// (the same for any later `open`: the delay depends only on the device's earlier draws).
private func purgeTiming() -> (lockedSince: SimTime, checkDelay: SimTime) {
    let locked = lockedAt()
    let probeAt = locked + purgeAfter - 10 * s
    let world = WT.run(WT.setup(until: probeAt + h, lockedBase + [.at(probeAt, WT.person(.open))]))
    let answer = DeviceTrace(world, 0).answers.first { $0.time >= probeAt && $0.kind == .check }
    return (locked, (answer?.time ?? probeAt) - probeAt)
}

/// How long after an `open` the server answers its check, in the base world while locked.
/// The delay depends only on the device's earlier draws, so it is the same for any later
/// time of the `open`.
private func serveDelay() -> SimTime {
    let probeAt = h + purgeAfter - 10 * s
    let world = WT.run(WT.setup(until: probeAt + h, lockedBase + [.at(probeAt, WT.person(.open))]))
    let served = DeviceTrace(world, 0).served.first { $0.time >= probeAt && $0.kind == .check }
    return (served?.time ?? probeAt) - probeAt
}

extension WorldRuleTests {
    /// D5 counts from when access stopped on the server (the disable at 1 h: S2's
    /// `stoppedSince`), not from when the device first heard of it (its lock at ~2 h).
    @Test("D5: a lock error served 30 d after access stopped purges; at 30 d − 1 ms it does not", arguments: [false, true])
    func purgeBoundary(atDeadline: Bool) {
        let delay = serveDelay()
        let servedAt = h + purgeAfter - (atDeadline ? 0 : 1)
        let world = WT.run(WT.setup(until: servedAt + h, lockedBase + [.at(servedAt - delay, WT.person(.open))]))
        let t = DeviceTrace(world, 0)
        let disk = world.devices[0].disk
        let check = t.served.last { $0.kind == .check }
        #expect(check?.time == servedAt, "the check must be served at the boundary")
        #expect(check?.reply.answer == .appDisabled)
        #expect(check?.reply.stoppedSince == h)
        #expect(disk.lockedSince > 2 * h && disk.lockedSince < 2 * h + s)
        if atDeadline {
            #expect(t.storeTimes(.markPurged).count == 1)
            #expect(disk.purged && disk.locked)
            #expect(disk.indexedCount == 0 && !disk.modelsPresent && !disk.placeDataPresent)
            #expect(disk.credential.isNone)
            #expect(world.devices[0].reportedState == .purged)
        } else {
            #expect(t.storeTimes(.markPurged).isEmpty)
            #expect(!disk.purged && disk.locked)
            #expect(disk.indexedCount == 400 && disk.modelsPresent && disk.placeDataPresent && !disk.credential.isNone)
            #expect(world.devices[0].reportedState == .locked)
            #expect(t.stores.allSatisfy { !$0.op.isDelete })
        }
    }

    @Test("D5: after a purge, access coming back starts from scratch")
    func purgeThenReturn() {
        let locked = lockedAt()
        let at = locked + purgeAfter + h
        let world = WT.run([
            .at(0, WT.person(.launch)), .at(h, WT.disable), .at(2 * h, WT.person(.launch)), .at(3 * h, WT.person(.close)),
            .at(at, WT.person(.open)), .at(at + h, WT.enable), .at(at + 2 * h, WT.person(.close)),
            .at(at + 3 * h, WT.person(.open)),
        ])
        let t = DeviceTrace(world, 0)
        let disk = world.devices[0].disk
        guard let purge = t.storeTimes(.markPurged).first else { Issue.record("never purged"); return }
        #expect(purge > at && purge < at + s)
        // The next activation registers again (the credential was deleted), unlocks and
        // downloads and indexes everything again.
        let after = t.sent.filter { $0.time > purge }.map(\.kind)
        #expect(after.first == .register)
        #expect(disk.credential == Credential(device: 0, generation: 2))
        #expect(!disk.locked && !disk.purged)
        #expect(disk.modelDownloads == 1 && disk.modelsPresent && disk.placeDataPresent)
        #expect(disk.indexedCount == 400)
        let ranges = t.stores.filter { $0.time > purge }.compactMap { r -> UInt32? in
            if case .indexPhotos(let from, _) = r.op { return from } else { return nil }
        }
        #expect(ranges == [0, 200])
        #expect(world.devices[0].reportedState == .idle)
    }

    @Test("D5: offline, 5xx and timed-out checks past the deadline never purge; the next lock error does")
    func noPurgeOnTransient() {
        let locked = lockedAt()
        let due = locked + purgeAfter
        let world = WT.run(lockedBase + [
            .at(due + h, .offline(.all, forMs: h)), .at(due + h + m, WT.person(.open)),
            .at(due + 2 * h, WT.person(.close)),
            .at(due + 3 * h, .serverErrors(rateBp: 10_000, status: 503, forMs: h)), .at(due + 3 * h + m, WT.person(.open)),
            .at(due + 4 * h, WT.person(.close)),
            .at(due + 5 * h, .serverDown(forMs: h)), .at(due + 5 * h + m, WT.person(.open)),
            .at(due + 6 * h, WT.person(.close)),
            .at(due + 7 * h, .timeouts(rateBp: 10_000, forMs: h)), .at(due + 7 * h + m, WT.person(.open)),
            .at(due + 8 * h, WT.person(.close)),
            .at(due + 9 * h, WT.person(.open)),
        ])
        let t = DeviceTrace(world, 0)
        let checks = t.answers.filter { $0.kind == .check && $0.time > due }
        #expect(checks.map(\.answer).prefix(4) == [.offline, .serverError, .serverError, .timedOut])
        // The first check answered with a lock error past the deadline, not a stale one, purges.
        let stale = Set(t.staleDeliveries.map(\.index))
        let firstLockAnswer = checks.first { $0.answer.isLockError && !stale.contains($0.index) }
        #expect(t.storeTimes(.markPurged) == [firstLockAnswer?.time ?? 0])
        #expect((firstLockAnswer?.time ?? 0) > due + 7 * h)
        #expect(t.stores.filter { $0.op.isDelete }.allSatisfy { $0.time == firstLockAnswer?.time })
        #expect(world.devices[0].disk.purged)
    }

    @Test("D5: a success in between restarts the 30 days")
    func successInBetween() {
        let locked = lockedAt()
        let due = locked + purgeAfter
        let world = WT.run(lockedBase + [
            .at(10 * d, WT.enable), .at(11 * d, WT.person(.open)),          // unlocks
            .at(12 * d, WT.disable), .at(12 * d + h, WT.person(.close)), .at(13 * d, WT.person(.open)),  // locks again
            .at(13 * d + h, WT.person(.close)), .at(due + h, WT.person(.open)),       // past the first deadline
            .at(due + 2 * h, WT.person(.close)), .at(13 * d + purgeAfter + h, WT.person(.open)),  // past the second
        ])
        let t = DeviceTrace(world, 0)
        let unlocks = t.storeTimes(.unlock)
        #expect(unlocks.count == 1 && unlocks[0] > 11 * d && unlocks[0] < 11 * d + s)
        let locks = t.storeTimes(.lock)
        #expect(locks.count == 2)
        let relocked = locks.last ?? 0
        #expect(relocked > 13 * d && relocked < 13 * d + s)
        // The lock-error check past the first deadline does not purge…
        let pastFirst = t.answers.first { $0.kind == .check && $0.time > due + h && $0.time < due + 2 * h }
        #expect(pastFirst?.answer == .appDisabled)
        let purges = t.storeTimes(.markPurged)
        #expect(purges.allSatisfy { $0 > due + 2 * h })
        // …the one 30 days after the second lock does.
        #expect(purges.count == 1)
        #expect((purges.first ?? 0) > 13 * d + purgeAfter + h)
        #expect(world.devices[0].disk.purged)
    }

    @Test("D3: lockedSince is the first lock error; later ones keep it")
    func lockedSinceKept() {
        let world = WT.run(lockedBase + [
            .at(d, WT.person(.open)), .at(d + h, WT.person(.close)), .at(2 * d, WT.person(.launch)),
            .at(2 * d + h, WT.person(.query)),
        ])
        let t = DeviceTrace(world, 0)
        let lockErrors = t.answers.filter(\.answer.isLockError)
        #expect(lockErrors.count == 3)
        #expect(world.devices[0].disk.lockedSince == lockErrors.first?.time)
        #expect(t.stores(where: { if case .setLockedSince = $0 { true } else { false } }).count == 1)
    }
}

extension WorldRuleTests {
    @Test("D4: a lock at the model download, once lifted, downloads the models exactly once and indexes everything")
    func unlockAfterLockAtModelDownload() {
        let world = WT.run([
            .at(0, WT.person(.launch)), .at(120, WT.disable), .at(h, WT.enable),
            .at(h + m, WT.person(.close)), .at(2 * h, WT.person(.open)),
        ])
        let t = DeviceTrace(world, 0)
        #expect(t.firstLock?.kind == .modelDownload)
        #expect(t.answers.filter { $0.kind == .modelDownload }.map(\.answer) == [.appDisabled, .ok])
        let disk = world.devices[0].disk
        #expect(disk.modelDownloads == 1 && disk.indexedCount == 400 && !disk.locked)
        expectContiguousIndex(t, total: 400)
    }

    /// A second activation while the key check is in flight checks again (D4: every time):
    /// the first check, judged before the enable, answers app_disabled past the deadline
    /// and purges; the second, judged after the enable, answers 200, but it was in flight
    /// across the purge, so it is stale and ignored (D9). The next activation registers
    /// again, unlocks and starts over from scratch.
    @Test("D4, D5: a second activation checks again while a check is in flight; the purge, then a fresh start")
    func secondActivationChecksAgainWhileACheckIsInFlight() {
        let (locked, delay) = purgeTiming()
        let t0 = locked + purgeAfter + h - delay + WT.latency   // the check's answer lands at +1 h
        let world = WT.run(lockedBase + [
            .at(t0, WT.person(.open)), .at(t0 + 5, WT.person(.close)), .at(t0 + 10, WT.person(.open)),
            .at(t0 + WT.latency / 2 + 5, WT.enable),
            .at(t0 + h, WT.person(.close)), .at(t0 + 2 * h, WT.person(.open)),
        ])
        let t = DeviceTrace(world, 0)
        let checks = t.answers.filter { $0.kind == .check && $0.time >= t0 }
        #expect(checks.map(\.answer) == [.appDisabled, .ok])
        guard checks.count == 2 else { return }
        #expect(t.storeTimes(.markPurged) == [checks[0].time])
        // The 200 was in flight across the purge: stale (D9). The next activation registers
        // again, unlocks and starts from scratch.
        let unlock = t.storeTimes(.unlock)
        #expect(unlock.count == 1 && (unlock.first ?? 0) > t0 + 2 * h)
        #expect(world.devices[0].disk.credential == Credential(device: 0, generation: 2))
        #expect(world.devices[0].disk.indexedCount == 400 && world.devices[0].disk.modelDownloads == 1)
    }
}
