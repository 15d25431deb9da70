import SimKit

/// Gathering each SDK step from its records, and keeping the device truth up to date.
/// The judging at `stepEnd` is in the other files of this folder.
///
/// Hot path: every record of a run comes through here. A record reads its device's truth
/// in place (`devices[i].x`, or `let dev = devices[i]`, of which the optimiser loads only
/// the fields used) and changes it with as few writes as it can, most of them one mutating
/// call such as `devices[i].reset()`: each write into the array first checks that its
/// storage is not shared, and writing a whole copy back costs more than the fields changed.
extension InvariantChecker {
    // One-line handlers, kept out of line so that `dispatch` only jumps (see there).

    /// A new app process: nothing is awaited any more, request ids start again.
    @usableFromInline @inline(never) mutating func processStarted(_ d: DeviceIndex) {
        devices[Int(d)].newProcess()
        owedResetConditionsChanged(d)   // D7: time counts while the app runs
        if !resetAwaitingUnlock.isEmpty { deferredResetEnds(d) }
        if !diskFaults.isEmpty { diskProcessStarted(d) }
    }

    /// The app process died: what it awaited can no longer reach it.
    @usableFromInline @inline(never) mutating func processKilled(_ d: DeviceIndex) {
        devices[Int(d)].processEnded()
        if !resetAwaitingUnlock.isEmpty { deferredResetEnds(d) }
        if !ledgers.isEmpty { ledgers[d]?.carried.removeAll() }   // its uploads can no longer be answered
        owedResetConditionsChanged(d)
        if !kills.isEmpty { kills[Int(d)].launchAwaitsUnlock = false }   // its launch never ended
    }

    /// An indexing run ended: an effect of the current step.
    @usableFromInline @inline(never) mutating func runEnded(_ d: DeviceIndex) {
        step.runEnded = true
        step.acted = true
        devices[Int(d)].running = false
        devices[Int(d)].runInferred = false
        devices[Int(d)].checkedSinceRun = false
    }

    /// A lifecycle input or a timer starts a step.
    @usableFromInline @inline(never) mutating func beginStep(_ d: DeviceIndex, _ input: StepTruth.Input) {
        let i = Int(d)
        startStep(d, input)
        if !kills.isEmpty, kills[i].purgeMayFollow { step.purgeAllowed = true }   // P1: see KillTruth
        switch input {
        case .lifecycle(.reset) where dataLocked(d):
            // P4: before the first unlock after a restart the SDK can read and delete nothing:
            // the call fails, or waits for the data (docs/semantics.md). No reset yet.
            resetCalledBeforeUnlock(d)
        case .lifecycle(.reset):
            resetCalled(d)
        case .lifecycle(.backgroundRun):
            hit(.backgroundRun)
            devices[i].checkedSinceTrigger = false   // D1: a run it starts checks again
        case .lifecycle(.launchInBackground):
            hit(.backgroundRun)
            devices[i].foreground = false
            devices[i].checkedSinceTrigger = false
        case .lifecycle(.launch), .lifecycle(.becameActive):
            devices[i].foreground = true
            devices[i].checkedSinceTrigger = false
        case .lifecycle(.wentToBackground):
            devices[i].foreground = false
        default: break
        }
    }

    /// reset() deletes everything, lock included (D7); what is in flight is stale (D9).
    mutating func resetCalled(_ d: DeviceIndex) {
        let i = Int(d)
        if devices[i].awaiting != 0 { hit(.resetWhileRequestInFlight) }
        if !kills.isEmpty { truthBeforeReset = (d, devices[i], 0) }
        if !resetAwaitingUnlock.isEmpty { resetAwaitingUnlock[i] = false }   // a later reset() stands for it
        devices[i].reset()
        namedReportsReset(d)
        // D7: the credential it deletes never reaches the server again but in the delete.
        let named = devices[i].disk.hasCredential ? devices[i].disk.credentialGeneration : devices[i].disk.pendingResetGeneration
        if named != 0 { devices[i].deletedGeneration = named }
        // D7, S8: the record the SDK knows of (its credential, or one a reset still owes)
        // must go, within the SDK's stated back-off plus a timeout of time that counts, if
        // the server holds it: a record a newer registration superseded is gone already.
        if named != 0, server.surelyHolds(Credential(device: d, generation: named)) {
            let owedBefore = owedResets.contains { $0.device == d && $0.generation == named }
            oweResetDelete(d, generation: named)
            if !owedBefore, truthBeforeReset?.device == d { truthBeforeReset?.owes = named }
        }
    }

