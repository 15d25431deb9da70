import Testing
@testable import SimKit

// D1 (the key check schedule), D7/S8 (reset), D8 (Photos revoked), D9 (stale answers),
// D10 (run reports), through the whole world.

private let h = WT.h, s = WT.s, m = WT.m, d = WT.d
private let cred1 = Credential(device: 0, generation: 1)

// MARK: - D7, S8: reset

extension WorldRuleTests {
    @Test("D7/S8: reset deletes all local data and the server record; indexing restarts from scratch")
    func resetDeletesEverything() {
        let schedule: [ScheduledAction] = [.at(0, WT.person(.launch)), .at(h, WT.person(.reset))]
        let reset = WT.run(schedule)
        let t = DeviceTrace(reset, 0)
        let disk = reset.devices[0].disk
        #expect(disk.isEmpty)
        #expect(disk.pendingReset.isNone && !disk.locked && disk.lockedSince == LocalData.never)
        #expect(!reset.server.knows(cred1))
        #expect(reset.server.deviceRecord(0) == nil)
        let atReset = t.stores.filter { $0.time == h }.map(\.op)
        for op in [StoreOp.deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .setPendingReset(cred1)] {
            #expect(atReset.contains(op))
        }
        #expect(t.sent(.reset).map(\.credential) == [cred1])
        #expect(t.served.last?.kind == .reset && t.served.last?.reply.answer == .ok)
        #expect(t.storeTimes(.setPendingReset(.none)).count == 1)

        let again = WT.run(schedule + [.at(2 * h, WT.person(.launch))])
        let t2 = DeviceTrace(again, 0)
        let disk2 = again.devices[0].disk
        #expect(disk2.credential == Credential(device: 0, generation: 2))
        #expect(again.server.knows(disk2.credential))
        #expect(disk2.modelDownloads == 1 && disk2.indexedCount == 400)
        let froms = t2.stores.filter { $0.time > 2 * h }.compactMap { r -> UInt32? in
            if case .indexPhotos(let from, _) = r.op { return from } else { return nil }
        }
        #expect(froms == [0, 200])
    }

    /// Offline from 15 s (the first run's report is queued) to 2 h 15 s; reset at 1 h.
    @Test("D7: a reset that first fails offline is retried until the server deletes the record")
    func resetRetriedAfterOffline() {
        let world = WT.run(WT.setup(until: 10 * h, [
            .at(0, WT.person(.launch)), .at(15 * s, .offline(.all, forMs: 2 * h)), .at(h, WT.person(.reset)),
        ]))
        let t = DeviceTrace(world, 0)
        let disk = world.devices[0].disk
        #expect(t.storeTimes(.queueReport).count == 1)
        #expect(t.storeTimes(.dropReports) == [h])
        let resets = t.answers.filter { $0.kind == .reset }
        #expect(resets.count >= 2)
        #expect(resets.first?.answer == .offline)
        #expect(resets.last?.answer == .ok && (resets.last?.time ?? 0) > 2 * h + 15 * s)
        #expect(t.sent(.reset).allSatisfy { $0.credential == cred1 })
        #expect(disk.isEmpty && disk.pendingReset.isNone)
        #expect(!world.server.knows(cred1))
        #expect(world.server.deviceRecord(0) == nil)
    }

    /// The same, but the app process dies while the reset is still pending (an update at
    /// 1 h 30 m, offline), and the app next runs at 3 h, online: the pending delete must
    /// still be sent. `LocalData.pendingReset` is on disk precisely so that it outlives
    /// the process.
    /// (SPEC D7: "retried until it succeeds" — the retry may not die with the process.)
    @Test("D7: a pending reset survives the app process and is retried at the next launch")
    func resetRetriedAfterRestart() {
        let world = WT.run(WT.setup(until: 10 * h, [
            .at(0, WT.person(.launch)), .at(15 * s, .offline(.all, forMs: 2 * h)), .at(h, WT.person(.reset)),
            .at(h + 30 * m, WT.person(.update)), .at(3 * h, WT.person(.launch)),
        ]))
        let t = DeviceTrace(world, 0)
        let disk = world.devices[0].disk
        let served = t.served.filter { $0.kind == .reset && $0.reply.answer == .ok }
        #expect(served.count == 1 && (served.first?.time ?? 0) > 3 * h)
        #expect(disk.pendingReset.isNone)
        #expect(!world.server.knows(cred1))
        // The new registration after the reset is live and indexing started over.
        #expect(disk.credential == Credential(device: 0, generation: 2))
        #expect(world.server.knows(disk.credential))
        #expect(disk.indexedCount == 400 && disk.modelDownloads == 1)
    }

