/// The virtual Rollup server: a sans-IO value that answers requests by rule S2 and
/// applies dashboard and Rollup actions. It reads no clock: every call takes `now`.
///
/// All state lives in arrays indexed by id (accounts, apps, keys, devices), so nothing
/// depends on hashing order and `handle` allocates nothing. Calls named `mutant…` are the
/// decision points where a deliberate bug (a mutant, `Sources/SimKit/Mutants`) may bend a
/// rule; in the reference (no flaws) each returns the rule's own answer unchanged.
///
/// Choices the specification leaves open (documented here and in the tests):
/// - A `reset` deletes the record whatever the state of its key, app or account (S8): it is
///   judged by no rule of S2.1–S2.3. One whose credential is not known (none, stale
///   generation, or record already deleted) answers 200: deleting is idempotent, so the
///   SDK's retried reset (D7) succeeds even when a lost response already deleted the record
///   (S9). A stale credential never deletes a newer registration of the same device. A
///   reset of a live record needs the App Attest assertion of the install that registered
///   it, so a clone with a copied credential cannot delete a genuine device's record.
/// - S6's assertion is checked after S2.4 (the credential must be known to know whose
///   attested key must have made it) and before S2.5: a clone with a copy of a genuine
///   device's live credential gets `attestation_failed`, one with a stale copy
///   `device_unknown`, and lock errors of S2.1–S2.3 come first, as for everyone.
/// - `stoppedSince` (S2) is as tight as the server's own history allows: one more than the
///   latest moment at which some key history consistent with what it saw of the install
///   (the build and key of each request judged by S2) would have been served. Between two
///   requests of one build the install carried that build's key; across an update, the
///   old key, then the new one, and any key at all if builds were skipped. So a cause that
///   refuses every key of the app dates the stop from its own start, through any number of
///   builds, while the install's record lives (another app's key is then a mismatch) and no
///   other app is pending; a key cause counts from later where another key may have been
///   carried. A mismatch is refused only while the key's app is not pending (S2.3 first).
/// - A `register` creates a new record of the device (a new generation) whatever app owned
///   the earlier one, if App Attest passes for the key's app; S2.5 does not apply to
///   `register` (it creates the owner). The earlier records stay, each known by its own
///   credential, until a reset names it (S8): the server cannot tell a phone that
///   registers anew from another, so a registration supersedes nothing, and a record that
///   no reset names (a purge's, D5, or one whose reset named another) is left behind.
/// - Generations count up per device for the whole run, also across resets and forgets,
///   so a credential from before a reset or forget stays unknown.
/// - A credential naming a device outside the table is unknown (`device_unknown`): the
///   server never trusts what a request claims. The request's `key` and, on `register`,
///   its `device` are world identifiers and must be in range (a precondition).
public struct ServerModel: Sendable {
    /// The dashboard's default grace for an old key after rotation: 30 days (S3).
    public static let defaultGraceMs: SimTime = 30 * Ms.day
    /// The longest a request may be in flight before the server judges it, for dating a
    /// stop across an update (S2): well past the longest latency a world allows (1 h).
    public static let maxInFlightMs: SimTime = 2 * Ms.hour

    /// The deliberate bugs of this server and their state; none for the reference.
    @usableFromInline var mutation: ServerMutation

    @usableFromInline var accounts: [AccountStatus]
    /// Per account, the status it had when Rollup revoked it, which `restore` gives back.
    @usableFromInline var accountsBeforeRevocation: [AccountStatus]
    @usableFromInline var apps: [AppRecord]
    @usableFromInline var keys: [KeyState]
    @usableFromInline var devices: [DeviceSlot]
    /// Per device, its records older than its newest one, oldest first (see the choices
    /// above): few devices have any, so they live apart from `devices`, read only when a
    /// credential is not the newest.
    @usableFromInline var earlierRecords = ListsByDevice<DeviceRecord>()
    /// The history behind `stoppedSince` (S2): when each key was issued and stopped, and
    /// when each app was refused (`app_disabled`) by rules S2.2.
    @usableFromInline var history: AccessHistory

    /// A device's newest record: its generation and owner and whether it is live (its
    /// earlier ones are in `earlierRecords`), and the last generation issued (never reset);
    /// and what the server saw of the install for `stoppedSince`
    /// (S2): its last request judged by S2, that request's build and key, and the latest
    /// moment up to it at which the install could have been served.
    @usableFromInline struct DeviceSlot: Sendable {
        /// The last request of this device judged by S2 (a reset is judged by S8 alone), or
        /// `never` before the first.
        @usableFromInline var lastJudgedAt: SimTime = AccessHistory.never
        /// The latest moment up to `lastJudgedAt` at which, for some key history consistent
        /// with what the server saw, a request of this install would have got no lock error;
        /// `never` when there was none (refused since the start).
        @usableFromInline var servableAt: SimTime = AccessHistory.never
        @usableFromInline var generation: UInt32 = 0
        @usableFromInline var lastIssued: UInt32 = 0
        @usableFromInline var owner: AppID = 0
        /// The build and key of the request at `lastJudgedAt`.
        @usableFromInline var seenBuild: UInt16 = 0
        @usableFromInline var seenKey: KeyID = 0
        @usableFromInline var isLive = false
    }

