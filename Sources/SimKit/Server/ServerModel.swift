/// The virtual Rollup server: a sans-IO value that answers requests by rule S2 and
/// applies dashboard and Rollup actions. It reads no clock: every call takes `now`.
///
/// All state lives in arrays indexed by id (accounts, apps, keys, devices), so nothing
/// depends on hashing order and `handle` allocates nothing. With `flaws: []` it is the
/// reference server; a non-empty `ServerFlaws` makes a mutant.
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
/// - `stoppedSince` (S2) is the start of the unbroken run of lock errors that the server's
///   own history of keys, apps and accounts shows for this key, and never earlier than what
///   it knows of the install: an install still on the build it started with carried its
///   key all along; one that was updated is counted from the first request of its build
///   (rounded up to the second), since the server cannot see when the update happened. A
///   mismatch (a key of another app) is counted from that first request too.
/// - A `register` replaces the device's record whatever app owned it, if App Attest
///   passes for the key's app; S2.5 does not apply to `register` (it creates the owner).
/// - Generations count up per device for the whole run, also across resets and forgets,
///   so a credential from before a reset, forget or re-registration stays unknown.
/// - A credential naming a device outside the table is unknown (`device_unknown`): the
///   server never trusts what a request claims. The request's `key` and, on `register`,
///   its `device` are world identifiers and must be in range (a precondition).
public struct ServerModel: Sendable {
    /// The dashboard's default grace for an old key after rotation: 30 days (S3).
    public static let defaultGraceMs: SimTime = 30 * Ms.day
    /// How long the `cachesKeyChecks` flaw keeps a key's verdict: 5 minutes.
    public static let keyCacheMs: SimTime = 5 * Ms.minute

    /// The deliberate bugs of this server; `[]` for the reference.
    public let flaws: ServerFlaws

    @usableFromInline var accounts: [AccountStatus]
    /// Per account, the status it had when Rollup revoked it, which `restore` gives back.
    @usableFromInline var accountsBeforeRevocation: [AccountStatus]
    @usableFromInline var apps: [AppRecord]
    @usableFromInline var keys: [KeyState]
    @usableFromInline var devices: [DeviceSlot]
    /// Per key, the cached verdict of S2.1–S2.3; empty unless `cachesKeyChecks`.
    @usableFromInline var keyCache: [CachedVerdict]
    /// The history behind `stoppedSince` (S2): when each key was issued and stopped, and
    /// when each app was refused (`app_disabled`) by rules S2.2.
    @usableFromInline var history: AccessHistory

    /// A device's record: the last generation issued (never reset) and whether that
    /// registration is live; and the install's build and key as the server last saw them,
    /// with the millisecond since which it has carried that key (for `stoppedSince`).
    /// 16 bytes a device.
    @usableFromInline struct DeviceSlot: Sendable {
        @usableFromInline var generation: UInt32 = 0
        /// The first request of `seenBuild`, to the millisecond (S2: tight when the install
        /// carried one key through the whole stop; whole seconds rounded up were not), in
        /// 40 bits: low 32 here, high 8 in `seenBuildAtHigh` (34 years; a later time is kept
        /// as `seenBuildAtUnknown`).
        @usableFromInline var seenBuildAtLow: UInt32 = 0
        @usableFromInline var owner: AppID = 0
        /// The last build other than 0 that this device's requests carried.
        @usableFromInline var seenBuild: UInt16 = 0
        /// The key this device's requests of `seenBuild` (or build 0) carried, or `keyUnknown`.
        @usableFromInline var seenKey: KeyID = DeviceSlot.keyUnknown
        @usableFromInline var isLive = false
        @usableFromInline var seenBuildAtHigh: UInt8 = 0

        /// `seenBuildAt` of a build first seen past 40 bits of milliseconds: not kept.
        @usableFromInline static let seenBuildAtUnknown: SimTime = (1 << 40) - 1
        /// `seenKey` before any request.
        @usableFromInline static let keyUnknown: KeyID = .max

