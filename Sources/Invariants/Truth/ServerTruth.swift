import SimKit

/// The checkers' own model of what the server must answer: rebuilt from the world's facts
/// and the dashboard and Rollup records in the trace, never read from `ServerModel`, so a
/// wrong server is caught too. It is a second, independent reading of S1–S8.
struct ServerTruth {
    enum KeyT: Equatable { case unissued, current(AppID), previous(AppID, deadline: SimTime), stopped(AppID) }
    enum Review: Equatable { case pending, approved, rejected, revoked }
    enum AccountT: Equatable { case unapproved, approved, revoked }
    /// An app; `beforeRevoke` is its review when Rollup revoked it, which `restore` gives
    /// back (restoring approves nothing the page says Rollup did not approve).
    struct AppT: Equatable { var account: AccountID; var review: Review; var disabled: Bool; var currentKey: KeyID; var beforeRevoke = Review.approved }
    /// A device's live record: its owner and the generation of its credential (0: none).
    /// One per device: the widest field first, so it takes 8 bytes, not 12.
    struct RecordT: Sendable, Equatable {
        var generation: UInt32
        var owner: AppID
        var deletedByReset: Bool
        /// An earlier record (in `earlier`) that the server's last list of the device's
        /// records named (`holds`): it surely holds it. One it did not name it may have let
        /// a newer registration supersede, or may keep without saying (a server that lists
        /// nothing): its answers decide.
        var listed = false
        init(owner: AppID = 0, generation: UInt32 = 0, deletedByReset: Bool = false) {
            self.generation = generation; self.owner = owner; self.deletedByReset = deletedByReset
        }
    }

    /// Why the server must answer as it must: decides which invariant a wrong answer breaks.
    enum Cause: Equatable {
        case unknownKey, graceEnded, stoppedKey, developerDisabled, rollup, pending
        case clone, unknownDevice, resetRecord, mismatch, served, resetOfUnknown
    }

    var keys: [KeyT]
    var apps: [AppT]
    var accounts: [AccountT]
    /// Per account, its status when Rollup revoked it, which `restore` gives back.
    var accountsBeforeRevoke: [AccountT]
    var records: [RecordT]
    /// Per device, the records the server may hold besides its newest (`records`), oldest
    /// first: S8 lets a server keep each registration until a reset names it, or let a new
    /// one supersede it, so a record a newer registration followed stays here until the
    /// server shows it gone: a reset that names it, a `forget-device`, an answer to its
    /// credential as unknown (the server may drop such a record whenever it likes, never
    /// the newest). Whether the server surely holds one is what its trace lists (`holds`,
    /// `RecordT.listed`). Few devices have any; looked up by device, never iterated across them.
    var earlier = ListsByDevice<RecordT>()
    /// Per device, what the server saw of the install (S2 `stoppedSince`, see `SeenT`).
    var seen: [SeenT]
    /// Per key, when a request with it would have been served, or answered something other
    /// than a lock error: while it is valid and its app not refused (S2.1, S2.2); and while
    /// it is valid and its app pending, which breaks a mismatch too (S2.3 before S2.5).
    var keyServable: [ServableTimes]
    var keyPending: [ServableTimes]
    /// Per app, while it is not refused (S2.2): some key of it, its current one, is served;
    /// and while it is answered `app_pending`, which breaks a mismatch too.
    var appServable: [ServableTimes]
    var appPending: [ServableTimes]
    /// When the server last acknowledged a change (S10): per key, app and account, the last
    /// dashboard or Rollup record that changed its state; per device, the last register or
    /// reset answered 200 (or `forget-device`) that changed its record. `never` while it
    /// stands as declared. What a restart must not lose.
    var keyChangedAt: [SimTime] = []
    var appChangedAt: [SimTime] = []
    var accountChangedAt: [SimTime] = []
    var recordChangedAt: [SimTime] = []

    /// No keys, apps, accounts or devices: the truth before a run begins.
    init() {
        keys = []; apps = []; accounts = []; accountsBeforeRevoke = []; records = []
        seen = []; keyServable = []; keyPending = []; appServable = []; appPending = []
    }

