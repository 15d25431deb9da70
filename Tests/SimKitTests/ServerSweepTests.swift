import Foundation
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
        seen = Array(repeating: [], count: setup.deviceCount)
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

    /// A request judged by S2, as the server saw it: its build and key, the device's record
    /// when it came, and whether it was refused with a lock error.
    /// `own`: the install's own app as the server could tell then (its live record's, else
    /// the key's), whose keys a build it never saw may have carried.
    struct Seen { var time: SimTime; var build: UInt16; var key: KeyID; var live: Bool; var owner: AppID; var own: AppID?; var lockError: Bool }
    var seen: [[Seen]]

    /// Whether a request with `key` at moment `x` would have got no lock error, from an
    /// install whose live record (if `live`) belongs to `owner`: S2.1–S2.2, and S2.5 unless
    /// the key's app was pending then (S2.3 comes first).
    func servable(_ key: KeyID, at x: SimTime, live: Bool, owner: AppID) -> Bool {
        guard !lockRefused(key, at: x) else { return false }
        let a = history.last { $0.time <= x }!.access
        let app = a.keyApp[Int(key)]!
        return !live || owner == app || a.review[Int(app)] == .pending
    }

    /// Whether app `app` was answered `app_pending` at moment `x` (S2.3).
    func pending(_ app: AppID, at x: SimTime) -> Bool {
        !appRefused(app, at: x) && history.last { $0.time <= x }!.access.review[Int(app)] == .pending
    }

    /// Whether app `app` was refused at moment `x` (S2.2): then none of its keys was served.
    func appRefused(_ app: AppID, at x: SimTime) -> Bool {
        let a = history.last { $0.time <= x }!.access
        let i = Int(app)
        return a.disabled[i] || a.review[i] == .rejected || a.review[i] == .revoked || a.account[Int(a.appAccount[i])] != .approved
    }

    /// S2 `stoppedSince` by brute force over every key history consistent with what the
    /// server saw of device `d`, the request `r` at `now` included: one more than the latest
    /// moment at which some such history would have been served. At a moment between two
    /// requests, the install carried the later one's key, or the earlier one's if the build
    /// or key changed, or any key of its own app if a build may have gone unseen; a new
    /// build's key also from up to the in-flight bound before the request before it. The state
    /// is constant between changes, deadlines and requests, so the last moment of each piece
    /// stands for it.
    func stoppedSince(device d: Int, _ r: Request, now: SimTime) -> SimTime {
        let holds = live[d] && r.credential.device == r.device && r.credential.generation == generation[d]
        let requests = seen[d] + [Seen(time: now, build: r.build, key: r.key, live: holds, owner: owner[d],
                                         own: live[d] ? owner[d] : access.keyApp[Int(r.key)], lockError: true)]
        var points: Set<SimTime> = [0, now]
        for h in history {
            points.insert(h.time)
            for t in h.access.keyWorksUntil where t != .max && t != 0 { points.insert(t) }
        }
        for q in requests { points.insert(q.time); points.insert(q.time + 1) }
        for y in points.flatMap({ [$0, $0 &- 1] }).filter({ $0 < now }).sorted(by: >) {
            // A new build's key, from up to the in-flight bound before the request before it
            // arrived (sent before the update, judged after it), until it arrived itself.
            if requests.indices.dropFirst().contains(where: { i in
                let p = requests[i - 1], q = requests[i]
                return (p.build != q.build || p.key != q.key) && y < q.time
                    && y >= (p.time + 1).saturatingSubtract(ServerModel.maxInFlightMs)
                    && servable(q.key, at: y, live: q.live, owner: q.owner)
            }) { return y + 1 }
            if let at = requests.last(where: { $0.time == y }) {
                if !at.lockError { return y + 1 }
                continue
            }
            let next = requests.first { $0.time > y }!
            let prev = requests.last { $0.time < y }
            var keys = [next.key]
            var own = false
            if let prev {
                let changed = prev.build != next.build || prev.key != next.key
                if changed { keys.append(prev.key) }
                own = changed && next.build != prev.build &+ 1
            } else {
                own = next.build != 0
            }
            if keys.contains(where: { servable($0, at: y, live: next.live, owner: next.owner) }) { return y + 1 }
            // A build never seen: any app's current key, a mismatch unless that app is pending.
            if own, (0..<access.review.count).contains(where: { x in
                next.live && AppID(x) != next.owner ? pending(AppID(x), at: y) : !appRefused(AppID(x), at: y)
            }) { return y + 1 }
        }
        return 0
    }

    mutating func handle(_ r: Request, now: SimTime) -> ServerReply {
        if r.kind == .reset { return judge(r, now: now) }   // S8 alone: nothing seen for S2
        let dev = Int(r.device)
        let holds = live[dev] && r.credential.device == r.device && r.credential.generation == generation[dev]
        let before = (live: holds, owner: owner[dev], own: live[dev] ? owner[dev] : access.keyApp[Int(r.key)])
        var reply = judge(r, now: now)
        if reply.answer.isLockError {
            reply = ServerReply(reply.answer, servedAt: now, stoppedSince: stoppedSince(device: dev, r, now: now))
        }
        seen[dev].append(Seen(time: now, build: r.build, key: r.key, live: before.live, owner: before.owner,
                              own: before.own, lockError: reply.answer.isLockError))
        return reply
    }

    /// S2 and S8 in order; a lock error is dated by `handle`.
    mutating func judge(_ r: Request, now: SimTime) -> ServerReply {
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
            return ServerReply(answer, servedAt: now, stoppedSince: 0)
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
        guard owner[d] == app else { return ServerReply(.appKeyMismatch, servedAt: now, stoppedSince: 0) }
        return ServerReply(.ok, servedAt: now)
    }
}