    /// Builds the server that `setup` declares: its apps' first keys issued and current,
    /// no device registered.
    /// - Complexity: O(accounts + apps + keyCount + deviceCount).
    public init(setup: ServerSetup) { self.init(setup: setup, flaws: []) }

    /// A mutant: the server `setup` declares, with the deliberate bugs `flaws`.
    @usableFromInline package init(setup: ServerSetup, flaws: ServerFlaws) {
        precondition(setup.keyCount <= Int(KeyID.max) + 1, "keyCount \(setup.keyCount) does not fit KeyID")
        precondition(setup.deviceCount <= Int(DeviceIndex.max), "deviceCount \(setup.deviceCount) does not fit DeviceIndex")
        precondition(setup.accounts.count <= Int(AccountID.max) + 1, "\(setup.accounts.count) accounts do not fit AccountID")
        precondition(setup.apps.count <= Int(AppID.max) + 1, "\(setup.apps.count) apps do not fit AppID")
        accounts = setup.accounts.map { $0.approved ? .approved : .unapproved }
        accountsBeforeRevocation = accounts
        keys = Array(repeating: .unissued, count: setup.keyCount)
        apps = []
        apps.reserveCapacity(setup.apps.count)
        for (index, app) in setup.apps.enumerated() {
            precondition(Int(app.account) < setup.accounts.count,
                         "app \(index): account \(app.account) out of range (\(setup.accounts.count) accounts)")
            precondition(Int(app.key) < setup.keyCount,
                         "app \(index): key \(app.key) out of range (keyCount \(setup.keyCount))")
            precondition(keys[Int(app.key)] == .unissued,
                         "app \(index): key \(app.key) is already the key of app \(keys[Int(app.key)].app ?? 0)")
            keys[Int(app.key)] = .current(AppID(index))
            apps.append(AppRecord(account: app.account, review: app.approved ? .approved : .pending,
                                  disabledByDeveloper: false, currentKey: app.key))
        }
        devices = Array(repeating: DeviceSlot(), count: setup.deviceCount)
        mutation = ServerMutation(flaws: flaws, keyCount: setup.keyCount)
        history = AccessHistory(keyCount: setup.keyCount, appCount: setup.apps.count)
        for app in setup.apps { history.keyIssuedAt[Int(app.key)] = 0 }
        noteAccess(now: 0)
        mutantKeepDeclared()
        assert(checkInvariants() == nil, checkInvariants() ?? "")
    }

    // MARK: A restart (S10)

    /// The process restarts at `now` (S10). Everything this model holds is durable: the
    /// dashboard and Rollup state (keys, apps, accounts), every device record (registrations
    /// and resets answered 200), and what dates a stop (the history of stops and what the
    /// server saw of each install). It keeps nothing in memory alone: it caches no verdict
    /// (S1) and a request is judged in one call, so none is half-done at a restart. Only a
    /// mutant's memory is lost (`mutantRestart`).
    public mutating func restart(now: SimTime) {
        mutantRestart(now: now)
    }

    // MARK: Requests

    /// Answers `request` at `now` by the first rule of S2 that applies, with no caching
    /// (S1); a served `register` issues a credential and a `reset` deletes the device's
    /// record whatever the key's state (S8). Every verdict carries `servedAt` (now), a lock
    /// error also `stoppedSince` (S2).
    /// - Complexity: O(1) but for a lock error, O(history) to date it; no allocation.
    public mutating func handle(_ request: Request, now: SimTime) -> ServerReply {
        let key = Int(request.key)
        precondition(key < keys.count, "request key \(request.key) out of range (keyCount \(keys.count))")
        precondition(Int(request.device) < devices.count, "request from device \(request.device) out of range (deviceCount \(devices.count))")
        if request.kind == .reset { return mutantReset(request, now: now) }
        var reply = judge(request, now: now)
        noteJudged(request, &reply, now: now)
        return reply
    }

