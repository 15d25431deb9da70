import Testing
import SimKit
import Invariants

/// The promises judged against the truth of the server's decisions (issue 18): verdicts
/// delivered out of order, 30 days in a row, the server's dating of a stop, the reset's
/// record, resuming after an unlock, and clones with copied credentials. Each: a hand-
/// written trace where the invariant must fire, and the corrected trace, where nothing may.
@Suite struct TruthFiresTests {
    let s = Ms.second, m = Ms.minute, h = Ms.hour, d = Ms.day
    let c = cred(0, 1)

    @Test("newest-verdict-wins: a 200 served before the lock error that locked does not unlock") func staleOKDoesNotUnlock() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.becameActive)) { $0.sent(5, .check, credential: c) }
            t.served(at: h + 100, 5, .check, credential: c, .ok)
            t.dashboard(at: h + 150, .disable(app: 0))
            t.step(at: h + 160, .input(.query)) { $0.sent(6, .query, credential: c) }
            t.served(at: h + 170, 6, .query, credential: c, .appDisabled)
            t.delivered(at: h + 180, 6, .query, .appDisabled, sentAt: h + 160) {
                $0.lock(since: h + 180); $0.call(.query, .threwAccessRevoked)
            }
            // The 200 arrives last: served before the lock error, it says nothing of now.
            t.delivered(at: h + 900, 5, .check, .ok, sentAt: h) {
                $0.store(.setLastAnsweredCheck(h + 900))
                if bug { $0.store(.unlock, .setLockedSince(LocalData.never)); $0.state(.idle) }
            }
            return t
        }
        expectFires(run(bug: true), .newestVerdictWins, at: h + 900, mentions: ["unlocked on a 200 served at 0d01h00m00.100s", "older"])
        expectQuiet(run(bug: false))
    }

    @Test("newest-verdict-wins: a lock error served before a newer 200 does not lock") func staleRefusalDoesNotLock() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: h, .disable(app: 0))
            t.step(at: h + 1, .input(.query)) { $0.sent(5, .query, credential: c) }
            t.served(at: h + 10, 5, .query, credential: c, .appDisabled)
            t.dashboard(at: h + 20, .enable(app: 0))
            t.step(at: h + 30, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(6, .check, credential: c) }
            t.served(at: h + 40, 6, .check, credential: c, .ok)
            t.delivered(at: h + 50, 6, .check, .ok, sentAt: h + 30) {
                $0.store(.setLastAnsweredCheck(h + 50)); $0.runEnded(); $0.store(.queueReport); $0.state(.idle)
                $0.sent(7, .runReport, credential: c)
            }
            t.delivered(at: h + 900, 5, .query, .appDisabled, sentAt: h + 1) {
                if bug { $0.lock(since: h + 900); $0.call(.query, .threwAccessRevoked) } else { $0.call(.query, .failed) }
            }
            return t
        }
        expectFires(run(bug: true), .newestVerdictWins, at: h + 900, mentions: ["locked on a lock error served at 0d01h00m00.010s", "older"])
        expectQuiet(run(bug: false))
    }

    @Test("purge-only-after-30-continuous-days: a stop that broke and began again counts from the new start") func thirtyDaysInARow() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            t.dashboard(at: 10 * d, .enable(app: 0))   // nobody opens the app: the device never hears
            t.dashboard(at: 12 * d, .disable(app: 0))
            // 31 days after the first lock, 19 after the stop that counts (stoppedSince 12 d).
            t.launchAndCheck(at: 32 * d, locked: true, .appDisabled) { if bug { $0.purge() } }
            return t
        }
        expectFires(run(bug: true), .purgeOnlyAfter30ContinuousDays, at: 32 * d + 200,
                    mentions: ["its index", "stopped without a break only since 12d00h00m00.000s"])
        expectQuiet(run(bug: false))
    }

    /// A lock error served when the stop was 31 days old is delivered after access came
    /// back and stopped twice more, within its timeout: it still says 30 days in a row
    /// (D5), so deleting is allowed and due (a reviewer's finding: the truth remembered only
    /// the stop before the current one).
    @Test("purge-when-due: a verdict served in a stop of 30 days allows the purge after two more breaks") func thirtyDaysAcrossTwoBreaks() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()   // disabled at 30 min, locked at 1 h
            let at = 31 * d
            t.processStarted(at: at)
            t.step(at: at, .input(.launch)) { $0.state(.locked); $0.sent(1, .check, credential: c) }
            t.served(at: at + 100, 1, .check, credential: c, .appDisabled, stoppedSince: 30 * m)
            t.dashboard(at: at + 110, .enable(app: 0))
            t.dashboard(at: at + 120, .disable(app: 0))
            t.dashboard(at: at + 130, .enable(app: 0))
            t.dashboard(at: at + 140, .disable(app: 0))
            t.delivered(at: at + 5 * s, 1, .check, .appDisabled, sentAt: at) {
                $0.store(.setLastAnsweredCheck(at + 5 * s))
                if !bug { $0.purge() }
            }
            return t
        }
        expectFires(run(bug: true), .purgeWhenDue, at: 31 * d + 5 * s, mentions: ["index"])
        expectQuiet(run(bug: false))
    }

    /// S2.5 refuses a mismatch only for the live record's credential: an install whose
    /// credential is older than its record (the answer to its new registration was lost)
    /// is answered `device_unknown`, no lock error, so shipping another app's key stops
    /// nothing; its access stops when that app is disabled, 12 days before the purge below
    /// (the truth compared the record's owner alone and counted from the update).
    @Test("purge-only-after-30-continuous-days: another app's key with an old credential is no stop") func mismatchNeedsTheLiveCredential() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.twoApps)
            t.ready()
            // Registered again at 1 h (generation 2); the answer is lost, the disk keeps generation 1.
            t.served(at: h, 9, .register, key: 0, .ok, issued: cred(0, 2))
            t.person(at: 2 * h, .update, arg: 2)   // ships key B, the other app's
            t.dashboard(at: 20 * d, .disable(app: 1))
            t.launchAndCheck(at: 32 * d, key: 1, .appDisabled) {
                $0.lock(since: 32 * d + 200)
                if bug { $0.purge() }
            }
            return t
        }
        expectFires(run(bug: true), .purgeOnlyAfter30ContinuousDays, at: 32 * d + 200, mentions: ["only since 20d00h00m00.000s"])
        expectQuiet(run(bug: false))
    }

    @Test("purge-when-due: a device that first hears of a stop 30 days old deletes at that answer") func firstHearsOfAnOldStop() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: d, .disable(app: 0))
            t.launchAndCheck(at: 31 * d + h, .appDisabled) {
                $0.lock(since: 31 * d + h + 200)
                if !bug { $0.purge() }
            }
            return t
        }
        expectFires(run(bug: true), .purgeWhenDue, at: 31 * d + h + 200, mentions: ["stopped without a break since 1d00h00m00.000s", "index"])
        expectQuiet(run(bug: false))
    }

    @Test("reports-not-lost: a purge keeps the queued run reports") func purgeKeepsReports() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(5, .check, credential: c) }
            t.served(at: h + 100, 5, .check, credential: c, .ok)
            t.dashboard(at: h + 150, .disable(app: 0))
            t.delivered(at: h + 200, 5, .check, .ok, sentAt: h) {
                $0.store(.setLastAnsweredCheck(h + 200)); $0.runEnded(); $0.store(.queueReport); $0.state(.idle)
                $0.sent(6, .runReport, credential: c)
            }
            t.served(at: h + 300, 6, .runReport, credential: c, .appDisabled)
            t.delivered(at: h + 400, 6, .runReport, .appDisabled, sentAt: h + 200) { $0.lock(since: h + 400) }
            t.launchAndCheck(at: 31 * d + h, locked: true, .appDisabled) {
                $0.purge()
                if bug { $0.store(.dropReports) }
            }
            return t
        }
        expectFires(run(bug: true), .reportsNotLost, at: 31 * d + h + 200, mentions: ["1 queued run report(s)", "a purge keeps them"])
        expectQuiet(run(bug: false))
    }

    /// D10's bound: two runs end while the upload fails, the third's upload is answered
    /// 200; reports queued before it was sent must all go, by it or by the uploads it starts.
    @Test("reports-not-lost: a 200 that leaves older reports queued starts the next upload") func backlogDrains() {
        func run(bug: Bool, batches: Bool = false) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            var id: UInt32 = 5
            for k: SimTime in 1...3 {
                let at = k * h
                t.backgroundRunUploads(at: at, checkID: id)
                t.served(at: at + 300, id + 1, .runReport, credential: c, k < 3 ? .serverError : .ok)
                let upload = id + 1
                t.delivered(at: at + 400, upload, .runReport, k < 3 ? .serverError : .ok, sentAt: at + 200) {
                    guard k == 3 else { return }
                    $0.store(.reportsUploaded(bug || batches ? 1 : 3))
                    if batches { $0.sent(upload + 1, .runReport, credential: c) }
                }
                id += 2
            }
            return t
        }
        expectFires(run(bug: true), .reportsNotLost, at: 3 * h + 400, mentions: ["2 run report(s) queued before it was sent"])
        expectQuiet(run(bug: false))
        expectQuiet(run(bug: false, batches: true))
    }

    /// Two uploads in flight, the newer answered first: the older one still carries the
    /// rest, so no upload is owed yet (a reviewer's finding: the truth looked only at the
    /// newest upload).
    @Test("reports-not-lost: a newer upload answered first while an older one is in flight owes nothing") func twoUploadsInFlight() {
        var t = HandTrace(.oneApp())
        t.ready()
        t.backgroundRunUploads(at: h, checkID: 5)
        t.backgroundRunUploads(at: h + 5 * s, checkID: 7)
        // Upload 6 (sent at 1 h + 200 ms) is still on its way when upload 8's 200 arrives.
        let second = h + 5 * s
        t.served(at: second + 300, 8, .runReport, credential: c, .ok)
        t.delivered(at: second + 400, 8, .runReport, .ok, sentAt: second + 200) { $0.store(.reportsUploaded(1)) }
        t.served(at: second + 500, 6, .runReport, credential: c, .ok)
        t.delivered(at: second + 600, 6, .runReport, .ok, sentAt: h + 200) { $0.store(.reportsUploaded(1)) }
        expectQuiet(t)
    }

    @Test("server-enforces-access: stoppedSince is sound (never before the unbroken stop began)") func stoppedSinceSound() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: d, .disable(app: 0))
            t.dashboard(at: 2 * d, .enable(app: 0))
            t.dashboard(at: 3 * d, .disable(app: 0))
            t.served(at: 4 * d, 5, .check, credential: c, .appDisabled, stoppedSince: bug ? d : 3 * d)
            return t
        }
        expectFires(run(bug: true), .serverEnforcesAccess, at: 4 * d, mentions: ["since 1d00h00m00.000s", "only at 3d00h00m00.000s", "sound"])
        expectQuiet(run(bug: false))
    }

    @Test("server-enforces-access: access back and stopped again in one millisecond is a break") func zeroLengthBreak() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: d, .disable(app: 0))
            t.dashboard(at: 2 * d, .enable(app: 0))
            t.dashboard(at: 2 * d, .disable(app: 0))
            t.served(at: 3 * d, 5, .check, credential: c, .appDisabled, stoppedSince: bug ? d : 2 * d)
            return t
        }
        expectFires(run(bug: true), .serverEnforcesAccess, at: 3 * d, mentions: ["only at 2d00h00m00.000s", "sound"])
        expectQuiet(run(bug: false))
    }

    @Test("server-enforces-access: stoppedSince is tight for an install that carried one key") func stoppedSinceTight() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.dashboard(at: d, .disable(app: 0))
            t.served(at: 4 * d, 5, .check, credential: c, .appDisabled, stoppedSince: bug ? 2 * d : d)
            return t
        }
        expectFires(run(bug: true), .serverEnforcesAccess, at: 4 * d, mentions: ["since 2d00h00m00.000s", "tight"])
        expectQuiet(run(bug: false))
    }

    @Test("server-enforces-access: every verdict is dated when it was served") func servedAtIsNow() {
        var t = HandTrace(.oneApp())
        t.ready()
        t.record(h, 0, .served(id: 5, kind: .check, key: 0, credential: c,
                               reply: ServerReply(.ok, servedAt: h - 5 * m), recordAfter: 1))
        expectFires(t, .serverEnforcesAccess, at: h, mentions: ["served at 0d00h55m00.000s"])
    }

    @Test("reset-deletes-everything: the record goes within the stated back-off plus a timeout of the app running online (D7)")
    func resetDeletedWithinTheBound() {
        // A reset sent into a 5xx; the fix retries 5 min later, the bug never.
        func run(bug: Bool, endAt: SimTime) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.reset)) {
                $0.store(.deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .setPendingReset(c))
                $0.state(.idle)
                $0.sent(5, .reset, credential: c)
            }
            t.served(at: h + 100, 5, .reset, credential: c, .serverError)
            t.delivered(at: h + 200, 5, .reset, .serverError, sentAt: h)
            if !bug {
                t.step(at: h + 5 * m, .timer(.resetRetry)) { $0.sent(6, .reset, credential: c) }
                t.served(at: h + 5 * m + 100, 6, .reset, credential: c, .ok, recordAfter: 0)
                t.delivered(at: h + 5 * m + 200, 6, .reset, .ok, sentAt: h + 5 * m) { $0.store(.setPendingReset(.none)) }
            }
            t.checker.finish(at: endAt)
            return t
        }
        // 6 h (the stated back-off, SPEC's limit) plus 30 s (the timeout) of counted time.
        expectFires(run(bug: true, endAt: 8 * h), .resetDeletesEverything, at: 8 * h, mentions: ["still holds the device's record", "6h"])
        expectQuiet(run(bug: true, endAt: 7 * h))   // not yet over the bound
        expectQuiet(run(bug: false, endAt: 8 * h))
    }

    @Test("reset-deletes-everything: time offline or with the app not running does not count (D7)")
    func resetBoundCountsOnlyOnlineRunningTime() {
        var t = HandTrace(.oneApp())
        t.ready()
        t.step(at: h, .input(.reset)) {
            $0.store(.deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .setPendingReset(c))
            $0.sent(5, .reset, credential: c)
        }
        t.served(at: h + 100, 5, .reset, credential: c, .serverError)
        t.delivered(at: h + 200, 5, .reset, .serverError, sentAt: h)
        t.record(2 * h, 0, .fault(.offline(until: 10 * h)))   // 8 h offline
        t.record(10 * h, 0, .fault(.offlineEnded))
        t.processKilled(at: 11 * h)                            // and the app ends for 10 h
        t.processStarted(at: 21 * h)
        t.checker.finish(at: 23 * h)   // counted: 1 h + 1 h + 2 h = 4 h, under 6 h 30 s
        expectQuiet(t)
    }

    @Test("reset-deletes-everything: nothing reset() deleted reaches the server afterwards (D7)")
    func resetDeletedCredentialNeverSentAgain() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.reset)) {
                $0.store(.deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .setPendingReset(c))
                $0.sent(5, .reset, credential: c)
                if bug { $0.sent(6, .runReport, credential: c) }
            }
            return t
        }
        expectFires(run(bug: true), .resetDeletesEverything, at: h, mentions: ["run-report request carrying the device credential that reset() deleted"])
        expectQuiet(run(bug: false))
    }

    @Test("reports-not-lost: reports queued go up at an activation once the stated back-off has run out (D10)")
    func uploadOwedAtActivationAfterBackoff() {
        func run(bug: Bool, activationAt: SimTime) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.backgroundRunUploads(at: h, checkID: 5)
            t.served(at: h + 300, 6, .runReport, credential: c, .serverError)
            t.delivered(at: h + 400, 6, .runReport, .serverError, sentAt: h + 200)
            t.step(at: activationAt, .input(.becameActive)) { if !bug { $0.sent(7, .runReport, credential: c) } }
            t.checker.finish(at: activationAt + 5 * m)
            return t
        }
        expectFires(run(bug: true, activationAt: 8 * h), .reportsNotLost, at: 8 * h + 5 * m, mentions: ["no upload was under way", "back-off"])
        expectQuiet(run(bug: true, activationAt: 3 * h))   // within the 6 h back-off: nothing owed yet
        expectQuiet(run(bug: false, activationAt: 8 * h))
    }

    @Test("unlock-resumes-unchanged: a run that has all it needs indexes every photo") func runIndexesTheRest() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.person(at: h, .addPhotos, arg: 300)   // the library: 300 photos, 200 indexed
            t.step(at: 2 * h, .input(.backgroundRun)) { $0.runStarted(background: true); $0.state(.indexing); $0.sent(5, .check, credential: c) }
            t.served(at: 2 * h + 100, 5, .check, credential: c, .ok)
            t.delivered(at: 2 * h + 200, 5, .check, .ok, sentAt: 2 * h) {
                $0.store(.setLastAnsweredCheck(2 * h + 200))
                if bug { $0.runEnded(); $0.store(.queueReport); $0.state(.idle); $0.sent(6, .runReport, credential: c) }
            }
            if !bug {
                t.step(at: 2 * h + 10 * s, .timer(.indexChunk)) {
                    $0.store(.indexPhotos(from: 200, count: 100))
                    $0.runEnded(); $0.store(.queueReport); $0.state(.idle); $0.sent(6, .runReport, credential: c)
                }
            }
            return t
        }
        expectFires(run(bug: true), .unlockResumesUnchanged, at: 2 * h + 200, mentions: ["100 of the 300 photos the library had when it started not indexed"])
        expectQuiet(run(bug: false))
    }

    @Test("unlock-resumes-unchanged: place data is never downloaded again") func placeDataNotAgain() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            t.step(at: h, .input(.becameActive)) { $0.sent(5, bug ? .placeData : .check, credential: c) }
            t.served(at: h + 100, 5, bug ? .placeData : .check, credential: c, .ok)
            t.delivered(at: h + 200, 5, bug ? .placeData : .check, .ok, sentAt: h) {
                if bug { $0.store(.savePlaceData) } else { $0.store(.setLastAnsweredCheck(h + 200)) }
            }
            return t
        }
        expectFires(run(bug: true), .unlockResumesUnchanged, at: h + 200, mentions: ["place data again"])
        expectQuiet(run(bug: false))
    }

    @Test("clones-never-served: a clone with a copy of a genuine credential is refused") func cloneWithCopiedCredential() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp(devices: 1, clones: 1))
            t.ready()
            t.served(at: h, device: 1, 1, .query, credential: c, bug ? .ok : .attestationFailed)
            return t
        }
        expectFires(run(bug: true), .clonesNeverServed, device: 1, at: h, mentions: ["clone", "a copy of credential cred(0.1)"])
        expectQuiet(run(bug: false))
    }
}

