import Testing
@testable import SimKit

/// A plain, independently written reference for S2–S8: flat arrays and the rules as
/// written in the spec, with no attempt at speed. The sweep runs it beside `ServerModel`.
private struct PlainServer {
    var account: [AccountStatus]
    var appAccount: [AccountID], review: [ReviewStatus], disabled: [Bool], current: [KeyID]
    var keyApp: [AppID?], keyWorksUntil: [SimTime]   // .max for a current key, 0 when stopped
    var generation: [UInt32], live: [Bool], owner: [AppID]

    init(_ setup: ServerSetup) {
        account = setup.accounts.map { $0.approved ? .approved : .unapproved }
        appAccount = setup.apps.map(\.account)
        review = setup.apps.map { $0.approved ? .approved : .pending }
        disabled = setup.apps.map { _ in false }
        current = setup.apps.map(\.key)
        keyApp = Array(repeating: nil, count: setup.keyCount)
        keyWorksUntil = Array(repeating: 0, count: setup.keyCount)
        for (i, app) in setup.apps.enumerated() { keyApp[Int(app.key)] = AppID(i); keyWorksUntil[Int(app.key)] = .max }
        generation = Array(repeating: 0, count: setup.deviceCount)
        live = Array(repeating: false, count: setup.deviceCount)
        owner = Array(repeating: 0, count: setup.deviceCount)
    }

    mutating func handle(_ r: Request, now: SimTime) -> ServerReply {
        guard let app = keyApp[Int(r.key)], now < keyWorksUntil[Int(r.key)] else { return ServerReply(.appKeyInvalid) }
        let a = Int(app)
        if disabled[a] || review[a] == .rejected || review[a] == .revoked || account[Int(appAccount[a])] != .approved {
            return ServerReply(.appDisabled)
        }
        if review[a] == .pending { return ServerReply(.appPending) }
        if r.kind == .register {
            guard r.attestedApp == app else { return ServerReply(.attestationFailed) }
            let d = Int(r.device)
            generation[d] += 1; live[d] = true; owner[d] = app
            return ServerReply(.ok, credential: Credential(device: r.device, generation: generation[d]))
        }
        let d = Int(r.credential.device)
        guard d < live.count, live[d], generation[d] == r.credential.generation else {
            return ServerReply(r.kind == .reset ? .ok : .deviceUnknown)
        }
        guard owner[d] == app else { return ServerReply(.appKeyMismatch) }
        if r.kind == .reset { live[d] = false }
        return ServerReply(.ok)
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
            switch rng.below(20) {
            case 0:
                let newKey = KeyID(rng.below(UInt64(setup.keyCount)))
                let policy: OldKeyPolicy = rng.chance(1, outOf: 3) ? .stopNow : .keep(graceMs: rng.below(40 * Ms.day))
                let outcome = model.rotate(app: app, newKey: newKey, oldKey: policy, now: now)
                #expect((outcome == .rotated) == (plain.keyApp[Int(newKey)] == nil), "seed \(seed) step \(step)")
                if outcome == .rotated {
                    let old = Int(plain.current[a])
                    if case .keep(let graceMs) = policy { plain.keyWorksUntil[old] = now + graceMs } else { plain.keyWorksUntil[old] = 0 }
                    plain.keyApp[Int(newKey)] = app; plain.keyWorksUntil[Int(newKey)] = .max; plain.current[a] = newKey
                }
            case 1:
                let key = KeyID(rng.below(UInt64(setup.keyCount)))
                if model.stopOldKey(app: app, key: key, now: now) { plain.keyWorksUntil[Int(key)] = 0 }
            case 2: _ = model.disable(app: app, now: now); plain.disabled[a] = true
            case 3: _ = model.enable(app: app, now: now); plain.disabled[a] = false
            case 4:
                let action = RollupAppAction.allCases[Int(rng.below(4))]
                if model.rollup(action, app: app, now: now) {
                    plain.review[a] = action == .reject ? .rejected : action == .revoke ? .revoked : .approved
                }
            case 5:
                let account = AccountID(rng.below(3))
                let action = RollupAccountAction.allCases[Int(rng.below(3))]
                if model.rollup(action, account: account, now: now) {
                    plain.account[Int(account)] = action == .revoke ? .revoked : .approved
                }
            case 6:
                let device = DeviceIndex(rng.below(UInt64(setup.deviceCount)))
                _ = model.forgetDevice(device, now: now); plain.live[Int(device)] = false
            default:
                let device = DeviceIndex(rng.below(UInt64(setup.deviceCount)))
                let kind = RequestKind.allCases[Int(rng.below(UInt64(RequestKind.allCases.count)))]
                // Usually the app's current or a recent key; sometimes any interned name.
                let key = rng.chance(3, outOf: 4) ? plain.current[a] : KeyID(rng.below(UInt64(setup.keyCount)))
                var credential = kind == .register ? .none : credentials[Int(device)]
                if kind != .register, rng.chance(1, outOf: 10), !credential.isNone { credential.generation -= 1 }
                let attested: AppID? = rng.chance(1, outOf: 8) ? nil : rng.chance(1, outOf: 8) ? AppID(rng.below(appCount)) : plain.keyApp[Int(key)]
                let request = Request(kind: kind, key: key, credential: credential, device: device, attestedApp: attested)
                let reply = model.handle(request, now: now)
                #expect(reply == plain.handle(request, now: now), "seed \(seed) step \(step) \(kind) at \(DurationText.clock(now))")
                if kind == .register, reply.answer == .ok { credentials[Int(device)] = reply.credential }
            }
            #expect(model.checkInvariants() == nil, "seed \(seed) step \(step)")
        }
    }

    /// A device slot stays 8 bytes, so a million devices cost 8 MB.
    @Test func deviceSlotIsCompact() {
        #expect(MemoryLayout<ServerModel.DeviceSlot>.stride == 8)
    }
}