    /// Rules S2 and S6 in order for a request other than a reset; a lock error is dated
    /// afterwards, by `noteJudged`.
    @usableFromInline
    mutating func judge(_ request: Request, now: SimTime) -> ServerReply {
        let key = Int(request.key)
        // S2.1–S2.3: the key, its app and the app's account.
        let verdict = mutantKeyVerdict(keyVerdict(key, now: now), key: key, now: now)
        guard verdict.answer == .ok else {
            return ServerReply(verdict.answer, servedAt: now)
        }
        let app = verdict.app

        if request.kind == .register {
            // S6: App Attest — a genuine install of the key's app, or a clone.
            if mutantRefusesAttestation(request.attestedApp != app) {
                return ServerReply(.attestationFailed, servedAt: now)
            }
            let d = Int(request.device)
            precondition(d < devices.count, "register from device \(request.device) out of range (deviceCount \(devices.count))")
            precondition(devices[d].lastIssued < UInt32.max, "device \(d): registration generations exhausted")
            if devices[d].isLive {
                earlierRecords.append(DeviceRecord(owner: devices[d].owner, generation: devices[d].generation), to: request.device)
            }
            devices[d].lastIssued += 1
            devices[d].generation = devices[d].lastIssued
            devices[d].owner = app
            devices[d].isLive = true
            return ServerReply(.ok, credential: Credential(device: request.device, generation: devices[d].generation),
                               servedAt: now)
        }

        // S2.4: the credential must name a registration the server holds.
        let credential = request.credential
        guard let owner = owner(of: credential) else {
            return ServerReply(.deviceUnknown, servedAt: now)
        }
        // S6: the assertion of the install that registered the credential; a copy fails it.
        if mutantRefusesAssertion(!request.assertionMatchesCredential) {
            return ServerReply(.attestationFailed, servedAt: now)
        }
        // S2.5: every device belongs to the app that registered it.
        if mutantRefusesOtherApp(owner != app) {
            return ServerReply(.appKeyMismatch, servedAt: now)
        }
        // S2.6: served.
        return ServerReply(.ok, servedAt: now)
    }

    /// The owner app of the record `credential` names, if the server holds it (S2.4).
    @usableFromInline @inline(__always)
    func owner(of credential: Credential) -> AppID? {
        let d = Int(credential.device)
        guard !credential.isNone, d < devices.count else { return nil }
        if devices[d].isLive, devices[d].generation == credential.generation { return devices[d].owner }
        if earlierRecords.isEmpty { return nil }
        return earlierRecords.first(of: credential.device) { $0.generation == credential.generation }?.owner
    }

    /// Deletes the record `credential` names (it is held): the newest, whose place the
    /// newest earlier one takes, or an earlier one.
    @usableFromInline
    mutating func deleteRecord(_ credential: Credential) {
        let d = Int(credential.device)
        if devices[d].isLive, devices[d].generation == credential.generation {
            devices[d].isLive = false
            guard !earlierRecords.isEmpty, let last = earlierRecords.last(of: credential.device) else { return }
            earlierRecords.removeAll(of: credential.device) { $0 == last }
            devices[d].owner = last.owner
            devices[d].generation = last.generation
            devices[d].isLive = true
        } else if !earlierRecords.isEmpty {
            earlierRecords.removeAll(of: credential.device) { $0.generation == credential.generation }
        }
    }

    /// S8: a reset deletes the record its credential names, whatever the key's state; a
    /// record already gone answers 200 too. Only the install that registered the record
    /// can delete it (S6): a clone's copy of its credential is refused.
    @usableFromInline
    mutating func reset(_ request: Request, now: SimTime) -> ServerReply {
        var credential = request.credential
        let d = Int(credential.device)
        let live = !credential.isNone && d < devices.count && devices[d].isLive
        let known = owner(of: credential) != nil
        guard mutantResetNamesRecord(known, live: live) else { return ServerReply(.ok, servedAt: now) }
        credential = mutantResetTarget(credential, live: live)
        if mutantRefusesResetAssertion(!request.assertionMatchesCredential) {
            return ServerReply(.attestationFailed, servedAt: now)
        }
        if mutantResetDeletesRecord(true) { deleteRecord(credential) }
        return ServerReply(.ok, servedAt: now)
    }

    /// Remembers what a request judged by S2 showed of its install, and dates a lock error
    /// (S2 `stoppedSince`): one more than the latest moment at which the install could have
    /// been served, over every key history consistent with what the server saw (and `now`
    /// itself when it was served earlier in this millisecond).
    @usableFromInline
    mutating func noteJudged(_ request: Request, _ reply: inout ServerReply, now: SimTime) {
        let d = Int(request.device)
        if reply.answer.isLockError {
            let servable = latestServable(request, now: now)
            // The latest moment only moves later: a new build's key counted from before the
            // last request (in flight across the update) may find an earlier one.
            if servable != AccessHistory.never {
                let before = devices[d].servableAt
                devices[d].servableAt = before == AccessHistory.never ? servable : max(before, servable)
            }
            let since = mutantStoppedSince(devices[d].servableAt == AccessHistory.never ? 0 : min(devices[d].servableAt + 1, now),
                                           request, now: now)
            reply = ServerReply(reply.answer, servedAt: now, stoppedSince: since)
        } else if reply.answer.isVerdict {
            devices[d].servableAt = now
        }
        devices[d].lastJudgedAt = now
        devices[d].seenBuild = request.build
        devices[d].seenKey = request.key
    }