    init(facts: WorldFacts) {
        let setup = facts.setup
        keys = Array(repeating: .unissued, count: setup.keyNames.count)
        accounts = setup.accounts.map { $0.approved ? .approved : .unapproved }
        accountsBeforeRevoke = accounts
        apps = []
        for (i, a) in setup.apps.enumerated() {
            apps.append(AppT(account: a.account, review: a.pending ? .pending : .approved, disabled: false, currentKey: a.initialKey))
            if Int(a.initialKey) < keys.count { keys[Int(a.initialKey)] = .current(AppID(i)) }
        }
        records = Array(repeating: RecordT(), count: facts.deviceCount)
        seen = Array(repeating: SeenT(), count: facts.deviceCount)
        keyServable = Array(repeating: ServableTimes(), count: keys.count)
        keyPending = keyServable
        appServable = Array(repeating: ServableTimes(), count: apps.count)
        appPending = appServable
        keyChangedAt = Array(repeating: LocalData.never, count: keys.count)
        appChangedAt = Array(repeating: LocalData.never, count: apps.count)
        accountChangedAt = Array(repeating: LocalData.never, count: accounts.count)
        recordChangedAt = Array(repeating: LocalData.never, count: facts.deviceCount)
        noteServable(at: 0)
    }

    /// The last change the server acknowledged among what decides its answer to a request
    /// with `key` and `credential` (or a register or reset of `device`): the key's state, its
    /// app's and account's, the record the credential names. nil when all stand as declared.
    /// Given the answer S2 requires and the one given (`wrong`), only the part they disagree
    /// on, first in S2's order: the key (S2.1, one of them `app_key_invalid`), else the app
    /// and its account (S2.2, S2.3: `app_disabled`, `app_pending`), else the record.
    func groundChangedAt(key: KeyID, credential: Credential, device: DeviceIndex,
                         wrong: (expected: Answer, actual: Answer)? = nil) -> SimTime? {
        var t = LocalData.never
        func take(_ c: SimTime) { if c != LocalData.never { t = t == LocalData.never ? c : max(t, c) } }
        func either(_ answers: Answer...) -> Bool { wrong.map { answers.contains($0.expected) || answers.contains($0.actual) } ?? true }
        let keyPart = either(.appKeyInvalid)
        let appPart = either(.appDisabled, .appPending) && (wrong == nil || !keyPart)
        let recordPart = wrong == nil || (!keyPart && !appPart)
        if keyPart, Int(key) < keyChangedAt.count { take(keyChangedAt[Int(key)]) }
        if appPart, let a = app(of: key), Int(a) < apps.count {
            take(appChangedAt[Int(a)])
            take(accountChangedAt[Int(apps[Int(a)].account)])
        }
        let d = credential.isNone ? Int(device) : Int(credential.device)
        if recordPart, d < recordChangedAt.count { take(recordChangedAt[d]) }
        return t == LocalData.never ? nil : t
    }

    /// Notes the changes a dashboard or Rollup action applied at `now` made to the state
    /// `before` had (S10).
    mutating func noteChanges(from before: ServerTruth, now: SimTime) {
        for k in keys.indices where keys[k] != before.keys[k] { keyChangedAt[k] = now }
        for a in apps.indices where apps[a] != before.apps[a] { appChangedAt[a] = now }
        for c in accounts.indices where accounts[c] != before.accounts[c] { accountChangedAt[c] = now }
    }

    /// Whether a record of the credential `credential` is live.
    func knows(_ credential: Credential) -> Bool { owner(of: credential) != nil }

    /// The owner of the record `credential` names, if the server holds it: the device's
    /// newest record, or an earlier one it still holds.
    @inline(__always)
    func owner(of credential: Credential) -> AppID? { owner(of: credential, listedOnly: false) }

    /// The owner of the record `credential` names, if the server surely holds it: the
    /// device's newest, or an earlier one its trace listed (`surelyHolds`). The truth of
    /// access reads this: an earlier record the server did not list may be superseded.
    func heldOwner(of credential: Credential) -> AppID? { owner(of: credential, listedOnly: true) }

    /// The one lookup behind `owner(of:)` and `heldOwner(of:)`.
    @inline(__always)
    private func owner(of credential: Credential, listedOnly: Bool) -> AppID? {
        let d = Int(credential.device)
        guard !credential.isNone, credential.generation != 0, d < records.count else { return nil }
        if records[d].generation == credential.generation { return records[d].owner }
        if earlier.isEmpty { return nil }
        return earlier.first(of: credential.device) { $0.generation == credential.generation && ($0.listed || !listedOnly) }?.owner
    }

