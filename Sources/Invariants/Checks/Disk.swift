import SimKit

/// P3, a full disk (`failed-write-loses-nothing`), judged from the `disk-full` records: each
/// write the disk refused (`DiskFull.Record.writeFailed`). Nothing here runs in a world
/// whose disks never filled: `diskFaults` stays empty and the hooks test only that.
extension InvariantChecker {
    /// What a device's full disks left owed, per device (`diskFaults`).
    struct DiskFaultTruth {
        /// Run reports whose queue write failed and that were not written since, in this process.
        var reportsOwed: UInt32 = 0
        /// An index write failed since the index last changed on the disk.
        var indexRefused = false
        /// The end of the device's full-disk window (0: never full).
        var fullUntil: SimTime = 0
    }

    /// A `disk-full` record of device `d`'s (a window, or a write refused in its step).
    mutating func diskFault(_ d: DeviceIndex, _ r: DiskFull.Record) {
        let i = Int(d)
        if diskFaults.isEmpty { diskFaults = Array(repeating: DiskFaultTruth(), count: devices.count) }
        guard i < diskFaults.count else { return }
        switch r {
        case .diskFull(let until):
            diskFaults[i].fullUntil = max(diskFaults[i].fullUntil, until)
        case .writeFailed(let op):
            step.writeFailed = true
            switch op {
            case .queueReport, .reportQueued:
                // D10 asks every run to end with its report: the SDK made it, the disk refused it.
                step.queuedReport = true
                step.reportsRefused &+= 1
                if devices[i].disk.reportsQueued > 0 || diskFaults[i].reportsOwed > 0 { hit(.writeFailedWithReportsQueued) }
            case .indexPhotos:
                diskFaults[i].indexRefused = true
            default: break
            }
        }
    }

    /// Whether device `d`'s step wrote to a full disk, or its disk is full now.
    func onAFullDisk(_ d: DeviceIndex) -> Bool {
        step.writeFailed || (Int(d) < diskFaults.count && now < diskFaults[Int(d)].fullUntil)
    }

    /// P3: an index write that starts past what the disk holds after one was refused: the
    /// refused photos were counted as indexed. `held` is the index on the disk.
    mutating func judgeIndexWrite(_ d: DeviceIndex, from: UInt32, count: UInt16, held: UInt32) {
        let i = Int(d)
        guard i < diskFaults.count, diskFaults[i].indexRefused else { return }
        if from > held {
            violate(.failedWriteLosesNothing, d, "indexed photos \(from)..<\(from + UInt32(count)) but the disk holds only \(held): photos \(held)..<\(from), whose write failed on a full disk, were counted as indexed and never written")
        }
        diskFaults[i].indexRefused = false
    }

    /// P3, at the end of a step that queued or was refused a run report, or of a reset: a
    /// report refused earlier in this process is written once the disk takes a report again.
    /// A reset deletes the reports kept in memory too (D7), and a new process starts owing none (P1).
    mutating func judgeOwedReports(_ d: DeviceIndex) {
        let i = Int(d)
        if diskFaults.isEmpty { diskFaults = Array(repeating: DiskFaultTruth(), count: devices.count) }
        guard i < diskFaults.count else { return }
        if step.isReset { diskFaults[i].reportsOwed = 0; return }
        let written = UInt32(step.reportsWritten), refused = UInt32(step.reportsRefused)
        // The run that ended in this step owes its own report, made (written or refused).
        let made: UInt32 = step.runEnded && written + refused > 0 ? 1 : 0
        var owed = diskFaults[i].reportsOwed &+ made
        let owedBefore = diskFaults[i].reportsOwed
        owed -= min(owed, written)
        if written > 0, refused == 0, owed > 0 {
            violate(.failedWriteLosesNothing, d, "the disk took \(written) run report(s) in this step, but \(owed) report(s) whose queue write had failed on a full disk earlier in this process (\(owedBefore) owed before the step) were never written: dropped from memory, they will never be uploaded")
            owed = 0
        }
        diskFaults[i].reportsOwed = owed
    }

    /// A new process owes no report of the last one's memory (P1).
    mutating func diskProcessStarted(_ d: DeviceIndex) {
        if Int(d) < diskFaults.count { diskFaults[Int(d)].reportsOwed = 0 }
    }
}

/// P4, protected data before the first unlock (`unreadable-is-not-absent`), judged from the
/// `reboot` records. Nothing here runs in a world where no phone restarted.
extension InvariantChecker {
    /// Whether device `d`'s protected data is locked now.
    @inline(__always) func dataLocked(_ d: DeviceIndex) -> Bool {
        !dataUnlockAt.isEmpty && Int(d) < dataUnlockAt.count && now < dataUnlockAt[Int(d)]
    }