    /// An answer reaches the SDK and starts a step: judge it fresh or stale (D9) and, for a
    /// verdict, newest or older (D4), then update the truth. What the SDK must do is set on
    /// the step and judged at its end: lock, unlock, purge (against the truth of S2 at the
    /// moment the verdict was served, D5).
    @usableFromInline @inline(never) mutating func delivered(_ d: DeviceIndex, id: UInt32, kind: RequestKind, answer: Answer, viaTimer: Bool,
                                                             sentAt: SimTime, servedAt: SimTime, stoppedSince: SimTime) {
        let i = Int(d)
        let (awaited, carried) = devices[i].answerArrives(id, kind)
        if kind == .register, awaited { devices[i].registerAnswered(sentAt: sentAt, timeoutMs: timeoutMs) }
        let fresh = awaited && (viaTimer || now < sentAt &+ timeoutMs)
        startStep(d, .response(kind, answer, fresh: fresh))
        guard fresh else { return }
        if answer == .ok { step.uploadCarriedUpTo = carried }
        if kind == .runReport {
            devices[i].lastUploadFailSec = answer == .ok ? 0 : now.secondsRoundedUp   // D10's back-off
            if !ledgers.isEmpty { namedUploadAnswered(d, id, ok: answer == .ok) }
        } else if kind == .register, answer != .ok, devices[i].disk.reportsQueued > 0 {
            // D10: with reports queued, a registration may be the first leg of an upload (no
            // credential to upload with); the SDK may count its failure as a failed upload.
            devices[i].lastUploadFailSec = now.secondsRoundedUp
        }
        if kind == .query || kind == .profile, InvariantChecker.isLockError(answer) {
            devices[i].callLockError = true   // D6: the call may throw on its own answer
        }
        let isCheck = kind == .check || kind == .register
        if isCheck {
            switch answer {
            case .offline: hit(.checkDuringPartition)
            case .serverError: hit(.checkAnswered5xx)
            case .timedOut: hit(.checkTimedOut)
            case .notRollup:
                notRollupCheckAt[d] = now
                if devices[i].locked { hit(.notRollupToLockedCheck) }
            default: break
            }
        }
        // The reply's form is not in the `delivered` record: its status, for the coverage
        // of a bare 403, is read from the `served` record of the same request (`served`).
        if answer == .notRollup, notRollup403[d] == id, !devices[i].locked { hit(.bare403ToUnlocked) }
        if viaTimer, id == devices[i].lastServedID { hit(.responseLost) }
        if kind == .runReport, answer != .ok {
            devices[i].reportUploadFailed = true
            if answer == .deviceUnknown { hit(.reportUploadDeviceUnknown) }
        }
        if answer == .deviceUnknown { step.freshDeviceUnknown = true; hit(.reRegistration) }
        // D4, D9: a verdict older than one already delivered must change no lock. A reset's
        // 200 says nothing of access (S8); a lock error to it (from a server that breaks
        // S8) stops access like any other (D2).
        guard answer.isVerdict, kind != .reset || InvariantChecker.isLockError(answer) else { return }
        step.servedAt = servedAt
        step.newestBefore = devices[i].newestVerdictAt
        // D1: the last answered check is the last fresh verdict on a key check. An SDK may
        // count a verdict older than one it acted on (D9 ignores it) or not: the later
        // time is taken, which accepts both.
        if isCheck {
            devices[i].lastAnswered = now
            if !wallOffsetMs.isEmpty { wallOffsetAtCheckMs[i] = wallOffsetMs[i] }
        }
        if answer == .attestationFailed {
            // S6: a clone's refusal, no verdict of S2 on access; D4 may order by it or not.
            attestationFailedAt[d] = max(attestationFailedAt[d] ?? 0, servedAt)
            return
        }
        if servedAt < devices[i].newestVerdictAt {
            step.olderVerdict = true
            if InvariantChecker.isLockError(answer) {
                step.olderLockError = true
                if devices[i].unlockedWithRequestInFlight, !devices[i].locked { hit(.staleRefusalAfterUnlock) }
            }
            hit(.staleResponseIgnored)
            return
        }
        if !attestationFailedAt.isEmpty, let refusedAt = attestationFailedAt[d], servedAt < refusedAt {
            step.olderVerdict = true
            step.olderOnlyByAttestation = true
            if InvariantChecker.isLockError(answer) { step.olderLockError = true }
            if answer == .ok, devices[i].locked { step.mayUnlock = true }
            return
        }
        devices[i].newestVerdictAt = servedAt
        // D6: the server no longer knows the credential: the SDK registers again (a
        // registration still awaited stands for it).
        if answer == .deviceUnknown, kind != .reset, !devices[i].registerAwaited(at: now) {
            devices[i].registerOwed = true
        }
        if InvariantChecker.isLockError(answer) {
            judgeFreshLockError(d, kind: kind, answer: answer, servedAt: servedAt, stoppedSince: stoppedSince)
        } else if answer == .ok, devices[i].locked {
            let dev = devices[i]
            step.mayUnlock = true
            step.unlockFromPurge = dev.purged
            if isCheck {
                step.mustUnlock = true
                hit(.unlock)
                if now - dev.lockedSince >= 29 * Ms.day { hit(.unlockAfter29Days) }
                if !dev.foreground { hit(.unlockInBackground) }
                devices[i].unlock()
                if devices[i].awaiting != 0 { devices[i].unlockedWithRequestInFlight = true }
            }
        }
    }

