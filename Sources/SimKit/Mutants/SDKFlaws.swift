/// Deliberate, realistic bugs that turn the reference SDK into a mutant. Each is one
/// small wrong decision at a named decision point of `ReferenceSDK` (its bend is in
/// `ReferenceSDK+Mutants.swift`); with none set it is the reference.
@usableFromInline package struct SDKFlaws: OptionSet, Sendable, Hashable {
    @usableFromInline package let rawValue: UInt64
    @usableFromInline package init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Treats a 5xx as a lock error (breaks D6).
    @usableFromInline package static let locksOn5xx = SDKFlaws(rawValue: 1 << 0)
    /// Treats a timeout as a lock error (breaks D6).
    @usableFromInline package static let locksOnTimeout = SDKFlaws(rawValue: 1 << 1)
    /// Treats `app_pending` as a lock error (breaks D6).
    @usableFromInline package static let locksOnPending = SDKFlaws(rawValue: 1 << 2)
    /// Treats `device_unknown` as a lock error instead of registering again (breaks D6).
    @usableFromInline package static let locksOnDeviceUnknown = SDKFlaws(rawValue: 1 << 3)
    /// Forgets to clear `lockedSince` on unlock, so a later lock purges early (breaks D5).
    @usableFromInline package static let lockedSinceSurvivesUnlock = SDKFlaws(rawValue: 1 << 4)
    /// Purges after 29 days instead of 30 (breaks D5).
    @usableFromInline package static let purgesAt29Days = SDKFlaws(rawValue: 1 << 5)
    /// Purges on a transient check failure past the deadline (breaks D5).
    @usableFromInline package static let purgesOnTransientCheck = SDKFlaws(rawValue: 1 << 6)
    /// Deletes and downloads the models again on unlock (breaks D4).
    @usableFromInline package static let redownloadsModelsOnUnlock = SDKFlaws(rawValue: 1 << 7)
    /// Starts the index over on unlock (breaks D4).
    @usableFromInline package static let reindexesOnUnlock = SDKFlaws(rawValue: 1 << 8)
    /// Starts background runs without a key check (breaks D1).
    @usableFromInline package static let skipsBackgroundCheck = SDKFlaws(rawValue: 1 << 9)
    /// Acts on responses that arrive after their timeout or after a reset (breaks D9).
    @usableFromInline package static let appliesStaleResponses = SDKFlaws(rawValue: 1 << 10)
    /// `reset()` keeps the device credential (breaks D7).
    @usableFromInline package static let resetKeepsCredential = SDKFlaws(rawValue: 1 << 11)
    /// A locked SDK does not check again when the app becomes active (breaks D4).
    @usableFromInline package static let noCheckOnActivationWhenLocked = SDKFlaws(rawValue: 1 << 12)
    /// Keeps the index after Photos access is revoked (breaks D8).
    @usableFromInline package static let ignoresPhotosRevoked = SDKFlaws(rawValue: 1 << 13)
    /// A locked SDK still sends `query` and `profile` to the server (breaks D3).
    @usableFromInline package static let queriesWhileLocked = SDKFlaws(rawValue: 1 << 14)
    /// Drops queued run reports when an upload fails (breaks D10).
    @usableFromInline package static let dropsReportsOnFailedUpload = SDKFlaws(rawValue: 1 << 15)
    /// Never deletes anything, however long access stays stopped (breaks D5 liveness).
    @usableFromInline package static let neverPurges = SDKFlaws(rawValue: 1 << 16)
    /// Checks on activation only after 48 h instead of 24 h (breaks D1).
    @usableFromInline package static let checksEvery48h = SDKFlaws(rawValue: 1 << 17)
    /// Treats being offline as a lock error (breaks D6).
    @usableFromInline package static let locksOffline = SDKFlaws(rawValue: 1 << 18)
    /// Keeps the indexing run going after a lock error, even one answering the run's own
    /// key check (breaks D3).
    @usableFromInline package static let keepsIndexingWhenLocked = SDKFlaws(rawValue: 1 << 19)
    /// A 200 to a key check unlocks even when its verdict is older than the lock error
    /// that locked (breaks D4, D9).
    @usableFromInline package static let unlocksOnStaleOK = SDKFlaws(rawValue: 1 << 20)
    /// A lock error locks even when its verdict is older than a 200 already acted on
    /// (breaks D4, D9).
    @usableFromInline package static let locksOnStaleRefusal = SDKFlaws(rawValue: 1 << 21)
    /// Counts the 30 days from the first lock error it saw (`lockedSince`), not from the
    /// server's `stoppedSince`: a stop that ended and began again unseen purges early (breaks D5).
    @usableFromInline package static let purgesFromFirstLockSeen = SDKFlaws(rawValue: 1 << 22)
    /// Deletes the place data on unlock, so it is downloaded again (breaks D4).
    @usableFromInline package static let redownloadsPlaceDataOnUnlock = SDKFlaws(rawValue: 1 << 23)
    /// After an unlock the resumed run ends at once without indexing (breaks D4).
    @usableFromInline package static let noResumeAfterUnlock = SDKFlaws(rawValue: 1 << 24)
    /// A purge drops the queued run reports too (breaks D5, D10).
    @usableFromInline package static let dropsReportsOnPurge = SDKFlaws(rawValue: 1 << 25)
    /// Deep flaws: each shows only in a rare situation or at an exact boundary.
    /// Purges only when the server's word says *more* than 30 days (`>` for `>=`): a lock
    /// error served exactly 30 days after the stop began keeps the data (breaks D5 liveness).
    @usableFromInline package static let purgesStrictlyAfter30Days = SDKFlaws(rawValue: 1 << 26)
    /// Purges only once the stop is 30 days and 30 minutes old (breaks D5 liveness).
    @usableFromInline package static let purgesHalfHourLate = SDKFlaws(rawValue: 1 << 27)
    /// Measures the age of the last answered check in whole seconds, so an activation
    /// 24 h + 1 ms to 24 h + 999 ms after it does not check (breaks D1).
    @usableFromInline package static let checksAgeInWholeSeconds = SDKFlaws(rawValue: 1 << 28)
    /// A background run that starts less than a minute after a check was answered (as
    /// right after a launch) trusts that answer and skips its own check (breaks D1).
    @usableFromInline package static let skipsBackgroundCheckAfterRecentCheck = SDKFlaws(rawValue: 1 << 29)
    /// A lock error answering a model or place-data download ends the run like a failed
    /// download, without locking: only a stop while a download is in flight shows it (breaks D2, D3).
    @usableFromInline package static let ignoresLockOnDownload = SDKFlaws(rawValue: 1 << 30)
    /// Forgets the newest verdict it acted on when a request fails offline (a "reconnect"
    /// that starts a fresh session), so a verdict served before the partition and delivered
    /// after it is acted on although a newer one was (breaks D4, D9).
    @usableFromInline package static let forgetsVerdictsWhenOffline = SDKFlaws(rawValue: 1 << 31)
    /// An ordering flaw: a background wake that comes while a foreground run
    /// waits for its key check (the app was closed meanwhile) starts the run again as a
    /// background run and forgets the check in flight, so that check's answer, a lock
    /// error among them, arrives unawaited and is ignored. Only the order "check sent,
    /// app closed, background wake, answer delivered" shows it (breaks D2).
    @usableFromInline package static let restartsRunOnBackgroundWake = SDKFlaws(rawValue: 1 << 32)
    /// Does not register its background task again when it unlocks, so a device that was
    /// locked once never indexes in the background again (breaks D4).
    @usableFromInline package static let noBackgroundAfterUnlock = SDKFlaws(rawValue: 1 << 33)
    /// Answered `device_unknown` with no run going, deletes its credential but registers
    /// again only at its next key check (a launch, an activation after 24 h, a run): a
    /// query or profile in between fails unregistered (breaks D6: at the latest at its next call).
    @usableFromInline package static let registersOnlyAtKeyCheck = SDKFlaws(rawValue: 1 << 34)
    /// Starts no indexing run when it unlocks unless one was going: the photos a lock cut
    /// short wait for the next activation or background run (breaks D4).
    @usableFromInline package static let noRunAfterUnlock = SDKFlaws(rawValue: 1 << 35)
    /// Takes a `device_unknown` answer to a run-report upload as delivery: the reports it
    /// carried leave the queue though the server never received them (breaks D10).
    @usableFromInline package static let settlesReportsOnDeviceUnknown = SDKFlaws(rawValue: 1 << 36)
    /// Interleaving flaws: each shows only when an action lands while a request
    /// is in flight, or when a request of an unusual kind meets a boundary.
    /// Applies an unlocking 200 only while the app is in the foreground: a key check sent
    /// on activation whose 200 arrives after the app went to the background keeps the SDK
    /// locked until the next activation (breaks D4).
    @usableFromInline package static let unlocksOnlyInForeground = SDKFlaws(rawValue: 1 << 37)
    /// The 200 that unlocks a locked SDK is not recorded as the newest verdict, so an older
    /// check still in flight (sent before an enable, refused) locks it again (breaks D4, D9).
    @usableFromInline package static let unlockForgetsItsVerdict = SDKFlaws(rawValue: 1 << 38)
    /// Deletes only when the 30-day lock error answers a key check: one answering a query,
    /// profile, upload or download only locks, and the data waits for the next check
    /// (breaks D5 liveness).
    @usableFromInline package static let purgesOnlyOnCheck = SDKFlaws(rawValue: 1 << 39)
    /// Promises judged since SPEC was sharpened (D6, D7, D10).
    /// An unlocked SDK whose query or profile is answered `app_pending` throws
    /// `accessRevoked` from the call, without locking (breaks D6).
    @usableFromInline package static let throwsOnPending = SDKFlaws(rawValue: 1 << 40)
    /// Uploads queued reports only when a run ends, never at a launch or activation nor on
    /// a retry timer: a device with nothing to index keeps its reports however often it is
    /// opened (breaks D10).
    @usableFromInline package static let uploadsOnlyAtRunEnd = SDKFlaws(rawValue: 1 << 41)
    /// A reset whose server-side delete fails is never tried again, neither by a timer nor
    /// at the next launch: the record stays on the server (breaks D7).
    @usableFromInline package static let resetNotRetried = SDKFlaws(rawValue: 1 << 42)
    /// The report uploader outlives `reset()`: it sends the reports the reset deleted with
    /// the credential it deleted (breaks D7: nothing deleted reaches the server afterwards).
    @usableFromInline package static let uploaderOutlivesReset = SDKFlaws(rawValue: 1 << 43)
    /// Locks on any 403, Rollup's or not: a proxy's bare 403 (no Rollup error code, no
    /// `servedAt`) locks it (breaks P6).
    @usableFromInline package static let locksOnBare403 = SDKFlaws(rawValue: 1 << 44)
    /// While locked, takes any 200 to its key check as access back: a captive portal's login
    /// page (or a 200 whose body was cut short) unlocks it (breaks P6).
    @usableFromInline package static let unlocksOnPortal200 = SDKFlaws(rawValue: 1 << 45)
    /// The phone's clock (P2, issue 47).
    /// Counts the 24 h between checks on the phone's wall clock alone, forgetting a clock
    /// set back: its last check then looks younger than ever (a negative age), and the app
    /// becoming active never checks again until the clock catches up (breaks D1 by the
    /// phone's clock).
    @usableFromInline package static let checksIntervalOnWallClock = SDKFlaws(rawValue: 1 << 46)
    /// Counts D5's 30 days from the server's `stoppedSince` to the answer's date read on the
    /// phone's clock, not to the server's `servedAt`: a clock set forward a month purges a
    /// stop a few hours old (breaks D5, P2).
    @usableFromInline package static let purgesOnWallClock = SDKFlaws(rawValue: 1 << 47)
    /// Background time running out (P5, issue 47).
    /// The expiration handler, fearing that the chunk last written is half done, sets the
    /// index's progress back by a chunk before it stops the run: each chunk is one atomic
    /// write, so it discards photos whose indexing was written, and the next run indexes
    /// them again (breaks P5, D4).
    @usableFromInline package static let rewindsChunkOnExpiry = SDKFlaws(rawValue: 1 << 53)
    /// The expiration handler cancels the background task (it submits the next one only when
    /// a run completes): a run cut short leaves no task registered, so the photos it did not
    /// reach wait for the person to open the app (breaks P5: the next run resumes, D4).
    @usableFromInline package static let dropsTaskOnExpiry = SDKFlaws(rawValue: 1 << 54)
    /// Bugs only async code has (issue 46): a race, re-entrancy across an `await`, a retry
    /// that reads state the world has changed since. (Bit 43, `uploaderOutlivesReset`, is
    /// the fourth: a task that outlives the reset that should have stopped it.)
    /// The timeout race takes the late answer: when a request's own timeout fires first the
    /// SDK handles the timeout, but the transport's side of the race is not cancelled and
    /// its answer, arriving later, is still awaited and acted on (breaks D9).
    @usableFromInline package static let timeoutRaceTakesLateAnswer = SDKFlaws(rawValue: 1 << 55)
    /// Check-await-act that re-enters: every activation whose check is due sends a check of
    /// its own, even with one in flight, and a single "pending check" slot is completed by
    /// the first check answer to arrive: the older check's answer is acted on as the newer
    /// one's, and the newer check's answer, arriving after, is dropped as no longer awaited
    /// (breaks D2 when the newer answer is a lock error, D4 when it is the 200 that unlocks).
    @usableFromInline package static let checkReentersOnActivation = SDKFlaws(rawValue: 1 << 56)
    /// A reset's retry (the back-off timer, or the next launch) sends the credential the
    /// SDK holds now rather than the one the reset named: after the device registered again
    /// meanwhile, the retry deletes the new registration and the record the reset named is
    /// never deleted (breaks D7, S8).
    @usableFromInline package static let resetRetriesCurrentCredential = SDKFlaws(rawValue: 1 << 57)
    /// Every registration a server keeps (issue 46, part 4): a second `reset()`, while the
    /// first one's delete is still owed and the device registered again since, names the
    /// new registration and forgets the delete still owed: the old record is left on the
    /// server for good (breaks D7).
    @usableFromInline package static let secondResetDropsOwedDelete = SDKFlaws(rawValue: 1 << 58)
    /// The disk fails (P3, issue 47).
    /// Queues a run report with `try?`: when a full disk refuses the write, the report is
    /// dropped from memory, never written again nor uploaded (breaks P3, D10).
    @usableFromInline package static let dropsUnwrittenReport = SDKFlaws(rawValue: 1 << 50)
    /// Protected data before the first unlock (P4, issue 47).
    /// Takes a read that failed for "nothing there": a launch before the unlock reads an
    /// empty disk and registers the device again (breaks P4).
    @usableFromInline package static let unreadableAsAbsent = SDKFlaws(rawValue: 1 << 51)
    /// Takes an index it cannot read for a corrupt one and deletes it at a launch before the
    /// unlock, to start from scratch (breaks P4).
    @usableFromInline package static let wipesUnreadableIndex = SDKFlaws(rawValue: 1 << 52)
    /// A kill at any write (P1, issue 47).
    /// Resets as it always did before kills were thought of: deletes the local data first
    /// and marks the server-side delete pending last, with no mark of its own, so a kill
    /// between those writes leaves a half reset (the credential or the models kept) that
    /// the next launch takes for a device in use, and the server never hears of it (breaks
    /// D7 under P1).
    @usableFromInline package static let resetMarksPendingLast = SDKFlaws(rawValue: 1 << 48)
    /// Writes the lock before its date, and at a launch trusts a lock only with its date:
    /// a lock without one is taken for a write cut short and lifted. A kill between the two
    /// writes leaves a lock the next launch throws away without an answer (breaks D3, D4
    /// under P1).
    @usableFromInline package static let lockTrustedByItsDate = SDKFlaws(rawValue: 1 << 49)
}