/// Steps that end with work in progress (`unsettled`: an async SDK's storage write not
/// done yet) are judged with the device's next steps, as one episode.
@Suite struct EpisodeTests {
    static let s = Ms.second, m = Ms.minute, h = Ms.hour
    let c = cred(0, 1)

    /// A ready device whose launch check at 1 h is answered `app_disabled` at 1 h + 200 ms; the
    /// SDK awaits its write before it reports the lock, so the lock lands 5 ms later.
    func slowLock(unsettled: Bool, writes: Bool = true, storageLatencyMs: UInt16 = 0) -> HandTrace {
        var setup = WorldSetup.oneApp()
        setup.sdk.storageLatencyMaxMs = storageLatencyMs
        var t = HandTrace(setup)
        t.ready()
        t.dashboard(at: 30 * Self.m, .disable(app: 0))
        t.processStarted(at: Self.h)
        t.step(at: Self.h, .input(.launch)) { $0.state(.idle); $0.sent(1, .check, credential: c) }
        t.served(at: Self.h + 100, 1, .check, credential: c, .appDisabled)
        t.record(Self.h + 200, 0, .delivered(id: 1, kind: .check, answer: .appDisabled, viaTimer: false, sentAt: Self.h,
                                             servedAt: Self.h + 100, stoppedSince: 30 * Self.m))
        if unsettled { t.record(Self.h + 200, 0, .unsettled) }
        t.record(Self.h + 200, 0, .stepEnd)
        if writes { t.step(at: Self.h + 205, .timer(.indexChunk)) { $0.lock(since: Self.h + 200) } }
        return t
    }

