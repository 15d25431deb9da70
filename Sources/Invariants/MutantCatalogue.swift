import SimKit

/// A deliberately wrong variant of the reference SDK or server, to prove that the
/// invariants catch real bugs. Select one with `--sdk mutant:NAME` or `sdk mutant NAME`.
package struct Mutant: Sendable, Equatable {
    package enum Side: String, Sendable { case sdk, server }
    package var name: String
    package var side: Side
    package var sdkFlaws: SDKFlaws
    package var serverFlaws: ServerFlaws
    /// The invariant it should break.
    package var expected: InvariantID
    /// Other invariants it may plausibly break as well.
    package var alsoPlausible: [InvariantID]
    /// The bug, in a line.
    package var summary: String
    /// A deep mutant: its bug shows only at an exact boundary or in a rare
    /// situation, so it measures how well fuzzing aims, not how much it runs.
    package var isDeep: Bool { Mutants.deepNames.contains(name) }
}

/// The catalogue of mutants.
package enum Mutants {
    static func sdk(_ name: String, _ flaws: SDKFlaws, _ expected: InvariantID, _ also: [InvariantID] = [], _ summary: String) -> Mutant {
        Mutant(name: name, side: .sdk, sdkFlaws: flaws, serverFlaws: [], expected: expected, alsoPlausible: also, summary: summary)
    }
    static func server(_ name: String, _ flaws: ServerFlaws, _ expected: InvariantID, _ also: [InvariantID] = [], _ summary: String) -> Mutant {
        Mutant(name: name, side: .server, sdkFlaws: [], serverFlaws: flaws, expected: expected, alsoPlausible: also, summary: summary)
    }

    /// The deep mutants, by name.
    package static let deepNames: [String] = [
        "purge-strictly-after-30-days", "purge-30-minutes-late", "check-age-in-whole-seconds",
        "skip-background-check-after-launch", "no-lock-on-download-refusal", "stale-verdict-after-partition",
        "grace-deadline-inclusive", "stop-now-one-ms-late", "restore-lifts-disable",
        "account-restore-lifts-app-revoke", "disable-spares-grace-keys",
    ]

    /// Every mutant, in a stable order.
    package static let all: [Mutant] = [
        sdk("lock-on-5xx", .locksOn5xx, .neverLockOnTransient, [.lockOnRevocation, .lockedIsInert, .purgeOnlyAfter30ContinuousDays, .reportsNotLost], "treats a 5xx as a lock error"),
        sdk("lock-on-timeout", .locksOnTimeout, .neverLockOnTransient, [.lockOnRevocation, .lockedIsInert, .purgeOnlyAfter30ContinuousDays, .reportsNotLost], "treats a timeout as a lock error"),
        sdk("lock-on-offline", .locksOffline, .neverLockOnTransient, [.lockOnRevocation, .lockedIsInert, .purgeOnlyAfter30ContinuousDays, .reportsNotLost], "treats being offline as a lock error"),
        sdk("lock-on-pending", .locksOnPending, .neverLockOnTransient, [.lockOnRevocation, .lockedIsInert, .purgeOnlyAfter30ContinuousDays, .reportsNotLost], "treats app_pending as a lock error"),
        sdk("lock-on-device-unknown", .locksOnDeviceUnknown, .neverLockOnTransient, [.registersAgainWhenUnknown, .lockOnRevocation, .lockedIsInert, .purgeOnlyAfter30ContinuousDays, .reportsNotLost], "locks on device_unknown instead of registering again"),
        sdk("locked-since-survives-unlock", .lockedSinceSurvivesUnlock, .lockOnRevocation, [.purgeOnlyAfter30ContinuousDays, .reportsNotLost], "does not reset lockedSince on unlock, so a later lock reports the old one"),
        sdk("purge-at-29-days", .purgesAt29Days, .purgeOnlyAfter30ContinuousDays, [.reportsNotLost], "purges one day early"),
        sdk("purge-on-offline-check", .purgesOnTransientCheck, .purgeOnlyAfter30ContinuousDays, [.reportsNotLost, .notRollupIsNoVerdict], "purges on an offline, timed-out, 5xx or portal-answered check past the deadline"),
        sdk("never-purge", .neverPurges, .purgeWhenDue, [], "keeps the data however long access stays stopped"),
        sdk("redownload-models-on-unlock", .redownloadsModelsOnUnlock, .unlockResumesUnchanged, [], "deletes and downloads the models again on unlock"),
        sdk("reindex-on-unlock", .reindexesOnUnlock, .unlockResumesUnchanged, [], "starts the index over on unlock"),
        sdk("skip-background-check", .skipsBackgroundCheck, .keyCheckSchedule, [.lockedIsInert], "starts background runs without a key check"),
        sdk("check-every-48h", .checksEvery48h, .keyCheckSchedule, [], "checks on activation only after 48 h"),
        sdk("no-check-when-locked", .noCheckOnActivationWhenLocked, .lockedChecksOnActivation, [.purgeWhenDue], "a locked SDK does not check when the app becomes active"),
        sdk("apply-stale-responses", .appliesStaleResponses, .staleResponsesIgnored, [.neverLockOnTransient, .lockOnRevocation, .lockedIsInert, .unlockResumesUnchanged, .reportsNotLost, .resetDeletesEverything, .keyCheckSchedule, .lockedChecksOnActivation, .purgeOnlyAfter30ContinuousDays], "acts on answers that arrive after their timeout or a reset"),
        sdk("reset-keeps-credential", .resetKeepsCredential, .resetDeletesEverything, [], "reset() keeps the device credential"),
        sdk("ignore-photos-revoked", .ignoresPhotosRevoked, .photosRevokedDeletesIndex, [], "keeps the index after Photos access is revoked"),
        sdk("query-while-locked", .queriesWhileLocked, .lockedIsInert, [], "a locked SDK still sends query and profile"),
        sdk("index-while-locked", .keepsIndexingWhenLocked, .lockedIsInert, [.reportsNotLost], "keeps the indexing run going after a lock error"),
        sdk("drop-reports-on-failure", .dropsReportsOnFailedUpload, .reportsNotLost, [], "drops queued run reports when an upload fails"),
        sdk("unlock-on-stale-ok", .unlocksOnStaleOK, .newestVerdictWins, [.lockOnRevocation, .lockedChecksOnActivation, .lockedIsInert, .unlockResumesUnchanged, .keyCheckSchedule], "a 200 served before the lock error that locked it unlocks the SDK"),
        sdk("lock-on-stale-refusal", .locksOnStaleRefusal, .newestVerdictWins, [.neverLockOnTransient, .lockOnRevocation, .lockedIsInert, .reportsNotLost, .purgeOnlyAfter30ContinuousDays], "a lock error served before a newer 200 locks the SDK"),
        sdk("purge-from-first-lock-seen", .purgesFromFirstLockSeen, .purgeOnlyAfter30ContinuousDays, [.purgeWhenDue, .reportsNotLost], "counts the 30 days from the first lock error it saw, not the server's stoppedSince"),
        sdk("redownload-place-data-on-unlock", .redownloadsPlaceDataOnUnlock, .unlockResumesUnchanged, [], "deletes and downloads the place data again on unlock"),
        sdk("no-resume-after-unlock", .noResumeAfterUnlock, .unlockResumesUnchanged, [.reportsNotLost], "after an unlock the resumed run ends without indexing"),
        sdk("reports-dropped-on-purge", .dropsReportsOnPurge, .reportsNotLost, [], "a purge drops the queued run reports too"),
        sdk("no-background-after-unlock", .noBackgroundAfterUnlock, .unlockResumesUnchanged, [], "does not register its background task again when it unlocks"),
        sdk("no-run-after-unlock", .noRunAfterUnlock, .unlockResumesUnchanged, [.reportsNotLost], "unlocking in the foreground starts no indexing run: the rest waits for the next activation"),
        sdk("reports-settled-by-device-unknown", .settlesReportsOnDeviceUnknown, .reportsNotLost, [], "takes a device_unknown answer to a report upload as delivery: the reports leave the queue unreceived"),
        sdk("register-only-at-key-check", .registersOnlyAtKeyCheck, .registersAgainWhenUnknown, [.reportsNotLost], "answered device_unknown, registers again only at its next key check: a query or profile in between fails unregistered"),
        server("cache-key-checks", .cachesKeyChecks, .serverEnforcesAccess, [.disableStopsEveryKey, .rotationGrace, .onlyRollupRestores, .deviceBelongsToApp], "caches the key verdict for 5 minutes"),
        server("grace-one-day-late", .graceOneDayLate, .rotationGrace, [], "an old key works one day past its grace"),
        server("enable-lifts-rollup", .enableLiftsRollup, .onlyRollupRestores, [], "the developer's enable lifts a Rollup revocation"),
        server("skip-device-app-check", .skipsDeviceAppCheck, .deviceBelongsToApp, [], "does not check which app a device belongs to"),
        server("reset-keeps-record", .resetKeepsRecord, .resetDeletesEverything, [], "answers a reset without deleting the device's record"),
        server("skip-attestation", .skipsAttestation, .clonesNeverServed, [.serverEnforcesAccess], "registers devices that fail App Attest"),
        server("reset-refused-keeps-record", .resetJudgesKey, .resetDeletesEverything, [.serverEnforcesAccess, .rotationGrace, .disableStopsEveryKey, .onlyRollupRestores, .lockOnRevocation], "judges the key before a reset, so a reset while access is stopped keeps the record"),
        server("clone-credential-accepted", .assertionOnlyAtRegistration, .clonesNeverServed, [.serverEnforcesAccess], "checks App Attest only at registration, so a clone with a copied credential is served"),
        server("stopped-since-from-first-stop", .stoppedSinceFromFirstStop, .serverEnforcesAccess, [.purgeOnlyAfter30ContinuousDays], "dates stoppedSince from the first stop ever, breaks or no breaks"),
        // Deep mutants: each needs a rare situation or an exact boundary.
        sdk("purge-strictly-after-30-days", .purgesStrictlyAfter30Days, .purgeWhenDue, [], "purges only when the stop is more than 30 days old (> for >=): a lock error served at exactly 30 days keeps the data"),
        sdk("purge-30-minutes-late", .purgesHalfHourLate, .purgeWhenDue, [], "purges only once the stop is 30 days and 30 minutes old"),
        sdk("check-age-in-whole-seconds", .checksAgeInWholeSeconds, .keyCheckSchedule, [], "counts the age of the last answered check in whole seconds: no check on activation 24 h + 1..999 ms after it"),
        sdk("skip-background-check-after-launch", .skipsBackgroundCheckAfterRecentCheck, .keyCheckSchedule, [], "a background run started within a minute of an answered check (as after a launch) skips its key check"),
        sdk("no-lock-on-download-refusal", .ignoresLockOnDownload, .lockOnRevocation, [.lockedIsInert, .reportsNotLost, .neverLockOnTransient], "a lock error answering a model or place-data download ends the run without locking"),
        sdk("stale-verdict-after-partition", .forgetsVerdictsWhenOffline, .newestVerdictWins, [.lockOnRevocation, .lockedIsInert, .reportsNotLost, .unlockResumesUnchanged, .lockedChecksOnActivation, .keyCheckSchedule], "forgets its newest verdict when a request fails offline, so a verdict served before the partition and delivered after it is acted on"),
        server("grace-deadline-inclusive", .graceDeadlineInclusive, .rotationGrace, [], "a previous key still works at its grace deadline itself (> for >=)"),
        server("stop-now-one-ms-late", .stopNowOneMsLate, .rotationGrace, [], "stop-old now stops the old key one millisecond after the rotation"),
        server("restore-lifts-disable", .restoreLiftsDisable, .disableStopsEveryKey, [], "Rollup's restore of an app also lifts the developer's disable"),
        server("account-restore-lifts-app-revoke", .accountRestoreLiftsAppRevoke, .onlyRollupRestores, [], "restoring an account also restores its apps that Rollup revoked"),
        server("disable-spares-grace-keys", .disableSparesGraceKeys, .disableStopsEveryKey, [], "a previous key in its grace keeps working while the app is disabled"),
        // S2's tightness through builds the server never saw.
        server("date-update-from-first-request", .datesUpdateFromItsFirstRequest, .serverEnforcesAccess, [.serverRestartLosesNothing], "dates an updated install's stop from its new build's first request, though every key of its app has been refused since earlier"),
        // Bugs that hide where an action lands while a request is in flight.
        sdk("unlock-only-in-foreground", .unlocksOnlyInForeground, .lockedChecksOnActivation, [.unlockResumesUnchanged, .reportsNotLost, .purgeWhenDue], "applies an unlocking 200 only in the foreground: a check whose 200 arrives after the app went to the background leaves it locked"),
        sdk("relock-by-older-check", .unlockForgetsItsVerdict, .newestVerdictWins, [.lockOnRevocation, .lockedIsInert, .reportsNotLost, .unlockResumesUnchanged, .lockedChecksOnActivation, .keyCheckSchedule, .purgeOnlyAfter30ContinuousDays], "does not record the 200 that unlocked it as its newest verdict, so an older refused check still in flight locks it again"),
        sdk("purge-only-on-check", .purgesOnlyOnCheck, .purgeWhenDue, [], "deletes only when the 30-day lock error answers a key check; one answering a query or profile only locks"),
        // Promises judged since SPEC was sharpened: call outcomes (D6), D10's bound, D7's liveness and what reset() deleted.
        sdk("throw-on-pending", .throwsOnPending, .neverLockOnTransient, [], "a query or profile answered app_pending throws accessRevoked"),
        sdk("upload-only-at-run-end", .uploadsOnlyAtRunEnd, .reportsNotLost, [], "uploads queued reports only when a run ends: a device opened with nothing to index keeps them"),
        sdk("reset-not-retried", .resetNotRetried, .resetDeletesEverything, [], "a reset whose server-side delete fails is never tried again"),
        sdk("upload-outlives-reset", .uploaderOutlivesReset, .resetDeletesEverything, [], "the uploader outlives reset(): it sends the dropped reports with the deleted credential"),
        server("reset-ignores-generation", .resetIgnoresGeneration, .resetDeletesEverything, [.serverEnforcesAccess, .registersAgainWhenUnknown, .serverRestartLosesNothing], "a reset deletes the device's live record whatever generation its credential names: a late reset deletes the registration made since"),
        server("dates-forgotten-from-refusal", .datesForgottenFromRefusal, .serverEnforcesAccess, [.serverRestartLosesNothing], "dates the stop of a device it holds no record of (forgotten, reset) from the refusal itself, not from the start of the disable or revocation that refuses every key of its app"),
        server("clone-reset-deletes-record", .resetSkipsAssertion, .clonesNeverServed, [.serverEnforcesAccess, .resetDeletesEverything], "a reset skips the App Attest assertion, so a clone with a live copy of a genuine credential deletes its record"),
        // The phone's clock (P2).
        sdk("check-interval-on-wall-clock", .checksIntervalOnWallClock, .clockChangesNothing, [.lockedIsInert, .purgeWhenDue, .reportsNotLost],
            "counts the 24 h between checks on the phone's clock alone: set back past the last check, the app stops checking when it becomes active"),
        sdk("days-on-wall-clock", .purgesOnWallClock, .clockChangesNothing, [.purgeOnlyAfter30ContinuousDays, .purgeWhenDue, .reportsNotLost],
            "counts the 30 days from stoppedSince to the answer's date on the phone's clock: set forward a month, it purges a stop hours old"),
        // Background time running out (P5).
        sdk("rewind-chunk-on-expiry", .rewindsChunkOnExpiry, .backgroundExpiryKeepsProgress, [],
            "its expiration handler sets the index back a chunk, fearing it half written: photos whose indexing was written are indexed again"),
        sdk("drop-task-on-expiry", .dropsTaskOnExpiry, .backgroundExpiryKeepsProgress, [],
            "its expiration handler cancels the background task (it submits the next one only when a run completes): a run cut short leaves none to resume"),
        // The disk fails (P3).
        sdk("drop-unwritten-report", .dropsUnwrittenReport, .failedWriteLosesNothing, [],
            "queues a run report with try?: when a full disk refuses the write, the report is dropped from memory and never written again"),
        // Protected data before the first unlock (P4).
        sdk("unreadable-as-absent", .unreadableAsAbsent, .unreadableIsNotAbsent, [.lockOnRevocation, .lockedIsInert],
            "takes a read that failed before the first unlock for an empty disk: a launch in the background registers the device again"),
        sdk("wipe-unreadable-index", .wipesUnreadableIndex, .unreadableIsNotAbsent, [],
            "takes an index it cannot read before the first unlock for a corrupt one and deletes it, to start from scratch"),
        // A kill at any write (P1).
        sdk("reset-marks-pending-last", .resetMarksPendingLast, .killKeepsWhatWasWritten, [.resetDeletesEverything, .reportsNotLost, .unlockResumesUnchanged, .lockedIsInert, .lockOnRevocation],
            "deletes a reset's local data before marking its server-side delete pending: a kill between them leaves a half reset that the next launch keeps and the server never hears of"),
        sdk("lock-trusted-by-its-date", .lockTrustedByItsDate, .killKeepsWhatWasWritten, [.lockedIsInert, .lockedChecksOnActivation, .lockOnRevocation, .reportsNotLost, .purgeWhenDue],
            "writes the lock before its date and lifts a lock without a date at launch: a kill between the two writes loses a lock that was written"),
        // A server that restarts (S10).
        server("restart-forgets", .restartForgets, .serverRestartLosesNothing, [.serverEnforcesAccess, .rotationGrace, .disableStopsEveryKey, .onlyRollupRestores, .purgeOnlyAfter30ContinuousDays],
               "keeps the dashboard and Rollup state in memory only: after a restart it answers as declared, as if no action had been acknowledged"),
        // Answers that are not Rollup's (P6).
        sdk("lock-on-bare-403", .locksOnBare403, .notRollupIsNoVerdict, [.neverLockOnTransient, .lockOnRevocation, .lockedIsInert, .purgeOnlyAfter30ContinuousDays, .reportsNotLost, .keyCheckSchedule],
            "locks on any 403: a proxy's bare 403, with no Rollup error code, locks it"),
        sdk("unlock-on-portal-200", .unlocksOnPortal200, .notRollupIsNoVerdict, [.lockOnRevocation, .lockedIsInert, .lockedChecksOnActivation, .unlockResumesUnchanged, .reportsNotLost, .keyCheckSchedule, .purgeWhenDue],
            "locked, takes any 200 to its key check as access back: a captive portal's login page unlocks it"),
        // Bugs only async code has (issue 46); the fourth, a task that outlives reset(), is upload-outlives-reset.
        sdk("timeout-race-takes-late-answer", .timeoutRaceTakesLateAnswer, .staleResponsesIgnored,
            [.neverLockOnTransient, .lockOnRevocation, .lockedIsInert, .unlockResumesUnchanged, .reportsNotLost, .keyCheckSchedule,
             .lockedChecksOnActivation, .newestVerdictWins, .purgeOnlyAfter30ContinuousDays, .registersAgainWhenUnknown, .clockChangesNothing],
            "the timeout race takes the late answer: a request whose own timeout fired stays awaited, and its answer arriving after is acted on"),
        sdk("check-reenters-on-activation", .checkReentersOnActivation, .lockedChecksOnActivation,
            [.lockOnRevocation, .newestVerdictWins, .lockedIsInert, .unlockResumesUnchanged, .reportsNotLost, .purgeWhenDue, .keyCheckSchedule],
            "an activation sends a check of its own with one in flight, and the first answer completes the newest check: the newer answer is dropped"),
        sdk("reset-retry-current-credential", .resetRetriesCurrentCredential, .resetDeletesEverything,
            [.registersAgainWhenUnknown, .reportsNotLost],
            "a reset's retry sends the credential the SDK holds now: after a new registration it deletes that one and the old record stays"),
        // Every registration a server keeps (issue 46, part 4): seen only as the record left behind.
        sdk("second-reset-drops-owed-delete", .secondResetDropsOwedDelete, .resetDeletesEverything,
            [.registersAgainWhenUnknown, .reportsNotLost],
            "a second reset() names the registration made since the first and forgets the first one's delete, still owed: that record stays on the server"),
    ]

    /// Mutants whose bug needs one exact order of events that random fuzzing does not
    /// build: `simkit explore` finds them, `simkit fuzz` is not expected to.
    /// Not in `all` (the mutation score of fuzzing, which `simkit mutants` measures);
    /// `--sdk mutant:NAME` and `sdk mutant NAME` select them like any other.
    package static let orderingOnly: [Mutant] = [
        sdk("background-wake-drops-check", .restartsRunOnBackgroundWake, .lockOnRevocation, [.lockedIsInert, .reportsNotLost, .purgeWhenDue],
            "a background wake after a close restarts a foreground run that waits for its key check, and forgets that check's answer"),
    ]

    /// The mutant called `name`, if any (of `all` or `orderingOnly`).
    package static func named(_ name: String) -> Mutant? { all.first { $0.name == name } ?? orderingOnly.first { $0.name == name } }
    /// Every mutant's name that `--sdk mutant:NAME` accepts (`all`, then `orderingOnly`).
    package static var names: [String] { (all + orderingOnly).map(\.name) }
}
