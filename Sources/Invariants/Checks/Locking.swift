import SimKit

/// Locking and unlocking, judged at the end of each step (D2, D3, D4, D6).
extension InvariantChecker {
    /// Whether the step can break a rule of `checkLocking` at all: each line below is what
    /// one or more rules there need, so most steps, even most of a locked device, skip the
    /// call. Keep the two in step when a rule is added. Whether access is revoked (the state
    /// reported, the disk's lock) changes only by the step's own records, each an effect
    /// (`acted`), so a step that did nothing skips comparing it.
    @inline(__always)
    func mayBreakLocking(_ dev: DeviceTruth) -> Bool {
        // D2, D3 (a fresh lock error); D4 (a check succeeded while locked; an older verdict).
        step.hasAny(StepTruth.freshLockErrorBit | StepTruth.mustUnlockBit | StepTruth.olderVerdictBit)
            // D6 (locked), D4 (unlocked): access revoked changed.
            || (step.acted && step.revokedBefore != (InvariantChecker.revoked(dev.state) || dev.disk.locked))
            // D3, inert while locked: a background task kept, or an API call.
            || (dev.locked && (dev.disk.backgroundScheduled || step.isAPICall))
            // D4: locked at an activation, with no check sent.
            || (step.lockedBefore && step.isActivation && !step.hasAny(StepTruth.sentCheckBit))
            // D4, D3: a call answered by a 200 that may unlock returned, the SDK still locked.
            || (dev.locked && step.hasAny(StepTruth.mayUnlockBit))
    }

    /// Judged at the end of a step that may break one of these rules (`mayBreakLocking`).
    @inline(never) mutating func checkLocking(_ d: DeviceIndex) {
        let dev = devices[Int(d)]   // the device's truth at the end of the step
        let revokedBefore = step.revokedBefore
        let revokedNow = InvariantChecker.revoked(dev.state) || dev.disk.locked

        // D6: only a fresh lock error may lock; D4, D9: and only one at least as new as
        // every verdict delivered before it.
        if !revokedBefore, revokedNow, !step.freshLockError, !step.isReset {
            if step.olderLockError, step.olderOnlyByAttestation {
                // S6, D4: older only than a clone's attestation_failed: the SDK may act on it.
                devices[Int(d)].lock(at: now)
                devices[Int(d)].newestVerdictAt = max(devices[Int(d)].newestVerdictAt, step.servedAt)
            } else if step.olderLockError {
                violate(.newestVerdictWins, d, "locked on a lock error served at \(clock(step.servedAt)), older than a verdict served at \(clock(step.newestBefore)) that it had already received")
            } else {
                violate(ruleOfNoVerdict(.neverLockOnTransient), d, "locked after \(inputName); only app_key_invalid, app_disabled or app_key_mismatch may lock" + noVerdictNote)
            }
        }
        // D2, D3: a fresh lock error locks at once, with lockedSince at the first one (unless
        // a newer 200 later in the same episode unlocked it again).
        if step.freshLockError, dev.locked {
            let kind = step.lockErrorKind, answer = step.lockErrorAnswer
            if !(InvariantChecker.revoked(dev.state) && dev.disk.locked) {
                violate(.lockOnRevocation, d, "got \(answer) to its \(kind) request but did not lock (it reports \(dev.state))")
            } else if !step.lockedBefore {
                // The lock error that stops access: lockedSince is "the time of the first
                // such response" (D3), read as its receipt or its `servedAt`: SPEC names
                // neither, so both are accepted. Not judged on an SDK already locked while
                // access was not stopped: that wrong lock was reported when it happened, and
                // its lockedSince follows from it (one bug, one violation).
                if !step.revokedBefore, statement.recordsLockedSince, dev.disk.lockedSince != dev.lockedSince,
                   dev.disk.lockedSince != step.lockServedAt, kills.isEmpty || dev.disk.lockedSince != kills[Int(d)].lockSeenAt {
                    violate(.lockOnRevocation, d, "lockedSince is \(clock(dev.disk.lockedSince)) but access stopped at \(clock(dev.lockedSince)) (served at \(clock(step.lockServedAt))), the first lock error since access was last granted")
                }
            } else if step.revokedBefore, statement.recordsLockedSince, dev.disk.lockedSince != step.diskBefore.lockedSince {
                // Later lock errors keep it (D3).
                violate(.lockOnRevocation, d, "lockedSince moved from \(clock(step.diskBefore.lockedSince)) to \(clock(dev.disk.lockedSince)) at a later lock error; the first lock error since access was last granted (\(clock(dev.lockedSince))) sets it, later ones keep it")
            }
        }
        // D4: access stays stopped until a 200 newer than the lock comes.
        if dev.locked, revokedBefore, !revokedNow, !step.isReset, !step.mayUnlock {
            if step.olderVerdict {
                violate(.newestVerdictWins, d, "unlocked on a 200 served at \(clock(step.servedAt)), older than the verdict served at \(clock(step.newestBefore)) that locked it")
            } else {
                violate(ruleOfNoVerdict(.lockOnRevocation), d, "unlocked after \(inputName), though no 200 newer than its lock had come" + noVerdictNote)
            }
        }
        // D3: inert while locked.
        if dev.locked, dev.disk.backgroundScheduled {
            violate(.lockedIsInert, d, "kept its background task registered while its access was stopped")
        }
        if dev.locked, step.mayUnlock, !step.isAPICall, step.calledBack == .returned {
            violate(.lockedIsInert, d, "a call returned a result on a 200 while the SDK stayed locked; it must throw accessRevoked")
        }
        if dev.locked, step.isAPICall, step.calledBack != .threwAccessRevoked {
            let call = if case .lifecycle(let input) = step.input { "\(input)" } else { "a call" }
            violate(.lockedIsInert, d, "\(call) while locked \(step.calledBack.map { "ended \($0)" } ?? "did not end"); it must throw accessRevoked")
        }
        // D4: a locked SDK checks at each launch and activation, and unlocks on success.
        // A check already in flight does not stand in for it: it may have been judged
        // before access came back, and the page says the SDK checks again every time.
        if step.lockedBefore, step.isActivation, !step.sentCheck {
            violate(.lockedChecksOnActivation, d, "was locked and \(inputName) without checking its key\(step.checkInFlightBefore ? " (a check sent earlier was still in flight, but it may have been judged before access came back)" : "")")
        }
        if step.mustUnlock, revokedNow, !dev.locked {
            violate(.lockedChecksOnActivation, d, "a key check succeeded (200 served at \(clock(step.servedAt)), newer than its lock) while it was locked, but it stayed locked")
        }
    }