    /// The latest moment since the install's last judged request, before `now`, at which it
    /// could have been served, or `never`. Between two requests of one build the install
    /// carried one key; across an update it carried the old build's key, then maybe builds
    /// the server never saw (any key of any app), then the new one's.
    @usableFromInline
    func latestServable(_ request: Request, now: SimTime) -> SimTime {
        let slot = devices[Int(request.device)]
        // S2.5 refuses another app's key only from an install holding the live record's
        // credential: one that sends none (it was reset or purged) would register instead.
        let credential = request.credential
        let heldOwner = credential.device == request.device ? owner(of: credential) : nil
        let holdsRecord = heldOwner != nil
        let first = slot.lastJudgedAt == AccessHistory.never
        let from = first ? 0 : slot.lastJudgedAt + 1
        // Another key on the same build is no history an install can have (a clone's): it
        // counts as builds unseen in between, so any key may have been carried.
        let build = request.build
        let newBuild = first ? build != 0 : build != slot.seenBuild || request.key != slot.seenKey
        let skipped = first ? build != 0 : newBuild && build != slot.seenBuild &+ 1
        if newBuild, let dated = mutantDatesUpdate(skippedOrRekeyed: skipped || request.key != slot.seenKey, from: from, now: now) {
            return dated
        }
        var latest = AccessHistory.never
        func consider(_ t: SimTime?) {
            guard let t else { return }
            latest = latest == AccessHistory.never ? t : max(latest, t)
        }
        // The new build's key may have been carried before the last request of the old one
        // arrived: that request may have been sent before the update and been in flight
        // since, up to `maxInFlightMs` (sound: the later date).
        let keyFrom = newBuild && !first ? from.saturatingSubtract(ServerModel.maxInFlightMs) : from
        let owner = heldOwner ?? slot.owner
        consider(latestUnrefused(key: request.key, holdsRecord: holdsRecord, owner: owner, from: keyFrom, now: now))
        if newBuild, !first { consider(latestUnrefused(key: slot.seenKey, holdsRecord: holdsRecord, owner: owner, from: from, now: now)) }
        // A build never seen may have carried any app's key (its current one works unless
        // the app is refused): served, or answered device_unknown, unless the record the
        // install holds belongs to another app (a mismatch), which only `app_pending` precedes.
        if skipped {
            for a in apps.indices {
                let foreign = holdsRecord && a != Int(owner)
                consider(foreign ? history.latestPending(app: a, from: from, now: now)
                                 : history.latestUnrefused(app: a, from: from, now: now))
            }
        }
        return latest
    }

    /// The latest moment in `[from, now)` at which a request with `key` would have got no
    /// lock error, from an install that holds (or not) the live record of app `owner`; or nil.
    func latestUnrefused(key: KeyID, holdsRecord: Bool, owner: AppID, from: SimTime, now: SimTime) -> SimTime? {
        let app = keys[Int(key)].app
        return history.latestUnrefused(key: Int(key), keyState: keys[Int(key)], app: app.map(Int.init),
                                       mismatch: holdsRecord && app != nil && app != owner, from: from, now: now)
    }

    /// Rules S2.1–S2.3 for `key` at `now`, checked afresh: `.ok` with the key's app, or
    /// `app_key_invalid`, `app_disabled` or `app_pending`.
    @usableFromInline
    @inline(__always)
    func keyVerdict(_ key: Int, now: SimTime) -> (answer: Answer, app: AppID) {
        let app: AppID
        switch keys[key] {
        case .unissued, .stopped:
            return (.appKeyInvalid, 0)
        case .current(let a):
            app = a
        case .previous(let a, let deadline):
            // Works while now < deadline: at the deadline itself the key is invalid.
            guard now < mutantGraceEnd(deadline) else { return (.appKeyInvalid, 0) }
            app = a
            if let spared = mutantSparedGraceKey(a) { return spared }
        }
        let answer = appAnswer(app)
        return (answer, app)
    }

    /// Rules S2.2–S2.3 for `app`: `.ok`, `app_disabled` or `app_pending`.
    @usableFromInline
    @inline(__always)
    func appAnswer(_ app: AppID) -> Answer {
        let record = apps[Int(app)]
        if record.disabledByDeveloper || record.review == .rejected || record.review == .revoked
            || accounts[Int(record.account)] != .approved {
            return .appDisabled
        }
        if record.review == .pending { return .appPending }
        return .ok
    }

    /// `a + b`, or `SimTime.max` when it overflows (a deadline past the end of time).
    @usableFromInline static func sum(_ a: SimTime, _ b: SimTime) -> SimTime {
        let (total, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : total
    }
}