@Suite struct ServerSweepTests {
    /// Random dashboard, Rollup and device traffic: the model answers every request
    /// exactly as the plain reference does, and its invariants hold throughout.
    @Test(arguments: 0..<64 as Range<UInt64>)
    func modelMatchesPlainReference(seed: UInt64) {
        #expect(Self.sweep(seed: seed, flaws: []) == 0)
    }

    /// The sweep reaches installs whose dating depends on builds it never saw: the server
    /// that dates an updated install from its build's first request differs from the plain
    /// reference on some seeds.
    @Test func theSweepCatchesDatingFromABuildsFirstRequest() {
        let differences = (0..<16 as Range<UInt64>).map { Self.sweep(seed: $0, flaws: .datesUpdateFromItsFirstRequest) }
        #expect(differences.reduce(0, +) > 0, "\(differences)")
    }

    /// Runs one seed of the sweep against `ServerModel(flaws:)`, checking every answer of the
    /// reference (`flaws: []`); returns how many lock errors were dated otherwise.
    static func sweep(seed: UInt64, flaws: ServerFlaws) -> Int {
        var datingDifferences = 0
        var rng = SimRandom(seed: seed)
        var setup = ServerSetup(keyCount: 24, deviceCount: 12)
        for i in 0..<3 { setup.addAccount(approved: i != 2) }
        for i in 0..<4 { setup.addApp(account: AccountID(i % 3), key: KeyID(i), approved: i != 3) }
        var model = ServerModel(setup: setup, flaws: flaws)
        var plain = PlainServer(setup)
        var credentials = Array(repeating: Credential.none, count: setup.deviceCount)
        // Each install's build: an update now and then, sometimes two at once (one unseen).
        var builds = Array(repeating: UInt16(0), count: setup.deviceCount)
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
                if rng.chance(1, outOf: 16) { builds[Int(device)] += UInt16(1 + rng.below(2)) }
                let request = Request(kind: kind, key: key, credential: credential, device: device, attestedApp: attested,
                                      build: builds[Int(device)])
                let reply = model.handle(request, now: now)
                let p = plain.handle(request, now: now)
                if reply.stoppedSince != p.stoppedSince, reply.answer == p.answer { datingDifferences += 1 }
                if flaws.isEmpty { #expect(reply == p, "seed \(seed) step \(step) \(kind) at \(DurationText.clock(now))") }
                if kind == .register, reply.answer == .ok { credentials[Int(device)] = reply.credential }
            }
            if dashboardStep { plain.changed(at: now) }
            #expect(model.checkInvariants() == nil, "seed \(seed) step \(step)")
        }
        return datingDifferences
    }

    /// A device slot stays 32 bytes (its record, and what S2's `stoppedSince` needs of the
    /// last request judged), so a million devices cost 32 MB.
    @Test func deviceSlotIsCompact() {
        #expect(MemoryLayout<ServerModel.DeviceSlot>.stride == 32)
    }
}
