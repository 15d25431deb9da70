import SimKit

/// The invariants of SPEC §3, by their stable kebab-case names. Each one's doc comment
/// states its oracle: what it reads (only the trace and the scenario's facts) and what it
/// judges against (the checkers' own reading of the S rules, never the SDK's flags or the
/// reference's constants).
public enum InvariantID: String, CaseIterable, Sendable, Comparable, Codable {
    /// Oracle (D6): the SDK becomes locked only in the steps of a fresh lock error that is the newest verdict delivered (the trace's `delivered` records), or of `reset()`; and a call throws `accessRevoked` only while the SDK is locked or when a lock error answered its own request.
    case neverLockOnTransient = "never-lock-on-transient"
    /// Oracle (D2, D3): after a fresh, newest lock error the SDK reports access revoked and its disk is locked by the end of that step (with the steps its storage still had in progress), with `lockedSince` at the first such delivery since access was last granted; it never unlocks without a newer 200 (D4).
    case lockOnRevocation = "lock-on-revocation"
    /// Oracle (D3): while the trace's verdicts say access is stopped, the device shows no run, no index write, no download, no server-backed request and no background task, and search, query and profile throw.
    case lockedIsInert = "locked-is-inert"
    /// Oracle (D4): while locked, each launch and activation sends a key check, and a fresh, newest 200 to a check unlocks.
    case lockedChecksOnActivation = "locked-checks-on-activation"
    /// Oracle (D4): the disk replica rebuilt from `store` records keeps the index and models it had when the lock came; an unlock registers again the background task the lock cancelled and, in the foreground with work to do, resumes indexing; nothing is downloaded or indexed twice; a run that ends by itself with access, Photos, models and place data has indexed every photo the library had when it started.
    case unlockResumesUnchanged = "unlock-resumes-unchanged"
    /// Oracle (D5, D7, D8): data is deleted only by `reset()`, Photos revocation, or a fresh, newest lock error served when, by the checkers' own timeline of S2 (dashboard and Rollup records, key deadlines, the install's key), access had been stopped 30 days without a break.
    case purgeOnlyAfter30ContinuousDays = "purge-only-after-30-continuous-days"
    /// Oracle (D5): a fresh, newest lock error whose `stoppedSince` is 30 days before its `servedAt`, and truly so by the checkers' timeline, deletes the index, the models and the credential when it is handled.
    case purgeWhenDue = "purge-when-due"
    /// Oracle (D1): each launch sends a key check; each run (seen by its run events or by the state `indexing`) starts after a check sent since the launch, activation or background run that started it, or one in flight; each activation more than 24 h after the last fresh verdict on a check sends one (or one is in flight).
    case keyCheckSchedule = "key-check-schedule"
    /// Oracle: each `served` record's answer is the checkers' own reading of S2 for that request, dated at its record's time, and a lock error's `stoppedSince` is no earlier than the start of the stop in the checkers' timeline and no later than the latest start that every key history consistent with what the server saw agrees on.
    case serverEnforcesAccess = "server-enforces-access"
    /// Oracle: an old key is answered as the checkers' key table says: served until its own deadline (rotation time plus grace), refused from the deadline or from its stop.
    case rotationGrace = "rotation-grace"
    /// Oracle: while the checkers' table says the developer disabled the app, every key of it is refused `app_disabled`.
    case disableStopsEveryKey = "disable-stops-every-key"
    /// Oracle: while the checkers' table says Rollup revoked or rejected the app or its account, no developer action gets it served.
    case onlyRollupRestores = "only-rollup-restores"
    /// Oracle: a request is served only with a key of the app whose registration (a `served` register in the trace) made the device's live record.
    case deviceBelongsToApp = "device-belongs-to-app"
    /// Oracle: no request of a non-genuine install (a fact of the world) is ever answered 200, whatever credential it carries.
    case clonesNeverServed = "clones-never-served"
    /// Oracle (D7, S8): after `reset()` the disk replica holds nothing the page lists; no request but the reset's own delete carries the deleted credential afterwards; the server's answer to a reset is 200 whatever the key's state, and its record is gone, but only the registration its credential names (a reset naming one already gone spares a newer one); a record that a reset must delete is gone within the SDK's stated retry back-off (at most 6 h) plus one request timeout of time with the app running, the device online and the server up.
    case resetDeletesEverything = "reset-deletes-everything"
    /// Oracle (D8): after a `revoke-photos` record, the next launch or activation leaves the disk replica's index empty, and nothing is indexed meanwhile.
    case photosRevokedDeletesIndex = "photos-revoked-deletes-index"
    /// Oracle (D9): an answer delivered after its request's timeout (sent time plus the world's timeout), or after a reset or purge that came while it was in flight, changes nothing; it may only end the API call that awaited it as failed.
    case staleResponsesIgnored = "stale-responses-ignored"
    /// Oracle (D10): every run ends with a report; reports leave the disk replica only by `reset()` or by a 200 to an upload sent after they were queued; while reports are queued and the SDK unlocked and registered, an upload is under way at every launch, activation and run end that comes after the SDK's stated back-off from its last failed upload, and a 200 that leaves reports queued before its upload was sent starts another upload at once.
    case reportsNotLost = "reports-not-lost"
    /// Oracle (D4, D9): a fresh verdict whose `servedAt` is older than one already delivered to the device neither locks nor unlocks it.
    case newestVerdictWins = "newest-verdict-wins"
    /// Oracle (D6): after a fresh, newest `device_unknown` the SDK sends a registration at
    /// the latest in the step of its next call (query, profile) or of its next run's start;
    /// a locked SDK's next key check (at an activation, D4) is a registration.
    case registersAgainWhenUnknown = "registers-again-when-unknown"
    /// Oracle (S10): after a `serverRestarted` record, each `served` answer that the
    /// checkers' reading of S2 finds wrong, where the part of S2 it disagrees on (the state
    /// of the request's key, or of its app and account, set by dashboard and Rollup records,
    /// or the device's record, set by a register or reset answered 200) was last changed
    /// before the restart: the server answers as if it had not acknowledged it (serves a key it had
    /// disabled, rotated out or revoked; answers `device_unknown` to a registration it had
    /// answered 200; keeps a record a reset deleted); and a lock error whose `stoppedSince`
    /// is later than the server's own history allows when that history predates the restart.
    case serverRestartLosesNothing = "server-restart-loses-nothing"
    /// Oracle (P6): in a step begun by an answer that is not Rollup's (the trace's
    /// `delivered` record says `notRollup`: a portal, a proxy or a load balancer answered in
    /// the server's place), the SDK neither locks nor unlocks (its reported state and its
    /// disk's lock), purges nothing (the disk replica keeps its index, models and
    /// credential), and settles no queued run report; and an activation more than 24 h
    /// after the last verdict on a check, with such answers since, still checks (D1's
    /// "answered" check is a verdict).
    case notRollupIsNoVerdict = "not-rollup-is-no-verdict"
    /// Oracle (P2, D1 by the phone's clock): from the `clock` fault records, each phone's
    /// wall clock (its offset from the true time). At an activation of an unlocked device
    /// whose clock moved since its last fresh verdict on a check, a check is sent (or one
    /// is in flight) when that check is more than 24 h old by the phone's clock or the
    /// phone's clock reads earlier than when it came (set back past it); there
    /// `key-check-schedule` stands aside. And no data is deleted on a lock error whose stop,
    /// by the checkers' timeline of S2, is less than 30 days old while the phone's clock
    /// reads 30 days or more past its start (or past the lock): a purge only the phone's
    /// clock justifies (D5 is broken too).
    case clockChangesNothing = "clock-changes-nothing"
    /// Oracle (P5, D4): from the `background-limit` fault records (a run asked to stop, a
    /// process killed after the grace). In the step where the run is asked to stop the SDK
    /// deletes nothing and sets no written progress back (an `indexPhotos` below the index
    /// it holds), and at its end the background task registered before is still registered
    /// while photos are left and access is not stopped; until a later run ends on its own,
    /// no photo is indexed again and no model or place data downloaded again (there
    /// `unlock-resumes-unchanged` stands aside). A run that was asked to stop and ends with
    /// photos left is no run that "ended on its own" (D4's check stands aside). However the
    /// SDK ends its run (at once, later, or killed), nothing else is asked of it.
    case backgroundExpiryKeepsProgress = "background-expiry-keeps-progress"
    /// Oracle (P3): from the `disk-full` fault records (each write a full disk refused). A
    /// run report whose queue write failed is owed: once the disk takes a report again in
    /// the same process, every report owed is written by the end of that step (lost only
    /// with the process, P1, or by `reset()`). A photo whose index write failed is not
    /// counted as indexed: no later index write starts past what the disk holds. A step
    /// whose write failed, or a phone whose disk is full, deletes no data (it does not
    /// "make room" with a person's index, models, place data, credential or reports).
    case failedWriteLosesNothing = "failed-write-loses-nothing"
    /// Oracle (P4): from the `reboot` records, each phone's protected data is locked from
    /// its restart until the person first unlocks it. Meanwhile the SDK registers nothing,
    /// downloads no models or place data, and tries to delete none of a person's data (the
    /// refused writes the trace records say what it tried): it cannot have read its data,
    /// so it cannot know any of that is owed. Its steps meanwhile are judged by this alone
    /// (a launch that waits for the data checks its key after the unlock).
    case unreadableIsNotAbsent = "unreadable-is-not-absent"
    /// Oracle (P1, with D3, D4, D5, D7, D10 after any kill): from the `kill` fault records
    /// and the writes made before each. A lock on the disk when the process was killed is
    /// still there at the end of the next launch, which reports the SDK locked (or purged);
    /// a reset whose first write was made, or a purge (the models deleted or the purge
    /// marked while locked), is finished on the disk by the end of the next launch. A
    /// reset killed before its first write never happened. Queued reports, indexing
    /// written and a reset's server part are judged across launches by their own checkers.
    case killKeepsWhatWasWritten = "kill-keeps-what-was-written"