        /// When the server first saw `seenBuild`, or `seenBuildAtUnknown`.
        @inlinable var seenBuildAt: SimTime {
            get { SimTime(seenBuildAtHigh) << 32 | SimTime(seenBuildAtLow) }
            set {
                let t = Swift.min(newValue, DeviceSlot.seenBuildAtUnknown)
                seenBuildAtLow = UInt32(truncatingIfNeeded: t)
                seenBuildAtHigh = UInt8(truncatingIfNeeded: t >> 32)
            }
        }
    }

    /// The verdict of S2.1–S2.3 for one key: `.ok` (with the key's app) or the error.
    @usableFromInline struct CachedVerdict: Sendable {
        /// The verdict is used while `now < validUntil`; 0 means empty.
        @usableFromInline var validUntil: SimTime = 0
        @usableFromInline var answer: Answer = .ok
        @usableFromInline var app: AppID = 0
    }

    /// Builds the server that `setup` declares: its apps' first keys issued and current,
    /// no device registered.
    /// - Complexity: O(accounts + apps + keyCount + deviceCount).
    public init(setup: ServerSetup, flaws: ServerFlaws = []) {
        precondition(setup.keyCount <= Int(KeyID.max) + 1, "keyCount \(setup.keyCount) does not fit KeyID")
        precondition(setup.deviceCount <= Int(DeviceIndex.max), "deviceCount \(setup.deviceCount) does not fit DeviceIndex")
        precondition(setup.accounts.count <= Int(AccountID.max) + 1, "\(setup.accounts.count) accounts do not fit AccountID")
        precondition(setup.apps.count <= Int(AppID.max) + 1, "\(setup.apps.count) apps do not fit AppID")
        self.flaws = flaws
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
        keyCache = flaws.contains(.cachesKeyChecks)
            ? Array(repeating: CachedVerdict(), count: setup.keyCount) : []
        history = AccessHistory(keyCount: setup.keyCount, appCount: setup.apps.count)
        for (index, app) in setup.apps.enumerated() { history.keyIssuedAt[Int(app.key)] = 0; _ = index }
        noteAccess(now: 0)
        assert(checkInvariants() == nil, checkInvariants() ?? "")
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
        noteBuild(of: request, now: now)
        if request.kind == .reset, !flaws.contains(.resetJudgesKey) { return reset(request, now: now) }
        // S2.1–S2.3: the key, its app and the app's account.
        let verdict = flaws.contains(.cachesKeyChecks) ? cachedKeyVerdict(key, now: now) : keyVerdict(key, now: now)
        guard verdict.answer == .ok else {
            return verdict.answer.isLockError ? lockError(verdict.answer, request, now: now)
                                              : ServerReply(verdict.answer, servedAt: now)
        }
        let app = verdict.app

        if request.kind == .register {
            // S6: App Attest — a genuine install of the key's app, or a clone.
            if request.attestedApp != app && !flaws.contains(.skipsAttestation) {
                return ServerReply(.attestationFailed, servedAt: now)
            }
            let d = Int(request.device)
            precondition(d < devices.count, "register from device \(request.device) out of range (deviceCount \(devices.count))")
            precondition(devices[d].generation < UInt32.max, "device \(d): registration generations exhausted")
            devices[d].generation += 1
            devices[d].owner = app
            devices[d].isLive = true
            return ServerReply(.ok, credential: Credential(device: request.device, generation: devices[d].generation),
                               servedAt: now)
        }

        // S2.4: the credential must name the device's live registration.
        let credential = request.credential
        let d = Int(credential.device)
        let known = !credential.isNone && d < devices.count
            && devices[d].isLive && devices[d].generation == credential.generation
        guard known else {
            // A reset of a record that is already gone has nothing left to do (idempotent).
            return ServerReply(request.kind == .reset ? .ok : .deviceUnknown, servedAt: now)
        }
        // S6: the assertion of the install that registered the credential; a copy fails it.
        if !request.assertionMatchesCredential && !flaws.contains(.assertionOnlyAtRegistration) {
            return ServerReply(.attestationFailed, servedAt: now)
        }
        // S2.5: every device belongs to the app that registered it.
        if devices[d].owner != app && !flaws.contains(.skipsDeviceAppCheck) {
            return lockError(.appKeyMismatch, request, now: now)
        }
        // S2.6: served; a reset (under the `resetJudgesKey` flaw) deletes the record (S8).
        if request.kind == .reset && !flaws.contains(.resetKeepsRecord) {
            devices[d].isLive = false
        }
        return ServerReply(.ok, servedAt: now)
    }

