import SimKit

/// Gathering each SDK step from its records, and keeping the device truth up to date.
/// The judging at `stepEnd` is in the other files of this folder.
extension InvariantChecker {
    mutating func beginStep(_ d: DeviceIndex, _ input: StepTruth.Input) {
        let dev = devices[Int(d)]
        step = StepTruth()
        step.device = d
        step.input = input
        step.stateBefore = dev.state
        step.diskBefore = dev.disk
        step.lockedBefore = dev.locked
        step.lastAnsweredBefore = dev.lastAnswered
        step.checkInFlightBefore = dev.checkInFlight != 0
        switch input {
        case .lifecycle(.reset):
            // D7, D9: reset deletes everything, lock included; what is in flight is stale.
            if dev.awaiting != 0 { hit(.resetWhileRequestInFlight) }
            devices[Int(d)].forgetAwaited()
            devices[Int(d)].locked = false
            devices[Int(d)].lockedSince = LocalData.never
            devices[Int(d)].purged = false
            devices[Int(d)].lastAnswered = LocalData.never
        case .lifecycle(.backgroundRun), .lifecycle(.launchInBackground):
            hit(.backgroundRun)
        default: break
        }
    }

    /// An answer reaches the SDK: judge it fresh or stale (D9), then update the truth.
    mutating func delivered(_ d: DeviceIndex, id: UInt32, kind: RequestKind, answer: Answer, viaTimer: Bool, sentAt: SimTime) {
        let i = Int(d)
        let awaited = devices[i].take(id)
        let fresh = awaited && (viaTimer || now < sentAt &+ timeoutMs)
        let carried = kind == .runReport ? devices[i].takeUpload(id) : nil
        beginStep(d, .response(kind, answer, fresh: fresh))
        guard fresh else { return }
        if answer == .ok { step.uploadCarriedUpTo = carried }
        let isCheck = kind == .check || kind == .register
        if isCheck, answer.isVerdict { devices[i].lastAnswered = now }
        if isCheck {
            switch answer {
            case .offline: hit(.checkDuringPartition)
            case .serverError: hit(.checkAnswered5xx)
            case .timedOut: hit(.checkTimedOut)
            default: break
            }
        }
        if viaTimer, id == devices[i].lastServedID { hit(.responseLost) }
        if kind == .runReport, answer != .ok { devices[i].reportUploadFailed = true }
        if answer == .deviceUnknown { step.freshDeviceUnknown = true; hit(.reRegistration) }
        if answer.isLockError {
            step.freshLockError = true
            if !devices[i].locked {
                step.locking = true
                devices[i].locked = true
                devices[i].lockedSince = now
                devices[i].purged = false
                devices[i].indexAtLock = devices[i].disk.indexedCount
                devices[i].modelsAtLock = devices[i].disk.modelsPresent
                hitLock(answer, kind)
            } else if isCheck, !devices[i].purged, now >= devices[i].lockedSince &+ InvariantChecker.purgeAfterMs {
                step.purgeDue = true
            }
        } else if answer == .ok, isCheck, devices[i].locked {
            step.mustUnlock = true
            step.unlockFromPurge = devices[i].purged
            hit(.unlock)
            if now - devices[i].lockedSince >= 29 * Ms.day { hit(.unlockAfter29Days) }
            devices[i].locked = false
            devices[i].lockedSince = LocalData.never
            devices[i].purged = false
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

    mutating func endStep(_ d: DeviceIndex) {
        guard step.device == d else { return }
        checkLocking(d)
        checkData(d)
        checkSchedule(d)
        checkStale(d)
        step = StepTruth()
    }

    /// Counts an effect of the current step; in a stale step, remembers the first one.
    mutating func effect(_ d: DeviceIndex, _ describe: @autoclosure () -> String) {
        guard step.device == d else { return }
        step.effects += 1
        if step.isStale, step.firstStaleEffect == nil { step.firstStaleEffect = describe() }
    }

    mutating func requestSent(_ d: DeviceIndex, id: UInt32, kind: RequestKind) {
        let i = Int(d)
        devices[i].sent(id, kind)
        effect(d, "sent a \(kind) request")
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

    mutating func stateReported(_ d: DeviceIndex, _ s: SDKState) {
        devices[Int(d)].state = s
        effect(d, "reported the state \(s)")
    }

    mutating func callResult(_ d: DeviceIndex, _ call: APICall, _ outcome: CallOutcome) {
        if step.device == d { step.calledBack = outcome }
        effect(d, "\(call) \(outcome)")
        if outcome == .threwAccessRevoked { hit(.lockedThrewOnCall) }
        if devices[Int(d)].locked, outcome == .returned {
            violate(.lockedIsInert, d, "\(call) returned a result while access was stopped; it must throw accessRevoked")
        }
    }

    mutating func runStarted(_ d: DeviceIndex, background: Bool) {
        step.runStarted = true
        step.runStartedInBackground = background
        effect(d, "started an indexing run")
        if devices[Int(d)].locked {
            violate(.lockedIsInert, d, "started a\(background ? " background" : "n") indexing run while its access was stopped")
        }
    }

    mutating func person(_ d: DeviceIndex, _ action: PersonAction) {
        switch action {
        case .revokePhotos:
            devices[Int(d)].photosAllowed = false
            if devices[Int(d)].locked { hit(.photosRevokedWhileLocked) }
        case .grantPhotos:
            devices[Int(d)].photosAllowed = true
        default: break
        }
    }
}
