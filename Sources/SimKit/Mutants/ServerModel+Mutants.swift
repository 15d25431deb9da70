/// What a server mutant runs with: its deliberate bugs, and the state they need (the
/// per-key cache of `cachesKeyChecks`, the declared state `restartForgets` goes back to).
/// Empty for the reference.
@usableFromInline struct ServerMutation: Sendable {
    @usableFromInline let flaws: ServerFlaws
    /// Per key, the cached verdict of S2.1–S2.3; empty unless `cachesKeyChecks`.
    @usableFromInline var keyCache: [CachedVerdict]

    /// How long the `cachesKeyChecks` flaw keeps a key's verdict: 5 minutes.
    package static let keyCacheMs: SimTime = 5 * Ms.minute

    /// The verdict of S2.1–S2.3 for one key: `.ok` (with the key's app) or the error.
    @usableFromInline struct CachedVerdict: Sendable {
        /// The verdict is used while `now < validUntil`; 0 means empty.
        @usableFromInline var validUntil: SimTime = 0
        @usableFromInline var answer: Answer = .ok
        @usableFromInline var app: AppID = 0
    }

    /// The dashboard and Rollup state as declared, which a restart brings back; nil unless
    /// `restartForgets`.
    @usableFromInline var declared: Declared?

    /// The state `restartForgets` keeps in memory only.
    @usableFromInline struct Declared: Sendable {
        var accounts: [AccountStatus]
        var accountsBeforeRevocation: [AccountStatus]
        var apps: [AppRecord]
        var keys: [KeyState]
        var history: AccessHistory
    }

    init(flaws: ServerFlaws, keyCount: Int) {
        self.flaws = flaws
        keyCache = flaws.contains(.cachesKeyChecks) ? Array(repeating: CachedVerdict(), count: keyCount) : []
    }
}

/// The reference server's decision points (the `mutant…` calls in `ServerModel*.swift`):
/// where each deliberate bug of `ServerFlaws` bends a rule. Each takes the rule's own
/// answer; with no flaws (the reference) it returns that answer and changes nothing.
extension ServerModel {
    /// The deliberate bugs of this server; `[]` for the reference.
    package var flaws: ServerFlaws { mutation.flaws }

    // MARK: A restart (S10)

    /// S10: a restart loses only what was in memory, here the key cache of
    /// `cachesKeyChecks`. `restartForgets`: the dashboard and Rollup state goes back to
    /// what was declared.
    mutating func mutantRestart(now: SimTime) {
        for k in mutation.keyCache.indices { mutation.keyCache[k] = .init() }
        guard let d = mutation.declared else { return }
        accounts = d.accounts
        accountsBeforeRevocation = d.accountsBeforeRevocation
        apps = d.apps
        keys = d.keys
        history = d.history
        noteAccess(now: now)
    }

    /// Keeps the declared state for `restartForgets` (the end of `init`).
    mutating func mutantKeepDeclared() {
        guard mutation.flaws.contains(.restartForgets) else { return }
        mutation.declared = .init(accounts: accounts, accountsBeforeRevocation: accountsBeforeRevocation,
                                  apps: apps, keys: keys, history: history)
    }

    // MARK: Requests (S2, S6, S8)

    /// S8: a reset is not judged by the key (`reset`). `resetJudgesKey`: it is judged by
    /// S2 as any request; a record already gone answers 200, and only a served reset
    /// deletes its record.
    @usableFromInline @inline(__always)
    mutating func mutantReset(_ request: Request, now: SimTime) -> ServerReply {
        guard mutation.flaws.contains(.resetJudgesKey) else { return reset(request, now: now) }
        var reply = judge(request, now: now)
        if reply.answer == .deviceUnknown {
            reply = ServerReply(.ok, servedAt: now)
        } else if reply.answer == .ok, mutantResetDeletesRecord(true) {
            deleteRecord(request.credential)
        }
        noteJudged(request, &reply, now: now)
        return reply
    }

    /// S1: every key is judged afresh. `cachesKeyChecks`: a verdict is reused for 5 minutes.
    @usableFromInline @inline(__always)
    mutating func mutantKeyVerdict(_ rule: (answer: Answer, app: AppID), key: Int, now: SimTime) -> (answer: Answer, app: AppID) {
        guard mutation.flaws.contains(.cachesKeyChecks) else { return rule }
        let cached = mutation.keyCache[key]
        if now < cached.validUntil { return (cached.answer, cached.app) }
        mutation.keyCache[key] = .init(validUntil: Self.sum(now, ServerMutation.keyCacheMs), answer: rule.answer, app: rule.app)
        return rule
    }

    /// S6: a registration that fails App Attest is refused. `skipsAttestation`: it is served.
    @usableFromInline @inline(__always)
    func mutantRefusesAttestation(_ rule: Bool) -> Bool {
        rule && !mutation.flaws.contains(.skipsAttestation)
    }

    /// S6: a request whose assertion is not the registering install's is refused.
    /// `assertionOnlyAtRegistration`: it is served.
    @usableFromInline @inline(__always)
    func mutantRefusesAssertion(_ rule: Bool) -> Bool {
        rule && !mutation.flaws.contains(.assertionOnlyAtRegistration)
    }

    /// S6, S8: so is a reset's. `assertionOnlyAtRegistration` and `resetSkipsAssertion` serve it.
    @usableFromInline @inline(__always)
    func mutantRefusesResetAssertion(_ rule: Bool) -> Bool {
        rule && mutation.flaws.isDisjoint(with: [.assertionOnlyAtRegistration, .resetSkipsAssertion])
    }