    @Test("a lock written a few milliseconds after its lock error is the same step's (D3)")
    func lockAfterItsWrite() {
        expectQuiet(slowLock(unsettled: true))
        // Without the mark, the answer's own step is judged alone: it did not lock.
        expectFires(slowLock(unsettled: false), .lockOnRevocation, at: Self.h + 200, mentions: ["did not lock"],
                    also: [.neverLockOnTransient, .lockedIsInert])
    }

    @Test("an episode still open when the run ends is judged as it stands")
    func openEpisodeJudgedAtTheEnd() {
        var t = slowLock(unsettled: true, writes: false)
        t.checker.finish(at: 2 * Self.h)
        expectFires(t, .lockOnRevocation, at: 2 * Self.h, mentions: ["did not lock"], also: [.lockedIsInert])
    }

    @Test("an episode still open when the run ends within the storage latency of its latest step is not judged: the wait may still be out")
    func runCutShortDuringAWait() {
        var cut = slowLock(unsettled: true, writes: false, storageLatencyMs: 2_000)
        cut.checker.finish(at: Self.h + 200 + 2_000)
        expectQuiet(cut)
        var over = slowLock(unsettled: true, writes: false, storageLatencyMs: 2_000)
        over.checker.finish(at: Self.h + 200 + 2_001)
        expectFires(over, .lockOnRevocation, at: Self.h + 200 + 2_001, mentions: ["did not lock"], also: [.lockedIsInert])
    }