    /// A fresh, newest lock error: the SDK must lock (D2) and, when access had in truth been
    /// stopped 30 days in a row when it was served, may purge, and must when the server's
    /// `stoppedSince` says so too (D5).
    mutating func judgeFreshLockError(_ d: DeviceIndex, kind: RequestKind, answer: Answer, servedAt: SimTime, stoppedSince: SimTime) {
        let i = Int(d)
        let isCheck = kind == .check || kind == .register
        step.freshLockError = true
        step.lockErrorKind = kind
        step.lockErrorAnswer = answer
        let dev = devices[i]
        if !dev.locked {
            devices[i].lock(at: now)
            step.lockServedAt = servedAt
            hitLock(answer, kind)
        }
        // D5: deleting is allowed when access had in truth been stopped 30 days in a row
        // when this verdict was served, and due when the server's word says so too.
        if !dev.purged, dev.stoppedThirtyDays(at: servedAt) {
            step.purgeAllowed = true
            if stoppedSince != ServerReply.none, stoppedSince <= servedAt,
               servedAt - stoppedSince >= InvariantChecker.purgeAfterMs {
                step.purgeDue = true
                if !isCheck { hit(.purgeDueFromNonCheck) }
            }
        }
    }

    mutating func hitLock(_ answer: Answer, _ kind: RequestKind) {
        switch answer {
        case .appKeyInvalid: hit(.lockByKeyInvalid)
        case .appDisabled: hit(.lockByDisabled)
        default: hit(.lockByMismatch)
        }
        switch kind {
        case .check: hit(.lockFromCheck)
        case .register: hit(.lockFromRegister)
        case .query: hit(.lockFromQuery)
        case .profile: hit(.lockFromProfile)
        case .placeData: hit(.lockFromPlaceData)
        case .modelDownload: hit(.lockFromModelDownload)
        case .runReport: hit(.lockFromRunReport)
        case .reset: break
        }
    }

    /// A step starts: a new one, or, when the device's last step ended with work in
    /// progress, the next step of its episode (a stale answer is judged alone, D9).
    @inline(__always)
    mutating func startStep(_ d: DeviceIndex, _ input: StepTruth.Input) {
        if !parked.isEmpty, let k = parked.firstIndex(where: { $0.device == d }) {
            if case .response(_, _, fresh: false) = input {} else {
                step = parked.remove(at: k)
                step.merge(input)
                return
            }
        }
        step.start(device: d, input: input, before: devices[Int(d)], at: now)
    }

