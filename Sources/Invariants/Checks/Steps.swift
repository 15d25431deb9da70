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
    @usableFromInline @inline(never) mutating func processStarted(_ d: DeviceIndex) { devices[Int(d)].newProcess() }

    /// The app process died: what it awaited can no longer reach it.
    @usableFromInline @inline(never) mutating func processKilled(_ d: DeviceIndex) { devices[Int(d)].processEnded() }

    /// An indexing run ended: an effect of the current step.
    @usableFromInline @inline(never) mutating func runEnded(_ d: DeviceIndex) {
        step.runEnded = true
        step.acted = true
        devices[Int(d)].running = false
    }

    /// A lifecycle input or a timer starts a step.
    @usableFromInline @inline(never) mutating func beginStep(_ d: DeviceIndex, _ input: StepTruth.Input) {
        let i = Int(d)
        step.start(device: d, input: input, before: devices[i], at: now)
        switch input {
        case .lifecycle(.reset):
            // D7, D9: reset deletes everything, lock included; what is in flight is stale.
            if devices[i].awaiting != 0 { hit(.resetWhileRequestInFlight) }
            devices[i].reset()
            // D7, S8: the record the SDK knows of (its credential, or one a reset still owes)
            // must go; each launch retries until the server has deleted it.
            let knew = devices[i].disk.hasCredential || devices[i].disk.hasPendingReset
            if knew, server.records[i].generation != 0 { devices[i].resetOwed = true }
        case .lifecycle(.backgroundRun):
            hit(.backgroundRun)
        case .lifecycle(.launchInBackground):
            hit(.backgroundRun)
            devices[i].foreground = false
        case .lifecycle(.launch), .lifecycle(.becameActive):
            devices[i].foreground = true
        case .lifecycle(.wentToBackground):
            devices[i].foreground = false
        default: break
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
        let fresh = awaited && (viaTimer || now < sentAt &+ timeoutMs)
        step.start(device: d, input: .response(kind, answer, fresh: fresh), before: devices[i], at: now)
        guard fresh else { return }
        if answer == .ok { step.uploadCarriedUpTo = carried }
        let isCheck = kind == .check || kind == .register
        if isCheck {
            switch answer {
            case .offline: hit(.checkDuringPartition)
            case .serverError: hit(.checkAnswered5xx)
            case .timedOut: hit(.checkTimedOut)
            default: break
            }
        }
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
        if servedAt < devices[i].newestVerdictAt {
            step.olderVerdict = true
            if InvariantChecker.isLockError(answer) {
                step.olderLockError = true
                if devices[i].unlockedWithRequestInFlight, !devices[i].locked { hit(.staleRefusalAfterUnlock) }
            }
            hit(.staleResponseIgnored)
            return
        }
        devices[i].newestVerdictAt = servedAt
        // D1: the last answered check is the last verdict on the key that the SDK acted on
        // (an older one is ignored, D9), dated when it arrived.
        if isCheck { devices[i].lastAnswered = now }
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
        let dev = devices[i]
        if !dev.locked {
            devices[i].lock(at: now)
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

    /// The step is over: judge it by every rule, with the device truth as it now stands.
    /// Each family of rules is a call of its own, made only for a step that can break one
    /// of them (`mayBreakLocking`, `mayBreakData`, `mayBreakSchedule`; for D9 a stale step
    /// that acted): most steps can break few or none, and this stays small (no copy of the
    /// device truth, few registers to save). A stale step that did nothing is only counted.
    @usableFromInline @inline(never) mutating func endStep(_ d: DeviceIndex) {
        guard step.device == d else { return }
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
        let locking = mayBreakLocking(devices[Int(d)]), data = mayBreakData(devices[Int(d)]), schedule = mayBreakSchedule
        assert(skippedStepIsClean(d, locking: !locking, data: !data, schedule: !schedule))
        if locking { checkLocking(d) }
        if data { checkData(d) }
        if schedule { checkSchedule(d) }
        if step.isStale {
            if step.acted { checkStale(d) } else { hit(.staleResponseIgnored) }
        }
        // D4: any newest 200 may have unlocked the SDK; the truth follows it.
        if step.mayUnlock, !step.mustUnlock, devices[Int(d)].locked,
           !(InvariantChecker.revoked(devices[Int(d)].state) || devices[Int(d)].disk.locked) {
            devices[Int(d)].unlock()
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
        devices[i].sent(id, kind, at: now, timeoutMs: timeoutMs)
        effect(d, .requestSent(id: id, kind: kind, key: key, credential: credential))
        switch kind {
        case .check, .register: step.sentCheck = true
        case .reset:
            step.sentReset = true
            if !step.isReset { hit(.resetRetried) }
        case .runReport: step.sentReport = true
        default: break
        }
        if devices[i].locked, kind != .check, kind != .register, kind != .reset {
            violate(.lockedIsInert, d, "sent a \(kind) request while its access was stopped (locked since \(DurationText.clock(devices[i].lockedSince)))")
        }
    }

    @usableFromInline @inline(never) mutating func stateReported(_ d: DeviceIndex, _ s: SDKState) {
        devices[Int(d)].state = s
        effect(d, .state(s))
    }

    @usableFromInline @inline(never) mutating func callResult(_ d: DeviceIndex, _ call: APICall, _ outcome: CallOutcome) {
        if step.device == d { step.calledBack = outcome }
        effect(d, .callResult(call, outcome))
        if outcome == .threwAccessRevoked { hit(.lockedThrewOnCall) }
        if devices[Int(d)].locked, outcome == .returned {
            violate(.lockedIsInert, d, "\(call) returned a result while access was stopped; it must throw accessRevoked")
        }
    }

    @usableFromInline @inline(never) mutating func runStarted(_ d: DeviceIndex, background: Bool) {
        devices[Int(d)].running = true
        step.runStarted = true
        step.runStartedInBackground = background
        effect(d, .runStarted(background: background))
        if devices[Int(d)].locked {
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
