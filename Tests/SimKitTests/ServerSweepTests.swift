import Testing
@testable import SimKit

/// A plain, independently written reference for S2–S8: flat arrays and the rules as
/// written in the spec, with no attempt at speed. The sweep runs it beside `ServerModel`.
/// It dates a stop (S2 `stoppedSince`) by brute force: it keeps a copy of its whole state
/// after every dashboard change and walks back through them.
private struct PlainServer {
    /// Everything but the devices: what S2.1–S2.3 read.
    struct Access {
        var account: [AccountStatus]
        var appAccount: [AccountID], review: [ReviewStatus], disabled: [Bool], current: [KeyID]
        var keyApp: [AppID?], keyWorksUntil: [SimTime]   // .max for a current key, 0 when stopped
    }
    var access: Access
    /// The state in force from each time on (same-time changes: the last one counts).
    var history: [(time: SimTime, access: Access)] = []
    var generation: [UInt32], live: [Bool], owner: [AppID]
    /// What Rollup's restore gives back: the status each app and account had when revoked (S5).
    var reviewBeforeRevoke: [ReviewStatus], accountBeforeRevoke: [AccountStatus]

    init(_ setup: ServerSetup) {
        var a = Access(account: setup.accounts.map { $0.approved ? .approved : .unapproved },
                       appAccount: setup.apps.map(\.account),
                       review: setup.apps.map { $0.approved ? .approved : .pending },
                       disabled: setup.apps.map { _ in false }, current: setup.apps.map(\.key),
                       keyApp: Array(repeating: nil, count: setup.keyCount),
                       keyWorksUntil: Array(repeating: 0, count: setup.keyCount))
        for (i, app) in setup.apps.enumerated() { a.keyApp[Int(app.key)] = AppID(i); a.keyWorksUntil[Int(app.key)] = .max }
        access = a
        reviewBeforeRevoke = a.review
        accountBeforeRevoke = a.account
        history = [(0, a)]
        generation = Array(repeating: 0, count: setup.deviceCount)
        live = Array(repeating: false, count: setup.deviceCount)
        owner = Array(repeating: 0, count: setup.deviceCount)
    }

    /// Call after every dashboard or Rollup change at `now`.
    mutating func changed(at now: SimTime) { history.append((now, access)) }

    /// S2.1–S2.2 at moment `x`, by the state then in force: a lock error for `key`?
    func lockRefused(_ key: KeyID, at x: SimTime) -> Bool {
        let a = history.last { $0.time <= x }!.access
        guard let app = a.keyApp[Int(key)], x < a.keyWorksUntil[Int(key)] else { return true }
        let i = Int(app)
        return a.disabled[i] || a.review[i] == .rejected || a.review[i] == .revoked || a.account[Int(a.appAccount[i])] != .approved
    }

    /// The start of the unbroken run of lock errors for `key` up to `now`: the state is
    /// constant between changes and deadlines, so one look per piece is enough.
    func stoppedSince(_ key: KeyID, now: SimTime) -> SimTime {
        var points = Set(history.map(\.time))
        for h in history { for d in h.access.keyWorksUntil where d != .max && d != 0 { points.insert(d) } }
        points.insert(0)
        var start = now
        for p in points.filter({ $0 < now }).sorted(by: >) {
            guard lockRefused(key, at: p) else { break }
            start = p
        }
        return start
    }

    mutating func handle(_ r: Request, now: SimTime) -> ServerReply {
        let assertion = r.attestedApp != nil && r.credential.device == r.device
        let d = Int(r.credential.device)
        let known = !r.credential.isNone && d < live.count && live[d] && generation[d] == r.credential.generation
        if r.kind == .reset {   // S8: whatever the key's state
            guard known else { return ServerReply(.ok, servedAt: now) }
            guard assertion else { return ServerReply(.attestationFailed, servedAt: now) }
            live[d] = false
            return ServerReply(.ok, servedAt: now)
        }
        if lockRefused(r.key, at: now) {
            let app = access.keyApp[Int(r.key)]
            let answer: Answer = app != nil && now < access.keyWorksUntil[Int(r.key)] ? .appDisabled : .appKeyInvalid
            return ServerReply(answer, servedAt: now, stoppedSince: stoppedSince(r.key, now: now))
        }
        let app = access.keyApp[Int(r.key)]!
        let a = Int(app)
        if access.review[a] == .pending { return ServerReply(.appPending, servedAt: now) }
        if r.kind == .register {
            guard r.attestedApp == app else { return ServerReply(.attestationFailed, servedAt: now) }
            let dev = Int(r.device)
            generation[dev] += 1; live[dev] = true; owner[dev] = app
            return ServerReply(.ok, credential: Credential(device: r.device, generation: generation[dev]), servedAt: now)
        }
        guard known else { return ServerReply(.deviceUnknown, servedAt: now) }
        guard assertion else { return ServerReply(.attestationFailed, servedAt: now) }
        // A mismatch on the build the install started with: dated from this refusal.
        guard owner[d] == app else { return ServerReply(.appKeyMismatch, servedAt: now, stoppedSince: now) }
        return ServerReply(.ok, servedAt: now)
    }
}

