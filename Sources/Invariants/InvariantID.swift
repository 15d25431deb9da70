import SimKit

/// The invariants of SPEC §3, by their stable kebab-case names. Each one's doc comment
/// states its oracle: what it reads (only the trace and the scenario's facts) and what it
/// judges against (the checkers' own reading of the S rules, never the SDK's flags or the
/// reference's constants).
public enum InvariantID: String, CaseIterable, Sendable, Comparable, Codable {
    /// Oracle: a step that locks the SDK must answer a fresh lock error that is the newest verdict delivered (from the trace's `delivered` records), or be `reset()`; a step that answers a fresh, newest `device_unknown` sends a registration (or a key check is still awaited).
    case neverLockOnTransient = "never-lock-on-transient"
    /// Oracle: after a fresh, newest lock error in the trace the SDK reports access revoked and its disk is locked, with `lockedSince` at the first such delivery since the last newest 200 (D3); and it never unlocks without a newer 200.
    case lockOnRevocation = "lock-on-revocation"
    /// Oracle: while the trace's verdicts say access is stopped, the device's records show no run, no index write, no download, no server-backed request and no background task, and API calls throw.
    case lockedIsInert = "locked-is-inert"
    /// Oracle: while locked, each launch and activation in the trace sends a key check (or one is in flight), and a fresh, newest 200 to a check unlocks.
    case lockedChecksOnActivation = "locked-checks-on-activation"
    /// Oracle: the disk replica rebuilt from `store` records keeps the index and models it had when the lock came, the background task it had is registered again at the unlock, and an unlock in the foreground (the trace's lifecycle inputs) with photos to index or downloads missing has a run going when its step ends; nothing is downloaded or indexed twice; a run that ends with access, Photos, models and place data has indexed the whole library (the world's count plus `add-photos`).
    case unlockResumesUnchanged = "unlock-resumes-unchanged"
    /// Oracle: data is deleted only by reset, Photos revocation, or in the step of a fresh, newest lock error served when, by the checkers' own timeline of S2 (dashboard and Rollup records, key deadlines, the install's key), access had been stopped 30 days without a break.
    case purgeOnlyAfter30ContinuousDays = "purge-only-after-30-continuous-days"
    /// Oracle: a fresh, newest lock error whose `stoppedSince` is 30 days before its `servedAt`, and truly so by the checkers' timeline, deletes the index, the models and the credential in its step.
    case purgeWhenDue = "purge-when-due"
    /// Oracle: each launch, each run start and each activation more than 24 h after the last fresh verdict on a check sends a check (or one is in flight), from the trace's own times.
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
    /// Oracle: after `reset()` the disk replica holds nothing the page lists; the server's answer to a reset is 200 whatever the key's state, and its record is gone; while a record that a reset must delete is still live in the checkers' table, each launch sends the delete.
    case resetDeletesEverything = "reset-deletes-everything"
    /// Oracle: after a `revoke-photos` record, the next launch or activation step leaves the disk replica's index empty, and nothing is indexed meanwhile.
    case photosRevokedDeletesIndex = "photos-revoked-deletes-index"
    /// Oracle: an answer delivered after its request's timeout (sent time plus the world's timeout), or after a reset or purge that came while it was in flight, changes nothing.
    case staleResponsesIgnored = "stale-responses-ignored"
    /// Oracle: run reports queued in the disk replica leave it only by a reset or by a 200 to an upload sent after they were queued, and every run end with reports queued, unlocked and registered, sends an upload if none is awaited, and a 200 that leaves reports queued before its upload was sent starts another upload at once.
    case reportsNotLost = "reports-not-lost"
    /// Oracle: a fresh verdict whose `servedAt` is older than one already delivered to the device neither locks nor unlocks it.
    case newestVerdictWins = "newest-verdict-wins"

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
        }
    }

    /// The promise, in one line of plain words.
    public var summary: String {
        switch self {
        case .neverLockOnTransient: "being offline, a timeout, a 5xx, app_pending or device_unknown never locks the SDK"
        case .lockOnRevocation: "app_key_invalid, app_disabled or app_key_mismatch locks the SDK at once, with lockedSince at the first one"
        case .lockedIsInert: "a locked SDK indexes nothing, runs nothing in the background and throws from search, query and profile without a request"
        case .lockedChecksOnActivation: "a locked SDK checks its key at each launch and activation, and unlocks on a 200 newer than its lock"
        case .unlockResumesUnchanged: "unlocking resumes the index as it was: no model or place data downloaded again, no photo indexed twice, the next run indexes the rest"
        case .purgeOnlyAfter30ContinuousDays: "data is deleted only by reset, Photos revocation, or a lock error served when access had in truth been stopped 30 days in a row"
        case .purgeWhenDue: "a lock error whose stoppedSince is 30 days before its servedAt (and truly so) deletes the index, the models and the credential"
        case .keyCheckSchedule: "the key is checked at each launch, each indexing run, and each activation when the last answer is over 24 h old"
        case .serverEnforcesAccess: "the server answers every request by the first rule of S2 that applies, with no caching, and dates each verdict and stop truly"
        case .rotationGrace: "an old key works until its own grace deadline and not a millisecond after, or stops when stopped"
        case .disableStopsEveryKey: "a disabled app is refused with every key, current or old"
        case .onlyRollupRestores: "what Rollup revoked or rejected stays refused until Rollup lifts it"
        case .deviceBelongsToApp: "a device is served only with the key of the app that registered it"
        case .clonesNeverServed: "a non-genuine install, even with a copy of a genuine credential, fails App Attest and is never served"
        case .resetDeletesEverything: "reset() deletes all local data and, on the server, the device's record whatever its key's state, retrying at every launch until it is gone"
        case .photosRevokedDeletesIndex: "after Photos access is revoked the index is deleted at the next launch or activation"
        case .staleResponsesIgnored: "an answer after its timeout, or after a reset or purge, changes nothing"
        case .reportsNotLost: "every run ends with a report, and reports are dropped only by reset() (a purge keeps them)"
        case .newestVerdictWins: "a verdict served before one the SDK already acted on never locks or unlocks it"
        }
    }

    public static func < (a: InvariantID, b: InvariantID) -> Bool { a.rawValue < b.rawValue }
}