    /// S2.5: a device answers only to its app's key. `skipsDeviceAppCheck`: to any.
    @usableFromInline @inline(__always)
    func mutantRefusesOtherApp(_ rule: Bool) -> Bool {
        rule && !mutation.flaws.contains(.skipsDeviceAppCheck)
    }

    /// S8: a reset deletes only the registration its credential names (`names`), and the
    /// device has a live one (`live`). `resetIgnoresGeneration`: any live one of the device.
    @usableFromInline @inline(__always)
    func mutantResetNamesRecord(_ names: Bool, live: Bool) -> Bool {
        names || (live && mutation.flaws.contains(.resetIgnoresGeneration))
    }

    /// S8: the record a reset deletes is the one its credential names. `resetIgnoresGeneration`:
    /// the device's newest live one, whichever generation the credential names.
    @usableFromInline @inline(__always)
    func mutantResetTarget(_ credential: Credential, live: Bool) -> Credential {
        guard live, mutation.flaws.contains(.resetIgnoresGeneration) else { return credential }
        return Credential(device: credential.device, generation: devices[Int(credential.device)].generation)
    }

    /// S8: a reset deletes the record. `resetKeepsRecord`: it answers 200 and keeps it.
    @usableFromInline @inline(__always)
    func mutantResetDeletesRecord(_ rule: Bool) -> Bool {
        rule && !mutation.flaws.contains(.resetKeepsRecord)
    }

    // MARK: Dating a stop (S2 stoppedSince)

    /// S2: `stoppedSince` is tight for the install. `stoppedSinceFromFirstStop`: the
    /// earliest stop of the key or app, whoever asks.
    @usableFromInline
    func mutantStoppedSince(_ rule: SimTime, _ request: Request, now: SimTime) -> SimTime {
        if mutation.flaws.contains(.datesForgottenFromRefusal), !devices[Int(request.device)].isLive {
            return now
        }
        guard mutation.flaws.contains(.stoppedSinceFromFirstStop) else { return rule }
        return history.earliestStop(key: Int(request.key), app: keys[Int(request.key)].app.map(Int.init), now: now)
    }

    /// S2: an update's request is dated by what the install may have carried before it.
    /// `datesUpdateFromItsFirstRequest`: a skipped build or another key dates the stop
    /// from the update's first request. Nil keeps the rule.
    @usableFromInline
    func mutantDatesUpdate(skippedOrRekeyed: Bool, from: SimTime, now: SimTime) -> SimTime? {
        guard skippedOrRekeyed, mutation.flaws.contains(.datesUpdateFromItsFirstRequest) else { return nil }
        return now > from ? now - 1 : AccessHistory.never
    }

    // MARK: Keys (S3) and the dashboard (S4, S5)

    /// S3: a previous key works while `now < deadline`. `graceOneDayLate` adds a day,
    /// `graceDeadlineInclusive` a millisecond.
    @usableFromInline @inline(__always)
    func mutantGraceEnd(_ deadline: SimTime) -> SimTime {
        guard !mutation.flaws.isEmpty else { return deadline }
        return mutation.flaws.contains(.graceOneDayLate) ? Self.sum(deadline, Ms.day)
            : mutation.flaws.contains(.graceDeadlineInclusive) ? Self.sum(deadline, 1) : deadline
    }

    /// S4: a disabled app's grace keys are refused like its current one.
    /// `disableSparesGraceKeys`: a grace key is judged by review alone. Nil keeps the rule.
    @usableFromInline @inline(__always)
    func mutantSparedGraceKey(_ app: AppID) -> (answer: Answer, app: AppID)? {
        guard mutation.flaws.contains(.disableSparesGraceKeys) else { return nil }
        return (apps[Int(app)].review == .pending ? .appPending : .ok, app)
    }

    /// S3: stop-now stops the old key at once. `stopNowOneMsLate`: it works one more
    /// millisecond. Returns true when the mutant stopped the key its way.
    mutating func mutantStoppedLate(_ old: Int, app: AppID, now: SimTime) -> Bool {
        guard mutation.flaws.contains(.stopNowOneMsLate) else { return false }
        keys[old] = .previous(app, deadline: Self.sum(now, 1))
        history.keyStoppedAt[old] = now
        return true
    }

    /// S4, S5: `enable` lifts only the developer's disable. `enableLiftsRollup` lifts a
    /// rejection or revocation too; returns true when it did.
    mutating func mutantEnableLiftedRollup(_ a: Int) -> Bool {
        guard mutation.flaws.contains(.enableLiftsRollup), apps[a].review == .revoked || apps[a].review == .rejected else { return false }
        apps[a].review = .approved
        return true
    }

    /// S5: Rollup's `restore` of an app gives back its review only. `restoreLiftsDisable`
    /// lifts the developer's disable too.
    mutating func mutantRestoredApp(_ a: Int) {
        if mutation.flaws.contains(.restoreLiftsDisable) { apps[a].disabledByDeveloper = false }
    }

    /// S5: restoring an account leaves its apps' revocations. `accountRestoreLiftsAppRevoke`
    /// restores them too.
    mutating func mutantRestoredAccount(_ account: AccountID) {
        guard mutation.flaws.contains(.accountRestoreLiftsAppRevoke) else { return }
        for a in apps.indices where apps[a].account == account && apps[a].review == .revoked {
            apps[a].review = apps[a].reviewBeforeRevocation
        }
    }
}

extension AccessHistory {
    /// The `stoppedSinceFromFirstStop` flaw: the earliest stop ever of the key or its app,
    /// breaks or no breaks.
    func earliestStop(key k: Int, app: Int?, now: SimTime) -> SimTime {
        var t = min(now, keyStoppedAt[k])
        if let a = app {
            t = min(t, appRefusedSince[a])
            if let first = appRefusals[a].first { t = min(t, first.from) }
        }
        return t
    }
}