    @Test("a purge done when the lock error's write returns is that answer's own (D5)")
    func purgeOnceTheWriteReturns() {
        let d = Ms.day
        func run(unsettled: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.readyThenLocked()
            // 30 days into the stop, a lock error that makes the purge due; the SDK awaits
            // its storage first and deletes 1.5 s later, when the wait returns.
            t.launchAndCheck(at: 31 * d + Self.h, locked: true, .appDisabled) { if unsettled { $0.events.append(.unsettled) } }
            t.step(at: 31 * d + Self.h + 1_700, .timer(.indexChunk)) { $0.purge() }
            return t
        }
        expectQuiet(run(unsettled: true))
        // Without the mark the answer's step is judged alone, and the deletion after it has no cause.
        expectFires(run(unsettled: false), .purgeWhenDue, at: 31 * d + Self.h + 200, mentions: ["app_disabled", "index (200 photos)"],
                    also: [.purgeOnlyAfter30ContinuousDays])
    }

    @Test("a stale answer's step that ends while a storage wait is still out is judged alone: the steps after it are not its (D9)")
    func staleStepWhileAWaitIsOut() {
        var t = queryTimedOutThenSlowActivation()
        // The late 200 changes nothing, but its step ends with the activation's wait still out.
        t.delivered(at: 2 * Self.h + 1, 5, .query, .ok, sentAt: Self.h) { $0.events.append(.unsettled) }
        // The activation's wait returns (its episode ends), then a later step writes.
        t.step(at: 2 * Self.h + 5, .timer(.indexChunk))
        t.step(at: 2 * Self.h + 500, .timer(.indexChunk)) { $0.store(.setLastAnsweredCheck(2 * Self.h + 500)) }
        t.checker.finish(at: 3 * Self.h)
        expectQuiet(t)
    }

