import SimKit

/// The wire protocol's messages (docs/server-protocol.md), written and read.
public enum WireProtocol {
    /// The protocol's version, sent in the `hello`.
    public static let version: UInt64 = 1

    /// The statuses a request's reply may carry, by name.
    static let statuses: [String: Answer] = [
        "ok": .ok, "app_key_invalid": .appKeyInvalid, "app_disabled": .appDisabled, "app_pending": .appPending,
        "device_unknown": .deviceUnknown, "app_key_mismatch": .appKeyMismatch, "attestation_failed": .attestationFailed,
    ]
    static let statusList = "ok, app_key_invalid, app_disabled, app_pending, device_unknown, app_key_mismatch, attestation_failed"

    /// The status name of `answer` (a verdict).
    public static func statusName(_ answer: Answer) -> String {
        answer == .ok ? "ok" : answer.description
    }

    /// The `reset` message's fields: the world's setup.
    static func resetFields(_ setup: ServerSetup, keyNames: [String]) -> String {
        var s = ",\"protocol\":\(version),\"accounts\":["
        s += setup.accounts.enumerated().map { "{\"id\":\($0.offset),\"approved\":\($0.element.approved)}" }.joined(separator: ",")
        s += "],\"apps\":["
        s += setup.apps.enumerated().map {
            "{\"id\":\($0.offset),\"account\":\($0.element.account),\"key\":\(WireJSON.quote(keyNames[Int($0.element.key)])),\"approved\":\($0.element.approved)}"
        }.joined(separator: ",")
        s += "],\"keys\":[" + keyNames.map(WireJSON.quote).joined(separator: ",") + "]"
        s += ",\"devices\":\(setup.deviceCount),\"graceDefaultMs\":\(ServerModel.defaultGraceMs)"
        return s
    }

    static func credential(_ c: Credential) -> String {
        c.isNone ? "null" : "{\"device\":\(c.device),\"generation\":\(c.generation)}"
    }

    /// A `request` message's fields.
    static func requestFields(_ r: Request, now: SimTime, keyNames: [String]) -> String {
        ",\"now\":\(now),\"device\":\(r.device),\"kind\":\"\(r.kind)\",\"key\":\(WireJSON.quote(keyNames[Int(r.key)]))"
            + ",\"credential\":\(credential(r.credential)),\"attestedApp\":\(r.attestedApp.map { "\($0)" } ?? "null"),\"build\":\(r.build)"
    }

    /// The reply to a request, checked against the protocol: the `ServerReply` and the
    /// device's record after it, or why the reply is out of the protocol.
    static func decodeReply(_ j: WireJSON, request: Request, now: SimTime) -> Result<(ServerReply, DeviceRecord?), WireReplyError> {
        guard let name = j["status"]?.string else { return .failure(.init("the reply has no \"status\" string")) }
        guard let answer = statuses[name] else { return .failure(.init("\"status\" is \(WireJSON.quote(name)), not one of \(statusList)")) }
        guard let servedAt = j["servedAt"]?.uint else { return .failure(.init("the reply has no \"servedAt\" (a whole number of ms)")) }
        guard servedAt == now else {
            return .failure(.init("\"servedAt\" is \(servedAt), not the message's \"now\" \(now): a server on the wire reads no clock"))
        }
        var stoppedSince = ServerReply.none
        if answer.isLockError {
            guard let t = j["stoppedSince"]?.uint else { return .failure(.init("a lock error (\(name)) needs \"stoppedSince\" (a whole number of ms)")) }
            guard t < ServerReply.none else { return .failure(.init("\"stoppedSince\" is out of range")) }
            stoppedSince = t
        }
        var credential = Credential.none
        if answer == .ok, request.kind == .register {
            guard let c = j["credential"], let d = c["device"]?.uint, let g = c["generation"]?.uint,
                  d <= UInt64(DeviceIndex.max), g <= UInt64(UInt32.max), g > 0 else {
                return .failure(.init("a served register needs \"credential\": {\"device\": D, \"generation\": G} (G from 1)"))
            }
            credential = Credential(device: DeviceIndex(d), generation: UInt32(g))
        }
        guard let record = j["record"] else { return .failure(.init("the reply has no \"record\" (the device's record after the request, or null)")) }
        let after: DeviceRecord?
        switch decodeRecord(record) {
        case .success(let r): after = r
        case .failure(let e): return .failure(e)
        }
        return .success((ServerReply(answer, credential: credential, servedAt: servedAt, stoppedSince: stoppedSince), after))
    }

    static func decodeRecord(_ record: WireJSON) -> Result<DeviceRecord?, WireReplyError> {
        if record.isNull { return .success(nil) }
        guard let owner = record["owner"]?.uint, let g = record["generation"]?.uint, owner <= UInt64(AppID.max), g <= UInt64(UInt32.max) else {
            return .failure(.init("\"record\" must be null or {\"owner\": APP, \"generation\": G}"))
        }
        return .success(DeviceRecord(owner: AppID(owner), generation: UInt32(g)))
    }
}

struct WireReplyError: Error { var reason: String; init(_ r: String) { reason = r } }

/// A server core on the wire: every `ServerCore` call is a message to a server process
/// (or HTTP service) that speaks docs/server-protocol.md, and its reply is the answer.
/// The checkers judge it from the trace, as they judge the reference.
///
/// The endpoint comes from the thread (`WireEndpoint.use`, set where a run's server is
/// resolved), and so does the connection: the worlds a thread runs in turn share one
/// process, each starting with a `reset`. A reply out of the protocol, a timeout or a
/// process that exits ends the conversation: from then on requests are answered 5xx and
/// actions refused, without a message, and `failure` says what happened; the runners
/// then give the seed the failure's verdict, whatever the checkers found.
///
/// A `WireServer` holds a connection, not the server's state: a copy of it (`fork()`)
/// talks to the same process and would interleave two worlds' messages. Do not fork a
/// world on it (`simkit explore` runs the reference server only).
public struct WireServer: ServerCore {
    /// The connection, or nil when no endpoint was set.
    public let session: WireSession?
    /// The world this core opened in the session.
    public let epoch: UInt64
    let keyNames: [String]
    let startFailure: WireFailure?
    var lastDevice: DeviceIndex = .max
    var lastRecord: DeviceRecord?