    /// The step ended with work of the SDK's own in progress: it is judged with the next.
    /// A stale answer's step is judged alone (D9), whatever else is still in progress: the
    /// work left from before goes on in the episode it belongs to (`parked`).
    @usableFromInline @inline(never) mutating func stepUnsettled(_ d: DeviceIndex) {
        if step.device == d, !step.isStale { step.continues = true }
    }

    /// The step is over: judge it by every rule, with the device truth as it now stands.
    /// Each family of rules is a call of its own, made only for a step that can break one
    /// of them (`mayBreakLocking`, `mayBreakData`, `mayBreakSchedule`; for D9 a stale step
    /// that acted): most steps can break few or none, and this stays small (no copy of the
    /// device truth, few registers to save). A stale step that did nothing is only counted.
    @usableFromInline @inline(never) mutating func endStep(_ d: DeviceIndex) {
        guard step.device == d else { return }
        // P4: a step before the unlock read nothing; it is judged by unreadable-is-not-absent
        // alone. A reset() that waited for the data is done in the first step that can read
        // it (`resetAwaitingUnlock`, allocated with `dataUnlockAt`: one gate for both).
        if !dataUnlockAt.isEmpty {
            if dataLocked(d) {
                if !kills.isEmpty, step.isLaunch { kills[Int(d)].launchAwaitsUnlock = true }
                if step.input == .lifecycle(.backgroundRun) || step.input == .lifecycle(.launchInBackground) { hit(.backgroundReadBeforeUnlock) }
                step.end()
                return
            }
            if !step.continues { deferredResetEnds(d) }
        }
        if !wallOffsetMs.isEmpty, step.isBecameActive { wallClockActivation(d) }
        if !expiry.isEmpty {
            if isExpiryStep { expiryStepEnds(d) } else if step.runEnded, runEndedOnItsOwn { expiryRunCompleted(Int(d)) }
        }
        if !kills.isEmpty { stepEndForKills(d) }
        // A step that did nothing, of a device not locked, that was no activation, stale
        // answer or lock change, can break no rule below (each of their conditions needs
        // one of these flags: without them, what they read of the device is as it was, and
        // was judged at the step before): one test, no read of the device's truth. Most
        // such steps are the app going to the background.
        guard step.hasAny(StepTruth.mayBreakAnyMask) else {
            assert(skippedStepIsClean(d, locking: true, data: true, schedule: true))
            step.end()
            return
        }
        // An episode goes on: judged when the device's work in progress is done.
        if step.continues, step.merged < StepTruth.mergedMax {
            step.parkedAt = now
            parked.append(step)
            step.end()
            return
        }
        // A stale answer's step while the device's episode is still open (a wait for its
        // storage is out): judged by D9 alone; the device's state is the episode's, judged
        // when it ends.
        if step.isStale, !parked.isEmpty, parked.contains(where: { $0.device == d }) {
            if step.acted { checkStale(d) } else { hit(.staleResponseIgnored) }
            step.end()
            return
        }
        // D4: any newest 200 may have unlocked the SDK; the truth follows it before the step is
        // judged (a call that 200 answered may return, the SDK being unlocked).
        if step.mayUnlock, !step.mustUnlock, devices[Int(d)].locked,
           !(InvariantChecker.revoked(devices[Int(d)].state) || devices[Int(d)].disk.locked) {
            devices[Int(d)].unlock()
            if step.olderOnlyByAttestation { devices[Int(d)].newestVerdictAt = max(devices[Int(d)].newestVerdictAt, step.servedAt) }
        }
        // P3: reports refused by a full disk are written once it takes one again.
        if step.reportsRefused != 0 || (!diskFaults.isEmpty && (step.reportsWritten != 0 || step.isReset)) { judgeOwedReports(d) }
        let locking = mayBreakLocking(devices[Int(d)]), data = mayBreakData(devices[Int(d)]), schedule = mayBreakSchedule
        assert(skippedStepIsClean(d, locking: !locking, data: !data, schedule: !schedule))
        if locking { checkLocking(d) }
        if data { checkData(d) }
        if schedule { checkSchedule(d) }
        if step.isStale {
            if step.acted { checkStale(d) } else { hit(.staleResponseIgnored) }
        }
        // D6 and D10, owed at the end of a launch, activation, call or run's start or end.
        if step.hasAny(StepTruth.isActivationBit | StepTruth.isAPICallBit | StepTruth.runStartedBit | StepTruth.runEndedBit) {
            if devices[Int(d)].registerOwed { checkRegisteredAgain(d) }
            if step.hasAny(StepTruth.isActivationBit | StepTruth.runEndedBit) { oweUploadIfDue(d) }
        }
        step.end()
    }

