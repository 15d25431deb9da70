import SimKit

/// "Sometimes" coverage, as in Antithesis: interesting situations a run reached. A fuzz
/// campaign that never reaches one has a blind spot, and the summary says so.
public enum Coverage: Int, CaseIterable, Sendable, Codable, CustomStringConvertible {
    case lockByKeyInvalid
    case lockByDisabled
    case lockByMismatch
    case lockFromCheck
    case lockFromRegister
    case lockFromQuery
    case lockFromProfile
    case lockFromPlaceData
    case lockFromModelDownload
    case lockFromRunReport
    case unlock
    case unlockAfter29Days
    case purge
    case reRegistration
    case oldKeyGraceEnded
    case oldKeyServedInGrace
    case checkDuringPartition
    case checkAnswered5xx
    case checkTimedOut
    case pendingAnswered
    case staleResponseIgnored
    case cloneRefused
    case resetWhileRequestInFlight
    case resetRetried
    case photosRevokedWhileLocked
    case photosRevokedIndexDeleted
    case lockedThrewOnCall
    case backgroundRun
    case reportUploadedAfterFailure
    case responseLost
    case serverDisabledApp
    case rollupRevoked
    case enableRefusedByRollup
    // Interleavings: an action that lands while a request is in flight.
    /// A check sent while locked unlocks the SDK after the app went to the background.
    case unlockInBackground
    /// A lock error older than the 200 that unlocked a locked device arrives after it.
    case staleRefusalAfterUnlock
    /// The first answer that says "stopped for 30 days" answers a request other than a check.
    case purgeDueFromNonCheck
    /// A clone resets with a live copy of a genuine device's credential, and is refused.
    case cloneResetRefused
    /// A run-report upload is answered `device_unknown`: it delivered nothing (D10).
    case reportUploadDeviceUnknown
    /// A reset naming a registration already gone reaches the server after a newer one (S8).
    case staleResetSparesNewer
    /// A device holding a live credential sent the key of a pending app (of its account):
    /// answered `app_pending`, no verdict on its access (S2.3, D6).
    case pendingToRegisteredDevice
    /// S10: a request reached the server while its process was away restarting (answered
    /// 5xx or lost).
    case restartCutRequest
    /// S10: after a restart, a verdict the server acknowledged a change for before it (a
    /// dashboard or Rollup action, a registration or reset) came out as S2 requires.
    case restartKeptAcknowledged
    /// P6: an answer that is not Rollup's (a portal, a proxy) answered a locked SDK's key check.
    case notRollupToLockedCheck
    /// P6: a bare 403 that is not Rollup's (a proxy's) reached an SDK that was not locked.
    case bare403ToUnlocked
    /// P2: an unlocked device became active with its phone's clock set back past its last
    /// answered check (D1 by the phone's clock owes a check, whatever the true age).
    case clockSetBackPastCheck
    /// P5: a background run's time ran out mid-run: it had written a chunk of photos this
    /// run and photos were left (what was written must stay; the next run resumes from it).
    case runExpiredMidChunk
    /// P3: a full disk refused a run report's write while reports were queued on the disk
    /// or owed from an earlier refusal (what a dropped report loses).
    case writeFailedWithReportsQueued
    /// P4: a background run (or a launch for one) came while the phone's protected data was
    /// still locked after a restart: its reads failed.
    case backgroundReadBeforeUnlock
    /// P1: a kill landed between two writes of a lock (a lock error's step) or of a reset,
    /// after the first was made: what the next launch must keep or finish.
    case killBetweenWrites

    /// The stable name shown in summaries.
    public var description: String { Coverage.names[rawValue] }

    static let names: [String] = [
        "lock-by-app_key_invalid",
        "lock-by-app_disabled",
        "lock-by-app_key_mismatch",
        "lock-from-check",
        "lock-from-register",
        "lock-from-query",
        "lock-from-profile",
        "lock-from-place-data",
        "lock-from-model-download",
        "lock-from-run-report",
        "unlock",
        "unlock-after-29-days",
        "purge",
        "re-registration",
        "old-key-refused-after-grace",
        "old-key-served-in-grace",
        "check-while-offline",
        "check-answered-5xx",
        "check-timed-out",
        "app_pending-answered",
        "stale-response-ignored",
        "clone-refused",
        "reset-while-request-in-flight",
        "reset-retried",
        "photos-revoked-while-locked",
        "photos-revoked-index-deleted",
        "locked-threw-on-call",
        "background-run",
        "report-uploaded-after-failure",
        "response-lost",
        "dashboard-disable",
        "rollup-revoke",
        "enable-while-rollup-revoked",
        "unlock-in-background",
        "stale-refusal-after-unlock",
        "purge-due-from-non-check",
        "clone-reset-refused",
        "report-upload-device_unknown",
        "stale-reset-spares-newer-registration",
        "pending-key-on-registered-device",
        "server-restart-cut-requests",
        "server-restart-kept-what-it-acknowledged",
        "portal-answered-locked-check",
        "portal-403-reached-unlocked-sdk",
        "clock-set-back-past-check",
        "run-expired-mid-chunk",
        "write-failed-with-reports-queued",
        "background-read-before-unlock",
        "kill-between-writes",
    ]
}

/// How many times each coverage point was reached.
public struct CoverageCounts: Sendable, Equatable {
    public var counts: [UInt64] = Array(repeating: 0, count: Coverage.allCases.count)
    public init() {}
    public subscript(_ c: Coverage) -> UInt64 { counts[c.rawValue] }
    @inline(__always) mutating func hit(_ c: Coverage) { counts[c.rawValue] &+= 1 }
    /// Adds another run's counts.
    public mutating func merge(_ other: CoverageCounts) { for i in counts.indices { counts[i] &+= other.counts[i] } }
    /// The points never reached, in declaration order.
    public var missing: [Coverage] { Coverage.allCases.filter { counts[$0.rawValue] == 0 } }
}