    /// The server showed by its answer that it holds the earlier record `credential` names.
    mutating func markHeld(_ credential: Credential) {
        earlier.update(of: credential.device, where: { $0.generation == credential.generation }) { $0.listed = true }
    }

    /// Whether `credential` names an earlier record the server still holds (not the newest).
    func namesEarlier(_ credential: Credential) -> Bool {
        guard !earlier.isEmpty, !credential.isNone else { return false }
        return earlier.first(of: credential.device) { $0.generation == credential.generation } != nil
    }

    /// The server no longer holds the earlier record of `device` with `generation`.
    mutating func dropEarlier(_ device: DeviceIndex, generation: UInt32) {
        guard !earlier.isEmpty else { return }
        earlier.removeAll(of: device) { $0.generation == generation }
    }

    /// A registration or a reset answered 200: of the device's earlier records, the server
    /// surely holds those its trace lists (`held`, with `recordAfter`), and of the others
    /// says nothing (superseded, or kept unsaid).
    mutating func noteListed(_ device: DeviceIndex, held: [UInt32], recordAfter: UInt32) {
        guard !earlier.isEmpty else { return }
        earlier.update(of: device, where: { _ in true }) { $0.listed = held.contains($0.generation) || $0.generation == recordAfter }
    }

    /// Whether the server surely holds the record `credential` names: the device's newest,
    /// or an earlier one its trace listed last (D7: a record a reset owes is gone otherwise).
    func surelyHolds(_ credential: Credential) -> Bool { heldOwner(of: credential) != nil }

    /// S2 in order, for a request of `kind` with `key` and `credential` from `device`.
    /// A reset is judged by S8 alone: it deletes a known record whatever the key's state,
    /// if its App Attest assertion is the registering install's (S6).
    func expected(kind: RequestKind, key: KeyID, credential: Credential, device: DeviceIndex,
                  attestedApp: AppID?, now: SimTime) -> (Answer, Cause) {
        // S6: an assertion can be made only by the genuine install the credential names.
        let assertion = attestedApp != nil && credential.device == device
        if kind == .reset {
            guard knows(credential) else { return (.ok, .resetOfUnknown) }
            return assertion ? (.ok, .served) : (.attestationFailed, .clone)
        }
        guard Int(key) < keys.count else { return (.appKeyInvalid, .unknownKey) }
        let app: AppID
        switch keys[Int(key)] {
        case .unissued: return (.appKeyInvalid, .unknownKey)
        case .stopped: return (.appKeyInvalid, .stoppedKey)
        case .previous(let a, let deadline):
            if now >= deadline { return (.appKeyInvalid, .graceEnded) }
            app = a
        case .current(let a): app = a
        }
        if let cause = appRefusal(app) { return (.appDisabled, cause) }
        if apps[Int(app)].review == .pending { return (.appPending, .pending) }
        if kind == .register { return attestedApp == app ? (.ok, .served) : (.attestationFailed, .clone) }
        guard let owner = owner(of: credential) else {
            let c = Int(credential.device) < records.count ? records[Int(credential.device)] : RecordT()
            return (.deviceUnknown, c.deletedByReset && c.generation == 0 ? .resetRecord : .unknownDevice)
        }
        if !assertion { return (.attestationFailed, .clone) }
        if owner != app { return (.appKeyMismatch, .mismatch) }
        return (.ok, .served)
    }

    /// The truth of S2 for an install at `now`: whether every request it would send (with
    /// `key`; with the credential of generation `credentialGeneration` if not 0, else a
    /// registration) is refused with a lock error (S2.1, S2.2, S2.5). Pending, an unknown
    /// device and a failed assertion are no lock errors, so they break a stop.
    func refused(key: KeyID, device: DeviceIndex, genuine: Bool, credentialGeneration: UInt32, now: SimTime) -> Bool {
        guard Int(key) < keys.count else { return true }
        let app: AppID
        switch keys[Int(key)] {
        case .unissued, .stopped: return true
        case .previous(let a, let deadline):
            if now >= deadline { return true }
            app = a
        case .current(let a): app = a
        }
        if appRefusal(app) != nil { return true }
        if apps[Int(app)].review == .pending { return false }
        // S2.5: a genuine install holding its live credential (the record's generation: an
        // older one is unknown, S2.4), sending another app's key.
        guard genuine, credentialGeneration != 0, Int(device) < records.count,
              let owner = heldOwner(of: Credential(device: device, generation: credentialGeneration)) else { return false }
        return owner != app
    }