    /// The SPEC rules it checks.
    public var rules: String {
        switch self {
        case .neverLockOnTransient: "D6"
        case .lockOnRevocation: "D2, D3"
        case .lockedIsInert: "D3"
        case .lockedChecksOnActivation: "D4"
        case .unlockResumesUnchanged: "D4"
        case .purgeOnlyAfter30ContinuousDays: "D5"
        case .purgeWhenDue: "D5"
        case .keyCheckSchedule: "D1"
        case .serverEnforcesAccess: "S1, S2, S7"
        case .rotationGrace: "S3"
        case .disableStopsEveryKey: "S4"
        case .onlyRollupRestores: "S5"
        case .deviceBelongsToApp: "S6"
        case .clonesNeverServed: "S6"
        case .resetDeletesEverything: "D7, S8"
        case .photosRevokedDeletesIndex: "D8"
        case .staleResponsesIgnored: "D9"
        case .reportsNotLost: "D10"
        case .newestVerdictWins: "D4, D9"
        case .registersAgainWhenUnknown: "D6"
        case .serverRestartLosesNothing: "S10"
        case .notRollupIsNoVerdict: "P6"
        case .clockChangesNothing: "P2, D1"
        case .backgroundExpiryKeepsProgress: "P5, D4"
        case .failedWriteLosesNothing: "P3"
        case .unreadableIsNotAbsent: "P4"
        case .killKeepsWhatWasWritten: "P1, D3, D4, D5, D7, D10"
        }
    }

