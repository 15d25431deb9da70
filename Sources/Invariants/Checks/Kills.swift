import SimKit

/// P1, a kill at any write: what the trace says a kill left on the disk, and what the next
/// launch must make of it (`kill-keeps-what-was-written`). Judged by SPEC P1 alone: a lock
/// that was written survives the next launch (the SDK reports it locked again, and keeps
/// the lock, without an answer: a launch handles none); a reset whose first write was made
/// is finished on the phone by the end of the next launch (its server part is judged by
/// `reset-deletes-everything` from the reset on, as for any reset); a purge whose first
/// write was made (the models deleted or the purge marked, while locked) likewise. Queued
/// reports (`reports-not-lost`) and indexing written (`unlock-resumes-unchanged`: no photo
/// indexed, nor model or place data downloaded, again) are judged across launches by
/// their own checkers. How an SDK orders its writes is its own choice: nothing here
/// depends on it, only on which writes the trace shows were made before the kill.
///
/// A step cut short by a kill leaves no `stepEnd`: it is not judged as a step that ended
/// (its lock, reset or purge is judged here instead), and a reset killed before its first
/// write never happened (the truth goes back to what it was before it).
struct KillTruth {
    /// The current step is a reset (or a purge: the models deleted or the purge marked,
    /// while locked) and has made a write.
    var resetWriteMade = false
    /// The current step has made a write.
    var writeMade = false
    var purgeWriteMade = false
    /// Owed at the end of the device's next launch.
    var owesReset = false
    var owesPurge = false
    var owesLock = false
    /// The time of a lock error whose step a kill cut short before the lock was written:
    /// a date the SDK may have written for it (`lockedSince`) stays a true one.
    var lockSeenAt: SimTime = LocalData.never
    /// When the kill came, at which write (0: at once), for the report.
    var killedAt: SimTime = 0
    var atWrite: UInt8 = 0
    var owesAny: Bool { owesReset || owesPurge || owesLock }
    /// A lock error that allowed a purge (D5) was in the step a kill cut short after its
    /// first write: the SDK may have written its own mark of the purge, which SimKit cannot
    /// read, so the next launch may finish that purge (P1), and is not blamed for it.
    var purgeMayFollow = false
    /// The process's launch came while its protected data was locked (P4): what a kill left
    /// owed is judged at the end of its first step after the unlock, where the launch ends.
    var launchAwaitsUnlock = false
    /// A reset() that waited for the data (P4) was in the step a kill cut short after a
    /// write: the next launch may finish it (`deferredResetKilled`), until its end.
    var deferredResetMayFollow = false
}

extension InvariantChecker {
    /// A device fault record of a kill (P1).
    mutating func killRecord(_ d: DeviceIndex, _ r: Kill.Record) {
        if kills.isEmpty { kills = Array(repeating: KillTruth(), count: devices.count) }
        guard case .killed(let n) = r else { return }
        let i = Int(d)
        kills[i].killedAt = now
        kills[i].atWrite = n
        if step.device == d {
            if kills[i].writeMade, step.isReset || step.freshLockError { hit(.killBetweenWrites) }
            if step.isReset, !kills[i].resetWriteMade, let saved = truthBeforeReset, saved.device == d {
                devices[i] = saved.truth   // no write made: the reset never happened (P1)
                if saved.owes != 0 { owedResets.removeAll { $0.device == d && $0.generation == saved.owes } }
            }
            // A lock error this step handled locks the truth at once; if the kill came before
            // the lock was written, the lock died with the process (P1): the next launch
            // asks again. Its date, if written, stays the SDK's first lock error seen.
            if step.freshLockError, !step.lockedBefore, devices[i].locked, !devices[i].disk.locked {
                kills[i].lockSeenAt = devices[i].lockedSince
                devices[i].unlock()
            }
            // A device_unknown this step handled owes a registration (D6); if the kill came
            // before the credential was deleted, the SDK never learnt it: its next request
            // with that credential hears it again.
            if step.freshDeviceUnknown, devices[i].disk.hasCredential { devices[i].registerOwed = false }
            if kills[i].resetWriteMade { kills[i].owesReset = true }
            if kills[i].purgeWriteMade { kills[i].owesPurge = true }
            if kills[i].writeMade, step.freshLockError, step.purgeAllowed { kills[i].purgeMayFollow = true }
            if kills[i].writeMade, !resetAwaitingUnlock.isEmpty { deferredResetKilled(d) }
            step.end()   // cut short: judged here, not as a step
        }
        if !parked.isEmpty { parked.removeAll { $0.device == d } }
        kills[i].resetWriteMade = false
        kills[i].purgeWriteMade = false
        kills[i].writeMade = false
        if devices[i].disk.locked, !kills[i].owesReset { kills[i].owesLock = true }
        truthBeforeReset = nil
    }

