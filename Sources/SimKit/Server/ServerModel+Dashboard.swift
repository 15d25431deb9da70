/// Dashboard (developer) and Rollup actions. Each takes effect on the next request
/// (S1) and says whether it applied; a refused action changes nothing. `now` is the
/// time of the action: rotations and early stops are timed by it.
extension ServerModel {
    /// Rotates `app` to `newKey` (S3): the new key becomes current, and the old current key
    /// either keeps working until `now + grace` or stops now. Earlier previous keys keep
    /// their own deadlines. Refused when `newKey` was ever issued.
    /// - Complexity: O(1).
    @discardableResult
    public mutating func rotate(app: AppID, newKey: KeyID, oldKey policy: OldKeyPolicy = .keepDefault,
                                now: SimTime) -> RotateOutcome {
        let a = checkedApp(app)
        let k = checkedKey(newKey)
        guard keys[k] == .unissued else { return .newKeyAlreadyIssued }
        let old = Int(apps[a].currentKey)
        assert(keys[old] == .current(app), "app \(app): current key \(old) is \(keys[old])")
        switch policy {
        case .keep(let graceMs): keys[old] = .previous(app, deadline: Self.sum(now, graceMs))
        case .stopNow:
            if !mutantStoppedLate(old, app: app, now: now) { keys[old] = .stopped(app); history.noteKeyStopped(old, app: a, now: now) }
        }
        keys[k] = .current(app)
        history.keyIssuedAt[k] = now
        apps[a].currentKey = newKey
        assert(checkInvariants() == nil, checkInvariants() ?? "")
        return .rotated
    }

    /// Stops `key`, a previous key of `app`, now — the early stop during grace (S3).
    /// False when the key is not a previous key of that app (current, stopped, unissued,
    /// or another app's); a previous key whose grace already ended is marked stopped.
    /// - Complexity: O(1).
    @discardableResult
    public mutating func stopOldKey(app: AppID, key: KeyID, now: SimTime) -> Bool {
        _ = checkedApp(app)
        let k = checkedKey(key)
        guard case .previous(let owner, let deadline) = keys[k], owner == app else { return false }
        keys[k] = .stopped(app)
        // A key still in its grace was valid until now; one past it stopped at its
        // deadline, or at the stop already noted if that was earlier.
        if deadline > now { history.noteKeyStopped(k, app: Int(app), now: now) }
        else { history.keyStoppedAt[k] = min(deadline, history.keyStoppedAt[k]) }
        return true
    }

    /// The developer disables `app`: every key of it stops working (S4). False when it
    /// was already disabled by the developer.
    /// - Complexity: O(1).
    @discardableResult
    public mutating func disable(app: AppID, now: SimTime) -> Bool {
        let a = checkedApp(app)
        guard !apps[a].disabledByDeveloper else { return false }
        apps[a].disabledByDeveloper = true
        noteAccess(now: now)
        return true
    }

    /// The developer enables `app` again: clears only the developer's disable flag, never
    /// a Rollup rejection or revocation of the app or its account (S4, S5). False when the
    /// app was not disabled by the developer.
    /// - Complexity: O(1).
    @discardableResult
    public mutating func enable(app: AppID, now: SimTime) -> Bool {
        let a = checkedApp(app)
        var applied = false
        if apps[a].disabledByDeveloper {
            apps[a].disabledByDeveloper = false
            applied = true
        }
        if mutantEnableLiftedRollup(a) { applied = true }
        noteAccess(now: now)
        return applied
    }

    /// Rollup acts on `app` (S5). Transitions (anything else is refused, returns false):
    ///
    /// | action    | from                | to       |
    /// | --------- | ------------------- | -------- |
    /// | `approve` | pending, rejected   | approved |
    /// | `reject`  | pending, approved   | rejected |
    /// | `revoke`  | pending, approved, rejected | revoked |
    /// | `restore` | revoked             | what it was before the revoke |
    ///
    /// A revoked app is lifted only by `restore`; approving or rejecting it is refused so
    /// that a revocation never turns into something `approve` can lift. Restoring lifts the
    /// revocation and nothing more: an app Rollup never approved (pending) or rejected is
    /// that again, not approved (the page: "waiting for Rollup's approval", "rejected by
    /// Rollup"). The developer's disable flag is independent and untouched.
    /// - Complexity: O(1).
    @discardableResult
    public mutating func rollup(_ action: RollupAppAction, app: AppID, now: SimTime) -> Bool {
        let a = checkedApp(app)
        let from = apps[a].review
        let to: ReviewStatus
        switch (action, from) {
        case (.approve, .pending), (.approve, .rejected): to = .approved
        case (.reject, .pending), (.reject, .approved): to = .rejected
        case (.revoke, .pending), (.revoke, .approved), (.revoke, .rejected): to = .revoked
        case (.restore, .revoked): to = apps[a].reviewBeforeRevocation
        default: return false
        }
        if to == .revoked { apps[a].reviewBeforeRevocation = from }
        apps[a].review = to
        if action == .restore { mutantRestoredApp(a) }
        noteAccess(now: now)
        return true
    }

    /// Rollup acts on a developer account (S5). Transitions (anything else is refused):
    ///
    /// | action    | from                 | to       |
    /// | --------- | -------------------- | -------- |
    /// | `approve` | unapproved           | approved |
    /// | `revoke`  | unapproved, approved | revoked  |
    /// | `restore` | revoked              | what it was before the revoke |
    ///
    /// Restoring lifts the revocation only: an account that was never approved is not
    /// approved by it. It does not change its apps' own review status or disable flag.
    /// - Complexity: O(1).
    @discardableResult
    public mutating func rollup(_ action: RollupAccountAction, account: AccountID, now: SimTime) -> Bool {
        let c = checkedAccount(account)
        let from = accounts[c]
        let to: AccountStatus
        switch (action, from) {
        case (.approve, .unapproved): to = .approved
        case (.revoke, .unapproved), (.revoke, .approved): to = .revoked
        case (.restore, .revoked): to = accountsBeforeRevocation[c]
        default: return false
        }
        if to == .revoked { accountsBeforeRevocation[c] = from }
        accounts[c] = to
        if action == .restore { mutantRestoredAccount(account) }
        noteAccess(now: now)
        return true
    }

    /// Brings the refusal history of every app up to date after a dashboard or Rollup change.
    /// - Complexity: O(apps).
    mutating func noteAccess(now: SimTime) {
        for a in 0..<apps.count {
            let answer = appAnswer(AppID(a))
            history.noteApp(a, refused: answer == .appDisabled, now: now)
            history.noteAppPending(a, pending: answer == .appPending, now: now)
        }
    }

    /// The server loses `device`'s record (a fault of the scenario's `forget-device`): its
    /// credential becomes unknown. False when it had no live record.
    /// - Complexity: O(1).
    @discardableResult
    public mutating func forgetDevice(_ device: DeviceIndex, now: SimTime) -> Bool {
        let d = checkedDevice(device)
        // A device with earlier records has a live newest one (a delete of the newest
        // moves the newest earlier one up): one test tells whether it holds any.
        guard devices[d].isLive else { return false }
        devices[d].isLive = false
        if !earlierRecords.isEmpty { earlierRecords.removeAll(of: device) }
        return true
    }
}