    /// D9: a model download in flight when the reset happens answers a store that no
    /// longer exists: its answer is ignored.
    @Test("D9: an answer to a request in flight across a reset is ignored")
    func answerAcrossResetIgnored() {
        // Registered ~100 ms, model download sent then, served ~150 ms, answered ~200 ms.
        let world = WT.run(WT.setup(until: h, [.at(0, WT.person(.launch)), .at(120, WT.person(.reset))]))
        let t = DeviceTrace(world, 0)
        let download = t.answers.first { $0.kind == .modelDownload }
        #expect(download?.answer == .ok && (download?.time ?? 0) > 120)
        #expect(t.storeTimes(.saveModels).isEmpty)
        if let download { #expect(t.step(at: download.index).allSatisfy { !$0.event.isEffect }) }
        #expect(world.devices[0].disk.isEmpty && world.devices[0].disk.pendingReset.isNone)
        #expect(!world.server.knows(cred1))
    }
}

// MARK: - D8: Photos revoked

extension WorldRuleTests {
    /// The world ends the app process on `revoke-photos` (as iOS does), so the next run is
    /// always a process start — `open` and `background` start one too; an activation of a
    /// live process after a revocation cannot happen here.
    @Test("D8: revoking Photos deletes the index the next time the app runs", arguments: [PersonAction.launch, .open, .background])
    func photosRevokedDeletesIndex(_ next: PersonAction) {
        let world = WT.run([
            .at(0, WT.person(.launch)), .at(h, WT.person(.revokePhotos)), .at(2 * h, WT.person(next)),
        ])
        let t = DeviceTrace(world, 0)
        // iOS ends the process on revocation; nothing is deleted until the app runs again.
        #expect(t.storeTimes(.deleteIndex) == [2 * h])
        #expect(world.devices[0].disk.indexedCount == 0)
        #expect(t.indexRanges.count == 2)
        #expect(!world.devices[0].disk.locked)
    }

    @Test("D8: after Photos access is granted again, indexing starts over")
    func photosGrantedAgain() {
        let world = WT.run([
            .at(0, WT.person(.launch)), .at(h, WT.person(.revokePhotos)), .at(2 * h, WT.person(.launch)),
            .at(3 * h, WT.person(.grantPhotos)), .at(3 * h, WT.person(.close)), .at(4 * h, WT.person(.open)),
        ])
        let t = DeviceTrace(world, 0)
        #expect(t.indexRanges.map(\.from) == [0, 200, 0, 200])
        #expect(world.devices[0].disk.indexedCount == 400)
        #expect(world.devices[0].disk.modelDownloads == 1)
    }
}

// MARK: - D1: the key check schedule

extension WorldRuleTests {
    @Test("D1: checks at launch, at every background run, on activation only after 24 h, and on activation while locked")
    func keyCheckSchedule() {
        // First part: launch, activations within a day, a background run.
        let first: [ScheduledAction] = [
            .at(0, WT.person(.launch)), .at(h, WT.person(.close)), .at(2 * h, WT.person(.open)),
            .at(3 * h, WT.person(.close)), .at(d, WT.person(.background)),
        ]
        let probe = WT.run(WT.setup(until: d + h, first))
        let answered = probe.devices[0].disk.lastAnsweredCheck
        #expect(answered > d && answered < d + s)
        let edge = answered + SDKConfig().checkIntervalMs
        let lockAt = edge + 2 * h
        let world = WT.run(first + [
            .at(edge, WT.person(.open)), .at(edge, WT.person(.close)),      // exactly 24 h: no check
            .at(edge + 1, WT.person(.open)), .at(edge + h, WT.person(.close)),  // older: check
            .at(edge + h + m, WT.person(.update)), .at(edge + 90 * m, WT.person(.background)),  // cold background run
            .at(lockAt, WT.disable), .at(lockAt + m, WT.person(.launch)),       // check → locked
            .at(lockAt + 2 * m, WT.person(.close)), .at(lockAt + 3 * m, WT.person(.open)),  // locked: check again
            .at(lockAt + 4 * m, WT.person(.close)), .at(lockAt + 5 * m, WT.person(.background)),  // cancelled: nothing
            .at(lockAt + 6 * m, WT.person(.launch)),                           // launch while locked: check
        ])
        let t = DeviceTrace(world, 0)
        let checks = t.sent(.check, .register).map(\.time)
        #expect(checks == [0, d, edge + 1, edge + 90 * m, lockAt + m, lockAt + 3 * m, lockAt + 6 * m])
        #expect(t.sent(.register).map(\.time) == [0])
        #expect(t.records.contains { $0.time == edge + 90 * m && $0.event == .processStarted(inBackground: true) })
        #expect(t.records.contains { $0.time == lockAt + 5 * m && $0.event == .backgroundRunSkipped })
        #expect(t.firstLock.map { $0.time > lockAt + m && $0.time < lockAt + 2 * m } ?? false)
    }