    /// A query sent at 1 h times out; at 2 h an activation ends with its write still in
    /// progress, and the server's 200 to the query (served at 1 h + 100 ms) is on its way.
    func queryTimedOutThenSlowActivation() -> HandTrace {
        var t = HandTrace(.oneApp())
        t.ready()
        t.step(at: Self.h, .input(.query)) { $0.sent(5, .query, credential: c) }
        t.step(at: Self.h + 31 * Self.s, .timeout(5, .query)) { $0.call(.query, .failed) }
        t.record(2 * Self.h, 0, .input(.becameActive))
        t.record(2 * Self.h, 0, .unsettled)
        t.record(2 * Self.h, 0, .stepEnd)
        t.served(at: Self.h + 100, 5, .query, credential: c, .ok)
        return t
    }

    @Test("a stale answer that comes during an episode is judged alone (D9)")
    func staleAnswerDuringEpisode() {
        func run(bug: Bool) -> HandTrace {
            var t = queryTimedOutThenSlowActivation()
            // The query's late 200 arrives during the activation's episode.
            t.delivered(at: 2 * Self.h + 1, 5, .query, .ok, sentAt: Self.h) { if bug { $0.state(.indexing) } }
            t.step(at: 2 * Self.h + 5, .timer(.indexChunk)) { $0.store(.setLastAnsweredCheck(2 * Self.h + 5)) }
            return t
        }
        expectFires(run(bug: true), .staleResponsesIgnored, at: 2 * Self.h + 1, mentions: ["stale 200"],
                    also: [.keyCheckSchedule, .unlockResumesUnchanged])
        expectQuiet(run(bug: false))
    }
}

