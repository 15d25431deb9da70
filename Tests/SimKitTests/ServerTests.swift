import Testing
@testable import SimKit

/// The fixture world, by name.
/// Accounts: 0 acme (approved), 1 beta (approved), 2 gamma (unapproved).
/// Apps: A = 0 (acme, key 0), B = 1 (beta, key 1), P = 2 (acme, key 2, pending),
/// U = 3 (gamma, key 3). Keys 4…7 are interned but unissued. Devices 0…7.
private enum W {
    static let acme: AccountID = 0, beta: AccountID = 1, gamma: AccountID = 2
    static let appA: AppID = 0, appB: AppID = 1, appP: AppID = 2, appU: AppID = 3
    static let keyA: KeyID = 0, keyB: KeyID = 1, keyP: KeyID = 2, keyU: KeyID = 3
    static let spare1: KeyID = 4, spare2: KeyID = 5, spare3: KeyID = 6
    static let day = Ms.day
    static let grace = ServerModel.defaultGraceMs

    static func setup() -> ServerSetup {
        var s = ServerSetup(keyCount: 8, deviceCount: 8)
        s.addAccount(approved: true)
        s.addAccount(approved: true)
        s.addAccount(approved: false)
        s.addApp(account: acme, key: keyA)
        s.addApp(account: beta, key: keyB)
        s.addApp(account: acme, key: keyP, approved: false)
        s.addApp(account: gamma, key: keyU)
        return s
    }

    static func server(_ flaws: ServerFlaws = []) -> ServerModel { ServerModel(setup: setup(), flaws: flaws) }

    /// A request from the genuine install that holds `credential` (its App Attest
    /// assertion is valid, S6), unless `device` or `attested` say otherwise.
    static func request(_ kind: RequestKind, key: KeyID, _ credential: Credential = .none,
                        device: DeviceIndex? = nil, attested: AppID? = 0) -> Request {
        Request(kind: kind, key: key, credential: credential,
                device: device ?? (credential.isNone || credential.device >= 8 ? 0 : credential.device), attestedApp: attested)
    }
}

/// Registers `device` as a genuine install of `app` sending `key`; the credential, or `.none`.
private func register(_ server: inout ServerModel, device: DeviceIndex, key: KeyID, app: AppID,
                      now: SimTime) -> Credential {
    let reply = server.handle(W.request(.register, key: key, device: device, attested: app), now: now)
    return reply.answer == .ok ? reply.credential : .none
}

/// The answer to a `check` with `key` and `credential` at `now`.
private func check(_ server: inout ServerModel, key: KeyID, _ credential: Credential, now: SimTime) -> Answer {
    server.handle(W.request(.check, key: key, credential), now: now).answer
}

// MARK: - The S2 table

/// One row of S2: a world prepared by `prepare`, which returns the credential to send
/// with `key`, and the answer every request kind must get.
struct ServerKeyRuleCase: Sendable, CustomTestStringConvertible {
    let name: String
    let key: KeyID
    let expected: Answer
    let prepare: @Sendable (inout ServerModel) -> Void
    var testDescription: String { name }
}

private let keyRuleCases: [ServerKeyRuleCase] = [
    .init(name: "unknown key", key: W.spare1, expected: .appKeyInvalid) { _ in },
    .init(name: "stopped key", key: W.keyA, expected: .appKeyInvalid) { s in
        s.rotate(app: W.appA, newKey: W.spare1, oldKey: .stopNow, now: 0)
    },
    .init(name: "previous key past grace", key: W.keyA, expected: .appKeyInvalid) { s in
        s.rotate(app: W.appA, newKey: W.spare1, oldKey: .keep(graceMs: 10), now: 0)
    },
    .init(name: "previous key stopped early", key: W.keyA, expected: .appKeyInvalid) { s in
        s.rotate(app: W.appA, newKey: W.spare1, now: 0)
        s.stopOldKey(app: W.appA, key: W.keyA, now: 0)
    },
    .init(name: "disabled by developer", key: W.keyA, expected: .appDisabled) { s in
        s.disable(app: W.appA, now: 0)
    },
    .init(name: "rejected by Rollup", key: W.keyA, expected: .appDisabled) { s in
        s.rollup(.reject, app: W.appA, now: 0)
    },
    .init(name: "revoked by Rollup", key: W.keyA, expected: .appDisabled) { s in
        s.rollup(.revoke, app: W.appA, now: 0)
    },
    .init(name: "account unapproved", key: W.keyU, expected: .appDisabled) { _ in },
    .init(name: "account revoked", key: W.keyA, expected: .appDisabled) { s in
        s.rollup(.revoke, account: W.acme, now: 0)
    },
    .init(name: "pending", key: W.keyP, expected: .appPending) { _ in },
    // Precedence: the first rule that applies wins.
    .init(name: "invalid key on a disabled app", key: W.keyA, expected: .appKeyInvalid) { s in
        s.rotate(app: W.appA, newKey: W.spare1, oldKey: .stopNow, now: 0)
        s.disable(app: W.appA, now: 0)
    },
    .init(name: "unknown key while every app is revoked", key: W.spare2, expected: .appKeyInvalid) { s in
        s.rollup(.revoke, account: W.acme, now: 0)
    },
    .init(name: "disabled and pending", key: W.keyP, expected: .appDisabled) { s in
        s.disable(app: W.appP, now: 0)
    },
    .init(name: "pending on a revoked account", key: W.keyP, expected: .appDisabled) { s in
        s.rollup(.revoke, account: W.acme, now: 0)
    },
    .init(name: "rejected app on an unapproved account", key: W.keyU, expected: .appDisabled) { s in
        s.rollup(.reject, app: W.appU, now: 0)
    },
]