    @Test("D1: an unanswered check (offline, 5xx, timeout) does not count as answered", arguments: [
        WorldAction.offline(.all, forMs: WT.h), .serverErrors(rateBp: 10_000, status: 503, forMs: WT.h),
        .serverDown(forMs: WT.h), .timeouts(rateBp: 10_000, forMs: WT.h)])
    func unansweredCheckDoesNotCount(_ fault: WorldAction) {
        let at = 2 * d
        let world = WT.run([
            .at(0, WT.person(.launch)), .at(h, WT.person(.close)),
            .at(at, fault), .at(at + m, WT.person(.open)), .at(at + 2 * m, WT.person(.close)),
            .at(at + 2 * h, WT.person(.open)),
        ])
        let t = DeviceTrace(world, 0)
        let answers = t.answers.filter { $0.kind == .check }
        #expect(answers.count == 2)
        #expect(answers.first?.answer.isTransient ?? false)
        #expect(answers.last?.answer == .ok && (answers.last?.time ?? 0) > at + 2 * h)
        #expect(world.devices[0].disk.lastAnsweredCheck == answers.last?.time)
    }
}

// MARK: - D10: run reports

extension WorldRuleTests {
    @Test("D10: run reports queued offline are uploaded later, none lost", arguments: [false, true])
    func reportsQueuedOffline(restart: Bool) {
        var schedule: [ScheduledAction] = [
            .at(0, WT.person(.launch)), .at(h, WT.person(.addPhotos, arg: 400)),
            .at(d, .offline(.all, forMs: 12 * h)), .at(d + h, WT.person(.background)),
            .at(d + 2 * h, WT.person(.addPhotos, arg: 200)), .at(d + 2 * h, WT.person(.close)),
            .at(d + 3 * h, WT.person(.open)),
        ]
        // With a restart the app dies offline and the reports must outlive the process.
        if restart { schedule += [.at(d + 4 * h, WT.person(.update)), .at(2 * d, WT.person(.background))] }
        let world = WT.run(WT.setup(photos: 400, until: 3 * d, schedule))
        let t = DeviceTrace(world, 0)
        let disk = world.devices[0].disk
        let queued = t.storeTimes(.queueReport)
        #expect(queued.count == (restart ? 4 : 3))
        #expect(queued.filter { $0 > d && $0 < d + 12 * h }.count == 2)
        #expect(t.answers.contains { $0.kind == .runReport && $0.answer == .offline })
        let uploaded = t.stores.reduce(0) { n, r in if case .reportsUploaded(let k) = r.op { n + Int(k) } else { n } }
        #expect(uploaded == queued.count)
        #expect(disk.reportsQueued == 0)
        #expect(t.storeTimes(.dropReports).isEmpty)
        #expect(t.served.contains { $0.kind == .runReport && $0.reply.answer == .ok && $0.time > d + 12 * h })
        #expect(disk.indexedCount == 1_000)
        expectContiguousIndex(t, total: 1_000)
    }
}

// MARK: - D9: stale answers after a timeout

extension TraceEvent {
    /// A record of something the SDK did (an effect), as opposed to an input or a fault.
    var isEffect: Bool {
        switch self {
        case .requestSent, .state, .store, .callResult, .runStarted, .runEnded: true
        default: false
        }
    }
}

extension WorldRuleTests {
    /// Every request times out (its answer arrives from 2 s before the timeout to one
    /// timeout after it) while the app is disabled: an answer after the timeout is stale and
    /// must change nothing; one that beats its timeout is a real lock error.
    @Test("D9: answers after their timeout are ignored")
    func staleAnswersIgnored() {
        let world = WT.run(devices: 8, [
            .at(0, WT.person(.launch)), .at(h, .timeouts(rateBp: 10_000, forMs: h)), .at(h, WT.disable),
            .at(h + m, WT.person(.launch)), .at(h + 3 * m, WT.person(.query)), .at(h + 5 * m, WT.person(.profile)),
            .at(h + 7 * m, WT.person(.close)), .at(h + 8 * m, WT.person(.open)),
        ])
        var stale = 0
        for dev in 0..<8 as Range<DeviceIndex> {
            let t = DeviceTrace(world, dev)
            for late in t.staleDeliveries {
                stale += 1
                #expect(late.answer == .appDisabled)
                #expect(t.step(at: late.index).allSatisfy { !$0.event.isEffect })
            }
            let acted = t.answers.filter { $0.time > h && !$0.viaTimer }
            #expect(world.devices[Int(dev)].disk.locked == acted.contains { $0.answer.isLockError })
            if let lock = t.firstLock { #expect(!lock.viaTimer && acted.contains { $0.index == lock.index }) }
        }
        #expect(stale > 10)
    }
}