    /// The earliest grace deadline of a key after `t`, or `.max` (S3).
    func nextDeadline(after t: SimTime) -> SimTime {
        var next = SimTime.max
        for case .previous(_, let d) in keys where d > t { next = min(next, d) }
        return next
    }

    /// The app that `key` belongs to, if it was ever issued.
    func app(of key: KeyID) -> AppID? {
        guard Int(key) < keys.count else { return nil }
        switch keys[Int(key)] {
        case .unissued: return nil
        case .current(let a), .previous(let a, _), .stopped(let a): return a
        }
    }

    /// Applies a dashboard or Rollup action by the checkers' own transition table.
    mutating func apply(_ action: DashboardAction, now: SimTime) {
        switch action {
        case .rotate(let app, let newKey, let grace):
            guard Int(newKey) < keys.count, keys[Int(newKey)] == .unissued else { return }
            let old = Int(apps[Int(app)].currentKey)
            keys[old] = grace.map { .previous(app, deadline: now.saturatingAdd($0)) } ?? .stopped(app)
            keys[Int(newKey)] = .current(app)
            apps[Int(app)].currentKey = newKey
        case .stopOldKey(let app, let key):
            if Int(key) < keys.count, case .previous(let owner, _) = keys[Int(key)], owner == app { keys[Int(key)] = .stopped(app) }
        case .disable(let app): apps[Int(app)].disabled = true
        case .enable(let app): apps[Int(app)].disabled = false
        case .rollupApp(let a, let app):
            let r = apps[Int(app)].review
            switch a {
            case .approve: if r == .pending || r == .rejected { apps[Int(app)].review = .approved }
            case .reject: if r == .pending || r == .approved { apps[Int(app)].review = .rejected }
            case .revoke: if r != .revoked { apps[Int(app)].beforeRevoke = r; apps[Int(app)].review = .revoked }
            case .restore: if r == .revoked { apps[Int(app)].review = apps[Int(app)].beforeRevoke }
            }
        case .rollupAccount(let a, let account):
            let s = accounts[Int(account)]
            switch a {
            case .approve: if s == .unapproved { accounts[Int(account)] = .approved }
            case .revoke: if s != .revoked { accountsBeforeRevoke[Int(account)] = s; accounts[Int(account)] = .revoked }
            case .restore: if s == .revoked { accounts[Int(account)] = accountsBeforeRevoke[Int(account)] }
            }
        }
    }

    // MARK: What the server could know of a stop's start (S2)

    /// Brings `keyServable`, `keyPending` and `appServable` up to date after a change at
    /// `t` (a dashboard or Rollup action, a grace deadline).
    /// - Complexity: O(keys + apps).
    mutating func noteServable(at t: SimTime) {
        for a in apps.indices {
            let refused = appRefusal(AppID(a)) != nil
            appServable[a].note(!refused, at: t)
            appPending[a].note(!refused && apps[a].review == .pending, at: t)
        }
        for k in keys.indices {
            var valid = false, app: AppID = 0
            switch keys[k] {
            case .current(let a): valid = true; app = a
            case .previous(let a, let deadline): valid = t < deadline; app = a
            case .unissued, .stopped: break
            }
            let refusal = valid ? appRefusal(app) : nil
            keyServable[k].note(valid && refusal == nil, at: t)
            keyPending[k].note(valid && refusal == nil && apps[Int(app)].review == .pending, at: t)
        }
    }

    /// S2.2 for `app`: why it is refused now, or nil.
    func appRefusal(_ app: AppID) -> Cause? {
        let record = apps[Int(app)]
        if record.disabled { return .developerDisabled }
        if record.review == .rejected || record.review == .revoked || accounts[Int(record.account)] != .approved { return .rollup }
        return nil
    }