    /// D6: after a fresh, newest `device_unknown` the SDK registers again, at the latest at
    /// its next call or run: judged at the end of the step of a query or profile call, of a
    /// run's start, or (locked) of an activation, whose key check must then be a
    /// registration (D4). Nothing is owed once the SDK holds a credential the server knows.
    mutating func checkRegisteredAgain(_ d: DeviceIndex) {
        let i = Int(d)
        let dev = devices[i]
        // A clone's credential is a copy the world puts on its disk at each launch: not one
        // its SDK registered, so not one it owes a registration for.
        if !deviceGenuine[i] || (dev.disk.hasCredential && server.records[i].generation == dev.disk.credentialGeneration) {
            devices[i].registerOwed = false
            return
        }
        let what: String
        if step.isServerCall, !step.lockedBefore {
            let input = if case .lifecycle(let i) = step.input { "\(i)" } else { "query or profile" }
            what = "its next call (\(input))"
        } else if step.runStarted, !step.lockedBefore {
            what = "the start of its next indexing run"
        } else if step.isActivation, step.lockedBefore {
            what = "its next key check, at \(inputName) while locked"
        } else {
            return
        }
        devices[i].registerOwed = false   // reported once
        violate(.registersAgainWhenUnknown, d, "the server answered device_unknown (it no longer knows the device's credential), and by \(what) the SDK had not registered again (D6: it registers again, at the latest at its next call or run)")
    }

    /// Whether the SDK reports `.failed(.accessRevoked)`: locked, with or without its data.
    /// It is `SDKState.isAccessRevoked` (a test holds them equal) written as a `switch`,
    /// which the optimiser inlines; the property calls the enum's derived `==`.
    @inline(__always)
    static func revoked(_ state: SDKState) -> Bool {
        switch state {
        case .locked, .purged: true
        case .unconfigured, .indexing, .idle: false
        }
    }

    /// Whether `answer` is a lock error (`app_key_invalid`, `app_disabled`,
    /// `app_key_mismatch`). It is `Answer.isLockError` (a test holds them equal) written as
    /// a `switch`, which the optimiser inlines; the property is a call of the enum's `==`.
    @inline(__always)
    static func isLockError(_ answer: Answer) -> Bool {
        switch answer {
        case .appKeyInvalid, .appDisabled, .appKeyMismatch: true
        case .ok, .appPending, .deviceUnknown, .attestationFailed, .serverError, .timedOut, .offline, .notRollup: false
        }
    }

    func clock(_ t: SimTime) -> String { t == LocalData.never ? "never" : DurationText.clock(t) }
}
