import SimKit

/// The liveness rules with a bound in time, judged when their deadline passes: D10's
/// upload, owed at a launch, activation or run end once the SDK's stated back-off from its
/// last failed upload has run out; D7's delete of a reset's record, owed within the SDK's
/// stated back-off plus one timeout of time that counts (the app running, the device
/// online, the server up).
extension InvariantChecker {
    /// A deadline came up (`passDeadlines`): judge it if the debt is still owed.
    mutating func judgeObligation(_ due: Obligations.Entry) {
        let i = Int(due.device)
        switch due.kind {
        case .upload:
            // Stale reminders (paid, cancelled, or moved) are dropped.
            guard devices[i].uploadDueSec != 0, SimTime(devices[i].uploadDueSec) &* 1000 == due.deadline else { return }
            devices[i].uploadDueSec = 0
            let dev = devices[i]
            guard dev.processAlive, !dev.locked, !dev.disk.locked, dev.disk.reportsQueued > 0, dev.disk.hasCredential,
                  !dataLocked(due.device) else { return }   // P4: the queue cannot be read yet
            violate(.reportsNotLost, due.device, "\(dev.disk.reportsQueued) run report(s) were queued, the SDK unlocked and its upload back-off (\(DurationText.format(statement.reportRetryBackoffMaxMs)) at most, as it states) run out, but no upload was under way by \(clock(due.deadline)) (D10: an upload is under way at every launch, activation and run end)")
        case .resetDelete:
            owedResetConditionsChanged(due.device)
        }
    }

    // MARK: - D10: an upload at every launch, activation and run end

    /// At the end of a launch, activation or run-end step: with reports queued, the SDK
    /// unlocked and registered, no upload under way, and the stated back-off from the last
    /// failed upload run out, an upload is owed. The SDK may send it in the step or a little
    /// later (after its key check, say): it has two request timeouts.
    mutating func oweUploadIfDue(_ d: DeviceIndex) {
        let i = Int(d)
        let dev = devices[i]
        guard dev.uploadDueSec == 0, dev.processAlive, !dev.locked, !dev.disk.locked,
              !InvariantChecker.revoked(dev.state), dev.disk.reportsQueued > 0, dev.disk.hasCredential,
              !dev.reportAwaited(at: now) else { return }
        if dev.lastUploadFailSec != 0, now < (SimTime(dev.lastUploadFailSec) &* 1000).saturatingAdd(statement.reportRetryBackoffMaxMs) { return }
        let dueSec = now.saturatingAdd(2 * timeoutMs).secondsRoundedUp
        devices[i].uploadDueSec = dueSec
        obligations.add(SimTime(dueSec) &* 1000, d, .upload)
        resetNextDeadline()
    }

    // MARK: - D7: the reset's delete within the stated back-off plus a timeout

    /// `reset()` was called while the server held the record the SDK knew: from now, time
    /// that counts is summed until the record is gone.
    mutating func oweResetDelete(_ d: DeviceIndex, generation: UInt32) {
        if let k = owedResets.firstIndex(where: { $0.device == d && $0.generation == generation }) {
            refreshOwedReset(k)   // a second reset() naming it inherits the first one's count
            return
        }
        owedResets.append(OwedReset(device: d, generation: generation, owedFrom: now))
        refreshOwedReset(owedResets.count - 1)
    }

    /// The bound of D7: the SDK's stated retry back-off plus one request timeout.
    var resetDeleteBoundMs: SimTime { statement.resetRetryBackoffMaxMs.saturatingAdd(timeoutMs) }

    /// Whether D7's time counts for device `d` now: its app runs, it is online and not
    /// behind a portal (P6: the server never sees its requests), the server is up.
    func resetTimeCounts(_ d: DeviceIndex) -> Bool {
        devices[Int(d)].processAlive && now >= offlineUntil[Int(d)] && now >= serverDownUntil && now >= serverErrorsUntil
            && (portalUntil.isEmpty || now >= portalUntil[Int(d)])
    }

    /// A device's portal window opens or closes (P6): D7's time stops or counts again.
    mutating func portalRecord(_ d: DeviceIndex, _ r: Portal.Record) {
        let i = Int(d)
        if portalUntil.isEmpty { portalUntil = Array(repeating: 0, count: devices.count) }
        guard i < portalUntil.count else { return }
        owedResetConditionsChanged(d)   // sums the time before the change
        switch r {
        case .portal(_, let until): portalUntil[i] = until
        case .portalEnded: portalUntil[i] = now
        }
        owedResetConditionsChanged(d)
    }

