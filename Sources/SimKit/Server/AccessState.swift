/// The server's records, as plain values: account and app status, key states and
/// device records. `ServerModel` keeps them in arrays indexed by id.

/// A developer account's status; only `approved` lets its apps be served (S2.2).
public enum AccountStatus: UInt8, Sendable, Equatable, CaseIterable {
    /// Waiting for Rollup to approve the developer account.
    case unapproved
    /// Approved by Rollup.
    case approved
    /// Revoked by Rollup; only Rollup restores it (S5).
    case revoked
}

/// Rollup's review status of an app; the developer's own disable flag is kept apart.
public enum ReviewStatus: UInt8, Sendable, Equatable, CaseIterable {
    /// Waiting for Rollup's approval: answered `app_pending` (S2.3).
    case pending
    /// Approved by Rollup.
    case approved
    /// Rejected by Rollup: answered `app_disabled`; Rollup may approve it later.
    case rejected
    /// Revoked by Rollup: answered `app_disabled`; only Rollup's `restore` lifts it, back
    /// to the status it had before (S5).
    case revoked
}

/// The state of one interned key name on the server (S3).
public enum KeyState: Sendable, Equatable {
    /// Never issued: the server does not know it (`app_key_invalid`).
    case unissued
    /// The app's current key.
    case current(AppID)
    /// A rotated-out key that works while `now < deadline` (its own deadline, S3).
    case previous(AppID, deadline: SimTime)
    /// A rotated-out key that was stopped; it never works again.
    case stopped(AppID)

    /// The app the key was issued to, or nil when unissued.
    @inlinable public var app: AppID? {
        switch self {
        case .unissued: nil
        case .current(let a), .previous(let a, _), .stopped(let a): a
        }
    }
}

/// One app in the dashboard.
public struct AppRecord: Sendable, Equatable {
    /// The developer account that owns the app.
    public var account: AccountID
    /// Rollup's review status.
    public var review: ReviewStatus
    /// The review status the app had when Rollup revoked it, which `restore` gives back:
    /// restoring lifts the revocation, it approves nothing (a pending app is pending again).
    public var reviewBeforeRevocation: ReviewStatus
    /// Set by the developer's "disable"; cleared only by the developer's "enable" (S4).
    public var disabledByDeveloper: Bool
    /// The key that the dashboard shows as current.
    public var currentKey: KeyID

    /// A record with the given fields.
    public init(account: AccountID, review: ReviewStatus, disabledByDeveloper: Bool, currentKey: KeyID,
                reviewBeforeRevocation: ReviewStatus = .approved) {
        self.account = account; self.review = review; self.reviewBeforeRevocation = reviewBeforeRevocation
        self.disabledByDeveloper = disabledByDeveloper; self.currentKey = currentKey
    }
}

/// A device's live registration, as a query returns it.
public struct DeviceRecord: Sendable, Equatable {
    /// The app whose key registered the device (S6): the device belongs to it.
    public var owner: AppID
    /// The generation of the live registration; only a credential with it is known.
    public var generation: UInt32

    /// A record with the given fields.
    @inlinable public init(owner: AppID, generation: UInt32) { self.owner = owner; self.generation = generation }
}

/// How a dashboard rotation ended.
public enum RotateOutcome: Sendable, Equatable {
    /// The new key is current; the old one is previous or stopped as asked.
    case rotated
    /// Refused: the new key was already issued (to this app or another); nothing changed.
    case newKeyAlreadyIssued
}

/// What happens to the old current key when a key is rotated (S3).
public enum OldKeyPolicy: Sendable, Equatable {
    /// The old key keeps working for `graceMs` after the rotation, then is invalid.
    case keep(graceMs: SimTime)
    /// The old key stops at once ("stop-old now", e.g. a leaked key).
    case stopNow

    /// The dashboard's default: keep the old key for 30 days.
    public static let keepDefault = OldKeyPolicy.keep(graceMs: ServerModel.defaultGraceMs)
}

/// A Rollup action on an app (S5); see `ServerModel.rollup(_:app:now:)` for the table.
public enum RollupAppAction: UInt8, Sendable, Equatable, CaseIterable {
    case approve, reject, revoke, restore
}

/// A Rollup action on a developer account (S5); see `ServerModel.rollup(_:account:now:)`.
public enum RollupAccountAction: UInt8, Sendable, Equatable, CaseIterable {
    case approve, revoke, restore
}
