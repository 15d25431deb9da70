import Testing
@testable import SimKit

// Whole-trace properties of a realistic world: the standard workload (rotation with a
// 30-day grace at 6 d, half the devices updated at 8 d, disable at 10 d and enable at
// 12 d, Rollup revoke at 40 d and restore at 45 d, partitions, 5xx, timeouts, outages),
// 200 devices over 60 days, every record kept.

extension WorldRuleTests {
    @Test("Workload: the server, the SDKs and the engine keep the rules over 60 days", arguments: [1, 2] as [UInt64])
    func standardWorkloadKeepsTheRules(seed: UInt64) {
        let setup = StandardWorkload.setup(seed: seed, devices: 200, days: 60)
        var world = World<ReferenceSDK, TraceRecorder>(setup: setup, observer: TraceRecorder(limit: 20_000_000))
        world.run()
        #expect(world.observer.dropped == 0)
        #expect(!world.stoppedByBudget)
        let n = setup.deviceCount
        let graceEnd = 6 * Ms.day + 30 * Ms.day

        var disabled = false, revoked = false
        var locked = [Bool](repeating: false, count: n)
        var indexed = [UInt32](repeating: 0, count: n)
        var downloads = [Int](repeating: 0, count: n)
        var seen = [Set<UInt32>](repeating: [], count: n)
        var staleStep = [Bool](repeating: false, count: n)
        var lastDelivery = [TraceEvent?](repeating: nil, count: n)
        var launchedAt = [SimTime?](repeating: nil, count: n)
        var violations: [String] = []
        var servedOK = 0, stale = 0, lockCount = 0, unlockCount = 0
        func fail(_ r: TraceRecord, _ what: String) {
            if violations.count < 20 { violations.append("t=\(r.time) \(world.facts.deviceName(r.device)): \(what)") }
        }

        for r in world.observer.records {
            if r.device == Event.world {
                if case .dashboard(let action, let applied) = r.event, applied {
                    switch action {
                    case .disable: disabled = true
                    case .enable: disabled = false
                    case .rollupApp(.revoke, _): revoked = true
                    case .rollupApp(.restore, _): revoked = false
                    default: break
                    }
                }
                continue
            }
            let i = Int(r.device)
            if let t = launchedAt[i], t != r.time { fail(r, "launch at \(t) sent no key check"); launchedAt[i] = nil }
            switch r.event {
            case .processStarted:
                seen[i].removeAll()
                launchedAt[i] = r.time
            case .requestSent(_, let kind, _, _):
                if kind == .check || kind == .register { launchedAt[i] = nil }
                // D3: locked, nothing but key checks (and a person's reset) goes out.
                if locked[i], kind != .check, kind != .register, kind != .reset { fail(r, "\(kind) sent while locked") }
            case .served(_, _, let key, _, let reply, _) where reply.answer == .ok:
                servedOK += 1
                // S1, S4, S5, S3: nothing served while the app is stopped or with an expired key.
                if disabled || revoked { fail(r, "served while the app is stopped") }
                if key == 0, r.time >= graceEnd { fail(r, "old key served after its grace") }
            case .delivered(let id, _, _, let viaTimer, _, _, _):
                lastDelivery[i] = r.event
                if !seen[i].insert(id).inserted, !viaTimer { staleStep[i] = true; stale += 1 }
            case .timerFired:
                lastDelivery[i] = nil
            case .stepEnd:
                staleStep[i] = false
                lastDelivery[i] = nil
            case .store(let op):
                switch op {
                case .lock:
                    lockCount += 1
                    locked[i] = true
                    // D2, D6: only the three lock errors lock.
                    guard case .delivered(_, _, let answer, false, _, _, _)? = lastDelivery[i], answer.isLockError else {
                        fail(r, "locked by \(String(describing: lastDelivery[i]))"); break
                    }
                case .unlock:
                    unlockCount += 1
                    locked[i] = false
                case .indexPhotos(let from, let count):
                    // D4: the index continues where it stood; no photo twice.
                    if from != indexed[i] { fail(r, "indexPhotos from \(from), index at \(indexed[i])") }
                    indexed[i] = from + UInt32(count)
                    if locked[i] { fail(r, "indexed while locked") }
                case .deleteIndex:
                    indexed[i] = 0
                case .saveModels:
                    downloads[i] += 1
                    if downloads[i] > 1 { fail(r, "models downloaded again") }
                case .deleteModels:
                    downloads[i] = 0
                default: break
                }
            default: break
            }
            // D9: a stale answer has no effect.
            if staleStep[i], r.event.isEffect { fail(r, "effect of a stale answer: \(r.event)") }
        }
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
        // The run did the interesting things.
        #expect(servedOK > 1_000)
        #expect(lockCount > 100 && unlockCount > 50)
        #expect(stale > 0)
        #expect(world.devices.filter { $0.disk.indexedCount == $0.photoCount }.count > 100)
        // Devices left on the old key are locked at the end (every device runs in the
        // background daily, so each has heard its verdict); updated ones are not.
        for (i, dev) in world.devices.enumerated() {
            #expect(dev.disk.locked == (dev.key == 0), "device \(i)")
            #expect(dev.disk.indexedCount == indexed[i])
        }
        #expect(world.server.checkInvariants() == nil)
    }
}

extension WorldRuleTests {
    /// Jittered statements queue their devices' moments as sorted runs (`pushRun`); pushed
    /// one by one instead, the trace must be the same record for record.
    @Test("Workload: runs of jittered moments change no record", arguments: [(1, 300), (2, 1_000)] as [(UInt64, UInt32)])
    func runsChangeNoRecord(seed: UInt64, devices: UInt32) {
        let setup = StandardWorkload.setup(seed: seed, devices: devices, days: 20)
        var withRuns = World<ReferenceSDK, NoObserver>(setup: setup, observer: NoObserver())
        var oneByOne = World<ReferenceSDK, NoObserver>(setup: setup, observer: NoObserver())
        oneByOne.queue.takesRuns = false
        withRuns.run()
        oneByOne.run()
        #expect(withRuns.eventsHandled == oneByOne.eventsHandled)
        #expect(withRuns.fingerprint.records == oneByOne.fingerprint.records)
        #expect(withRuns.fingerprint == oneByOne.fingerprint)
        #expect(withRuns.queue.runsTaken > 50 && oneByOne.queue.runsTaken == 0, "runs taken: \(withRuns.queue.runsTaken)")
    }
}