    /// Debug builds: the prefilters are honest. The full checks that a prefilter let this
    /// step skip, run on a copy of the checker, find nothing (so a prefilter is never kept
    /// in step with its checks by a comment alone). The copy shares the device truth, which
    /// these checks only read when they find nothing.
    func skippedStepIsClean(_ d: DeviceIndex, locking: Bool, data: Bool, schedule: Bool) -> Bool {
        var copy = self
        if locking { copy.checkLocking(d) }
        if data { copy.checkData(d) }
        if schedule { copy.checkSchedule(d) }
        if copy.counts != counts {
            let found = InvariantID.allCases.filter { copy.count(of: $0) != count(of: $0) }.map(\.rawValue)
            print("prefilter skipped a step of device \(d) at \(now) that breaks \(found): \(copy.violations.last?.message ?? "")")
            return false
        }
        return true
    }

    /// Counts an effect of the current step; in a stale step, remembers the first one.
    @inline(__always)
    mutating func effect(_ d: DeviceIndex, _ event: TraceEvent) {
        guard step.device == d else { return }
        step.acted = true
        if step.isStale, step.firstStaleEffect == nil { step.firstStaleEffect = event }
    }

    @usableFromInline @inline(never) mutating func requestSent(_ d: DeviceIndex, id: UInt32, kind: RequestKind, key: KeyID, credential: Credential) {
        let i = Int(d)
        if !dataUnlockAt.isEmpty { requestAfterReboot(d, kind, credential) }   // P4
        devices[i].sent(id, kind, at: now, timeoutMs: timeoutMs)
        effect(d, .requestSent(id: id, kind: kind, key: key, credential: credential))
        switch kind {
        case .check, .register:
            step.sentCheck = true
            devices[i].checkedSinceTrigger = true
            devices[i].checkedSinceRun = true
            if kind == .register { devices[i].registerOwed = false }
        case .reset:
            step.sentReset = true
            if !step.isReset { hit(.resetRetried) }
        case .runReport:
            step.sentReport = true
            devices[i].uploadDueSec = 0   // D10: the upload owed is under way
            namedUploadSent(d, id)
        default: break
        }
        // D7: nothing reset() deleted reaches the server afterwards, but in its own delete.
        if kind != .reset, devices[i].deletedGeneration != 0, credential.device == d,
           credential.generation == devices[i].deletedGeneration {
            violate(.resetDeletesEverything, d, "sent a \(kind) request carrying the device credential that reset() deleted (generation \(credential.generation)); nothing reset() deleted may reach the server afterwards")
        }
        // D7, S8: a reset request outside reset() itself is the retry of a delete a reset()
        // asked for, so it names a registration some reset() named. One the SDK holds now
        // that no reset() named was made after the last reset() (which deleted the
        // credential): naming it deletes that newer registration, and the record the reset
        // named is never asked for again.
        if kind == .reset, !step.isReset, credential.device == d, devices[i].disk.hasCredential,
           credential.generation == devices[i].disk.credentialGeneration, credential.generation != devices[i].deletedGeneration {
            violate(.resetDeletesEverything, d, "sent a reset naming registration \(credential.generation), the one it holds now, made after reset() was called\(devices[i].deletedGeneration != 0 ? " for registration \(devices[i].deletedGeneration)" : ""): the retry of a reset names the registration reset() named (D7), and a late reset never deletes a newer registration of the device (S8)")
        }
        if devices[i].locked, kind != .check, kind != .register, kind != .reset {
            violate(.lockedIsInert, d, "sent a \(kind) request while its access was stopped (locked since \(DurationText.clock(devices[i].lockedSince)))")
        }
    }

