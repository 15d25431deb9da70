import Testing
@testable import SimKit

// S3 (rotation and grace), S4 (disable), S5 (only Rollup restores), S6 (clones), through
// the whole world: devices on old and new keys, their locks, and the server's answers.

private let h = WT.h, s = WT.s, m = WT.m, d = WT.d

extension WorldRuleTests {
    @Test("S3: stop-old-now locks devices still on the old key, not updated ones")
    func stopOldNow() {
        let world = WT.run(devices: 3, [
            .at(0, WT.person(.launch)), .at(h, WT.rotateStopNow), .at(h + m, WT.update(WT.dev(1), key: WT.keyA2)),
            .at(2 * h, WT.person(.launch)),
        ])
        #expect(world.server.keyAnswer(WT.keyA, now: world.now) == .appKeyInvalid)
        for dev in [0, 2] as [DeviceIndex] {
            let t = DeviceTrace(world, dev)
            #expect(t.firstLock?.answer == .appKeyInvalid)
            #expect(t.firstLock?.kind == .check)
            #expect(world.devices[Int(dev)].reportedState == .locked)
        }
        let updated = DeviceTrace(world, 1)
        #expect(updated.storeTimes(.lock).isEmpty)
        #expect(updated.served.last?.key == WT.keyA2 && updated.served.last?.reply.answer == .ok)
        #expect(world.devices[1].reportedState == .idle)
    }

    /// The old key's deadline is 1 h + 30 d. A request reaches the server `latency / 2`
    /// after it is sent, so launches at deadline − 51 ms and − 50 ms are judged at − 1 ms and at
    /// the deadline itself.
    @Test("S3: the old key's grace ends exactly 30 days after the rotation")
    func graceEndsAtDeadline() {
        let deadline = h + 30 * d
        let half = WT.latency / 2
        let world = WT.run(devices: 3, [
            .at(0, WT.person(.launch)), .at(h, WT.rotateKeep()), .at(2 * h, WT.update(WT.dev(2), key: WT.keyA2)),
            .at(3 * h, WT.person(.launch, WT.dev(2))),
            .at(20 * d, WT.person(.launch, WT.dev(0))),             // inside the grace: served
            .at(deadline - half - 1, WT.person(.launch, WT.dev(0))),
            .at(deadline - half, WT.person(.launch, WT.dev(1))),
            .at(deadline - half, WT.person(.launch, WT.dev(2))),
        ])
        let before = DeviceTrace(world, 0).served.last
        #expect(before?.time == deadline - 1)
        #expect(before?.key == WT.keyA && before?.kind == .check && before?.reply.answer == .ok)
        #expect(world.devices[0].reportedState == .idle && !world.devices[0].disk.locked)
        let at = DeviceTrace(world, 1).served.last
        #expect(at?.time == deadline)
        #expect(at?.key == WT.keyA && at?.reply.answer == .appKeyInvalid)
        #expect(world.devices[1].reportedState == .locked && world.devices[1].disk.locked)
        let updated = DeviceTrace(world, 2).served.last
        #expect(updated?.time == deadline && updated?.key == WT.keyA2 && updated?.reply.answer == .ok)
        #expect(!world.devices[2].disk.locked)
    }

