import Foundation
import SimKit

/// The wire protocol's messages (docs/server-protocol.md), written and read.
package enum WireProtocol {
    /// The protocol's version, sent in the `hello`.
    package static let version: UInt64 = 1

    /// The statuses a request's reply may carry, by name.
    static let statuses: [String: Answer] = [
        "ok": .ok, "app_key_invalid": .appKeyInvalid, "app_disabled": .appDisabled, "app_pending": .appPending,
        "device_unknown": .deviceUnknown, "app_key_mismatch": .appKeyMismatch, "attestation_failed": .attestationFailed,
    ]
    static let statusList = "ok, app_key_invalid, app_disabled, app_pending, device_unknown, app_key_mismatch, attestation_failed"

    /// The status name of `answer` (a verdict).
    package static func statusName(_ answer: Answer) -> String {
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
    static func decodeReply(_ j: WireJSON, request: Request, now: SimTime) -> Result<(ServerReply, DeviceRecord?, [DeviceRecord]), WireReplyError> {
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
        var held: [DeviceRecord] = []
        if let list = j["held"], !list.isNull {
            guard case .array(let items) = list else {
                return .failure(.init("\"held\" must be a list of records {\"owner\": APP, \"generation\": G} (the device's earlier records the server still holds), or absent"))
            }
            for item in items {
                guard case .success(let r?) = decodeRecord(item), r.generation != after?.generation else {
                    return .failure(.init("each of \"held\" must be a record {\"owner\": APP, \"generation\": G} other than \"record\""))
                }
                held.append(r)
            }
        }
        return .success((ServerReply(answer, credential: credential, servedAt: servedAt, stoppedSince: stoppedSince), after, held))
    }

    /// The `"held"` field of a reply: the device's earlier records, or nothing when none.
    static func heldField(_ held: [DeviceRecord]) -> String {
        held.isEmpty ? "" : ",\"held\":[" + held.map { "{\"owner\":\($0.owner),\"generation\":\($0.generation)}" }.joined(separator: ",") + "]"
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

/// What a world that runs ahead used in place of a reply it did not wait for: the
/// reference's answer, checked against the server's reply when its batch comes back.
enum WireExpectation {
    case reset
    case reply(Request, now: SimTime, ServerReply, DeviceRecord?, [DeviceRecord])
    case record(DeviceRecord?)
    case applied(Bool)
    case outcome(RotateOutcome)
}

extension WireProtocol {
    /// Whether `reply` says what `expected` says, read exactly as a reply in lock step is
    /// read: a reply out of the protocol never holds.
    static func holds(_ expected: WireExpectation, _ reply: WireJSON) -> Bool {
        switch expected {
        case .reset: return reply["ok"]?.bool == true
        case .reply(let request, let now, let answer, let record, let held):
            guard case .success(let (r, rec, h)) = decodeReply(reply, request: request, now: now) else { return false }
            return r == answer && rec == record && h == held
        case .record(let record):
            guard let r = reply["record"], case .success(let rec) = decodeRecord(r) else { return false }
            return rec == record
        case .applied(let b): return reply["applied"]?.bool == b
        case .outcome(let o):
            switch reply["outcome"]?.string {
            case "rotated": return o == .rotated
            case "new-key-already-issued": return o == .newKeyAlreadyIssued
            default: return false
            }
        }
    }

    /// `reply` as a reply in lock step reads it: the credential of a served register
    /// only, `stoppedSince` of a lock error only.
    static func asRead(_ reply: ServerReply, request: Request, now: SimTime) -> ServerReply {
        ServerReply(reply.answer, credential: reply.answer == .ok && request.kind == .register ? reply.credential : .none,
                    servedAt: now, stoppedSince: reply.answer.isLockError ? reply.stoppedSince : ServerReply.none)
    }
}

/// Runs worlds on a server on the wire, ahead of its replies when it announced batches.
package enum WireRun {
    /// Builds a world with `make` and runs it (`run()`). When its server is on the wire and
    /// announced batches (and `WireSession.batching` is on), the world runs ahead: each
    /// message is answered at once by the reference's rules, the messages go to the server
    /// in batches, and at the end every reply is checked against the answer the world went
    /// on with. When one differs, or the server failed, that run is thrown away and a world
    /// built anew runs in lock step: the result is always the lock step's.
    /// Inlinable, so that a world on another core runs specialised where it is built (the
    /// reference's runs, through here, are exactly `make()` and `run()`).
    @inlinable package static func run<SDK: SDKCore, Server: ServerCore, Observer: TraceObserver>(
        _ make: () -> SimWorld<SDK, Server, Observer>
    ) -> SimWorld<SDK, Server, Observer> {
        guard Server.self == WireServer.self, WireSession.batching else {
            var world = make()
            world.run()
            return world
        }
        WireServer.nextWorldRunsAhead(true)
        var world = make()
        WireServer.nextWorldRunsAhead(false)
        world.run()
        if let wire = world.server as? WireServer, !wire.settle() {
            var again = make()
            again.run()
            return again
        }
        return world
    }
}

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
/// Built inside `WireRun.run` for a server that announced batches, the core runs ahead:
/// it answers from the reference's rules (`model`), queues each message for the next
/// batch, and `settle()` at the world's end says whether every reply was that answer.
///
/// A `WireServer` holds a connection, not the server's state: a copy of it (`fork()`)
/// would talk to the same process and interleave two worlds' messages, so
/// `SimWorld.fork()` refuses a world on it (`UnforkableServer`; `simkit explore` runs the
/// reference server only).
package struct WireServer: ServerCore {
    /// The connection, or nil when no endpoint was set.
    package let session: WireSession?
    /// The world this core opened in the session.
    package let epoch: UInt64
    let keyNames: [String]
    let startFailure: WireFailure?
    var lastDevice: DeviceIndex = .max
    var lastRecord: DeviceRecord?
    var lastHeld: [DeviceRecord] = []
    /// The reference's rules, answering a world that runs ahead (`WireRun`); nil in lock step.
    var model: ServerModel?
    static let aheadKey = "simkit.wire.ahead"

    /// Whether the next `WireServer` built on this thread may run ahead of its replies
    /// (`WireRun.run` asks it around building a world).
    package static func nextWorldRunsAhead(_ on: Bool) {
        Thread.current.threadDictionary[aheadKey] = on ? true : nil
    }

    package init(setup: ServerSetup) {
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
        let wanted = Thread.current.threadDictionary[WireServer.aheadKey] as? Bool == true
        epoch = s.begin(resetFields: WireProtocol.resetFields(setup, keyNames: names), ahead: wanted)
        if s.ahead { model = ServerModel(setup: setup) }
    }

    /// The session while this world runs ahead of it, or nil (lock step).
    var aheadSession: WireSession? {
        guard model != nil, let session, session.epoch == epoch, session.ahead else { return nil }
        return session
    }

    /// Ends a world that ran ahead (`WireRun`): whether every reply was the answer the world
    /// went on with. True for a world in lock step.
    package func settle() -> Bool {
        guard model != nil, let session, session.epoch == epoch else { return true }
        return session.settle()
    }

    /// Why this world's conversation ended early, or nil while the server keeps the protocol.
    package var failure: WireFailure? {
        if let startFailure { return startFailure }
        guard let session, session.epoch == epoch else { return nil }
        return session.failure
    }

    /// The session while this world may talk on it.
    var live: WireSession? {
        guard let session, session.epoch == epoch, session.failure == nil else { return nil }
        return session
    }

    package mutating func handle(_ request: Request, now: SimTime) -> ServerReply {
        if let s = aheadSession {
            let reply = WireProtocol.asRead(model!.handle(request, now: now), request: request, now: now)
            let record = model!.deviceRecord(request.device)
            var held: [DeviceRecord] = []
            model!.forEachEarlierRecord(of: request.device) { held.append($0) }
            s.queue("request", WireProtocol.requestFields(request, now: now, keyNames: keyNames), .reply(request, now: now, reply, record, held))
            lastDevice = request.device
            lastRecord = record
            lastHeld = held
            return reply
        }
        guard let s = live, let json = s.call("request", WireProtocol.requestFields(request, now: now, keyNames: keyNames)) else {
            return ServerReply(.serverError)
        }
        switch WireProtocol.decodeReply(json, request: request, now: now) {
        case .success(let (reply, record, held)):
            lastDevice = request.device
            lastRecord = record
            lastHeld = held
            return reply
        case .failure(let e):
            s.fail(.protocolError, e.reason, sent: s.lastSent, received: s.lastReceived)
            return ServerReply(.serverError)
        }
    }

    /// The earlier records the last reply listed (`"held"`), for its device; none for
    /// another device (the world asks only right after a reply).
    package func forEachEarlierRecord(of device: DeviceIndex, _ body: (DeviceRecord) -> Void) {
        guard device == lastDevice else { return }
        for r in lastHeld { body(r) }
    }

    package func deviceRecord(_ device: DeviceIndex) -> DeviceRecord? {
        if device == lastDevice { return lastRecord }
        if let s = aheadSession {
            let record = model!.deviceRecord(device)
            s.queue("record", ",\"device\":\(device)", .record(record))
            return record
        }
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
    mutating func applied(_ op: String, _ fields: String, ahead: (inout ServerModel) -> Bool) -> Bool {
        if let s = aheadSession {
            let b = ahead(&model!)
            s.queue(op, fields, .applied(b))
            return b
        }
        guard let s = live, let json = s.call(op, fields) else { return false }
        guard let b = json["applied"]?.bool else {
            s.fail(.protocolError, "the reply to \(op) has no \"applied\" (true or false)", sent: s.lastSent, received: s.lastReceived)
            return false
        }
        return b
    }

    package mutating func rotate(app: AppID, newKey: KeyID, oldKey: OldKeyPolicy, now: SimTime) -> RotateOutcome {
        let policy: String
        switch oldKey {
        case .keep(let g): policy = ",\"oldKey\":\"keep\",\"graceMs\":\(g)"
        case .stopNow: policy = ",\"oldKey\":\"stop-now\""
        }
        let fields = ",\"now\":\(now),\"app\":\(app),\"newKey\":\(WireJSON.quote(keyNames[Int(newKey)]))" + policy
        if let s = aheadSession {
            let outcome = model!.rotate(app: app, newKey: newKey, oldKey: oldKey, now: now)
            s.queue("rotate", fields, .outcome(outcome))
            return outcome
        }
        guard let s = live, let json = s.call("rotate", fields) else {
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

    package mutating func stopOldKey(app: AppID, key: KeyID, now: SimTime) -> Bool {
        applied("stop-old-key", ",\"now\":\(now),\"app\":\(app),\"key\":\(WireJSON.quote(keyNames[Int(key)]))") {
            $0.stopOldKey(app: app, key: key, now: now)
        }
    }

    package mutating func disable(app: AppID, now: SimTime) -> Bool {
        applied("disable", ",\"now\":\(now),\"app\":\(app)") { $0.disable(app: app, now: now) }
    }

    package mutating func enable(app: AppID, now: SimTime) -> Bool {
        applied("enable", ",\"now\":\(now),\"app\":\(app)") { $0.enable(app: app, now: now) }
    }

    package mutating func rollup(_ action: RollupAppAction, app: AppID, now: SimTime) -> Bool {
        let name = switch action { case .approve: "approve"; case .reject: "reject"; case .revoke: "revoke"; case .restore: "restore" }
        return applied("rollup-app", ",\"now\":\(now),\"app\":\(app),\"action\":\"\(name)\"") { $0.rollup(action, app: app, now: now) }
    }

    package mutating func rollup(_ action: RollupAccountAction, account: AccountID, now: SimTime) -> Bool {
        let name = switch action { case .approve: "approve"; case .revoke: "revoke"; case .restore: "restore" }
        return applied("rollup-account", ",\"now\":\(now),\"account\":\(account),\"action\":\"\(name)\"") {
            $0.rollup(action, account: account, now: now)
        }
    }

    /// S10: the server's process restarts (`WireSession.restart`). A world that runs ahead
    /// has every message before the restart answered and checked first (`restartAhead`).
    package mutating func restart(now: SimTime) {
        if let s = aheadSession { return s.restartAhead(now: now) }
        live?.restart(now: now)
    }

    package mutating func forgetDevice(_ device: DeviceIndex, now: SimTime) -> Bool {
        let done = applied("forget-device", ",\"now\":\(now),\"device\":\(device)") { $0.forgetDevice(device, now: now) }
        if done, device == lastDevice { lastRecord = nil; lastHeld = [] }
        return done
    }
}

extension WireServer: UnforkableServer {
    package static var forkRefusal: String {
        "its server is on the wire (a process or a service), whose state cannot be copied: a copy of the world would "
            + "share the server and interleave two worlds' messages on it (simkit explore forks, and runs the reference server only)"
    }
}