    /// A state the SDK reports. An SDK that reports no run events has its runs seen here:
    /// one starts when the state becomes `indexing` and ends when it leaves it.
    @usableFromInline @inline(never) mutating func stateReported(_ d: DeviceIndex, _ s: SDKState) {
        let i = Int(d)
        let before = devices[i].state
        devices[i].state = s
        guard s != before else { return }   // the same state again changes nothing
        if s == .indexing, !devices[i].running {
            runStarted(d, background: !devices[i].foreground)
            devices[i].runInferred = true
        } else if s != .indexing, devices[i].runInferred {
            runEnded(d)
        }
        effect(d, .state(s))
    }

    @usableFromInline @inline(never) mutating func callResult(_ d: DeviceIndex, _ call: APICall, _ outcome: CallOutcome) {
        let i = Int(d)
        if step.device == d { step.calledBack = outcome }
        // D9: a stale answer changes nothing, but the call that awaited it has to end: ending
        // it as failed is not acting on the answer, nor is ending it with accessRevoked when
        // the SDK was locked already (D3: a locked SDK's calls throw it).
        if step.isStale, outcome == .failed
            || (outcome == .threwAccessRevoked && (devices[i].locked || devices[i].disk.locked || InvariantChecker.revoked(devices[i].state))) {
        } else {
            effect(d, .callResult(call, outcome))
        }
        if outcome == .threwAccessRevoked {
            hit(.lockedThrewOnCall)
            // D6: a call throws accessRevoked only while the SDK is locked, or when a lock
            // error answered its own request.
            let dev = devices[i]
            if !(dev.locked || dev.disk.locked || InvariantChecker.revoked(dev.state)) {
                if dev.callLockError {
                    devices[i].callLockError = false
                } else {
                    violate(.neverLockOnTransient, d, "\(call) threw accessRevoked though the SDK was not locked and no lock error answered it (D6: offline, a timeout, a 5xx, app_pending or device_unknown never make a call throw accessRevoked)")
                }
            }
        }
        // A 200 that may unlock (D4) lets the call return if the SDK did unlock: judged at
        // the step's end, once the truth has followed the SDK.
        if devices[i].locked, outcome == .returned, !(step.device == d && step.mayUnlock) {
            violate(.lockedIsInert, d, "\(call) returned a result while access was stopped; it must throw accessRevoked")
        }
    }

    @usableFromInline @inline(never) mutating func runStarted(_ d: DeviceIndex, background: Bool) {
        let i = Int(d)
        if devices[i].running, devices[i].runInferred {
            devices[i].runInferred = false   // the run seen by its state reports its start too
            return
        }
        devices[i].running = true
        devices[i].runInferred = false
        devices[i].runPhotos = devices[i].photoCount
        if !expiry.isEmpty { expiryRunStarted(i) }
        step.runStarted = true
        step.runStartedInBackground = background
        effect(d, .runStarted(background: background))
        if devices[i].locked {
            violate(.lockedIsInert, d, "started a\(background ? " background" : "n") indexing run while its access was stopped")
        }
    }

    @usableFromInline @inline(never) mutating func person(_ d: DeviceIndex, _ action: PersonAction, arg: UInt32) {
        let i = Int(d)
        switch action {
        case .revokePhotos:
            devices[i].photosAllowed = false
            if devices[i].locked { hit(.photosRevokedWhileLocked) }
        case .grantPhotos:
            devices[i].photosAllowed = true
        case .addPhotos:
            let (sum, overflow) = devices[i].photoCount.addingReportingOverflow(arg)
            devices[i].photoCount = overflow ? .max : sum
        case .update:
            // The update ships the app's current key (arg 0) or key arg - 1 (SPEC §4).
            guard hasBegun else { return }
            let app = Int(deviceApp[i])
            let current = app < server.apps.count ? server.apps[app].currentKey : devices[i].key
            devices[i].key = arg == 0 ? current : KeyID(truncatingIfNeeded: arg - 1)
            if server.seen[i].updates < .max { server.seen[i].updates += 1 }
            server.seen[i].lastUpdateAt = now
            retruth(d, at: now)
        default: break
        }
    }
}