    /// A write of device `d`'s current step, in a run with kills.
    mutating func writeForKills(_ d: DeviceIndex, _ op: StoreOp) {
        let i = Int(d)
        guard step.device == d else { return }
        kills[i].writeMade = true
        if step.isReset { kills[i].resetWriteMade = true; return }
        switch op {
        case .markPurged, .deleteModels:
            if devices[i].disk.locked { kills[i].purgeWriteMade = true }
        default: break
        }
    }

    /// A step of device `d` ends (`endStep`), in a run with kills: its write flags are
    /// cleared, and the end of a launch judges what an earlier kill left owed.
    mutating func stepEndForKills(_ d: DeviceIndex) {
        let i = Int(d)
        kills[i].resetWriteMade = false
        kills[i].purgeWriteMade = false
        kills[i].writeMade = false
        let launchEnds = (step.isLaunch && !step.continues) || kills[i].launchAwaitsUnlock
        kills[i].launchAwaitsUnlock = false
        if launchEnds {
            kills[i].purgeMayFollow = false
            if kills[i].deferredResetMayFollow {
                kills[i].deferredResetMayFollow = false
                if i < resetAwaitingUnlock.count { resetAwaitingUnlock[i] = false }
            }
        }
        guard kills[i].owesAny, launchEnds else { return }
        let k = kills[i]
        kills[i].owesReset = false
        kills[i].owesPurge = false
        kills[i].owesLock = false
        let disk = devices[i].disk
        let when = "killed at \(clock(k.killedAt))\(k.atWrite == 0 ? "" : " at its write \(k.atWrite)")"
        if k.owesReset {
            var left: [String] = []
            if disk.indexedCount > 0 { left.append("an index of \(disk.indexedCount) photos") }
            if disk.modelsPresent { left.append("the models") }
            if disk.placeDataPresent { left.append("the place data") }
            if disk.reportsQueued > 0 { left.append("\(disk.reportsQueued) queued run reports") }
            if disk.hasCredential { left.append("the device credential") }
            if disk.locked { left.append("the lock") }
            if !left.isEmpty {
                violate(.killKeepsWhatWasWritten, d, "a reset() whose first write was made was \(when), and the next launch ended with \(left.joined(separator: ", ")) still on the disk; the reset must complete (D7)")
            }
        }
        if k.owesPurge {
            var left: [String] = []
            if disk.indexedCount > 0 { left.append("an index of \(disk.indexedCount) photos") }
            if disk.modelsPresent { left.append("the models") }
            if disk.hasCredential { left.append("the device credential") }
            if !left.isEmpty {
                violate(.killKeepsWhatWasWritten, d, "a purge whose first write was made was \(when), and the next launch ended with \(left.joined(separator: ", ")) still on the disk; the purge must complete (D5)")
            }
        }
        if k.owesLock, !k.owesReset {
            if !disk.locked {
                violate(.killKeepsWhatWasWritten, d, "its lock was on the disk when the app was \(when), and the next launch lifted it without an answer; a lock that was written survives (D3, D4)")
            } else if devices[i].state != .locked, devices[i].state != .purged {
                violate(.killKeepsWhatWasWritten, d, "its lock was on the disk when the app was \(when), and the next launch reported \(devices[i].state); a lock that was written survives (D3, D4)")
            }
        }
    }
}