    /// S8: a reset deletes the record its credential names, whatever the key's state; a
    /// record already gone answers 200 too. Only the install that registered the record
    /// can delete it (S6): a clone's copy of its credential is refused.
    @usableFromInline
    mutating func reset(_ request: Request, now: SimTime) -> ServerReply {
        let credential = request.credential
        let d = Int(credential.device)
        let known = !credential.isNone && d < devices.count
            && devices[d].isLive && devices[d].generation == credential.generation
        guard known else { return ServerReply(.ok, servedAt: now) }
        if !request.assertionMatchesCredential && !flaws.contains(.assertionOnlyAtRegistration) {
            return ServerReply(.attestationFailed, servedAt: now)
        }
        if !flaws.contains(.resetKeepsRecord) { devices[d].isLive = false }
        return ServerReply(.ok, servedAt: now)
    }

    /// Remembers since when the sending install has carried its key, as far as the server
    /// can know (S2 `stoppedSince`): since the start on build 0; on a later build, since
    /// that build's first request, unless that build follows the last one seen and ships
    /// the same key (an ordinary update: the install carried one key through it, and its
    /// stop stays dated as before; a skipped build may have carried another key).
    @inline(__always) @usableFromInline
    mutating func noteBuild(of request: Request, now: SimTime) {
        let d = Int(request.device)
        precondition(d < devices.count, "request from device \(request.device) out of range (deviceCount \(devices.count))")
        guard devices[d].seenBuild != request.build || devices[d].seenKey != request.key else { return }
        if devices[d].seenBuild != request.build {
            let sameKey = request.build == devices[d].seenBuild &+ 1 && request.key == devices[d].seenKey
            devices[d].seenBuild = request.build
            if !sameKey { devices[d].seenBuildAt = now }
        }
        devices[d].seenKey = request.key
    }

    /// A lock error for `request`, dated: `stoppedSince` is the start of the unbroken stop.
    @usableFromInline
    func lockError(_ answer: Answer, _ request: Request, now: SimTime) -> ServerReply {
        let d = Int(request.device)
        let build = request.build
        // What the server knows of the install: it carried its key since the start of the
        // world on build 0; on a later build, since that build's first request at the earliest.
        // A mismatch needs a key of another app than the one the install registered with, so
        // an update; on build 0 (never seen in a world) it is dated from this refusal.
        let installSince: SimTime = build == 0 ? (answer == .appKeyMismatch ? now : 0)
            : build == UInt16.max ? now
            : devices[d].seenBuildAt == DeviceSlot.seenBuildAtUnknown ? now : min(now, devices[d].seenBuildAt)
        let app: Int? = keys[Int(request.key)].app.map(Int.init)
        let since = flaws.contains(.stoppedSinceFromFirstStop)
            ? history.earliestStop(key: Int(request.key), app: app, now: now)
            : history.stopStart(key: Int(request.key), keyState: keys[Int(request.key)], app: app,
                                mismatch: answer == .appKeyMismatch, notBefore: installSince, now: now)
        return ServerReply(answer, servedAt: now, stoppedSince: since)
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
            let end = flaws.contains(.graceOneDayLate) ? Self.sum(deadline, Ms.day)
                : flaws.contains(.graceDeadlineInclusive) ? Self.sum(deadline, 1) : deadline
            guard now < end else { return (.appKeyInvalid, 0) }
            app = a
            if flaws.contains(.disableSparesGraceKeys) {
                let record = apps[Int(a)]
                return (record.review == .pending ? .appPending : .ok, a)
            }
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

    /// The `cachesKeyChecks` flaw: answers from a per-key cache filled by `keyVerdict`.
    @usableFromInline
    mutating func cachedKeyVerdict(_ key: Int, now: SimTime) -> (answer: Answer, app: AppID) {
        let cached = keyCache[key]
        if now < cached.validUntil { return (cached.answer, cached.app) }
        let fresh = keyVerdict(key, now: now)
        keyCache[key] = CachedVerdict(validUntil: Self.sum(now, Self.keyCacheMs), answer: fresh.answer, app: fresh.app)
        return fresh
    }
}
