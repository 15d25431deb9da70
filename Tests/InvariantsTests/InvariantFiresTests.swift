import Testing
import SimKit
import Invariants

/// For each of the 27 invariants: a small hand-written trace where it must fire (the bug),
/// and the same trace corrected, where nothing may fire.
@Suite struct InvariantFiresTests {
    static let s = Ms.second, m = Ms.minute, h = Ms.hour, d = Ms.day
    var s: SimTime { Self.s }
    var m: SimTime { Self.m }
    var h: SimTime { Self.h }
    var d: SimTime { Self.d }
    let c = cred(0, 1)

    @Test("the checker names 27 invariants, each with its rules and a summary") func catalogue() {
        #expect(InvariantID.allCases.count == 27)
        for id in InvariantID.allCases {
            #expect(!id.rules.isEmpty && !id.summary.isEmpty)
            #expect(InvariantID(rawValue: id.rawValue) == id)
        }
    }

    @Test("a ready device, registered and indexed, breaks nothing") func readyIsClean() {
        var t = HandTrace(.oneApp())
        t.ready()
        expectQuiet(t)
    }

    // MARK: D6, D2, D3, D4

    @Test("never-lock-on-transient: a 5xx answering a check must not lock") func neverLockOnTransient() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.processStarted(at: h)
            t.step(at: h, .input(.launch)) { $0.state(.idle); $0.sent(1, .check, credential: c) }
            t.served(at: h + 100, 1, .check, credential: c, .serverError)
            t.step(at: h + 200, .delivered(1, .check, .serverError, sentAt: h)) { if bug { $0.lock(since: h + 200) } }
            return t
        }
        expectFires(run(bug: true), .neverLockOnTransient, at: h + 200, mentions: ["5xx", "check"])
        expectQuiet(run(bug: false))
    }

    @Test("never-lock-on-transient: app_pending and device_unknown must not lock either", arguments: [Answer.appPending, .deviceUnknown])
    func neverLockOnRefusal(_ answer: Answer) {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            if answer == .deviceUnknown { t.record(30 * m, 0, .forgotDevice) }
            t.processStarted(at: h)
            t.step(at: h, .input(.launch)) { $0.state(.idle); $0.sent(1, .check, credential: c) }
            // No `served` record: only the SDK's handling of the answer is judged here.
            t.step(at: h + 200, .delivered(1, .check, answer, sentAt: h)) {
                $0.store(.setLastAnsweredCheck(h + 200))
                if bug { $0.lock(since: h + 200) } else if answer == .deviceUnknown { $0.store(.deleteCredential); $0.sent(2, .register) }
            }
            return t
        }
        expectFires(run(bug: true), .neverLockOnTransient, at: h + 200, mentions: ["\(answer)"])
        expectQuiet(run(bug: false))
    }

    @Test("lock-on-revocation: app_disabled answering a check must lock at once") func lockOnRevocation() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: 30 * m, .disable(app: 0))
            t.launchAndCheck(at: h, .appDisabled) { if !bug { $0.lock(since: h + 200) } }
            return t
        }
        // Not locking also leaves the background task registered while access is stopped.
        expectFires(run(bug: true), .lockOnRevocation, at: h + 200, mentions: ["app_disabled", "check", "did not lock"], also: [.lockedIsInert])
        expectQuiet(run(bug: false))
    }

    @Test("lock-on-revocation: lockedSince is the first lock error since access was last granted") func lockedSinceIsTheFirst() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: 30 * m, .disable(app: 0))
            // A stale lockedSince from long ago (as if an earlier lock's were never cleared).
            t.launchAndCheck(at: h, .appDisabled) { $0.lock(since: bug ? 5 * s : h + 200) }
            return t
        }
        expectFires(run(bug: true), .lockOnRevocation, at: h + 200, mentions: ["lockedSince", DurationText.clock(5 * s), DurationText.clock(h + 200)])
        expectQuiet(run(bug: false))
    }

    /// One bug, one violation: an SDK that wrongly locked on a 5xx keeps that lockedSince
    /// when a real lock error comes later; only the wrong lock is reported, not the
    /// lockedSince that follows from it.
    @Test("lock-on-revocation: a wrong earlier lock is reported once, not again at the real one")
    func wrongEarlierLockIsReportedOnce() {
        var t = HandTrace(.oneApp())
        t.ready()
        t.launchAndCheck(at: h, .serverError) { $0.lock(since: h + 200) }          // wrong: a 5xx
        t.dashboard(at: 2 * h, .disable(app: 0))
        t.launchAndCheck(at: 3 * h, locked: true, .appDisabled)                    // keeps h + 200
        #expect(t.broken == [.neverLockOnTransient], "fired: \(t.violations.map(\.headline))")
    }

    /// D3: later lock errors keep lockedSince; an SDK that moves it at a later one is caught.
    @Test("lock-on-revocation: a later lock error must not move lockedSince") func laterLockErrorsKeepLockedSince() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: 30 * m, .disable(app: 0))
            t.launchAndCheck(at: h, .appDisabled) { $0.lock(since: h + 200) }
            t.launchAndCheck(at: 2 * h, locked: true, .appDisabled) { if bug { $0.store(.setLockedSince(2 * h + 200)) } }
            return t
        }
        expectFires(run(bug: true), .lockOnRevocation, at: 2 * h + 200, mentions: ["lockedSince moved", "later ones keep it"])
        expectQuiet(run(bug: false))
    }

    @Test("locked-is-inert: a locked SDK throws from query without a request") func lockedIsInert() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.step(at: 2 * h, .input(.query)) {
                if bug { $0.sent(2, .query, credential: c) } else { $0.call(.query, .threwAccessRevoked) }
            }
            return t
        }
        expectFires(run(bug: true), .lockedIsInert, at: 2 * h, mentions: ["query", "access was stopped"])
        expectQuiet(run(bug: false))
    }

    @Test("locked-is-inert: a locked SDK indexes nothing") func lockedIndexesNothing() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.step(at: h + 10 * s, .timer(.indexChunk)) { if bug { $0.store(.indexPhotos(from: 200, count: 40)) } }
            return t
        }
        expectFires(run(bug: true), .lockedIsInert, at: h + 10 * s, mentions: ["indexed photos 200..<240"])
        expectQuiet(run(bug: false))
    }

    @Test("locked-checks-on-activation: a locked SDK checks when the app becomes active") func lockedChecksOnActivation() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.step(at: h + m, .input(.wentToBackground))
            t.step(at: 2 * h, .input(.becameActive)) { if !bug { $0.sent(2, .check, credential: c) } }
            return t
        }
        expectFires(run(bug: true), .lockedChecksOnActivation, at: 2 * h, mentions: ["became active", "without checking"])
        expectQuiet(run(bug: false))
    }

    /// D4's "every time": a check still in flight does not stand in for the activation's
    /// own, since it may have been judged before access came back.
    @Test("locked-checks-on-activation: a locked SDK checks at every activation, even with a check in flight")
    func lockedChecksAgainWithACheckInFlight() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.step(at: h + m, .input(.wentToBackground))
            t.step(at: 2 * h, .input(.becameActive)) { $0.sent(2, .check, credential: c) }
            t.step(at: 2 * h + 5, .input(.wentToBackground))
            t.step(at: 2 * h + 10, .input(.becameActive)) { if !bug { $0.sent(3, .check, credential: c) } }
            return t
        }
        expectFires(run(bug: true), .lockedChecksOnActivation, at: 2 * h + 10, mentions: ["became active", "without checking", "still in flight"])
        expectQuiet(run(bug: false))
    }

    @Test("locked-checks-on-activation: a check that succeeds while locked unlocks") func successfulCheckUnlocks() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.dashboard(at: 2 * h, .enable(app: 0))
            t.launchAndCheck(at: 3 * h, locked: true, .ok) {
                if !bug { $0.store(.unlock, .setLockedSince(LocalData.never), .scheduleBackground); $0.state(.idle) }
            }
            return t
        }
        expectFires(run(bug: true), .lockedChecksOnActivation, at: 3 * h + 200, mentions: ["succeeded", "stayed locked"])
        expectQuiet(run(bug: false))
    }

    @Test("unlock-resumes-unchanged: unlocking keeps the models and the index") func unlockResumesUnchanged() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.dashboard(at: 2 * h, .enable(app: 0))
            t.launchAndCheck(at: 3 * h, locked: true, .ok) {
                $0.store(.unlock, .setLockedSince(LocalData.never), .scheduleBackground)
                if bug { $0.store(.deleteModels) }
                $0.state(.idle)
            }
            return t
        }
        expectFires(run(bug: true), .unlockResumesUnchanged, at: 3 * h + 200, mentions: ["models", "unlocked"])
        expectQuiet(run(bug: false))
    }

    @Test("unlock-resumes-unchanged: unlocking registers the background task the lock cancelled") func unlockRegistersBackgroundAgain() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.dashboard(at: 2 * h, .enable(app: 0))
            t.launchAndCheck(at: 3 * h, locked: true, .ok) {
                $0.store(.unlock, .setLockedSince(LocalData.never))
                if !bug { $0.store(.scheduleBackground) }
                $0.state(.idle)
            }
            return t
        }
        expectFires(run(bug: true), .unlockResumesUnchanged, at: 3 * h + 200, mentions: ["background task", "unlocked"])
        expectQuiet(run(bug: false))
    }

    @Test("unlock-resumes-unchanged: unlocking in the foreground with photos to index starts a run at once") func unlockStartsARun() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.person(at: 90 * m, .addPhotos, arg: 1_000)
            t.dashboard(at: 2 * h, .enable(app: 0))
            t.launchAndCheck(at: 3 * h, locked: true, .ok) {
                $0.store(.unlock, .setLockedSince(LocalData.never), .scheduleBackground)
                $0.state(.idle)
                if !bug { $0.runStarted(); $0.state(.indexing) }
            }
            return t
        }
        expectFires(run(bug: true), .unlockResumesUnchanged, at: 3 * h + 200, mentions: ["foreground", "photos not indexed", "no indexing run"])
        expectQuiet(run(bug: false))
    }

    @Test("registers-again-when-unknown: after device_unknown the SDK registers by its next call (D6)", arguments: [false, true])
    func deviceUnknownRegistersByNextCall(registersAtOnce: Bool) {
        // The bug waits past its next call; a correct SDK registers at once or in that call.
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.record(2 * h + m, 0, .forgotDevice)
            t.step(at: 3 * h, .input(.query)) { $0.sent(5, .query, credential: c) }
            t.served(at: 3 * h + 100, 5, .query, credential: c, .deviceUnknown)
            t.delivered(at: 3 * h + 200, 5, .query, .deviceUnknown, sentAt: 3 * h) {
                $0.store(.deleteCredential); $0.call(.query, .failed)
                if !bug, registersAtOnce { $0.sent(6, .register) }
            }
            t.step(at: 4 * h, .input(.query)) {
                if !bug, !registersAtOnce { $0.sent(6, .register) }
                $0.call(.query, .failed)
            }
            return t
        }
        expectFires(run(bug: true), .registersAgainWhenUnknown, at: 4 * h, mentions: ["device_unknown", "next call (query)"])
        expectQuiet(run(bug: false))
    }

    @Test("registers-again-when-unknown: a locked SDK's next check after device_unknown is a registration (D4, D6)")
    func lockedDeviceUnknownRegisters() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.dashboard(at: 2 * h, .enable(app: 0))
            t.record(2 * h + m, 0, .forgotDevice)
            t.launchAndCheck(at: 3 * h, locked: true, .deviceUnknown)   // keeps its credential, registers later
            t.step(at: 4 * h, .input(.becameActive)) { $0.sent(2, bug ? .check : .register, credential: bug ? c : .none) }
            return t
        }
        expectFires(run(bug: true), .registersAgainWhenUnknown, at: 4 * h, mentions: ["device_unknown", "while locked"])
        expectQuiet(run(bug: false))
    }

    @Test("never-lock-on-transient: a call throws accessRevoked only when locked or answered a lock error (D6)")
    func callThrowsOnlyWhenLocked() {
        func run(bug: Bool, answer: Answer) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.query)) { $0.sent(5, .query, credential: c) }
            // (app_pending is delivered as a pending app's server would answer; no `served`
            // record, so the checkers' server truth, for an approved app, is not asked.)
            if answer != .appPending { t.served(at: h + 100, 5, .query, credential: c, answer) }
            t.delivered(at: h + 200, 5, .query, answer, sentAt: h) {
                if answer.isLockError { $0.lock(since: h + 200) }
                $0.call(.query, bug || answer.isLockError ? .threwAccessRevoked : .failed)
            }
            return t
        }
        expectFires(run(bug: true, answer: .appPending), .neverLockOnTransient, at: h + 200, mentions: ["query threw accessRevoked", "not locked"])
        expectQuiet(run(bug: false, answer: .appPending))
        expectQuiet(run(bug: false, answer: .serverError))
    }

    @Test("never-lock-on-transient: a call answered by a lock error may throw after a reset() that came while the SDK awaited its lock's write (D6)")
    func callThrowsOnItsOwnLockErrorAfterAReset() {
        func run(answer: Answer) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.query)) { $0.sent(5, .query, credential: c) }
            if answer.isLockError { t.dashboard(at: h + 50, .disable(app: 0)) }
            t.served(at: h + 100, 5, .query, credential: c, answer)
            t.delivered(at: h + 200, 5, .query, answer, sentAt: h) {
                if answer.isLockError { $0.lock(since: h + 200) }
            }
            t.step(at: h + 210, .input(.reset)) {
                $0.store(.unlock, .setLockedSince(LocalData.never), .deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential)
                $0.store(.setLastAnsweredCheck(LocalData.never)); $0.state(.idle)
                $0.store(.setPendingReset(c)); $0.sent(6, .reset, credential: c)
            }
            // The lock's write returns (storage latency): the call throws on its own answer.
            t.step(at: h + 2_200, .timer(.indexChunk)) { $0.call(.query, .threwAccessRevoked) }
            return t
        }
        expectQuiet(run(answer: .appDisabled))
        expectFires(run(answer: .serverError), .neverLockOnTransient, at: h + 2_200, mentions: ["query threw accessRevoked"])
    }

    @Test("unlock-resumes-unchanged: no photo is indexed twice") func noPhotoIndexedTwice() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(5, .check, credential: c) }
            t.served(at: h + 100, 5, .check, credential: c, .ok)
            t.step(at: h + 200, .delivered(5, .check, .ok, sentAt: h)) { $0.store(.setLastAnsweredCheck(h + 200)) }
            t.step(at: h + 10 * s, .timer(.indexChunk)) {
                $0.store(.indexPhotos(from: bug ? 150 : 200, count: 40))
                $0.runEnded(); $0.store(.queueReport); $0.state(.idle); $0.sent(6, .runReport, credential: c)
            }
            return t
        }
        expectFires(run(bug: true), .unlockResumesUnchanged, at: h + 10 * s, mentions: ["150..<190", "again", "200"])
        expectQuiet(run(bug: false))
    }

    // MARK: D5

    @Test("purge-only-after-30-continuous-days: no purge 9 days into a lock") func purgeOnlyAfter30Days() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.launchAndCheck(at: 10 * d, locked: true, .appDisabled) { if bug { $0.purge() } }
            return t
        }
        expectFires(run(bug: true), .purgeOnlyAfter30ContinuousDays, at: 10 * d + 200, mentions: ["its index (200 photos)", "less than 30 days"])
        expectQuiet(run(bug: false))
    }

    @Test("purge-only-after-30-continuous-days: one early purge is one violation, not also a bad unlock later") func earlyPurgeThenUnlock() {
        var t = HandTrace(.oneApp())
        t.readyThenLocked()
        t.launchAndCheck(at: 10 * d, locked: true, .appDisabled) { $0.purge() }
        t.dashboard(at: 11 * d, .enable(app: 0))
        t.processStarted(at: 12 * d)
        t.step(at: 12 * d, .input(.launch)) { $0.state(.purged); $0.sent(1, .register) }
        t.served(at: 12 * d + 100, 1, .register, .ok, issued: cred(0, 2))
        t.step(at: 12 * d + 200, .delivered(1, .register, .ok, sentAt: 12 * d)) {
            $0.store(.setLastAnsweredCheck(12 * d + 200), .setCredential(cred(0, 2)), .unlock, .setLockedSince(LocalData.never), .scheduleBackground)
            $0.state(.idle)
            // Indexing starts again from scratch, at once (D4, D5).
            $0.runStarted(); $0.state(.indexing); $0.sent(2, .modelDownload, credential: cred(0, 2))
        }
        expectFires(t, .purgeOnlyAfter30ContinuousDays, at: 10 * d + 200, mentions: ["less than 30 days"])
        #expect(t.checker.count(of: .unlockResumesUnchanged) == 0)
    }

    @Test("purge-only-after-30-continuous-days: a transient check past the deadline does not purge") func noPurgeOnTransient() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.processStarted(at: 31 * d)
            t.step(at: 31 * d, .input(.launch)) { $0.state(.locked); $0.sent(1, .check, credential: c) }
            t.step(at: 31 * d + 30 * s, .timeout(1, .check)) { if bug { $0.purge() } }
            return t
        }
        expectFires(run(bug: true), .purgeOnlyAfter30ContinuousDays, at: 31 * d + 30 * s, mentions: ["timeout", "not a lock error"])
        expectQuiet(run(bug: false))
    }

    @Test("purge-when-due: a lock error 30 days into the lock deletes everything") func purgeWhenDue() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.launchAndCheck(at: 31 * d + h, locked: true, .appDisabled) { if !bug { $0.purge() } }
            return t
        }
        expectFires(run(bug: true), .purgeWhenDue, at: 31 * d + h + 200, mentions: ["app_disabled", "index (200 photos)", "models", "credential"])
        expectQuiet(run(bug: false))
    }

    // MARK: D1

    @Test("key-check-schedule: configure at each launch checks the key") func keyCheckAtLaunch() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.processStarted(at: 2 * d)
            t.step(at: 2 * d, .input(.launch)) { $0.state(.idle); if !bug { $0.sent(1, .check, credential: c) } }
            return t
        }
        expectFires(run(bug: true), .keyCheckSchedule, at: 2 * d, mentions: ["launched", "without checking its key"])
        expectQuiet(run(bug: false))
    }

    @Test("key-check-schedule: becoming active more than 24 h after the last answer checks") func keyCheckOnActivation() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.wentToBackground))
            // 23 h after the last answer: nothing due.
            t.step(at: 23 * h, .input(.becameActive))
            t.step(at: 23 * h + m, .input(.wentToBackground))
            t.step(at: 25 * h, .input(.becameActive)) { if !bug { $0.sent(5, .check, credential: c) } }
            return t
        }
        expectFires(run(bug: true), .keyCheckSchedule, at: 25 * h, mentions: ["became active", "\(DurationText.format(25 * h - 200)) ago"])
        expectQuiet(run(bug: false))
    }

    @Test("key-check-schedule: every background run starts with a key check") func keyCheckOnBackgroundRun() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.backgroundRun)) {
                $0.runStarted(background: true); $0.state(.indexing)
                if !bug { $0.sent(5, .check, credential: c) }
            }
            return t
        }
        expectFires(run(bug: true), .keyCheckSchedule, at: h, mentions: ["background run", "without checking its key"])
        expectQuiet(run(bug: false))
    }

    @Test("key-check-schedule: a background run that finds a run going on needs no check of its own") func backgroundRunDuringRun() {
        var t = HandTrace(.oneApp())
        t.ready()
        t.step(at: h, .input(.becameActive))
        t.step(at: d + h, .input(.wentToBackground))
        t.step(at: d + 2 * h, .input(.becameActive)) { $0.runStarted(); $0.state(.indexing); $0.sent(5, .check, credential: c) }
        t.served(at: d + 2 * h + 100, 5, .check, credential: c, .ok)
        t.step(at: d + 2 * h + 200, .delivered(5, .check, .ok, sentAt: d + 2 * h)) { $0.store(.setLastAnsweredCheck(d + 2 * h + 200)) }
        // The OS fires the background task mid-run: the run goes on, nothing new starts.
        t.step(at: d + 2 * h + s, .input(.backgroundRun))
        t.step(at: d + 2 * h + 10 * s, .timer(.indexChunk)) {
            $0.store(.indexPhotos(from: 200, count: 40))
            $0.runEnded(); $0.store(.queueReport); $0.state(.idle); $0.sent(6, .runReport, credential: c)
        }
        expectQuiet(t)
    }

    // MARK: S1–S8

    @Test("server-enforces-access: a forgotten device is answered device_unknown") func serverEnforcesAccess() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.record(d, 0, .forgotDevice)
            t.served(at: d + h, 5, .check, credential: c, bug ? .ok : .deviceUnknown, recordAfter: 0)
            return t
        }
        expectFires(run(bug: true), .serverEnforcesAccess, at: d + h, mentions: ["check", "rk_live_A", "200", "device_unknown"])
        expectQuiet(run(bug: false))
    }

    // MARK: P6

    @Test("not-rollup-is-no-verdict: a proxy's bare 403 answering a check must not lock (P6)") func bare403DoesNotLock() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.launchAndCheck(at: h, .notRollup) { if bug { $0.lock(since: h + 200) } }
            return t
        }
        expectFires(run(bug: true), .notRollupIsNoVerdict, at: h + 200, mentions: ["locked after", "not-rollup", "P6"])
        expectQuiet(run(bug: false))
    }

    @Test("not-rollup-is-no-verdict: a portal's 200 to a locked SDK's check must not unlock (P6)") func portal200DoesNotUnlock() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.launchAndCheck(at: 2 * h, locked: true, .notRollup) {
                if bug { $0.store(.unlock, .setLockedSince(LocalData.never)); $0.state(.idle) }
            }
            return t
        }
        expectFires(run(bug: true), .notRollupIsNoVerdict, at: 2 * h + 200, mentions: ["unlocked after", "not-rollup", "P6"])
        expectQuiet(run(bug: false))
    }

    @Test("not-rollup-is-no-verdict: an answer that is not Rollup's purges nothing, even 30 days into a stop (P6)") func notRollupDoesNotPurge() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.launchAndCheck(at: 32 * d, locked: true, .notRollup) { if bug { $0.purge() } }
            return t
        }
        expectFires(run(bug: true), .notRollupIsNoVerdict, at: 32 * d + 200, mentions: ["deleted", "not-rollup", "P6"])
        expectQuiet(run(bug: false))
    }

    @Test("not-rollup-is-no-verdict: a portal's 200 to an upload settles no report (P6)") func notRollupSettlesNoReport() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.backgroundRunUploads(at: h, checkID: 5)
            t.served(at: h + 300, 6, .runReport, credential: c, .notRollup)
            t.delivered(at: h + 400, 6, .runReport, .notRollup, sentAt: h + 200) { if bug { $0.store(.reportsUploaded(1)) } }
            return t
        }
        expectFires(run(bug: true), .notRollupIsNoVerdict, at: h + 400, mentions: ["marked 1 run report(s) uploaded", "P6"])
        expectQuiet(run(bug: false))
    }

    @Test("not-rollup-is-no-verdict: a portal's answer to a check is not D1's answered check (P6)") func notRollupIsNoAnsweredCheck() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            // A check answered by a portal a day after the last verdict; the SDK counts it as answered.
            t.step(at: d, .input(.becameActive)) { $0.sent(5, .check, credential: c) }
            t.served(at: d + 100, 5, .check, credential: c, .notRollup)
            t.delivered(at: d + 200, 5, .check, .notRollup, sentAt: d) { if bug { $0.store(.setLastAnsweredCheck(d + 200)) } }
            t.step(at: d + 2 * h, .input(.wentToBackground))
            t.step(at: d + 3 * h, .input(.becameActive)) { if !bug { $0.sent(6, .check, credential: c) } }
            return t
        }
        expectFires(run(bug: true), .notRollupIsNoVerdict, at: d + 3 * h, mentions: ["did not check its key", "not Rollup's", "P6"])
        expectQuiet(run(bug: false))
    }

    // MARK: S10

    @Test("server-restart-loses-nothing: a disable acknowledged before a restart still refuses the app after it (S10)")
    func restartKeepsDisable() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: d, .disable(app: 0))
            t.served(at: d + h, 5, .check, credential: c, .appDisabled, stoppedSince: d)
            t.record(2 * d, Event.world, .fault(.serverRestarted(until: 2 * d + 5 * s)))
            t.served(at: 2 * d + h, 6, .check, credential: c, bug ? .ok : .appDisabled, stoppedSince: bug ? ServerReply.none : d)
            return t
        }
        expectFires(run(bug: true), .serverRestartLosesNothing, at: 2 * d + h, mentions: ["restarted at 2d00h00m00.000s", "acknowledged at 1d00h00m00.000s", "200", "app_disabled"])
        expectQuiet(run(bug: false))
    }

    @Test("server-restart-loses-nothing: a registration answered 200 before a restart is known after it (S10)")
    func restartKeepsRegistration() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.record(2 * d, Event.world, .fault(.serverRestarted(until: 2 * d + 5 * s)))
            t.served(at: 2 * d + h, 6, .check, credential: c, bug ? .deviceUnknown : .ok)
            return t
        }
        expectFires(run(bug: true), .serverRestartLosesNothing, at: 2 * d + h, mentions: ["device_unknown", "requires 200", "S10"])
        expectQuiet(run(bug: false))
    }

    @Test("server-restart-loses-nothing: a wrong answer about a change made after the restart is judged by its own rule")
    func changeAfterRestartIsNotS10() {
        var t = HandTrace(.oneApp())
        t.ready()
        t.record(2 * d, Event.world, .fault(.serverRestarted(until: 2 * d + 5 * s)))
        t.dashboard(at: 3 * d, .disable(app: 0))
        t.served(at: 3 * d + h, 6, .check, credential: c, .ok)
        expectFires(t, .disableStopsEveryKey, at: 3 * d + h, mentions: ["disabled the app"])
    }

    @Test("server-restart-loses-nothing: a stop dated from the restart though it began before is a lost stop (S10)")
    func restartKeepsTheStopsStart() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: d, .disable(app: 0))
            t.record(2 * d, Event.world, .fault(.serverRestarted(until: 2 * d + 5 * s)))
            t.served(at: 4 * d, 5, .check, credential: c, .appDisabled, stoppedSince: bug ? 2 * d : d)
            return t
        }
        expectFires(run(bug: true), .serverRestartLosesNothing, at: 4 * d, mentions: ["since 2d00h00m00.000s", "restart at 2d00h00m00.000s", "S10"])
        expectQuiet(run(bug: false))
    }

    @Test("server-enforces-access: an approved app is served, not answered app_pending") func serverServesApproved() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.served(at: h, 5, .check, credential: c, bug ? .appPending : .ok)
            return t
        }
        expectFires(run(bug: true), .serverEnforcesAccess, at: h, mentions: ["app_pending", "requires 200"])
        expectQuiet(run(bug: false))
    }

    @Test("rotation-grace: an old key is invalid from its grace deadline on") func rotationGrace() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: d, .rotate(app: 0, newKey: 1, graceMs: d))
            t.served(at: 2 * d - 1, 5, .check, credential: c, .ok)   // the last millisecond of grace
            t.served(at: 2 * d, 6, .check, credential: c, bug ? .ok : .appKeyInvalid)
            return t
        }
        expectFires(run(bug: true), .rotationGrace, at: 2 * d, mentions: ["rk_live_A", "app_key_invalid", "grace had ended"])
        expectQuiet(run(bug: false))
    }

    @Test("rotation-grace: a stopped old key is invalid at once") func stoppedKey() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: d, .rotate(app: 0, newKey: 1, graceMs: 30 * d))
            t.dashboard(at: 2 * d, .stopOldKey(app: 0, key: 0))
            t.served(at: 2 * d + 1, 5, .check, credential: c, bug ? .ok : .appKeyInvalid, stoppedSince: 2 * d)
            return t
        }
        expectFires(run(bug: true), .rotationGrace, at: 2 * d + 1, mentions: ["old key was stopped"])
        expectQuiet(run(bug: false))
    }

    @Test("disable-stops-every-key: a disabled app is refused with its old key in grace") func disableStopsEveryKey() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: 12 * h, .rotate(app: 0, newKey: 1, graceMs: 30 * d))
            t.served(at: 13 * h, 5, .check, credential: c, .ok)
            t.dashboard(at: d, .disable(app: 0))
            t.served(at: d + m, 6, .check, credential: c, bug ? .ok : .appDisabled)
            return t
        }
        expectFires(run(bug: true), .disableStopsEveryKey, at: d + m, mentions: ["rk_live_A", "app_disabled", "developer disabled"])
        expectQuiet(run(bug: false))
    }

    @Test("only-rollup-restores: the developer's enable does not lift a Rollup revocation") func onlyRollupRestores() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: d, .rollupApp(.revoke, app: 0))
            t.dashboard(at: d + h, .disable(app: 0))
            t.dashboard(at: d + 2 * h, .enable(app: 0))
            t.served(at: d + 3 * h, 5, .check, credential: c, bug ? .ok : .appDisabled, stoppedSince: d)
            t.dashboard(at: 2 * d, .rollupApp(.restore, app: 0))
            t.served(at: 2 * d + h, 6, .check, credential: c, .ok)
            return t
        }
        expectFires(run(bug: true), .onlyRollupRestores, at: d + 3 * h, mentions: ["app_disabled", "Rollup"])
        expectQuiet(run(bug: false))
    }

    @Test("device-belongs-to-app: another app's key is answered app_key_mismatch") func deviceBelongsToApp() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.twoApps)
            t.ready()
            t.served(at: d, 5, .check, key: 1, credential: c, bug ? .ok : .appKeyMismatch)
            return t
        }
        expectFires(run(bug: true), .deviceBelongsToApp, at: d, mentions: ["rk_live_B", "app_key_mismatch", "another app"])
        expectQuiet(run(bug: false))
    }

    @Test("clones-never-served: a clone's registration fails App Attest") func clonesNeverServed() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp(devices: 1, clones: 1))
            t.ready()
            t.served(at: h, device: 1, 1, .register, bug ? .ok : .attestationFailed, issued: bug ? cred(1, 1) : .none)
            return t
        }
        expectFires(run(bug: true), .clonesNeverServed, device: 1, at: h, mentions: ["clone", "register", "rk_live_A"])
        expectQuiet(run(bug: false))
    }

    // MARK: D7, D8, D9, D10

    @Test("reset-deletes-everything: reset() deletes the credential too") func resetDeletesEverything() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.reset)) {
                $0.store(.deleteIndex, .deleteModels, .deletePlaceData)
                if !bug { $0.store(.deleteCredential) }
                $0.store(.setLastAnsweredCheck(LocalData.never)); $0.state(.idle)
                $0.store(.setPendingReset(c)); $0.sent(5, .reset, credential: c)
            }
            t.served(at: h + 100, 5, .reset, credential: c, .ok, recordAfter: 0)
            t.step(at: h + 200, .delivered(5, .reset, .ok, sentAt: h)) { $0.store(.setPendingReset(.none)) }
            return t
        }
        expectFires(run(bug: true), .resetDeletesEverything, at: h, mentions: ["reset()", "device credential"])
        expectQuiet(run(bug: false))
    }

    @Test("reset-deletes-everything: the server deletes the device's record") func resetDeletesTheRecord() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.reset)) {
                $0.store(.deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .setLastAnsweredCheck(LocalData.never))
                $0.state(.idle); $0.store(.setPendingReset(c)); $0.sent(5, .reset, credential: c)
            }
            t.served(at: h + 100, 5, .reset, credential: c, .ok, recordAfter: bug ? 1 : 0)
            return t
        }
        expectFires(run(bug: true), .resetDeletesEverything, at: h + 100, mentions: ["reset of registration 1", "kept its record"])
        expectQuiet(run(bug: false))
    }

    @Test("photos-revoked-deletes-index: the next launch deletes the index") func photosRevokedDeletesIndex() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.person(at: h, .revokePhotos)
            t.processKilled(at: h)
            t.processStarted(at: 2 * h)
            t.step(at: 2 * h, .input(.launch)) {
                if !bug { $0.store(.deleteIndex) }
                $0.state(.idle); $0.sent(1, .check, credential: c)
            }
            return t
        }
        expectFires(run(bug: true), .photosRevokedDeletesIndex, at: 2 * h, mentions: ["launch", "Photos access revoked", "200 indexed photos"])
        expectQuiet(run(bug: false))
    }

    @Test("stale-responses-ignored: an answer after its timeout changes nothing") func staleResponsesIgnored() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.processStarted(at: h)
            t.step(at: h, .input(.launch)) { $0.state(.idle); $0.sent(1, .check, credential: c) }
            t.step(at: h + 30 * s, .timeout(1, .check))
            t.served(at: h + 40 * s, 1, .check, credential: c, .ok)
            t.step(at: h + 45 * s, .delivered(1, .check, .ok, sentAt: h)) { if bug { $0.store(.setLastAnsweredCheck(h + 45 * s)) } }
            return t
        }
        expectFires(run(bug: true), .staleResponsesIgnored, at: h + 45 * s, mentions: ["stale 200", "check", "setLastAnsweredCheck"])
        expectQuiet(run(bug: false))
    }

    @Test("stale-responses-ignored: an answer that arrives after a reset changes nothing") func staleAfterReset() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.query)) { $0.sent(5, .query, credential: c) }
            t.step(at: h + 1, .input(.reset)) {
                $0.store(.deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .setLastAnsweredCheck(LocalData.never))
                $0.state(.idle); $0.store(.setPendingReset(c)); $0.sent(6, .reset, credential: c)
            }
            t.served(at: h + 100, 5, .query, credential: c, .ok)
            t.step(at: h + 200, .delivered(5, .query, .ok, sentAt: h)) { if bug { $0.call(.query, .returned) } }
            return t
        }
        expectFires(run(bug: true), .staleResponsesIgnored, at: h + 200, mentions: ["stale 200", "query"])
        expectQuiet(run(bug: false))
    }

    @Test("reports-not-lost: every run ends with a queued report") func reportsNotLost() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(5, .check, credential: c) }
            t.served(at: h + 100, 5, .check, credential: c, .ok)
            t.step(at: h + 200, .delivered(5, .check, .ok, sentAt: h)) { $0.store(.setLastAnsweredCheck(h + 200)) }
            t.step(at: h + 10 * s, .timer(.indexChunk)) {
                $0.store(.indexPhotos(from: 200, count: 40))
                $0.runEnded(); if !bug { $0.store(.queueReport) }
                $0.state(.idle)
                if !bug { $0.sent(6, .runReport, credential: c) }
            }
            return t
        }
        expectFires(run(bug: true), .reportsNotLost, at: h + 10 * s, mentions: ["run ended without a run report"])
        expectQuiet(run(bug: false))
    }

    @Test("reports-not-lost: a 200 confirms only reports queued before its upload was sent") func uploadConfirmsOnlyWhatItCarried() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            func indexingRun(at start: SimTime, check: UInt32, photo: UInt32, upload: UInt32?) {
                t.step(at: start, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(check, .check, credential: c) }
                t.served(at: start + 100, check, .check, credential: c, .ok)
                t.delivered(at: start + 200, check, .check, .ok, sentAt: start) { $0.store(.setLastAnsweredCheck(start + 200)) }
                t.step(at: start + 10 * s, .timer(.indexChunk)) {
                    $0.store(.indexPhotos(from: photo, count: 40))
                    $0.runEnded(); $0.store(.queueReport); $0.state(.idle)
                    if let upload { $0.sent(upload, .runReport, credential: c) }
                }
            }
            indexingRun(at: h, check: 5, photo: 200, upload: 6)              // R1 queued; upload 6 carries R1
            t.dashboard(at: h + 11 * s, .disable(app: 0))
            t.step(at: h + 12 * s, .input(.query)) { $0.sent(7, .query, credential: c) }
            t.served(at: h + 12 * s + 100, 7, .query, credential: c, .appDisabled)
            t.delivered(at: h + 12 * s + 200, 7, .query, .appDisabled, sentAt: h + 12 * s) {
                $0.lock(since: h + 12 * s + 200); $0.call(.query, .threwAccessRevoked)
            }
            t.dashboard(at: h + 13 * s, .enable(app: 0))
            t.step(at: h + 14 * s, .input(.wentToBackground))
            t.step(at: h + 15 * s, .input(.becameActive)) { $0.sent(8, .check, credential: c) }
            t.served(at: h + 15 * s + 100, 8, .check, credential: c, .ok)
            t.delivered(at: h + 15 * s + 200, 8, .check, .ok, sentAt: h + 15 * s) {
                $0.store(.setLastAnsweredCheck(h + 15 * s + 200), .unlock, .setLockedSince(LocalData.never), .scheduleBackground)
                $0.state(.idle); $0.sent(9, .runReport, credential: c)      // upload 9 carries R1 again
            }
            indexingRun(at: h + 16 * s, check: 10, photo: 240, upload: nil)   // R2 queued while 9 is awaited
            t.served(at: h + 27 * s, 6, .runReport, credential: c, .ok)
            t.delivered(at: h + 27 * s + 100, 6, .runReport, .ok, sentAt: h + 10 * s) {
                $0.store(.reportsUploaded(1)); $0.sent(11, .runReport, credential: c)   // R1 confirmed; 11 carries R2
            }
            t.served(at: h + 28 * s, 9, .runReport, credential: c, .ok)
            // Upload 9 carried only R1, already confirmed: it cannot confirm R2.
            t.delivered(at: h + 28 * s + 100, 9, .runReport, .ok, sentAt: h + 15 * s + 200) { if bug { $0.store(.reportsUploaded(1)) } }
            t.served(at: h + 29 * s, 11, .runReport, credential: c, .serverError)
            t.delivered(at: h + 29 * s + 100, 11, .runReport, .serverError, sentAt: h + 27 * s + 100)
            return t
        }
        expectFires(run(bug: true), .reportsNotLost, at: h + 28 * s + 100, mentions: ["marked 1 run report(s) uploaded", "never delivered"])
        expectQuiet(run(bug: false))
    }

    @Test("reports-not-lost: a failed upload keeps the queued reports") func failedUploadKeepsReports() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(5, .check, credential: c) }
            t.served(at: h + 100, 5, .check, credential: c, .ok)
            t.step(at: h + 200, .delivered(5, .check, .ok, sentAt: h)) { $0.store(.setLastAnsweredCheck(h + 200)) }
            t.step(at: h + 10 * s, .timer(.indexChunk)) {
                $0.store(.indexPhotos(from: 200, count: 40))
                $0.runEnded(); $0.store(.queueReport); $0.state(.idle); $0.sent(6, .runReport, credential: c)
            }
            t.served(at: h + 10 * s + 100, 6, .runReport, credential: c, .serverError)
            t.step(at: h + 10 * s + 200, .delivered(6, .runReport, .serverError, sentAt: h + 10 * s)) { if bug { $0.store(.dropReports) } }
            return t
        }
        expectFires(run(bug: true), .reportsNotLost, at: h + 10 * s + 200, mentions: ["dropped 1 queued run report(s)", "without a reset"])
        expectQuiet(run(bug: false))
    }

    // MARK: P5

    @Test("background-expiry-keeps-progress: a run asked to stop must not set its written progress back, nor give up its task")
    func backgroundExpiryKeepsProgress() {
        func run(rewinds: Bool = false, dropsTask: Bool = false) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.record(h, 0, .fault(BackgroundLimit.Record.limit(limitMs: 30_000, until: .max).fault))
            t.person(at: 2 * h, .addPhotos, arg: 1_000)
            t.step(at: 3 * h, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(5, .check, credential: c) }
            t.served(at: 3 * h + 100, 5, .check, credential: c, .ok)
            t.delivered(at: 3 * h + 200, 5, .check, .ok, sentAt: 3 * h) { $0.store(.setLastAnsweredCheck(3 * h + 200)) }
            t.step(at: 3 * h + 10 * s + 200, .timer(.indexChunk)) { $0.store(.indexPhotos(from: 200, count: 200)) }
            t.record(3 * h + 30 * s, 0, .fault(BackgroundLimit.Record.expiring.fault))
            t.step(at: 3 * h + 30 * s, .input(.backgroundExpiring)) {
                if rewinds { $0.store(.indexPhotos(from: 200, count: 0)) }
                if dropsTask { $0.store(.cancelBackground) }
                $0.runEnded(); $0.store(.queueReport); $0.state(.idle); $0.sent(6, .runReport, credential: c)
            }
            t.served(at: 3 * h + 30 * s + 100, 6, .runReport, credential: c, .ok)
            t.delivered(at: 3 * h + 30 * s + 200, 6, .runReport, .ok, sentAt: 3 * h + 30 * s) { $0.store(.reportsUploaded(1)) }
            return t
        }
        expectFires(run(rewinds: true), .backgroundExpiryKeepsProgress, at: 3 * h + 30 * s, mentions: ["set its index back from 400 to 200"])
        expectFires(run(dropsTask: true), .backgroundExpiryKeepsProgress, at: 3 * h + 30 * s, mentions: ["cancelled its background task"])
        expectQuiet(run())
    }

    // MARK: P3

    /// A ready device's disk is full from 1 h for a day: a background run at 2 h ends and
    /// its report's queue write fails. Two days on, in the same process, another run ends
    /// and the disk takes its report: the bug writes only that one, the refused report was
    /// dropped from memory; the corrected SDK writes both.
    @Test("failed-write-loses-nothing: a report refused by a full disk is written once the disk has room")
    func failedWriteLosesNothing() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            let c = cred(0, 1)
            t.record(h, 0, .fault(.diskFull(until: h + d)))
            t.step(at: 2 * h, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(5, .check, credential: c) }
            t.served(at: 2 * h + 100, 5, .check, credential: c, .ok)
            t.delivered(at: 2 * h + 200, 5, .check, .ok, sentAt: 2 * h) {
                $0.store(.setLastAnsweredCheck(2 * h + 200)); $0.runEnded()
                $0.events.append(.fault(.writeFailed(.queueReport))); $0.state(.idle)
            }
            t.step(at: 2 * d, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(6, .check, credential: c) }
            t.served(at: 2 * d + 100, 6, .check, credential: c, .ok)
            t.delivered(at: 2 * d + 200, 6, .check, .ok, sentAt: 2 * d) {
                $0.store(.setLastAnsweredCheck(2 * d + 200)); $0.runEnded()
                if bug { $0.store(.queueReport) } else { $0.store(.queueReport, .queueReport) }
                $0.state(.idle); $0.sent(7, .runReport, credential: c)
            }
            return t
        }
        expectFires(run(bug: true), .failedWriteLosesNothing, at: 2 * d + 200, mentions: ["1 report(s) whose queue write had failed"])
        expectQuiet(run(bug: false))
    }

    /// The disk refuses the index write of photos 200..<400; the bug counts them as done and
    /// writes 400..<600 once the disk has room; the corrected SDK writes 200..<400 again.
    @Test("failed-write-loses-nothing: photos whose index write failed are not counted as indexed")
    func failedIndexWriteNotCounted() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.person(at: h, .addPhotos, arg: 400)
            t.record(h, 0, .fault(.diskFull(until: 2 * h)))
            t.step(at: h + m, .timer(.indexChunk)) { $0.events.append(.fault(.writeFailed(.indexPhotos(from: 200, count: 200)))) }
            t.step(at: 3 * h, .timer(.indexChunk)) { $0.store(.indexPhotos(from: bug ? 400 : 200, count: 200)) }
            return t
        }
        expectFires(run(bug: true), .failedWriteLosesNothing, at: 3 * h, mentions: ["photos 200..<400", "counted as indexed"])
        expectQuiet(run(bug: false))
    }

    // MARK: P4

    /// A ready device restarts at 1 h, unlocked at 9 h; a background launch at 2 h cannot
    /// read its data. The bug registers again; the corrected SDK waits (and its writes, if
    /// it tried any, would be refused).
    @Test("unreadable-is-not-absent: before the first unlock, a launch does not register again")
    func unreadableIsNotAbsent() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.processKilled(at: h)
            t.record(h, 0, .fault(Reboot.Record.rebooted(unlockAt: 9 * h).fault))
            t.processStarted(at: 2 * h, background: true)
            t.step(at: 2 * h, .input(.launchInBackground)) { if bug { $0.sent(1, .register) } }
            return t
        }
        expectFires(run(bug: true), .unreadableIsNotAbsent, at: 2 * h, mentions: ["registered the device again", "locked after a restart"])
        expectQuiet(run(bug: false))
    }

    /// A ready device restarts at 1 h (unlocked at 9 h); the app is launched at 2 h and
    /// reset() is called at 3 h, before the unlock. SPEC leaves the SDK a choice there: the
    /// call may fail (no reset), or wait for the data and reset once it can read it (an async
    /// SDK's reset() awaiting its store). This SDK waits: at the first step after the unlock
    /// it deletes everything and asks the server to delete the record. SimKit takes that as
    /// the reset; one that deletes only the index is a reset that kept data.
    @Test("P4: a reset() called before the unlock may be done after it, and is judged as a reset then")
    func resetDeferredPastTheUnlock() {
        let c = cred(0, 1)
        func run(deletesAll: Bool, resetCalled: Bool = true) -> HandTrace {
            var t = HandTrace.restartedBeforeReset(resetCalled: resetCalled)
            t.step(at: 10 * h, .input(.becameActive)) {
                $0.store(.setPendingReset(c), .deleteIndex)
                if deletesAll { $0.store(.deleteModels, .deletePlaceData, .deleteCredential) }
                $0.state(.idle)
                if deletesAll { $0.sent(1, .reset, credential: c) }
            }
            if deletesAll {
                t.served(at: 10 * h + 100, 1, .reset, credential: c, .ok, recordAfter: 0)
                t.delivered(at: 10 * h + 200, 1, .reset, .ok, sentAt: 10 * h) { $0.store(.setPendingReset(.none)) }
            }
            return t
        }
        expectQuiet(run(deletesAll: true))
        expectFires(run(deletesAll: false), .resetDeletesEverything, at: 10 * h, mentions: ["reset"])
        // Without the call, the same deletions have no cause.
        #expect(!run(deletesAll: true, resetCalled: false).broken.isEmpty)
    }

    /// The same deferred reset, cut short by a kill in the first step after the unlock: at
    /// its second write (after a mark of the SDK's own, before any write SimKit knows for a
    /// reset's) or at its third (after its pending delete). The next launch finishes it
    /// (P1), and is not blamed; when the reset's pending delete was written, a next launch
    /// that does not finish it is. A process whose first readable step passed without the
    /// reset failed the call: a later deletion has no cause again.
    @Test("P4 with P1: a deferred reset a kill cut short is finished by the next launch")
    func deferredResetKilled() {
        let c = cred(0, 1)
        let mark = LocalData.never - 1
        func run(killAtWrite n: UInt8, finishes: Bool) -> HandTrace {
            var t = HandTrace.restartedBeforeReset()
            t.record(4 * h, 0, .fault(.killPending(atWrite: n)))
            t.record(10 * h, 0, .input(.becameActive))
            t.record(10 * h, 0, .store(.setLastAnsweredCheck(mark)))
            if n == 3 { t.record(10 * h, 0, .store(.setPendingReset(c))) }
            t.record(10 * h, 0, .fault(.killed(atWrite: n)))
            t.processKilled(at: 10 * h)
            t.processStarted(at: 11 * h)
            t.step(at: 11 * h, .input(.launch)) {
                if finishes {
                    if n == 2 { $0.store(.setPendingReset(c)) }
                    $0.store(.deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .setLastAnsweredCheck(LocalData.never))
                    $0.sent(1, .reset, credential: c)
                    $0.sent(2, .register)
                } else {
                    $0.sent(1, .check, credential: c)
                }
                $0.state(.idle)
            }
            return t
        }
        expectQuiet(run(killAtWrite: 2, finishes: true))
        expectQuiet(run(killAtWrite: 3, finishes: true))
        expectQuiet(run(killAtWrite: 2, finishes: false))
        expectFires(run(killAtWrite: 3, finishes: false), .killKeepsWhatWasWritten, at: 11 * h, mentions: ["reset"], also: [.resetDeletesEverything])
    }

    @Test("P4: a reset() before the unlock not done by the first readable step was a call that failed")
    func deferredResetWindowCloses() {
        var t = HandTrace.restartedBeforeReset()
        t.step(at: 10 * h, .input(.becameActive)) { $0.state(.idle) }
        t.step(at: 11 * h, .input(.wentToBackground)) { $0.store(.deleteIndex) }
        expectFires(t, .purgeOnlyAfter30ContinuousDays, at: 11 * h, mentions: ["deleted its index"])
    }
}

extension HandTrace {
    /// A ready device 0 restarts at 1 h (its data unlocked at 9 h); the app is launched at
    /// 2 h and, with `resetCalled`, reset() is called at 3 h, before the unlock.
    static func restartedBeforeReset(resetCalled: Bool = true) -> HandTrace {
        let h = Ms.hour
        var t = HandTrace(.oneApp())
        t.ready()
        t.processKilled(at: h)
        t.record(h, 0, .fault(Reboot.Record.rebooted(unlockAt: 9 * h).fault))
        t.processStarted(at: 2 * h)
        t.step(at: 2 * h, .input(.launch))
        if resetCalled { t.step(at: 3 * h, .input(.reset)) }
        return t
    }
}