    /// A request of `device` with `key` was judged by S2 at `now` (`lockError`: refused
    /// with one). Returns, for a lock error, the latest `stoppedSince` the server could
    /// know: one more than the latest moment at which some key history consistent with
    /// what it saw would have been served (docs/checkers.md, how the server dates a stop).
    mutating func judged(device d: DeviceIndex, key: KeyID, credential: Credential, lockError: Bool, now: SimTime) -> SimTime {
        let i = Int(d)
        var s = seen[i]
        var bound = SimTime.max
        if lockError {
            let first = s.lastJudgedAt == LocalData.never
            let from = first ? 0 : s.lastJudgedAt + 1
            // S2.5 refuses another app's key only from an install holding the live record's
            // credential: one that sends none (reset or purged) would register instead.
            let heldOwner = credential.device == d ? heldOwner(of: credential) : nil
            let live = heldOwner != nil
            let record = RecordT(owner: heldOwner ?? records[i].owner, generation: records[i].generation)
            var latest = s.servableAt
            func consider(_ t: SimTime?, from: SimTime = from) {
                guard let t, t >= from, t < now else { return }
                latest = latest == LocalData.never ? t : max(latest, t)
            }
            func keyCandidate(_ k: KeyID) -> SimTime? {
                guard Int(k) < keys.count, let app = app(of: k) else { return nil }
                let mismatch = live && record.owner != app
                return (mismatch ? keyPending[Int(k)] : keyServable[Int(k)]).latest(before: now)
            }
            // Another key with no update between is a clone's: as if builds went unseen.
            let newBuild = s.updates >= 1 || (!first && key != s.key)
            // An update this recent may have crossed requests in flight, which then reach the
            // server out of build order: taken as builds unseen (lenient, a later bound).
            let recent = s.lastUpdateAt != LocalData.never && now - s.lastUpdateAt <= SeenT.inFlightMs
            let skipped = first ? s.updates >= 1 : newBuild && (s.updates != 1 || recent)
            // A new build's key may have been carried before the old build's last request
            // arrived (sent before the update, in flight since): the server may count it
            // from up to the in-flight bound earlier (a later, sound bound).
            consider(keyCandidate(key), from: newBuild && !first ? from.saturatingSubtract(SeenT.inFlightMs) : from)
            if newBuild, !first { consider(keyCandidate(s.key)) }
            if skipped {
                // A build never seen may have carried any app's current key.
                for a in apps.indices {
                    let foreign = live && a != Int(record.owner)
                    consider((foreign ? appPending[a] : appServable[a]).latest(before: now))
                }
            }
            s.servableAt = latest
            bound = latest == LocalData.never ? 0 : min(latest + 1, now)
        } else {
            s.servableAt = now
        }
        s.lastJudgedAt = now
        s.key = key
        // A request carries the build it was sent from: one in flight across an update is
        // served after it. Updates this recent may come after the request's build, so they
        // still count for the next one (lenient: more builds unseen, a later bound).
        if s.lastUpdateAt == LocalData.never || now - s.lastUpdateAt > SeenT.inFlightMs { s.updates = 0 }
        seen[i] = s
        return bound
    }
}

/// What the server saw of one install, for the dating of its stops (S2): its last request
/// judged by S2 (a reset is judged by S8 alone) and that request's key, the updates since
/// (a build the server never saw between two it saw may have carried any key of the app),
/// and the latest moment up to then at which it could have been served.
struct SeenT {
    var lastJudgedAt: SimTime = LocalData.never
    var servableAt: SimTime = LocalData.never
    var key: KeyID = 0
    /// Updates since `lastJudgedAt` (or the start), saturating, and the last one's time.
    var updates: UInt8 = 0
    var lastUpdateAt: SimTime = LocalData.never
    /// How long after an update a request sent before it may still be served: well past
    /// any request timeout the scenarios allow and the network's latency.
    static let inFlightMs: SimTime = 2 * Ms.hour
}

/// When something (a key, an app) was served: since when it is, now, and the last moment
/// it was before that. A change to refused at `t` makes `t - 1` the last such moment, also
/// after access that came back in that very millisecond (a request could be served between).
struct ServableTimes {
    var since: SimTime = LocalData.never
    var last: SimTime = LocalData.never

    mutating func note(_ servable: Bool, at t: SimTime) {
        if servable, since == LocalData.never { since = t }
        if !servable, since != LocalData.never {
            if t > 0 { last = t - 1 }
            since = LocalData.never
        }
    }

    /// The latest moment before `now` at which it was served, or nil.
    func latest(before now: SimTime) -> SimTime? {
        if since != LocalData.never, since < now { return now - 1 }
        return last == LocalData.never || last >= now ? nil : last
    }
}