    /// Brings owed reset `k` up to `now`: sums the time counted since its last look, judges
    /// it against the bound, and sets the reminder for when the bound would be reached.
    /// Called at every change of what counts (process, partition, server windows) and at
    /// its reminders, so the sum is exact.
    mutating func refreshOwedReset(_ k: Int) {
        var owed = owedResets[k]
        let d = owed.device
        // The record is gone: a reset named it, a registration superseded it (its trace no
        // longer lists it), or the server dropped or lost it.
        guard server.surelyHolds(Credential(device: d, generation: owed.generation)) else { owedResets.remove(at: k); return }
        if owed.since != LocalData.never { owed.countedMs = owed.countedMs.saturatingAdd(now - owed.since) }
        let bound = resetDeleteBoundMs
        if owed.countedMs > bound {
            owedResets.remove(at: k)   // reported once
            let newest = server.records[Int(d)].generation
            let left = newest != 0 && newest != owed.generation ? " (registration \(owed.generation), left behind beside the newer \(newest))" : " (registration \(owed.generation))"
            violate(.resetDeletesEverything, d, "reset() was called at \(clock(owed.owedFrom)) but the server still holds the device's record\(left) after \(DurationText.format(owed.countedMs)) of the app running online with the server up (D7: gone within the SDK's stated back-off, \(DurationText.format(statement.resetRetryBackoffMaxMs)), plus one timeout)")
            return
        }
        owed.since = resetTimeCounts(d) ? now : LocalData.never
        owedResets[k] = owed
        if owed.since != LocalData.never {
            obligations.add(now.saturatingAdd(bound - owed.countedMs), d, .resetDelete)
            resetNextDeadline()
        }
    }

    /// Something that decides whether D7's time counts changed for device `d`.
    mutating func owedResetConditionsChanged(_ d: DeviceIndex) {
        guard !owedResets.isEmpty else { return }
        for k in owedResets.indices.reversed() where owedResets[k].device == d { refreshOwedReset(k) }
    }

    // MARK: - Fault windows, for what counts

    /// A device's partition starts or ends.
    @usableFromInline @inline(never) mutating func fault(_ d: DeviceIndex, _ f: FaultRecord) {
        let i = Int(d)
        if case .clockSet(let offsetS, _)? = PhoneClock.Record(f) { wallClockSet(d, offsetMs: Int64(offsetS) * 1_000); return }
        if let r = BackgroundLimit.Record(f) { backgroundLimitRecord(d, r); return }
        if let r = DiskFull.Record(f) { diskFault(d, r); return }
        if let r = Reboot.Record(f) { rebootFault(d, r); return }
        if let k = Kill.Record(f) { killRecord(d, k); return }
        if let p = Portal.Record(f) { portalRecord(d, p); return }
        guard i < offlineUntil.count else { return }
        switch Offline.Record(f) {
        case .offline(let until)?:
            owedResetConditionsChanged(d)   // sums the time before the partition
            offlineUntil[i] = until
            owedResetConditionsChanged(d)   // and stops counting
        case .offlineEnded?:
            offlineUntil[i] = now
            owedResetConditionsChanged(d)
        case nil: return
        }
    }

    /// A server-wide fault window opens or closes: outages and 5xx stop D7's time.
    @usableFromInline @inline(never) mutating func serverFault(_ f: FaultRecord) {
        guard hasBegun else { return }
        // Sum every owed reset up to now under the old windows, then change them.
        for k in owedResets.indices.reversed() { refreshOwedReset(k) }
        if case .serverDown(let until)? = ServerDown.Record(f) {
            serverDownUntil = max(serverDownUntil, until)
        } else if case .serverErrors(_, _, let until)? = ServerErrors.Record(f) {
            serverErrorsUntil = max(serverErrorsUntil, until)
        } else if case .serverRestarted(let until)? = ServerRestart.Record(f) {
            // S10: the process is away until `until` (no server up for D7's liveness), and
            // what it acknowledged before now must outlive the restart.
            lastRestartAt = now
            restartAwayUntil = max(restartAwayUntil, until)
            serverDownUntil = max(serverDownUntil, until)
        } else if f != .serverFaultEnded {   // a window's end: time counts again from here
            return
        }
        for k in owedResets.indices.reversed() { refreshOwedReset(k) }
    }
}