    /// A `reboot` record of device `d`'s: a restart, or a write its locked data refused.
    mutating func rebootFault(_ d: DeviceIndex, _ r: Reboot.Record) {
        let i = Int(d)
        if dataUnlockAt.isEmpty {
            dataUnlockAt = Array(repeating: 0, count: devices.count)
            resetAwaitingUnlock = Array(repeating: false, count: devices.count)
        }
        guard i < dataUnlockAt.count else { return }
        switch r {
        case .rebooted(let at):
            dataUnlockAt[i] = max(dataUnlockAt[i], at)
            // D7's time counts only while the SDK can read its pending reset.
            if i < offlineUntil.count {
                owedResetConditionsChanged(d)
                offlineUntil[i] = max(offlineUntil[i], at)
                owedResetConditionsChanged(d)
            }
        case .writeRefused(let code):
            step.writeFailed = true
            if code == 1 {
                violate(.unreadableIsNotAbsent, d, "tried to delete a person's data while its protected data was locked after a restart (unlocked at \(clock(dataUnlockAt[i]))): a read that failed is not data absent or corrupt")
            }
        }
    }

    /// P4: reset() called before the unlock. SPEC leaves the SDK a choice: the call fails
    /// (nothing is reset, as the reference does), or it waits for the data and resets once
    /// it can read it (an async SDK's reset() awaiting its store). Nothing is reset yet; the
    /// reset is taken at the SDK's first reset write in a readable step (`takeDeferredReset`).
    mutating func resetCalledBeforeUnlock(_ d: DeviceIndex) {
        if Int(d) < resetAwaitingUnlock.count { resetAwaitingUnlock[Int(d)] = true }
    }

    /// P4: if device `d`'s process had reset() called before the unlock and not done, and
    /// its data can be read now, the write (or the reset request) being judged is that
    /// reset's: the truth resets here and the step is judged as a reset (D7). Returns
    /// whether it did. A write that something else explains (a due purge, Photos revoked, a
    /// `device_unknown`) is not taken for it.
    mutating func takeDeferredReset(_ d: DeviceIndex) -> Bool {
        let i = Int(d)
        guard i < resetAwaitingUnlock.count, resetAwaitingUnlock[i], !dataLocked(d), step.device == d else { return false }
        resetAwaitingUnlock[i] = false
        step.isReset = true
        resetCalled(d)
        return true
    }

    /// The reset() a process awaited is done with the first step that can read the data, or
    /// dies with the process: the call never returned. But when a kill cut that step short
    /// after a write (the SDK's own mark of the reset, which SimKit cannot read, may be on
    /// the disk), the next launch may finish the reset (P1), until its end.
    mutating func deferredResetEnds(_ d: DeviceIndex) {
        let i = Int(d)
        guard i < resetAwaitingUnlock.count else { return }
        if !kills.isEmpty, kills[i].deferredResetMayFollow { return }
        resetAwaitingUnlock[i] = false
    }

    /// P1 with P4: a kill cut short the first readable step of a process whose reset()
    /// waited for the data, after a write: the reset may follow at the next launch.
    mutating func deferredResetKilled(_ d: DeviceIndex) {
        let i = Int(d)
        guard i < resetAwaitingUnlock.count, resetAwaitingUnlock[i], !dataLocked(d) else { return }
        kills[i].deferredResetMayFollow = true
    }

    /// P4, a request of a phone that restarted (`dataUnlockAt` allocated): judged while its
    /// data is locked; after, a deferred reset's request takes it (not the retry of an
    /// older delete still owed, D7).
    @inline(never)
    mutating func requestAfterReboot(_ d: DeviceIndex, _ kind: RequestKind, _ credential: Credential) {
        if dataLocked(d) {
            judgeRequestWhileLocked(d, kind)
        } else if kind == .reset, credential.generation != devices[Int(d)].disk.pendingResetGeneration {
            _ = takeDeferredReset(d)
        }
    }

    /// P4: a request sent while the data is locked: a registration or a download says the
    /// SDK took what it could not read for absent.
    mutating func judgeRequestWhileLocked(_ d: DeviceIndex, _ kind: RequestKind) {
        switch kind {
        case .register:
            violate(.unreadableIsNotAbsent, d, "registered the device again while its protected data was locked after a restart (unlocked at \(clock(dataUnlockAt[Int(d)]))): it could not read its credential, which is not having none")
        case .modelDownload, .placeData:
            violate(.unreadableIsNotAbsent, d, "downloaded \(kind == .modelDownload ? "the models" : "the place data") while its protected data was locked after a restart: it could not read them, which is not having none")
        default: break
        }
    }
}