/// Run reports an SDK names: each is judged by its own receipt (D10), and none a reset
/// deleted may be uploaded afterwards (D7).
@Suite struct NamedReportTests {
    static let s = Ms.second, m = Ms.minute, h = Ms.hour
    let c = cred(0, 1)

    /// A ready device queues named reports 7 and 8 at 1 h and uploads only 7.
    func queuedAndUploaded(_ t: inout HandTrace) {
        t.step(at: Self.h, .input(.backgroundRun)) {
            $0.runStarted(background: true); $0.sent(5, .check, credential: c)
        }
        t.served(at: Self.h + 100, 5, .check, credential: c, .ok)
        t.delivered(at: Self.h + 200, 5, .check, .ok, sentAt: Self.h) {
            $0.store(.setLastAnsweredCheck(Self.h + 200)); $0.runEnded()
            $0.store(.reportQueued(id: 7), .reportQueued(id: 8))
            $0.sent(6, .runReport, credential: c)
            $0.events.append(.carries(report: 7))
        }
        t.served(at: Self.h + 300, 6, .runReport, credential: c, .ok)
    }

    @Test("a named report leaves the queue only once a 200 came to an upload that carried it (D10)")
    func receiptPerReport() {
        func run(leaves: UInt64) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            queuedAndUploaded(&t)
            t.delivered(at: Self.h + 400, 6, .runReport, .ok, sentAt: Self.h + 200) {
                $0.store(.reportLeft(id: leaves))
                $0.sent(7, .runReport, credential: c); $0.events.append(.carries(report: 8))
            }
            return t
        }
        expectQuiet(run(leaves: 7))
        expectFires(run(leaves: 8), .reportsNotLost, at: Self.h + 400, mentions: ["run report 8 left the queue"])
    }

    @Test("no report reset() deleted is carried by an upload afterwards (D7)")
    func deletedReportNeverUploaded() {
        func run(bug: Bool) -> HandTrace {
            var t = HandTrace(.oneApp())
            t.ready()
            queuedAndUploaded(&t)
            t.delivered(at: Self.h + 400, 6, .runReport, .serverError, sentAt: Self.h + 200)
            t.step(at: 2 * Self.h, .input(.reset)) {
                $0.store(.deleteIndex, .deleteModels, .deletePlaceData, .reportLeft(id: 7), .reportLeft(id: 8),
                         .deleteCredential, .setPendingReset(c))
                $0.sent(8, .reset, credential: c)
            }
            t.served(at: 2 * Self.h + 100, 8, .reset, credential: c, .ok, recordAfter: 0)
            t.delivered(at: 2 * Self.h + 200, 8, .reset, .ok, sentAt: 2 * Self.h) { $0.store(.setPendingReset(.none)) }
            t.step(at: 3 * Self.h, .input(.becameActive)) {
                $0.sent(9, .register)
                if bug { $0.sent(10, .runReport); $0.events.append(.carries(report: 8)) }
            }
            return t
        }
        expectQuiet(run(bug: false))
        expectFires(run(bug: true), .resetDeletesEverything, at: 3 * Self.h, mentions: ["carries run report 8, which reset() deleted"])
    }
}
