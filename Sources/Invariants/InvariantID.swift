import SimKit

/// The invariants of SPEC §3, by their stable kebab-case names.
public enum InvariantID: String, CaseIterable, Sendable, Comparable, Codable {
    case neverLockOnTransient = "never-lock-on-transient"
    case lockOnRevocation = "lock-on-revocation"
    case lockedIsInert = "locked-is-inert"
    case lockedChecksOnActivation = "locked-checks-on-activation"
    case unlockResumesUnchanged = "unlock-resumes-unchanged"
    case purgeOnlyAfter30ContinuousDays = "purge-only-after-30-continuous-days"
    case purgeWhenDue = "purge-when-due"
    case keyCheckSchedule = "key-check-schedule"
    case serverEnforcesAccess = "server-enforces-access"
    case rotationGrace = "rotation-grace"
    case disableStopsEveryKey = "disable-stops-every-key"
    case onlyRollupRestores = "only-rollup-restores"
    case deviceBelongsToApp = "device-belongs-to-app"
    case clonesNeverServed = "clones-never-served"
    case resetDeletesEverything = "reset-deletes-everything"
    case photosRevokedDeletesIndex = "photos-revoked-deletes-index"
    case staleResponsesIgnored = "stale-responses-ignored"
    case reportsNotLost = "reports-not-lost"

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
        }
    }

    /// The promise, in one line of plain words.
    public var summary: String {
        switch self {
        case .neverLockOnTransient: "being offline, a timeout, a 5xx, app_pending or device_unknown never locks the SDK"
        case .lockOnRevocation: "app_key_invalid, app_disabled or app_key_mismatch locks the SDK at once, with lockedSince at the first one"
        case .lockedIsInert: "a locked SDK indexes nothing, runs nothing in the background and throws from search, query and profile without a request"
        case .lockedChecksOnActivation: "a locked SDK checks its key at each launch and activation, and unlocks when a check succeeds"
        case .unlockResumesUnchanged: "unlocking resumes the index as it was: no model downloaded again, no photo indexed twice"
        case .purgeOnlyAfter30ContinuousDays: "data is deleted only by reset, Photos revocation, or a lock error after 30 continuous locked days"
        case .purgeWhenDue: "a lock error answering a check 30 days after the lock deletes the index, models, place data and credential"
        case .keyCheckSchedule: "the key is checked at each launch, each indexing run, and each activation when the last answer is over 24 h old"
        case .serverEnforcesAccess: "the server answers every request by the first rule of S2 that applies, with no caching"
        case .rotationGrace: "an old key works until its own grace deadline and not a millisecond after, or stops when stopped"
        case .disableStopsEveryKey: "a disabled app is refused with every key, current or old"
        case .onlyRollupRestores: "what Rollup revoked or rejected stays refused until Rollup lifts it"
        case .deviceBelongsToApp: "a device is served only with the key of the app that registered it"
        case .clonesNeverServed: "a non-genuine install fails App Attest and is never served"
        case .resetDeletesEverything: "reset() deletes all local data and, on the server, the device's record"
        case .photosRevokedDeletesIndex: "after Photos access is revoked the index is deleted at the next launch or activation"
        case .staleResponsesIgnored: "an answer after its timeout, or after a reset or purge, changes nothing"
        case .reportsNotLost: "every run ends with a report, and reports are dropped only by reset or purge and uploaded when possible"
        }
    }

    public static func < (a: InvariantID, b: InvariantID) -> Bool { a.rawValue < b.rawValue }
}