@Suite struct ServerSweepTests {
    /// Random dashboard, Rollup and device traffic: the model answers every request
    /// exactly as the plain reference does, and its invariants hold throughout.
    @Test(arguments: 0..<64 as Range<UInt64>)
    func modelMatchesPlainReference(seed: UInt64) {
        var rng = SimRandom(seed: seed)
        var setup = ServerSetup(keyCount: 24, deviceCount: 12)
        for i in 0..<3 { setup.addAccount(approved: i != 2) }
        for i in 0..<4 { setup.addApp(account: AccountID(i % 3), key: KeyID(i), approved: i != 3) }
        var model = ServerModel(setup: setup)
        var plain = PlainServer(setup)
        var credentials = Array(repeating: Credential.none, count: setup.deviceCount)
        var now: SimTime = 0
        let appCount = UInt64(setup.apps.count)

        for step in 0..<400 {
            // Bursts under 2 minutes apart (inside a 5-minute cache) between gaps of up to 3 days.
            now += rng.chance(1, outOf: 2) ? rng.below(2 * Ms.minute) : rng.below(3 * Ms.day)
            let app = AppID(rng.below(appCount))
            let a = Int(app)
            let what = rng.below(20)
            let dashboardStep = what <= 5
            switch what {
            case 0:
                let newKey = KeyID(rng.below(UInt64(setup.keyCount)))
                let policy: OldKeyPolicy = rng.chance(1, outOf: 3) ? .stopNow : .keep(graceMs: rng.below(40 * Ms.day))
                let outcome = model.rotate(app: app, newKey: newKey, oldKey: policy, now: now)
                #expect((outcome == .rotated) == (plain.access.keyApp[Int(newKey)] == nil), "seed \(seed) step \(step)")
                if outcome == .rotated {
                    let old = Int(plain.access.current[a])
                    if case .keep(let graceMs) = policy { plain.access.keyWorksUntil[old] = now + graceMs } else { plain.access.keyWorksUntil[old] = 0 }
                    plain.access.keyApp[Int(newKey)] = app; plain.access.keyWorksUntil[Int(newKey)] = .max; plain.access.current[a] = newKey
                }
            case 1:
                let key = KeyID(rng.below(UInt64(setup.keyCount)))
                if model.stopOldKey(app: app, key: key, now: now) { plain.access.keyWorksUntil[Int(key)] = 0 }
            case 2: _ = model.disable(app: app, now: now); plain.access.disabled[a] = true
            case 3: _ = model.enable(app: app, now: now); plain.access.disabled[a] = false
            case 4:
                let action = RollupAppAction.allCases[Int(rng.below(4))]
                let before = plain.access.review[a]
                if model.rollup(action, app: app, now: now) {
                    switch action {
                    case .approve: plain.access.review[a] = .approved
                    case .reject: plain.access.review[a] = .rejected
                    case .revoke: plain.reviewBeforeRevoke[a] = before; plain.access.review[a] = .revoked
                    case .restore: plain.access.review[a] = plain.reviewBeforeRevoke[a]
                    }
                }
            case 5:
                let account = AccountID(rng.below(3))
                let action = RollupAccountAction.allCases[Int(rng.below(3))]
                let before = plain.access.account[Int(account)]
                if model.rollup(action, account: account, now: now) {
                    switch action {
                    case .approve: plain.access.account[Int(account)] = .approved
                    case .revoke: plain.accountBeforeRevoke[Int(account)] = before; plain.access.account[Int(account)] = .revoked
                    case .restore: plain.access.account[Int(account)] = plain.accountBeforeRevoke[Int(account)]
                    }
                }
            case 6:
                let device = DeviceIndex(rng.below(UInt64(setup.deviceCount)))
                _ = model.forgetDevice(device, now: now); plain.live[Int(device)] = false
            default:
                let device = DeviceIndex(rng.below(UInt64(setup.deviceCount)))
                let kind = RequestKind.allCases[Int(rng.below(UInt64(RequestKind.allCases.count)))]
                // Usually the app's current or a recent key; sometimes any interned name.
                let key = rng.chance(3, outOf: 4) ? plain.access.current[a] : KeyID(rng.below(UInt64(setup.keyCount)))
                var credential = kind == .register ? .none : credentials[Int(device)]
                if kind != .register, rng.chance(1, outOf: 10), !credential.isNone { credential.generation -= 1 }
                let attested: AppID? = rng.chance(1, outOf: 8) ? nil : rng.chance(1, outOf: 8) ? AppID(rng.below(appCount)) : plain.access.keyApp[Int(key)]
                let request = Request(kind: kind, key: key, credential: credential, device: device, attestedApp: attested)
                let reply = model.handle(request, now: now)
                #expect(reply == plain.handle(request, now: now), "seed \(seed) step \(step) \(kind) at \(DurationText.clock(now))")
                if kind == .register, reply.answer == .ok { credentials[Int(device)] = reply.credential }
            }
            if dashboardStep { plain.changed(at: now) }
            #expect(model.checkInvariants() == nil, "seed \(seed) step \(step)")
        }
    }

    /// A device slot stays 16 bytes (its record, and the build last seen for S2's
    /// `stoppedSince`), so a million devices cost 16 MB.
    @Test func deviceSlotIsCompact() {
        #expect(MemoryLayout<ServerModel.DeviceSlot>.stride == 16)
    }
}