    @Test("S3: stopping the old key early locks its devices at their next request")
    func stopOldKeyEarly() {
        let world = WT.run(devices: 2, [
            .at(0, WT.person(.launch)), .at(h, WT.rotateKeep()), .at(d, WT.person(.launch, WT.dev(0))),
            .at(d + h, WT.update(WT.dev(1), key: WT.keyA2)),
            .at(2 * d, WT.dash(.stopOldKey(app: WT.appA, key: WT.keyA))),
            .at(2 * d + h, WT.person(.launch)),
        ])
        let t0 = DeviceTrace(world, 0)
        let inGrace = t0.served.first { $0.time > d && $0.time < d + s }
        #expect(inGrace?.reply.answer == .ok)
        let lock = t0.firstLock
        #expect(lock?.answer == .appKeyInvalid && (lock?.time ?? 0) > 2 * d + h)
        #expect(world.devices[0].reportedState == .locked)
        #expect(DeviceTrace(world, 1).storeTimes(.lock).isEmpty)
        #expect(world.devices[1].reportedState == .idle)
        #expect(world.server.keyAnswer(WT.keyA, now: world.now) == .appKeyInvalid)
        #expect(world.observer.records.contains {
            $0.event == .dashboard(.stopOldKey(app: WT.appA, key: WT.keyA), applied: true)
        })
    }

    @Test("S4: disable stops devices on the old and the new key; enable restores both")
    func disableStopsBothKeys() {
        let world = WT.run(devices: 2, [
            .at(0, WT.person(.launch)), .at(h, WT.rotateKeep()), .at(2 * h, WT.update(WT.dev(1), key: WT.keyA2)),
            .at(3 * h, WT.disable), .at(4 * h, WT.person(.launch)),
            .at(5 * h, WT.enable), .at(5 * h + m, WT.person(.close)), .at(6 * h, WT.person(.open)),
        ])
        for dev in [0, 1] as [DeviceIndex] {
            let t = DeviceTrace(world, dev)
            let lock = t.firstLock
            #expect(lock?.answer == .appDisabled)
            #expect((lock?.time ?? 0) > 4 * h && (lock?.time ?? .max) < 5 * h)
            #expect(t.served.first { $0.time > 4 * h }?.key == (dev == 0 ? WT.keyA : WT.keyA2))
            let unlock = t.storeTimes(.unlock)
            #expect(unlock.count == 1 && (unlock.first ?? 0) > 6 * h)
            #expect(world.devices[Int(dev)].reportedState == .idle)
        }
    }

    @Test("S4/S5: enable does not lift a Rollup revocation; only Rollup's restore does",
          arguments: [WorldAction.dashboard(.rollupApp(.revoke, app: 0)), .dashboard(.rollupAccount(.revoke, account: 0))])
    func enableDoesNotLiftRollup(_ revoke: WorldAction) {
        let restore: WorldAction = revoke == .dashboard(.rollupApp(.revoke, app: 0))
            ? .dashboard(.rollupApp(.restore, app: 0)) : .dashboard(.rollupAccount(.restore, account: 0))
        let world = WT.run([
            .at(0, WT.person(.launch)), .at(h, revoke), .at(2 * h, WT.disable), .at(3 * h, WT.enable),
            .at(4 * h, WT.person(.launch)),
            .at(5 * h, WT.person(.close)), .at(6 * h, WT.person(.open)),
            .at(7 * h, restore), .at(7 * h + m, WT.person(.close)), .at(8 * h, WT.person(.open)),
        ])
        let t = DeviceTrace(world, 0)
        #expect(world.observer.records.contains { $0.event == .dashboard(.enable(app: 0), applied: true) })
        let checks = t.answers.filter { $0.kind == .check && $0.time > 4 * h }
        #expect(checks.map(\.answer) == [.appDisabled, .appDisabled, .ok])
        #expect(t.firstLock.map { $0.time > 4 * h && $0.time < 5 * h } ?? false)
        #expect(t.storeTimes(.unlock).allSatisfy { $0 > 8 * h })
        #expect(t.storeTimes(.unlock).count == 1)
        #expect(world.devices[0].reportedState == .idle)
    }

    @Test("S6: a clone is refused with attestation_failed and never served")
    func clonesNeverServed() {
        let world = WT.run(devices: 2, clones: 3, [
            .at(0, WT.person(.launch)), .at(h, WT.person(.query)), .at(2 * h, WT.person(.profile)),
            .at(3 * h, WT.person(.close)), .at(d + h, WT.person(.open)), .at(2 * d, WT.person(.background)),
            .at(3 * d, WT.person(.launch)),
        ])
        for dev in 0..<5 as Range<DeviceIndex> {
            let t = DeviceTrace(world, dev)
            let clone = dev >= 2
            #expect(world.facts.deviceGenuine[Int(dev)] == !clone)
            if clone {
                #expect(!t.served.isEmpty)
                #expect(t.served.allSatisfy { $0.reply.answer != .ok })
                #expect(t.served.allSatisfy { $0.kind == .register && $0.reply.answer == .attestationFailed })
                #expect(world.devices[Int(dev)].disk.credential.isNone)
                #expect(world.server.deviceRecord(dev) == nil)
                #expect(world.devices[Int(dev)].disk.indexedCount == 0)
                #expect(!world.devices[Int(dev)].disk.modelsPresent)
                // A refusal is not one of the three lock errors (D2).
                #expect(t.storeTimes(.lock).isEmpty)
            } else {
                #expect(t.served.contains { $0.kind == .query && $0.reply.answer == .ok })
                #expect(world.server.deviceRecord(dev)?.owner == WT.appA)
            }
        }
    }

    @Test("S6: a device belongs to the app that registered it")
    func deviceBelongsToApp() {
        // App B's install registers with app B; a later build with app A's key is refused.
        let world = WT.run(devices: 1, secondApp: true, secondCount: 1, [
            .at(0, WT.person(.launch)), .at(h, WT.update(WT.dev(0, group: 1), key: WT.keyA)),
            .at(2 * h, WT.person(.launch, WT.dev(0, group: 1))),
        ])
        #expect(world.server.deviceRecord(0)?.owner == WT.appA)
        #expect(world.server.deviceRecord(1)?.owner == WT.appB)
        let t = DeviceTrace(world, 1)
        #expect(t.firstLock?.answer == .appKeyMismatch)
        #expect(t.served.filter { $0.key == WT.keyA }.allSatisfy { $0.reply.answer == .appKeyMismatch })
    }
}