    /// The promise, in one line of plain words.
    public var summary: String {
        switch self {
        case .neverLockOnTransient: "being offline, a timeout, a 5xx, app_pending or device_unknown never locks the SDK, nor makes a call throw accessRevoked"
        case .lockOnRevocation: "app_key_invalid, app_disabled or app_key_mismatch locks the SDK at once, with lockedSince at the first one"
        case .lockedIsInert: "a locked SDK indexes nothing, runs nothing in the background and throws from search, query and profile without a request"
        case .lockedChecksOnActivation: "a locked SDK checks its key at each launch and activation, and unlocks on a 200 newer than its lock"
        case .unlockResumesUnchanged: "unlocking resumes the index as it was: no model or place data downloaded again, no photo indexed twice, the next run indexes the rest"
        case .purgeOnlyAfter30ContinuousDays: "data is deleted only by reset, Photos revocation, or a lock error served when access had in truth been stopped 30 days in a row"
        case .purgeWhenDue: "a lock error whose stoppedSince is 30 days before its servedAt (and truly so) deletes the index, the models and the credential"
        case .keyCheckSchedule: "the key is checked at each launch, at the start of each indexing run, and at each activation when the last answer is over 24 h old"
        case .serverEnforcesAccess: "the server answers every request by the first rule of S2 that applies, with no caching, and dates each verdict and stop truly"
        case .rotationGrace: "an old key works until its own grace deadline and not a millisecond after, or stops when stopped"
        case .disableStopsEveryKey: "a disabled app is refused with every key, current or old"
        case .onlyRollupRestores: "what Rollup revoked or rejected stays refused until Rollup lifts it"
        case .deviceBelongsToApp: "a device is served only with the key of the app that registered it"
        case .clonesNeverServed: "a non-genuine install, even with a copy of a genuine credential, fails App Attest and is never served"
        case .resetDeletesEverything: "reset() deletes all local data and, on the server, the device's record whatever its key's state (only the registration it names), within the SDK's stated retry back-off of the app running online"
        case .photosRevokedDeletesIndex: "after Photos access is revoked the index is deleted at the next launch or activation"
        case .staleResponsesIgnored: "an answer after its timeout, or after a reset or purge, changes nothing"
        case .reportsNotLost: "every run ends with a report, reports leave the queue only by receipt or reset() (a purge keeps them), and uploads resume within the SDK's stated back-off"
        case .newestVerdictWins: "a verdict served before one the SDK already acted on never locks or unlocks it"
        case .registersAgainWhenUnknown: "a device credential the server no longer knows makes the SDK register again, at the latest at its next call or run"
        case .killKeepsWhatWasWritten: "a kill at any write keeps what was written: a lock written survives the next launch, a reset or purge whose first write was made completes by the end of the next launch"
        case .clockChangesNothing: "a phone's wall clock set back or forward never locks, unlocks, purges or deletes anything, and D1's 24 h count by the phone's clock, a clock set back past the last check included"
        case .failedWriteLosesNothing: "a write that failed on a full disk never makes the SDK delete data, nor count as done what was not written: a refused run report is written again once the disk has room, a refused index write is indexed again"
        case .unreadableIsNotAbsent: "before the first unlock after a restart, a read that failed is not 'absent': the SDK does not register again, download again or delete anything"
        case .serverRestartLosesNothing: "a server that restarts keeps every dashboard and Rollup action, registration and reset it acknowledged, and every stop behind stoppedSince"
        case .backgroundExpiryKeepsProgress: "a background run whose time runs out keeps what it wrote: no progress set back or deleted, no photo indexed or model downloaded again by the next run, and its background task kept while photos are left"
        case .notRollupIsNoVerdict: "an answer that is not Rollup's (a portal's login page, a redirect, a bare 401, 403 or 407, a body cut short) never locks, unlocks or purges, never counts as an answered check and never settles a run report"
        }
    }

    public static func < (a: InvariantID, b: InvariantID) -> Bool { a.rawValue < b.rawValue }
}