/// The reference server against rules S1–S9 and each mutant flaw against the reference.
@Suite struct ServerTests {
    /// Rules S2.1–S2.3 apply to every kind of request, `register` included, and a device
    /// that sends such a key is never given a credential. A `reset` is judged by S8 alone
    /// (see `resetDeletesTheRecordWhateverTheKeysState`).
    @Test(arguments: keyRuleCases, RequestKind.allCases.filter { $0 != .reset })
    func keyRulesApplyToEveryKind(row: ServerKeyRuleCase, kind: RequestKind) {
        var server = W.server()
        // A genuine device registered while everything worked, so only the key rules can fail.
        let credential = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        #expect(!credential.isNone)
        row.prepare(&server)
        let app = server.keyState(row.key).app ?? W.appA
        let reply = server.handle(W.request(kind, key: row.key, kind == .register ? .none : credential,
                                            device: 0, attested: app), now: 100)
        #expect(reply.answer == row.expected)
        #expect(reply.credential == .none)
        #expect(server.keyAnswer(row.key, now: 100) == row.expected)
        // Nothing the request did changed the record (no reset, no re-registration).
        #expect(server.deviceRecord(0) == DeviceRecord(owner: W.appA, generation: 1))
    }

    /// The rows of S2 after the key rules, for every kind that carries a credential.
    @Test(arguments: RequestKind.allCases.filter { $0 != .register })
    func deviceRules(kind: RequestKind) {
        var server = W.server()
        let credA = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        let credB = register(&server, device: 1, key: W.keyB, app: W.appB, now: 0)
        let unknownAnswer: Answer = kind == .reset ? .ok : .deviceUnknown
        // S2.4: no credential, a made-up generation, a device outside the table.
        #expect(server.handle(W.request(kind, key: W.keyA, .none), now: 1).answer == unknownAnswer)
        #expect(server.handle(W.request(kind, key: W.keyA, Credential(device: 0, generation: 9)), now: 1).answer == unknownAnswer)
        #expect(server.handle(W.request(kind, key: W.keyA, Credential(device: 999, generation: 1)), now: 1).answer == unknownAnswer)
        // S2.5: device 1 belongs to B; A's valid key is a mismatch. A reset is judged by
        // S8 alone: it deletes the record whatever key it carries.
        #expect(server.handle(W.request(kind, key: W.keyA, credB), now: 1).answer == (kind == .reset ? .ok : .appKeyMismatch))
        #expect((server.deviceRecord(1) == nil) == (kind == .reset))
        // S2.6: served.
        #expect(server.handle(W.request(kind, key: W.keyA, credA), now: 1).answer == .ok)
        #expect((server.deviceRecord(0) == nil) == (kind == .reset))
    }

    /// Pending wins over an unknown device, and an unknown device wins over a mismatch.
    @Test func precedenceAfterTheKeyRules() {
        var server = W.server()
        #expect(check(&server, key: W.keyP, .none, now: 0) == .appPending)
        let credB = register(&server, device: 1, key: W.keyB, app: W.appB, now: 0)
        server.forgetDevice(1, now: 1)
        #expect(check(&server, key: W.keyA, credB, now: 2) == .deviceUnknown)
    }

    // MARK: - Rotation (S3)