// MARK: - S5, D6: a pending app; S9: lost answers

extension WorldRuleTests {
    @Test("D6/S5: app_pending waits without locking; after Rollup approves, the next launch registers and indexes")
    func pendingThenApproved() {
        let world = WT.run(pending: true, [
            .at(0, WT.person(.launch)), .at(h, WT.person(.launch)),
            .at(2 * h, WT.dash(.rollupApp(.approve, app: WT.appA))), .at(3 * h, WT.person(.launch)),
        ])
        let t = DeviceTrace(world, 0)
        #expect(t.answers.filter { $0.kind == .register }.map(\.answer) == [.appPending, .appPending, .ok])
        #expect(t.storeTimes(.lock).isEmpty)
        #expect(!t.states.contains { $0.state.isAccessRevoked })
        let disk = world.devices[0].disk
        #expect(disk.credential == Credential(device: 0, generation: 1))
        #expect(disk.indexedCount == 400 && disk.modelDownloads == 1)
        #expect(t.stores(where: { if case .indexPhotos = $0 { true } else { false } }).allSatisfy { $0 > 3 * h })
    }

    @Test("S9: a register whose answer is lost still registered; the device registers again")
    func lostRegisterAnswer() {
        let world = WT.run([
            .at(0, .lostResponses(rateBp: 10_000, forMs: m)), .at(0, WT.person(.launch)), .at(h, WT.person(.launch)),
        ])
        let t = DeviceTrace(world, 0)
        let registers = t.served.filter { $0.kind == .register }
        #expect(registers.count == 2)
        let first = try? #require(registers.first)
        #expect(first?.reply == ServerReply(.ok, credential: Credential(device: 0, generation: 1), servedAt: first?.time ?? 0))
        #expect(t.answers.first?.answer == .timedOut)
        #expect(t.answers.first?.viaTimer == true)
        #expect(world.server.deviceRecord(0)?.generation == 2)
        #expect(world.devices[0].disk.credential == Credential(device: 0, generation: 2))
        #expect(world.devices[0].disk.indexedCount == 400)
        #expect(t.storeTimes(.lock).isEmpty)
    }

    @Test("S9/D7: a reset whose answer is lost deleted the record; the retry is answered and clears the pending reset")
    func lostResetAnswer() {
        let world = WT.run(WT.setup(until: 3 * h, [
            .at(0, WT.person(.launch)), .at(h, .lostResponses(rateBp: 10_000, forMs: 10 * m)), .at(h + m, WT.person(.reset)),
        ]))
        let t = DeviceTrace(world, 0)
        let resets = t.served.filter { $0.kind == .reset }
        #expect(resets.count >= 2)
        #expect(resets.allSatisfy { $0.reply.answer == .ok })
        #expect(world.server.deviceRecord(0) == nil)
        #expect(world.devices[0].disk.isEmpty && world.devices[0].disk.pendingReset.isNone)
    }
}
