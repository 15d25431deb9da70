import Foundation
import SimKit

/// The reference server (`ServerModel`) behind the wire protocol on standard input and
/// output (`simkit serve-reference`, a hidden command): a server on the wire that costs
/// next to nothing itself, so that `simkit bench --wire process:'simkit serve-reference'`
/// measures the wire and SimKit's side of it alone (the Python example measures the
/// example as well). It answers batches unless `batches` is false.
///
/// Its durable state (S10) is a journal of the messages since the last `reset`, in the
/// directory SimKit names in `SIMKIT_DATA_DIR`: the model is a deterministic function of
/// them, so a process started again replays the journal and comes back as it was. Each
/// message is in the journal before its reply is written.
package struct WireReferenceServer {
    var model = ServerModel(setup: ServerSetup())
    var keys: [String: KeyID] = [:]
    var keyNames: [String] = []
    var deviceCount = 0
    let batches: Bool

    /// The journal's file descriptor, or -1 with no data directory.
    var journal: Int32 = -1

    package init(batches: Bool) { self.batches = batches }

    /// Opens the journal in `SIMKIT_DATA_DIR` and replays what it holds (a restart).
    mutating func openJournal() {
        guard let dir = ProcessInfo.processInfo.environment["SIMKIT_DATA_DIR"], !dir.isEmpty else { return }
        let path = (dir as NSString).appendingPathComponent("journal.jsonl")
        if let data = FileManager.default.contents(atPath: path) {
            let bytes = [UInt8](data)
            var start = 0
            while let nl = bytes[start...].firstIndex(of: 0x0A) {   // bounded by the file
                if let m = WireJSON.parse(bytes[start..<nl]) { _ = reply(m) }
                start = nl + 1
            }
        }
        journal = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
    }

    /// Whether `m` (a message, or a batch of them) starts a world: the journal starts over.
    static func resets(_ m: WireJSON) -> Bool {
        if m["op"]?.string == "reset" { return true }
        if m["op"]?.string == "batch", case .array(let calls)? = m["calls"] { return calls.contains { $0["op"]?.string == "reset" } }
        return false
    }

    /// Appends `bytes` to the journal, whole.
    func writeJournal(_ bytes: ArraySlice<UInt8>) {
        var rest = bytes
        while !rest.isEmpty {
            let w = rest.withUnsafeBytes { write(journal, $0.baseAddress, $0.count) }
            if w <= 0 { return }
            rest = rest.dropFirst(w)
        }
    }

    /// Reads messages from standard input until it closes, writing a reply line to each.
    /// Returns 0, or 2 when a line is not a message.
    package mutating func serve() -> Int32 {
        openJournal()
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var start = 0
        while true {
            // Bounded by the input: read returns 0 when SimKit closes the connection.
            let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, 1 << 16) }
            if n <= 0 { return 0 }
            buffer.append(contentsOf: chunk[0..<n])
            var out = ""
            var journalFrom = 0
            while let nl = buffer[start...].firstIndex(of: 0x0A) {
                let line = buffer[start..<nl]
                guard let m = WireJSON.parse(line) else {
                    FileHandle.standardError.write(Data("serve-reference: a line that is not JSON\n".utf8))
                    return 2
                }
                if journal >= 0, Self.resets(m) { _ = ftruncate(journal, 0); journalFrom = start }
                start = nl + 1
                out += reply(m) + "\n"
            }
            if journal >= 0, start > journalFrom { writeJournal(buffer[journalFrom..<start]) }
            buffer.removeSubrange(..<start)
            start = 0
            if !out.isEmpty {
                var bytes = Array(out.utf8)[...]
                while !bytes.isEmpty {
                    let w = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
                    if w <= 0 { return 0 }
                    bytes = bytes.dropFirst(w)
                }
            }
        }
    }

    /// The reply line to message `m`.
    mutating func reply(_ m: WireJSON) -> String {
        let re = ",\"re\":" + (m["seq"]?.uint.map { "\($0)" } ?? "null") + "}"
        switch m["op"]?.string {
        case "hello": return "{\"protocol\":\(WireProtocol.version),\"server\":\"simkit-reference\"" + (batches ? ",\"batch\":true" : "") + re
        case "batch" where batches:
            guard case .array(let calls)? = m["calls"] else { return "{\"error\":\"a batch needs calls\"" + re }
            return "{\"replies\":[" + calls.map { reply($0) }.joined(separator: ",") + "]" + re
        case "reset": return reset(m) + re
        case "request": return request(m) + re
        case "record": return "{\"record\":" + record(device(m)) + re
        case "rotate":
            let policy: OldKeyPolicy = m["oldKey"]?.string == "keep" ? .keep(graceMs: m["graceMs"]?.uint ?? 0) : .stopNow
            let o = model.rotate(app: app(m), newKey: key(m["newKey"]), oldKey: policy, now: now(m))
            return "{\"outcome\":\"" + (o == .rotated ? "rotated" : "new-key-already-issued") + "\"" + re
        case "stop-old-key": return applied(model.stopOldKey(app: app(m), key: key(m["key"]), now: now(m))) + re
        case "disable": return applied(model.disable(app: app(m), now: now(m))) + re
        case "enable": return applied(model.enable(app: app(m), now: now(m))) + re
        case "rollup-app":
            let a: RollupAppAction = switch m["action"]?.string { case "approve": .approve; case "reject": .reject; case "revoke": .revoke; default: .restore }
            return applied(model.rollup(a, app: app(m), now: now(m))) + re
        case "rollup-account":
            let a: RollupAccountAction = switch m["action"]?.string { case "approve": .approve; case "revoke": .revoke; default: .restore }
            return applied(model.rollup(a, account: AccountID(m["account"]?.uint ?? 0), now: now(m))) + re
        case "forget-device": return applied(model.forgetDevice(device(m), now: now(m))) + re
        default: return "{\"error\":\"unknown op\"" + re
        }
    }

    mutating func reset(_ m: WireJSON) -> String {
        guard case .array(let names)? = m["keys"], case .array(let accounts)? = m["accounts"], case .array(let apps)? = m["apps"] else {
            return "{\"ok\":false"
        }
        keyNames = names.compactMap(\.string)
        keys = [:]
        for (i, name) in keyNames.enumerated() { keys[name] = KeyID(i) }
        var setup = ServerSetup(keyCount: keyNames.count, deviceCount: Int(m["devices"]?.uint ?? 0))
        setup.keyNames = keyNames
        for a in accounts { _ = setup.addAccount(approved: a["approved"]?.bool ?? true) }
        for a in apps { _ = setup.addApp(account: AccountID(a["account"]?.uint ?? 0), key: key(a["key"]), approved: a["approved"]?.bool ?? true) }
        deviceCount = setup.deviceCount
        model = ServerModel(setup: setup)
        return "{\"ok\":true"
    }

    mutating func request(_ m: WireJSON) -> String {
        let kind = RequestKind.allCases.first { "\($0)" == m["kind"]?.string } ?? .check
        var credential = Credential.none
        if let c = m["credential"], let d = c["device"]?.uint, let g = c["generation"]?.uint {
            credential = Credential(device: DeviceIndex(truncatingIfNeeded: d), generation: UInt32(truncatingIfNeeded: g))
        }
        let d = device(m), t = now(m)
        let r = Request(kind: kind, key: key(m["key"]), credential: credential, device: d,
                        attestedApp: m["attestedApp"]?.uint.map { AppID(truncatingIfNeeded: $0) }, build: UInt16(truncatingIfNeeded: m["build"]?.uint ?? 0))
        let reply = model.handle(r, now: t)
        var s = "{\"status\":\"\(WireProtocol.statusName(reply.answer))\",\"servedAt\":\(t),\"record\":" + record(d)
        var held: [DeviceRecord] = []
        model.forEachEarlierRecord(of: d) { held.append($0) }
        s += WireProtocol.heldField(held)
        if reply.answer == .ok, kind == .register { s += ",\"credential\":" + WireProtocol.credential(reply.credential) }
        if reply.answer.isLockError { s += ",\"stoppedSince\":\(reply.stoppedSince)" }
        return s
    }

    func record(_ d: DeviceIndex) -> String {
        guard let r = model.deviceRecord(d) else { return "null" }
        return "{\"owner\":\(r.owner),\"generation\":\(r.generation)}"
    }

    func applied(_ b: Bool) -> String { "{\"applied\":\(b)" }
    func now(_ m: WireJSON) -> SimTime { m["now"]?.uint ?? 0 }
    func app(_ m: WireJSON) -> AppID { AppID(truncatingIfNeeded: m["app"]?.uint ?? 0) }
    func device(_ m: WireJSON) -> DeviceIndex { DeviceIndex(truncatingIfNeeded: m["device"]?.uint ?? 0) }
    func key(_ j: WireJSON?) -> KeyID { j?.string.flatMap { keys[$0] } ?? KeyID(0) }
}
