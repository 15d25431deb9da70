import Testing
import SimKit
import Invariants

/// Readings of SPEC that an outside SDK took and SimKit once judged as bugs (issue 45; each
/// found by `Examples/BlobSDK`'s campaign and shrunk there). Each test: the outside
/// reading and the reference's pass, and the bug beside them still fires.
@Suite struct OutsideReadingsTests {
    let s = Ms.second, m = Ms.minute, h = Ms.hour, d = Ms.day
    let c = cred(0, 1)

    @Test("registers-again-when-unknown: a registration still awaited stands, whatever key check went out after it (D6)")
    func registrationInFlightStands() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.record(2 * h, 0, .forgotDevice)
            // The SDK registers (for reasons of its own); a key check goes out before the
            // registration is answered and gets device_unknown: the registration awaited is
            // the one D6 asks for.
            t.step(at: 3 * h, .input(.query)) { if !bug { $0.sent(5, .register) } }
            t.step(at: 3 * h + s, .input(.backgroundRun)) { $0.sent(6, .check, credential: c) }
            t.served(at: 3 * h + s + 100, 6, .check, credential: c, .deviceUnknown)
            t.delivered(at: 3 * h + s + 200, 6, .check, .deviceUnknown, sentAt: 3 * h + s)
            t.step(at: 3 * h + 2 * s, .input(.query)) { $0.call(.query, .failed) }
            return t
        }
        expectFires(run(bug: true), .registersAgainWhenUnknown, at: 3 * h + 2 * s, mentions: ["device_unknown", "next call (query)"])
        expectQuiet(run(bug: false))
    }

    @Test("key-check-schedule: a run seen only by its state may follow the check of any trigger since the last run (D1)")
    func inferredRunFollowsAnyTriggersCheck() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            // The activation sends its run's check; a background task fires while it is in
            // flight and starts nothing; the run shows `indexing` once the check is answered.
            t.step(at: h, .input(.becameActive)) { if !bug { $0.sent(5, .check, credential: c) } }
            t.step(at: h + 50, .input(.backgroundRun))
            if !bug { t.served(at: h + 100, 5, .check, credential: c, .ok) }
            t.step(at: h + 200, bug ? .timer(.indexChunk) : .delivered(5, .check, .ok, sentAt: h)) {
                if !bug { $0.store(.setLastAnsweredCheck(h + 200)) }
                $0.state(.indexing)
            }
            return t
        }
        expectFires(run(bug: true), .keyCheckSchedule, at: h + 200, mentions: ["without checking its key"])
        expectQuiet(run(bug: false))
    }

    @Test("reports-not-lost: a registration that failed with reports queued may start the upload back-off (D10)")
    func failedRegistrationBacksOffUploads() {
        func run(bug: Bool, activationAt: SimTime) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.record(2 * h, 0, .forgotDevice)
            // A run's check gets device_unknown: the run ends with its report queued, the SDK
            // drops its credential and, to upload, registers first; the registration fails
            // (a 5xx): by the SDK's count, a failed upload.
            t.step(at: 3 * h, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(5, .check, credential: c) }
            t.served(at: 3 * h + 100, 5, .check, credential: c, .deviceUnknown)
            t.delivered(at: 3 * h + 200, 5, .check, .deviceUnknown, sentAt: 3 * h) {
                $0.runEnded(); $0.store(.queueReport, .deleteCredential); $0.state(.idle); $0.sent(6, .register)
            }
            t.served(at: 3 * h + 300, 6, .register, .serverError)
            t.delivered(at: 3 * h + 400, 6, .register, .serverError, sentAt: 3 * h + 200)
            // Registered again an hour later; the SDK's upload back-off (6 h, stated) counts
            // from the failed registration.
            t.step(at: 4 * h, .input(.becameActive)) { $0.sent(7, .register) }
            t.served(at: 4 * h + 100, 7, .register, .ok, issued: cred(0, 2))
            t.delivered(at: 4 * h + 200, 7, .register, .ok, sentAt: 4 * h) { $0.store(.setLastAnsweredCheck(4 * h + 200), .setCredential(cred(0, 2))) }
            t.step(at: 5 * h, .input(.becameActive)) { $0.sent(8, .check, credential: cred(0, 2)) }
            t.served(at: 5 * h + 100, 8, .check, credential: cred(0, 2), .ok)
            t.delivered(at: 5 * h + 200, 8, .check, .ok, sentAt: 5 * h) { $0.store(.setLastAnsweredCheck(5 * h + 200)) }
            t.step(at: activationAt, .input(.becameActive)) { if !bug { $0.sent(9, .runReport, credential: cred(0, 2)) } }
            t.checker.finish(at: activationAt + 5 * m)
            return t
        }
        expectQuiet(run(bug: true, activationAt: 8 * h))   // within 6 h of the failed registration
        expectFires(run(bug: true, activationAt: 10 * h), .reportsNotLost, at: 10 * h + 5 * m, mentions: ["no upload was under way", "back-off"])
        expectQuiet(run(bug: false, activationAt: 10 * h))
    }

    @Test("newest-verdict-wins: a verdict older only than a clone's attestation_failed may be acted on or not (S6, D4)", arguments: [false, true])
    func attestationFailedIsNoVerdictOfS2(locks: Bool) {
        // Device 1 is a clone. Its launch's check is answered app_disabled (served at +100 ms,
        // delivered late); a registration sent meanwhile is refused attestation_failed,
        // served later but delivered first. Ordering D4 by S2's verdicts, the lock error is
        // the newest: the SDK locks. Ordering by every answer, it is older: the SDK does not.
        var t = HandTrace(.oneApp(devices: 1, clones: 1))
        t.ready()
        t.dashboard(at: h, .disable(app: 0))
        t.processStarted(at: h, device: 1)
        t.step(at: h, device: 1, .input(.launch)) { $0.state(.idle); $0.sent(1, .register) }
        t.served(at: h + 100, device: 1, 1, .register, .appDisabled)
        t.dashboard(at: h + 500, .enable(app: 0))
        t.step(at: h + s, device: 1, .input(.query)) { $0.sent(2, .register) }
        t.served(at: h + s + 100, device: 1, 2, .register, .attestationFailed)
        t.delivered(at: h + s + 200, device: 1, 2, .register, .attestationFailed, sentAt: h + s) { $0.call(.query, .failed) }
        t.delivered(at: h + 2 * s, device: 1, 1, .register, .appDisabled, sentAt: h) {
            if locks { $0.store(.setLockedSince(h + 2 * s), .lock); $0.state(.locked) }
        }
        expectQuiet(t)
    }

    @Test("locked-is-inert: a call answered by a 200 newer than the lock may unlock the SDK and return (D4)", arguments: [false, true])
    func newerOKToACallUnlocks(unlocks: Bool) {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: h - m, .disable(app: 0))
            t.processStarted(at: h)
            t.step(at: h, .input(.launch)) { $0.state(.idle); $0.sent(1, .check, credential: c) }
            t.step(at: h + 50, .input(.query)) { $0.sent(2, .query, credential: c) }
            t.served(at: h + 100, 1, .check, credential: c, .appDisabled)
            t.dashboard(at: h + 150, .enable(app: 0))
            t.served(at: h + 160, 2, .query, credential: c, .ok)
            t.delivered(at: h + 200, 1, .check, .appDisabled, sentAt: h) {
                $0.store(.setLastAnsweredCheck(h + 200)); $0.lock(since: h + 200)
            }
            // The query's 200, served after the lock error: access is back (D4).
            t.delivered(at: h + 300, 2, .query, .ok, sentAt: h + 50) {
                if unlocks, !bug {
                    $0.store(.unlock, .setLockedSince(LocalData.never), .scheduleBackground); $0.state(.idle)
                    $0.call(.query, .returned)
                } else {
                    $0.call(.query, bug ? .returned : .threwAccessRevoked)
                }
            }
            return t
        }
        expectFires(run(bug: true), .lockedIsInert, at: h + 300, mentions: ["returned a result", "stayed locked"])
        expectQuiet(run(bug: false))
    }

    @Test("lock-on-revocation: lockedSince may be the first lock error's receipt or its servedAt (D3)", arguments: [false, true])
    func lockedSinceByServedAt(byServedAt: Bool) {
        func run(since: SimTime) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: 30 * m, .disable(app: 0))
            // Served at h + 100 ms, received at h + 200 ms.
            t.launchAndCheck(at: h, .appDisabled) { $0.lock(since: since) }
            return t
        }
        expectQuiet(run(since: byServedAt ? h + 100 : h + 200))
        expectFires(run(since: h + 150), .lockOnRevocation, at: h + 200, mentions: ["lockedSince is", "served at"])
    }

    @Test("purge-when-due: a purge may go on reporting the locked state (D3, D5)")
    func purgeMayReportLocked() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            // Access stopped 31 days: the answer says so; the SDK deletes the index, the
            // models and the credential and, having no "purged" state, stays `locked`.
            t.launchAndCheck(at: 31 * d + h, locked: true, .appDisabled) {
                $0.store(.deleteIndex, .deleteModels, .deleteCredential)
                if bug { $0.state(.idle) }
            }
            return t
        }
        expectQuiet(run(bug: false))
        expectFires(run(bug: true), .purgeWhenDue, at: 31 * d + h + 200, mentions: ["reports idle", "not access revoked"],
                    also: [.neverLockOnTransient, .lockOnRevocation, .lockedIsInert])
    }

    @Test("key-check-schedule: the last answered check may outlive reset(), which D7 does not make delete it (D1)")
    func lastAnsweredSurvivesReset() {
        func run(activationAt: SimTime) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.reset)) {
                $0.store(.deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential)
                $0.state(.idle); $0.store(.setPendingReset(c)); $0.sent(5, .reset, credential: c)
            }
            t.served(at: h + 100, 5, .reset, credential: c, .ok, recordAfter: 0)
            t.delivered(at: h + 200, 5, .reset, .ok, sentAt: h) { $0.store(.setPendingReset(.none)) }
            // The last answered check (200 ms) is still on the SDK's disk: an activation
            // within 24 h of it need not check; one after must.
            t.step(at: activationAt, .input(.becameActive))
            return t
        }
        expectQuiet(run(activationAt: 2 * h))
        expectFires(run(activationAt: d + h), .keyCheckSchedule, at: d + h, mentions: ["became active", "did not check"])
    }

    @Test("stale-responses-ignored: submitting a background task already scheduled changes nothing (D9)")
    func resubmittedBackgroundTaskIsNoEffect() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()   // its background task is scheduled
            t.processStarted(at: h)
            t.step(at: h, .input(.launch)) { $0.state(.idle); $0.sent(1, .check, credential: c) }
            t.step(at: h + 30 * s, .timeout(1, .check))
            t.served(at: h + 40 * s, 1, .check, credential: c, .ok)
            // The SDK re-submits its task at every answer, stale or not.
            t.step(at: h + 45 * s, .delivered(1, .check, .ok, sentAt: h)) {
                $0.store(.scheduleBackground)
                if bug { $0.store(.setLastAnsweredCheck(h + 45 * s)) }
            }
            return t
        }
        expectQuiet(run(bug: false))
        expectFires(run(bug: true), .staleResponsesIgnored, at: h + 45 * s, mentions: ["stale 200", "setLastAnsweredCheck"])
    }

    @Test("purge-only-after-30-continuous-days: deleting what is not there, or a purged marker alone, deletes nothing (D5)")
    func deletingNothingIsNoPurge() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            // Ten days into the lock: a marker, and a drop of a report queue already empty
            // (the first run's report was uploaded).
            t.launchAndCheck(at: 10 * d, locked: true, .appDisabled) {
                $0.store(.markPurged, .dropReports)
                if bug { $0.store(.deleteModels) }
            }
            return t
        }
        expectQuiet(run(bug: false))
        expectFires(run(bug: true), .purgeOnlyAfter30ContinuousDays, at: 10 * d + 200, mentions: ["its models", "less than 30 days"])
    }

    @Test("stale-responses-ignored: a call whose stale answer arrives while the SDK is locked may end with accessRevoked (D3, D9)")
    func staleAnswerToALockedSDKsCall() {
        func run(outcome: CallOutcome) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: h - m, .disable(app: 0))
            t.processStarted(at: h)
            t.step(at: h, .input(.launch)) { $0.state(.idle); $0.sent(1, .check, credential: c) }
            t.step(at: h + 50, .input(.query)) { $0.sent(2, .query, credential: c) }
            t.served(at: h + 100, 1, .check, credential: c, .appDisabled)
            t.delivered(at: h + 200, 1, .check, .appDisabled, sentAt: h) {
                $0.store(.setLastAnsweredCheck(h + 200)); $0.lock(since: h + 200)
            }
            // The query's answer comes after its timeout: stale. The SDK, locked since the
            // check's answer, ends the call the way a locked SDK ends every call (D3).
            t.step(at: h + 50 + 30 * s, .timeout(2, .query))
            t.served(at: h + 40 * s, 2, .query, credential: c, .appDisabled)
            t.step(at: h + 45 * s, .delivered(2, .query, .appDisabled, sentAt: h + 50)) { $0.call(.query, outcome) }
            return t
        }
        expectQuiet(run(outcome: .threwAccessRevoked))
        expectQuiet(run(outcome: .failed))
        expectFires(run(outcome: .returned), .staleResponsesIgnored, at: h + 45 * s, mentions: ["stale"], also: [.lockedIsInert])
    }
}