    public init(setup: ServerSetup) {
        var names = setup.keyNames
        if names.count < setup.keyCount { names += (names.count..<setup.keyCount).map { "rk_live_key\($0)" } }
        keyNames = names
        guard let endpoint = WireEndpoint.current else {
            session = nil
            epoch = 0
            startFailure = WireFailure(kind: .exited, reason: "no server endpoint is set on this thread (WireEndpoint.use)", sent: "",
                                       received: nil, stderr: [], endpoint: "(none)", message: 0)
            return
        }
        let s = WireSession.onThisThread(endpoint)
        session = s
        startFailure = nil
        epoch = s.begin(resetFields: WireProtocol.resetFields(setup, keyNames: names))
    }

    /// Why this world's conversation ended early, or nil while the server keeps the protocol.
    public var failure: WireFailure? {
        if let startFailure { return startFailure }
        guard let session, session.epoch == epoch else { return nil }
        return session.failure
    }

    /// The session while this world may talk on it.
    var live: WireSession? {
        guard let session, session.epoch == epoch, session.failure == nil else { return nil }
        return session
    }

    public mutating func handle(_ request: Request, now: SimTime) -> ServerReply {
        guard let s = live, let json = s.call("request", WireProtocol.requestFields(request, now: now, keyNames: keyNames)) else {
            return ServerReply(.serverError)
        }
        switch WireProtocol.decodeReply(json, request: request, now: now) {
        case .success(let (reply, record)):
            lastDevice = request.device
            lastRecord = record
            return reply
        case .failure(let e):
            s.fail(.protocolError, e.reason, sent: s.lastSent, received: s.lastReceived)
            return ServerReply(.serverError)
        }
    }

    public func deviceRecord(_ device: DeviceIndex) -> DeviceRecord? {
        if device == lastDevice { return lastRecord }
        guard let s = live, let json = s.call("record", ",\"device\":\(device)") else { return nil }
        guard let r = json["record"] else {
            s.fail(.protocolError, "the reply has no \"record\"", sent: s.lastSent, received: s.lastReceived)
            return nil
        }
        switch WireProtocol.decodeRecord(r) {
        case .success(let rec): return rec
        case .failure(let e):
            s.fail(.protocolError, e.reason, sent: s.lastSent, received: s.lastReceived)
            return nil
        }
    }

    /// Sends an action and reads its `applied`; false once the session failed.
    func applied(_ op: String, _ fields: String) -> Bool {
        guard let s = live, let json = s.call(op, fields) else { return false }
        guard let b = json["applied"]?.bool else {
            s.fail(.protocolError, "the reply to \(op) has no \"applied\" (true or false)", sent: s.lastSent, received: s.lastReceived)
            return false
        }
        return b
    }

    public mutating func rotate(app: AppID, newKey: KeyID, oldKey: OldKeyPolicy, now: SimTime) -> RotateOutcome {
        let policy: String
        switch oldKey {
        case .keep(let g): policy = ",\"oldKey\":\"keep\",\"graceMs\":\(g)"
        case .stopNow: policy = ",\"oldKey\":\"stop-now\""
        }
        guard let s = live, let json = s.call("rotate", ",\"now\":\(now),\"app\":\(app),\"newKey\":\(WireJSON.quote(keyNames[Int(newKey)]))" + policy) else {
            return .newKeyAlreadyIssued
        }
        switch json["outcome"]?.string {
        case "rotated": return .rotated
        case "new-key-already-issued": return .newKeyAlreadyIssued
        default:
            s.fail(.protocolError, "the reply to rotate needs \"outcome\": \"rotated\" or \"new-key-already-issued\"", sent: s.lastSent, received: s.lastReceived)
            return .newKeyAlreadyIssued
        }
    }

    public mutating func stopOldKey(app: AppID, key: KeyID, now: SimTime) -> Bool {
        applied("stop-old-key", ",\"now\":\(now),\"app\":\(app),\"key\":\(WireJSON.quote(keyNames[Int(key)]))")
    }

    public mutating func disable(app: AppID, now: SimTime) -> Bool { applied("disable", ",\"now\":\(now),\"app\":\(app)") }

    public mutating func enable(app: AppID, now: SimTime) -> Bool { applied("enable", ",\"now\":\(now),\"app\":\(app)") }

    public mutating func rollup(_ action: RollupAppAction, app: AppID, now: SimTime) -> Bool {
        let name = switch action { case .approve: "approve"; case .reject: "reject"; case .revoke: "revoke"; case .restore: "restore" }
        return applied("rollup-app", ",\"now\":\(now),\"app\":\(app),\"action\":\"\(name)\"")
    }

    public mutating func rollup(_ action: RollupAccountAction, account: AccountID, now: SimTime) -> Bool {
        let name = switch action { case .approve: "approve"; case .revoke: "revoke"; case .restore: "restore" }
        return applied("rollup-account", ",\"now\":\(now),\"account\":\(account),\"action\":\"\(name)\"")
    }

    public mutating func forgetDevice(_ device: DeviceIndex, now: SimTime) -> Bool {
        let done = applied("forget-device", ",\"now\":\(now),\"device\":\(device)")
        if done, device == lastDevice { lastRecord = nil }
        return done
    }
}