    @Test func stopOldNowInvalidatesTheOldKeyAtOnce() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        #expect(server.rotate(app: W.appA, newKey: W.spare1, oldKey: .stopNow, now: 5 * W.day) == .rotated)
        #expect(check(&server, key: W.keyA, cred, now: 5 * W.day) == .appKeyInvalid)
        #expect(check(&server, key: W.spare1, cred, now: 5 * W.day) == .ok)
        #expect(server.keyState(W.keyA) == .stopped(W.appA))
        #expect(server.app(W.appA).currentKey == W.spare1)
    }

    @Test func defaultGraceEndsExactlyAtThirtyDays() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        let rotatedAt = 3 * W.day + 17
        server.rotate(app: W.appA, newKey: W.spare1, now: rotatedAt)
        let deadline = rotatedAt + 2_592_000_000
        #expect(server.keyState(W.keyA) == .previous(W.appA, deadline: deadline))
        #expect(check(&server, key: W.keyA, cred, now: rotatedAt) == .ok)
        #expect(check(&server, key: W.keyA, cred, now: deadline - 1) == .ok)
        #expect(check(&server, key: W.keyA, cred, now: deadline) == .appKeyInvalid)
        #expect(check(&server, key: W.keyA, cred, now: deadline + W.day) == .appKeyInvalid)
        #expect(check(&server, key: W.spare1, cred, now: deadline) == .ok)
    }

    @Test func customGrace() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        server.rotate(app: W.appA, newKey: W.spare1, oldKey: .keep(graceMs: 2 * Ms.hour), now: 1000)
        #expect(check(&server, key: W.keyA, cred, now: 1000 + 2 * Ms.hour - 1) == .ok)
        #expect(check(&server, key: W.keyA, cred, now: 1000 + 2 * Ms.hour) == .appKeyInvalid)
    }

    @Test func stopOldKeyEarlyDuringGrace() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        server.rotate(app: W.appA, newKey: W.spare1, now: 0)
        #expect(check(&server, key: W.keyA, cred, now: 2 * W.day) == .ok)
        let applied1 = server.stopOldKey(app: W.appA, key: W.keyA, now: 2 * W.day)
        #expect(applied1)
        #expect(check(&server, key: W.keyA, cred, now: 2 * W.day) == .appKeyInvalid)
        #expect(check(&server, key: W.spare1, cred, now: 2 * W.day) == .ok)
        // Refused: the current key, another app's key, an unissued key, an already stopped key.
        let applied2 = server.stopOldKey(app: W.appA, key: W.spare1, now: 2 * W.day)
        #expect(!applied2)
        let applied3 = server.stopOldKey(app: W.appA, key: W.keyB, now: 2 * W.day)
        #expect(!applied3)
        let applied4 = server.stopOldKey(app: W.appA, key: W.spare2, now: 2 * W.day)
        #expect(!applied4)
        let applied5 = server.stopOldKey(app: W.appA, key: W.keyA, now: 2 * W.day)
        #expect(!applied5)
        #expect(check(&server, key: W.spare1, cred, now: 2 * W.day) == .ok)
    }

    @Test func eachPreviousKeyKeepsItsOwnDeadline() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        server.rotate(app: W.appA, newKey: W.spare1, now: 0)                       // keyA until 30d
        server.rotate(app: W.appA, newKey: W.spare2, oldKey: .keep(graceMs: 60 * W.day), now: 10 * W.day) // spare1 until 70d
        #expect(server.keyState(W.keyA) == .previous(W.appA, deadline: W.grace))
        #expect(server.keyState(W.spare1) == .previous(W.appA, deadline: 70 * W.day))
        #expect(check(&server, key: W.keyA, cred, now: W.grace - 1) == .ok)
        #expect(check(&server, key: W.keyA, cred, now: W.grace) == .appKeyInvalid)
        #expect(check(&server, key: W.spare1, cred, now: W.grace) == .ok)
        #expect(check(&server, key: W.spare1, cred, now: 70 * W.day - 1) == .ok)
        #expect(check(&server, key: W.spare1, cred, now: 70 * W.day) == .appKeyInvalid)
        #expect(check(&server, key: W.spare2, cred, now: 70 * W.day) == .ok)
        #expect(server.checkInvariants() == nil)
    }

    @Test func rotatingToAnIssuedKeyIsRefused() {
        var server = W.server()
        server.rotate(app: W.appA, newKey: W.spare1, now: 0)
        #expect(server.rotate(app: W.appA, newKey: W.keyB, now: 1) == .newKeyAlreadyIssued)
        #expect(server.rotate(app: W.appA, newKey: W.keyA, now: 1) == .newKeyAlreadyIssued)
        #expect(server.rotate(app: W.appA, newKey: W.spare1, now: 1) == .newKeyAlreadyIssued)
        #expect(server.app(W.appA).currentKey == W.spare1)
        #expect(server.keyState(W.keyB) == .current(W.appB))
        #expect(server.checkInvariants() == nil)
    }

    // MARK: - Disable, enable and Rollup (S4, S5)

    @Test func disableStopsOldAndNewKeysAndEnableRestoresBoth() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        server.rotate(app: W.appA, newKey: W.spare1, now: 0)
        let applied6 = server.disable(app: W.appA, now: 1)
        #expect(applied6)
        let applied7 = server.disable(app: W.appA, now: 1)
        #expect(!applied7)
        #expect(check(&server, key: W.keyA, cred, now: 2) == .appDisabled)
        #expect(check(&server, key: W.spare1, cred, now: 2) == .appDisabled)
        #expect(server.access(of: W.appA) == .appDisabled)
        let applied8 = server.enable(app: W.appA, now: 3)
        #expect(applied8)
        let applied9 = server.enable(app: W.appA, now: 3)
        #expect(!applied9)
        #expect(check(&server, key: W.keyA, cred, now: 3) == .ok)
        #expect(check(&server, key: W.spare1, cred, now: 3) == .ok)
    }

    @Test(arguments: [RollupAppAction.revoke, .reject])
    func enableDoesNotLiftRollup(action: RollupAppAction) {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        server.disable(app: W.appA, now: 1)
        let applied10 = server.rollup(action, app: W.appA, now: 2)
        #expect(applied10)
        let applied11 = server.enable(app: W.appA, now: 3)
        #expect(applied11)
        #expect(check(&server, key: W.keyA, cred, now: 4) == .appDisabled)
        let applied12 = server.enable(app: W.appA, now: 5)
        #expect(!applied12, "enable has nothing left to lift")
        // Only Rollup restores: restore lifts a revocation, approve lifts a rejection.
        let applied13 = server.rollup(action == .revoke ? .restore : .approve, app: W.appA, now: 6)
        #expect(applied13)
        #expect(check(&server, key: W.keyA, cred, now: 6) == .ok)
    }

    @Test func rollupDoesNotLiftTheDevelopersDisable() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        server.disable(app: W.appA, now: 1)
        server.rollup(.revoke, app: W.appA, now: 2)
        server.rollup(.restore, app: W.appA, now: 3)
        #expect(check(&server, key: W.keyA, cred, now: 4) == .appDisabled)
        server.enable(app: W.appA, now: 5)
        #expect(check(&server, key: W.keyA, cred, now: 6) == .ok)
    }

    @Test func accountRevokeAndRestore() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        let applied14 = server.rollup(.revoke, account: W.acme, now: 1)
        #expect(applied14)
        #expect(check(&server, key: W.keyA, cred, now: 2) == .appDisabled)
        server.disable(app: W.appA, now: 3)
        server.enable(app: W.appA, now: 4)
        #expect(check(&server, key: W.keyA, cred, now: 5) == .appDisabled, "enable never lifts an account revocation")
        let applied15 = server.rollup(.approve, account: W.acme, now: 6)
        #expect(!applied15, "a revoked account is lifted only by restore")
        let applied16 = server.rollup(.restore, account: W.acme, now: 7)
        #expect(applied16)
        #expect(check(&server, key: W.keyA, cred, now: 8) == .ok)
    }

    @Test func unapprovedAccountIsDisabledUntilApproved() {
        var server = W.server()
        #expect(server.accountStatus(W.gamma) == .unapproved)
        #expect(check(&server, key: W.keyU, .none, now: 0) == .appDisabled)
        let applied17 = server.rollup(.approve, account: W.gamma, now: 1)
        #expect(applied17)
        #expect(check(&server, key: W.keyU, .none, now: 2) == .deviceUnknown)
        let cred = register(&server, device: 3, key: W.keyU, app: W.appU, now: 3)
        #expect(check(&server, key: W.keyU, cred, now: 4) == .ok)
    }

    /// Restoring lifts the revocation and nothing else (S5): each app gets back the review
    /// it had, and is answered as before the revoke; an account likewise.
    @Test(arguments: [ReviewStatus.pending, .approved, .rejected])
    func restoreGivesBackTheReviewBeforeTheRevoke(before: ReviewStatus) {
        var server = W.server()
        switch before {
        case .approved: server.rollup(.approve, app: W.appP, now: 0)
        case .rejected: server.rollup(.reject, app: W.appP, now: 0)
        default: break
        }
        let expected: Answer = before == .pending ? .appPending : before == .rejected ? .appDisabled : .deviceUnknown
        #expect(check(&server, key: W.keyP, .none, now: 1) == expected)
        let applied1 = server.rollup(.revoke, app: W.appP, now: 2)
        #expect(applied1)
        #expect(check(&server, key: W.keyP, .none, now: 3) == .appDisabled)
        let applied2 = server.rollup(.approve, app: W.appP, now: 4)
        #expect(!applied2, "a revoked app is lifted only by restore")
        let applied3 = server.rollup(.reject, app: W.appP, now: 4)
        #expect(!applied3)
        let applied4 = server.rollup(.restore, app: W.appP, now: 5)
        #expect(applied4)
        #expect(server.app(W.appP).review == before)
        #expect(check(&server, key: W.keyP, .none, now: 6) == expected)
    }

    @Test func restoringAnUnapprovedAccountDoesNotApproveIt() {
        var server = W.server()
        let applied5 = server.rollup(.revoke, account: W.gamma, now: 1)
        #expect(applied5)
        let applied6 = server.rollup(.restore, account: W.gamma, now: 2)
        #expect(applied6)
        #expect(server.accountStatus(W.gamma) == .unapproved)
        #expect(check(&server, key: W.keyU, .none, now: 3) == .appDisabled)
        let applied7 = server.rollup(.approve, account: W.gamma, now: 4)
        #expect(applied7)
        #expect(check(&server, key: W.keyU, .none, now: 5) == .deviceUnknown)
    }

    /// The whole transition table of `rollup(_:app:now:)`, from every status.
    @Test(arguments: RollupAppAction.allCases, ReviewStatus.allCases)
    func rollupAppTransitions(action: RollupAppAction, from: ReviewStatus) {
        let table: [RollupAppAction: [ReviewStatus: ReviewStatus]] = [
            .approve: [.pending: .approved, .rejected: .approved],
            .reject: [.pending: .rejected, .approved: .rejected],
            .revoke: [.pending: .revoked, .approved: .revoked, .rejected: .revoked],
            .restore: [.revoked: .pending],   // revoked from pending below: pending again
        ]
        var server = W.server()
        // Bring app P (pending) to `from` through Rollup itself.
        switch from {
        case .pending: break
        case .approved: server.rollup(.approve, app: W.appP, now: 0)
        case .rejected: server.rollup(.reject, app: W.appP, now: 0)
        case .revoked: server.rollup(.revoke, app: W.appP, now: 0)
        }
        #expect(server.app(W.appP).review == from)
        let expected = table[action]?[from]
        let applied18 = server.rollup(action, app: W.appP, now: 1) == (expected != nil)
        #expect(applied18)
        #expect(server.app(W.appP).review == (expected ?? from))
    }

    /// The whole transition table of `rollup(_:account:now:)`, from every status.
    @Test(arguments: RollupAccountAction.allCases, AccountStatus.allCases)
    func rollupAccountTransitions(action: RollupAccountAction, from: AccountStatus) {
        let table: [RollupAccountAction: [AccountStatus: AccountStatus]] = [
            .approve: [.unapproved: .approved],
            .revoke: [.unapproved: .revoked, .approved: .revoked],
            .restore: [.revoked: .unapproved],   // gamma was revoked unapproved: unapproved again
        ]
        var server = W.server()
        switch from {
        case .unapproved: break
        case .approved: server.rollup(.approve, account: W.gamma, now: 0)
        case .revoked: server.rollup(.revoke, account: W.gamma, now: 0)
        }
        let expected = table[action]?[from]
        let applied19 = server.rollup(action, account: W.gamma, now: 1) == (expected != nil)
        #expect(applied19)
        #expect(server.accountStatus(W.gamma) == (expected ?? from))
    }

    // MARK: - Devices (S6, S8)

    @Test func cloneWithACopiedCredentialIsRefusedOnEveryRequest() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        // The genuine install is served; a clone (device 7, no attestation) with a copy of
        // its credential is not, whatever it asks, and cannot delete its record (S6, S8).
        #expect(server.handle(W.request(.query, key: W.keyA, cred), now: 1).answer == .ok)
        for kind in [RequestKind.check, .query, .profile, .placeData, .modelDownload, .runReport, .reset] {
            let clone = W.request(kind, key: W.keyA, cred, device: 7, attested: nil)
            #expect(server.handle(clone, now: 2).answer == .attestationFailed, "\(kind)")
            // A genuine install of the same app on another phone cannot make its assertion either.
            #expect(server.handle(W.request(kind, key: W.keyA, cred, device: 6), now: 2).answer == .attestationFailed, "\(kind)")
        }
        #expect(server.deviceRecord(0) != nil)
        // The flaw checks the assertion only at registration: the copy is served.
        var flawed = W.server(.assertionOnlyAtRegistration)
        let c2 = register(&flawed, device: 0, key: W.keyA, app: W.appA, now: 0)
        #expect(flawed.handle(W.request(.query, key: W.keyA, c2, device: 7, attested: nil), now: 1).answer == .ok)
    }

    @Test func resetDeletesTheRecordWhateverTheKeysState() {
        // S8: disabled app, stopped key, revoked account: the reset still deletes.
        for stop in 0..<3 {
            var server = W.server()
            let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
            switch stop {
            case 0: server.disable(app: W.appA, now: 1)
            case 1: server.rotate(app: W.appA, newKey: W.spare1, oldKey: .stopNow, now: 1)
            default: server.rollup(.revoke, account: W.acme, now: 1)
            }
            #expect(check(&server, key: W.keyA, cred, now: 2).isLockError)
            let reply = server.handle(W.request(.reset, key: W.keyA, cred), now: 3)
            #expect(reply == ServerReply(.ok, servedAt: 3), "stop \(stop)")
            #expect(server.deviceRecord(0) == nil, "stop \(stop)")
            // The flaw judges the key first: refused, and the record survives.
            var flawed = W.server(.resetJudgesKey)
            let c2 = register(&flawed, device: 0, key: W.keyA, app: W.appA, now: 0)
            switch stop {
            case 0: flawed.disable(app: W.appA, now: 1)
            case 1: flawed.rotate(app: W.appA, newKey: W.spare1, oldKey: .stopNow, now: 1)
            default: flawed.rollup(.revoke, account: W.acme, now: 1)
            }
            #expect(flawed.handle(W.request(.reset, key: W.keyA, c2), now: 3).answer.isLockError)
            #expect(flawed.deviceRecord(0) != nil)
        }
    }

    @Test func verdictsAreDatedAndLockErrorsSayWhenTheStopBegan() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        // A 200 carries servedAt and no stoppedSince; a 5xx is no verdict (not the server's).
        #expect(server.handle(W.request(.query, key: W.keyA, cred), now: 5) == ServerReply(.ok, servedAt: 5))
        // Disabled at 10, enabled at 20, disabled at 30: the stop at 40 began at 30.
        server.disable(app: W.appA, now: 10)
        #expect(server.handle(W.request(.check, key: W.keyA, cred), now: 15) == ServerReply(.appDisabled, servedAt: 15, stoppedSince: 10))
        server.enable(app: W.appA, now: 20)
        server.disable(app: W.appA, now: 30)
        #expect(server.handle(W.request(.check, key: W.keyA, cred), now: 40).stoppedSince == 30)
        // A key stopped at 35 while the app is disabled: one unbroken stop, from 30 (the
        // disable), through the enable at 50 (the key is still stopped).
        server.rotate(app: W.appA, newKey: W.spare1, oldKey: .stopNow, now: 35)
        server.enable(app: W.appA, now: 50)
        let late = server.handle(W.request(.check, key: W.keyA, cred), now: 60)
        #expect(late.answer == .appKeyInvalid)
        #expect(late.stoppedSince == 30)
        #expect(late.stoppedForMs == 30)
        // Enabled and disabled again in the same millisecond: a break all the same, so the
        // new stop counts from that millisecond (as the checkers count it).
        var twice = W.server()
        let c4 = register(&twice, device: 0, key: W.keyA, app: W.appA, now: 0)
        twice.disable(app: W.appA, now: 10)
        twice.enable(app: W.appA, now: 500)
        twice.disable(app: W.appA, now: 500)
        #expect(twice.handle(W.request(.check, key: W.keyA, c4), now: 900).stoppedSince == 500)
        // The end of a grace is dated at the deadline.
        var graced = W.server()
        let c2 = register(&graced, device: 0, key: W.keyA, app: W.appA, now: 0)
        graced.rotate(app: W.appA, newKey: W.spare1, oldKey: .keep(graceMs: 100), now: 10)
        #expect(graced.handle(W.request(.check, key: W.keyA, c2), now: 500).stoppedSince == 110)
        // An ordinary update (the next build, shipping the key the install carried) keeps
        // the stop's date: the install carried one key through the whole stop (S2: tight).
        var updated = W.server()
        let c3 = register(&updated, device: 0, key: W.keyA, app: W.appA, now: 0)
        updated.disable(app: W.appA, now: 1_000)
        var r = W.request(.check, key: W.keyA, c3)
        r.build = 1
        #expect(updated.handle(r, now: 5_500).stoppedSince == 1_000)
        // A build that skips one (build 3 after 1: build 2 was never seen) may have carried
        // any key; while app P is pending, its key would have been answered app_pending (S2.3
        // comes before the mismatch), so the stop is dated from this first request.
        r.build = 3
        #expect(updated.handle(r, now: 6_000).stoppedSince == 6_000)
        #expect(updated.handle(r, now: 7_000).stoppedSince == 6_000)
        // With no app pending, every key build 2 could have sent was refused since the
        // disable (A's by S2.2, another app's as a mismatch): dated from the disable.
        var approved = W.server()
        approved.rollup(.approve, app: W.appP, now: 0)
        let c7 = register(&approved, device: 0, key: W.keyA, app: W.appA, now: 0)
        approved.disable(app: W.appA, now: 1_000)
        var q = W.request(.check, key: W.keyA, c7)
        q.build = 3
        #expect(approved.handle(q, now: 6_000).stoppedSince == 1_000)
        approved.forgetDevice(0, now: 6_500)   // then build 4 may have sent B's key: device_unknown
        q.build = 5
        #expect(approved.handle(q, now: 7_000).stoppedSince == 7_000)
        // Where the key itself is the cause, a build never seen may have carried a key that
        // still works: the stop is dated from the first request after it, to the millisecond.
        var stopped = W.server()
        let c6 = register(&stopped, device: 0, key: W.keyA, app: W.appA, now: 0)
        stopped.rotate(app: W.appA, newKey: W.spare1, oldKey: .stopNow, now: 1_000)
        var s = W.request(.check, key: W.keyA, c6)
        s.build = 1
        #expect(stopped.handle(s, now: 2_000).stoppedSince == 1_000)   // builds 0 and 1 both sent the old key
        s.build = 3
        #expect(stopped.handle(s, now: 6_000).stoppedSince == 6_000)   // build 2 may have carried the new key
        #expect(stopped.handle(s, now: 7_000).stoppedSince == 6_000)
        // A build seen before the stop began: the stop is dated exactly (S2: tight when the
        // install carried one key through the whole stop). Seen at 10 ms, disabled at 500 ms.
        var early = W.server()
        let c5 = register(&early, device: 0, key: W.keyA, app: W.appA, now: 0)
        var e = W.request(.check, key: W.keyA, c5)
        e.build = 1
        #expect(early.handle(e, now: 10).answer == .ok)
        early.disable(app: W.appA, now: 500)
        #expect(early.handle(e, now: 2_000).stoppedSince == 500)
    }

    @Test(arguments: [nil, W.appB] as [AppID?])
    func cloneIsRefusedAndNeverGetsACredential(attested: AppID?) {
        var server = W.server()
        let reply = server.handle(W.request(.register, key: W.keyA, device: 5, attested: attested), now: 0)
        #expect(reply == ServerReply(.attestationFailed, servedAt: 0))
        #expect(server.deviceRecord(5) == nil)
        // Whatever credential the clone makes up, it is not served.
        #expect(check(&server, key: W.keyA, Credential(device: 5, generation: 1), now: 1) == .deviceUnknown)
        #expect(server.handle(W.request(.query, key: W.keyA, Credential(device: 5, generation: 1)), now: 1).answer == .deviceUnknown)
    }

    /// The device's records besides its newest, as the server lists them.
    private func earlier(_ server: ServerModel, _ device: DeviceIndex) -> [DeviceRecord] {
        var list: [DeviceRecord] = []
        server.forEachEarlierRecord(of: device) { list.append($0) }
        return list
    }

    @Test func reRegistrationKeepsTheEarlierRecordUntilAResetNamesIt() {
        var server = W.server()
        let first = register(&server, device: 2, key: W.keyA, app: W.appA, now: 0)
        #expect(first == Credential(device: 2, generation: 1))
        let second = register(&server, device: 2, key: W.keyA, app: W.appA, now: 1)
        #expect(second == Credential(device: 2, generation: 2))
        // S8: a registration supersedes nothing: each record is known by its own credential.
        #expect(server.deviceRecord(2) == DeviceRecord(owner: W.appA, generation: 2))
        #expect(earlier(server, 2) == [DeviceRecord(owner: W.appA, generation: 1)])
        #expect(check(&server, key: W.keyA, first, now: 2) == .ok)
        #expect(check(&server, key: W.keyA, second, now: 2) == .ok)
        // A reset deletes only the one it names.
        #expect(server.handle(W.request(.reset, key: W.keyA, first), now: 3).answer == .ok)
        #expect(check(&server, key: W.keyA, first, now: 4) == .deviceUnknown)
        #expect(check(&server, key: W.keyA, second, now: 4) == .ok)
        #expect(earlier(server, 2).isEmpty)
        #expect(server.deviceRecord(2) == DeviceRecord(owner: W.appA, generation: 2))
    }

    @Test func deletingTheNewestRecordLeavesTheEarlierOneTheDevicesRecord() {
        var server = W.server()
        let first = register(&server, device: 3, key: W.keyA, app: W.appA, now: 0)
        let second = register(&server, device: 3, key: W.keyA, app: W.appA, now: 1)
        let third = register(&server, device: 3, key: W.keyA, app: W.appA, now: 2)
        #expect(earlier(server, 3).map(\.generation) == [1, 2])
        #expect(server.handle(W.request(.reset, key: W.keyA, third), now: 3).answer == .ok)
        #expect(server.deviceRecord(3) == DeviceRecord(owner: W.appA, generation: 2))
        #expect(earlier(server, 3).map(\.generation) == [1])
        #expect(check(&server, key: W.keyA, third, now: 4) == .deviceUnknown)
        #expect(check(&server, key: W.keyA, second, now: 4) == .ok)
        // A forget loses every record of the device.
        let forgot = server.forgetDevice(3, now: 5)
        #expect(forgot)
        #expect(server.deviceRecord(3) == nil && earlier(server, 3).isEmpty)
        #expect(check(&server, key: W.keyA, first, now: 6) == .deviceUnknown)
        #expect(check(&server, key: W.keyA, second, now: 6) == .deviceUnknown)
        let again = server.forgetDevice(3, now: 7)
        #expect(!again)
    }

    @Test func reRegistrationUnderAnotherAppLeavesEachRecordItsOwner() {
        var server = W.server()
        let first = register(&server, device: 2, key: W.keyA, app: W.appA, now: 0)
        let second = register(&server, device: 2, key: W.keyB, app: W.appB, now: 1)
        #expect(server.deviceRecord(2) == DeviceRecord(owner: W.appB, generation: 2))
        #expect(check(&server, key: W.keyA, first, now: 2) == .ok)
        #expect(check(&server, key: W.keyB, first, now: 2) == .appKeyMismatch)
        #expect(check(&server, key: W.keyA, second, now: 2) == .appKeyMismatch)
        #expect(check(&server, key: W.keyB, second, now: 2) == .ok)
    }

    @Test func forgetDeviceMakesItsCredentialUnknown() {
        var server = W.server()
        let cred = register(&server, device: 4, key: W.keyA, app: W.appA, now: 0)
        let applied20 = server.forgetDevice(4, now: 1)
        #expect(applied20)
        let applied21 = server.forgetDevice(4, now: 1)
        #expect(!applied21)
        #expect(check(&server, key: W.keyA, cred, now: 2) == .deviceUnknown)
        // Registering again gives a new generation; the forgotten credential stays unknown.
        let again = register(&server, device: 4, key: W.keyA, app: W.appA, now: 3)
        #expect(again == Credential(device: 4, generation: 2))
        #expect(check(&server, key: W.keyA, cred, now: 4) == .deviceUnknown)
    }

    @Test func deviceOfAnotherAppGetsMismatch() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        #expect(check(&server, key: W.keyB, cred, now: 1) == .appKeyMismatch)
        #expect(server.handle(W.request(.query, key: W.keyB, cred), now: 1).answer == .appKeyMismatch)
        #expect(check(&server, key: W.keyA, cred, now: 1) == .ok)
    }

    @Test func resetDeletesTheRecordAndIsIdempotent() {
        var server = W.server()
        let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        #expect(server.handle(W.request(.reset, key: W.keyA, cred), now: 1).answer == .ok)
        #expect(server.deviceRecord(0) == nil)
        #expect(check(&server, key: W.keyA, cred, now: 2) == .deviceUnknown)
        // A retried reset whose record is already gone (S9, D7) answers ok.
        #expect(server.handle(W.request(.reset, key: W.keyA, cred), now: 3).answer == .ok)
        #expect(server.handle(W.request(.reset, key: W.keyA, .none), now: 3).answer == .ok)
    }

    @Test func staleResetDoesNotDeleteANewerRegistration() {
        var server = W.server()
        let old = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
        let new = register(&server, device: 0, key: W.keyA, app: W.appA, now: 1)
        #expect(server.handle(W.request(.reset, key: W.keyA, old), now: 2).answer == .ok)
        #expect(check(&server, key: W.keyA, new, now: 3) == .ok)
    }

    @Test func invariantsHoldAfterActions() {
        var server = W.server()
        #expect(server.checkInvariants() == nil)
        server.rotate(app: W.appA, newKey: W.spare1, now: 0)
        server.rotate(app: W.appB, newKey: W.spare2, oldKey: .stopNow, now: 0)
        server.rotate(app: W.appA, newKey: W.spare3, now: 1)
        #expect(server.checkInvariants() == nil)
        #expect(server.keyState(W.spare3) == .current(W.appA))
        #expect(server.keyState(7) == .unissued)
        #expect(server.keyCount == 8 && server.deviceCount == 8 && server.appCount == 4 && server.accountCount == 3)
    }

    // MARK: - Flaws: each changes exactly the behaviour it names

    @Test func flawCachesKeyChecks() {
        func script(_ flaws: ServerFlaws) -> [Answer] {
            var server = W.server(flaws)
            let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
            server.disable(app: W.appA, now: 1000)
            return [check(&server, key: W.keyA, cred, now: 1000),                          // cached ok from t=0
                    check(&server, key: W.keyA, cred, now: ServerMutation.keyCacheMs - 1),
                    check(&server, key: W.keyA, cred, now: ServerMutation.keyCacheMs)]        // re-checked
        }
        #expect(script([]) == [.appDisabled, .appDisabled, .appDisabled])
        #expect(script(.cachesKeyChecks) == [.ok, .ok, .appDisabled])
    }

    @Test func flawGraceOneDayLate() {
        func script(_ flaws: ServerFlaws) -> [Answer] {
            var server = W.server(flaws)
            let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
            server.rotate(app: W.appA, newKey: W.spare1, now: 0)
            return [check(&server, key: W.keyA, cred, now: W.grace - 1),
                    check(&server, key: W.keyA, cred, now: W.grace),
                    check(&server, key: W.keyA, cred, now: W.grace + W.day - 1),
                    check(&server, key: W.keyA, cred, now: W.grace + W.day)]
        }
        #expect(script([]) == [.ok, .appKeyInvalid, .appKeyInvalid, .appKeyInvalid])
        #expect(script(.graceOneDayLate) == [.ok, .ok, .ok, .appKeyInvalid])
    }

    @Test func flawEnableLiftsRollup() {
        func script(_ flaws: ServerFlaws) -> [Answer] {
            var server = W.server(flaws)
            let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
            server.disable(app: W.appA, now: 1)
            server.enable(app: W.appA, now: 2)
            let plain = check(&server, key: W.keyA, cred, now: 3)
            server.rollup(.revoke, app: W.appA, now: 4)
            server.enable(app: W.appA, now: 5)
            return [plain, check(&server, key: W.keyA, cred, now: 6)]
        }
        #expect(script([]) == [.ok, .appDisabled])
        #expect(script(.enableLiftsRollup) == [.ok, .ok])
    }

    @Test func flawSkipsDeviceAppCheck() {
        func script(_ flaws: ServerFlaws) -> [Answer] {
            var server = W.server(flaws)
            let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
            return [check(&server, key: W.keyB, cred, now: 1), check(&server, key: W.keyA, .none, now: 1)]
        }
        #expect(script([]) == [.appKeyMismatch, .deviceUnknown])
        #expect(script(.skipsDeviceAppCheck) == [.ok, .deviceUnknown])
    }

    @Test func flawResetKeepsRecord() {
        func script(_ flaws: ServerFlaws) -> [Answer] {
            var server = W.server(flaws)
            let cred = register(&server, device: 0, key: W.keyA, app: W.appA, now: 0)
            return [server.handle(W.request(.reset, key: W.keyA, cred), now: 1).answer,
                    check(&server, key: W.keyA, cred, now: 2)]
        }
        #expect(script([]) == [.ok, .deviceUnknown])
        #expect(script(.resetKeepsRecord) == [.ok, .ok])
    }

    @Test func flawSkipsAttestation() {
        func script(_ flaws: ServerFlaws) -> [Answer] {
            var server = W.server(flaws)
            let genuine = server.handle(W.request(.register, key: W.keyA, device: 0, attested: W.appA), now: 0)
            let clone = server.handle(W.request(.register, key: W.keyA, device: 1, attested: nil), now: 0)
            return [genuine.answer, clone.answer, check(&server, key: W.keyA, clone.credential, now: 1)]
        }
        #expect(script([]) == [.ok, .attestationFailed, .deviceUnknown])
        #expect(script(.skipsAttestation) == [.ok, .ok, .ok])
    }

    /// S10: the reference keeps across a restart every action it acknowledged (a rotation
    /// that stopped the old key, a disable, a Rollup revocation, an account approved, a
    /// registration and a reset answered 200) and the start of a stop; `restartForgets`
    /// goes back to the state declared; `cachesKeyChecks` loses only its cache.
    @Test func restartKeepsWhatWasAcknowledged() {
        func script(_ flaws: ServerFlaws) -> [Answer] {
            var server = W.server(flaws)
            let c0 = register(&server, device: 0, key: W.keyA, app: W.appA, now: 1)
            let c1 = register(&server, device: 1, key: W.keyB, app: W.appB, now: 1)
            let c2 = register(&server, device: 2, key: W.keyB, app: W.appB, now: 1)
            _ = server.rotate(app: W.appA, newKey: W.spare1, oldKey: .stopNow, now: 10)
            _ = server.disable(app: W.appB, now: 20)
            _ = server.rollup(.revoke, app: W.appB, now: 21)
            _ = server.rollup(.approve, account: W.gamma, now: 22)
            let reset = server.handle(W.request(.reset, key: W.keyB, c2), now: 23).answer
            let before = server.handle(W.request(.check, key: W.keyB, c1), now: 30)
            server.restart(now: 40)
            let after = server.handle(W.request(.check, key: W.keyB, c1), now: 50)
            return [reset,
                    check(&server, key: W.keyA, c0, now: 50),      // the old key stopped
                    check(&server, key: W.spare1, c0, now: 50),    // the new one current
                    after.answer,                                  // disabled and revoked
                    after.stoppedSince == before.stoppedSince ? .ok : .serverError,
                    check(&server, key: W.keyB, c2, now: 50),      // reset: the record is gone
                    register(&server, device: 3, key: W.keyU, app: W.appU, now: 50).isNone ? .appDisabled : .ok]
        }
        let kept: [Answer] = [.ok, .appKeyInvalid, .ok, .appDisabled, .ok, .appDisabled, .ok]
        #expect(script([]) == kept)
        // A cache is memory: after the restart every answer is fresh, though the verdicts
        // cached at registration would have stood for 5 minutes.
        #expect(Array(script(.cachesKeyChecks)[1...3]) == Array(kept[1...3]))
        // Forgotten: the old key is current again, the new one unissued, app B served, and the
        // unapproved account's app refused.
        #expect(script(.restartForgets) == [.ok, .ok, .appKeyInvalid, .ok, .serverError, .deviceUnknown, .appDisabled])
    }

    @Test func flawNamesAreDistinct() {
        let names = ServerFlaws.named.map(\.name)
        #expect(Set(names).count == names.count)
        let all = ServerFlaws.named.reduce(into: ServerFlaws()) { $0.formUnion($1.flaw) }
        #expect(all.rawValue.nonzeroBitCount == ServerFlaws.named.count)
    }
}
