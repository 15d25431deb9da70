import Foundation
import SimKit

/// Where a wire server is: a process SimKit starts (`process:CMD`) or an HTTP service
/// already running (`http://HOST:PORT`).
package enum WireEndpoint: Hashable, Sendable, CustomStringConvertible {
    case process(String)
    case http(String)

    package var description: String {
        switch self {
        case .process(let c): "process:\(c)"
        case .http(let u): u
        }
    }

    /// The endpoint the next `WireServer` built on this thread talks to (set where the
    /// run's server is resolved, `WireEndpoint.use`), or nil.
    package static var current: WireEndpoint? {
        Thread.current.threadDictionary[currentKey] as? WireEndpoint
    }

    /// Makes `endpoint` the one the next `WireServer` built on this thread talks to.
    package static func use(_ endpoint: WireEndpoint?) {
        Thread.current.threadDictionary[currentKey] = endpoint
    }

    static let currentKey = "simkit.wire.endpoint"
}

/// One connection to a wire server, reused by the worlds one thread runs in turn: each
/// world begins with a `reset` (the first on a fresh process after the `hello`). A
/// failure ends the connection; the next world starts the process again.
package final class WireSession: @unchecked Sendable {
    package let endpoint: WireEndpoint
    var transport: WireTransport?
    /// Message numbers in the current world (the reset is 1; a connection's hello is 0).
    var seq: UInt64 = 0
    /// Which world owns the session: one more at each `begin`.
    package private(set) var epoch: UInt64 = 0
    /// The current world's failure, if any: after it the session sends nothing more.
    package private(set) var failure: WireFailure?
    /// Every line sent (`> `) and received (`< `) in the current world, when recording.
    package private(set) var transcript: [String] = []
    package var recording = false
    /// Lines exchanged since the process started, for the bench.
    package private(set) var exchanged: UInt64 = 0
    /// The wall-clock bound on each reply of this session, in seconds (`replyTimeout` when
    /// the session was made).
    package var timeout: Double = WireSession.replyTimeout
    /// The server's name from its hello.
    package private(set) var serverName: String?
    /// Whether the server's hello announced `"batch":true` (docs/server-protocol.md,
    /// "Batches"): it answers a `batch` message, so a world may run ahead of its replies.
    package private(set) var batches = false
    /// Whether the current world runs ahead: its messages go in batches, and the world
    /// goes on with the reference's answers until each batch's replies say whether they
    /// were the server's.
    package private(set) var ahead = false
    /// Set when a batch's replies were not what the world went on with (or did not come):
    /// the world's run is not the server's, and must be run again in lock step.
    package private(set) var aheadFailed = false
    /// Messages waiting for the next batch, and what the world used for each reply.
    var pendingLines: [String] = []
    var pendingExpected: [WireExpectation] = []
    /// The batch sent and not yet read: its calls' expectations and the first call's number.
    var inFlight: (expected: [WireExpectation], first: UInt64)?
    /// Worlds in a row whose batches did not hold (a server that differs from the
    /// reference often runs in lock step for a while: see `wantsAhead`).
    var aheadMisses = 0
    var worldsSinceMiss = 0
    /// Worlds that ran ahead, and of them those whose batches did not hold (each run again
    /// in lock step), since the session was made: for the bench and the tests.
    package private(set) var worldsAhead: UInt64 = 0
    package private(set) var worldsRunAgain: UInt64 = 0
    /// The lines sent in lock step since the current world's reset, for the file a failure
    /// writes (`WireFailure.messages`); nil once they passed `messagesLimitBytes`.
    var sentLines: [String]? = []
    var sentBytes = 0
    let log: FileHandle?

    init(endpoint: WireEndpoint) {
        self.endpoint = endpoint
        if let path = ProcessInfo.processInfo.environment["SIMKIT_SERVER_LOG"] {
            // Appended, so the sessions of several jobs add whole lines to one file.
            let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
            log = fd >= 0 ? FileHandle(fileDescriptor: fd, closeOnDealloc: true) : nil
        } else {
            log = nil
        }
    }

    deinit { transport?.close(); removeDataDirectory() }

    /// The wall-clock bound on one reply, in seconds: `SIMKIT_SERVER_TIMEOUT` (a duration
    /// such as `2s` or `500ms`) or 5 s. It never reaches the trace.
    package static var replyTimeout: Double {
        get { timeoutLock.withLock { timeoutOverride } ?? environmentTimeout }
        set { timeoutLock.withLock { timeoutOverride = newValue } }
    }
    nonisolated(unsafe) static var timeoutOverride: Double?
    static let timeoutLock = NSLock()
    static let environmentTimeout: Double = {
        guard let text = ProcessInfo.processInfo.environment["SIMKIT_SERVER_TIMEOUT"], let ms = DurationText.parse(text), ms > 0 else { return 5 }
        return Double(ms) / 1000
    }()

    /// The most messages in one batch (docs/server-protocol.md, "Batches").
    package static let batchLimit = 256

    /// The most bytes of one world's messages kept for the file a failure writes: 32 MiB.
    static let messagesLimitBytes = 32 << 20

    /// Where a failure writes the messages that led to it (`WireFailure.messages`):
    /// `simkit fuzz` and `simkit conformance` set their `--out`; by default a folder of
    /// this process's own in the temporary directory.
    package static var messagesDirectory: String {
        get { timeoutLock.withLock { messagesOverride } ?? (NSTemporaryDirectory() as NSString).appendingPathComponent("simkit-server-\(getpid())") }
        set { timeoutLock.withLock { messagesOverride = newValue } }
    }
    nonisolated(unsafe) static var messagesOverride: String?

    /// Whether worlds may run ahead of a server's replies at all: `SIMKIT_SERVER_BATCH=off`
    /// (or this set to false) keeps every server in lock step, batches announced or not.
    package static var batching: Bool {
        get { timeoutLock.withLock { batchingOverride } ?? environmentBatching }
        set { timeoutLock.withLock { batchingOverride = newValue } }
    }
    nonisolated(unsafe) static var batchingOverride: Bool?
    static let environmentBatching: Bool = ProcessInfo.processInfo.environment["SIMKIT_SERVER_BATCH"] != "off"

    /// Starts a world: (re)starts the connection if needed, says hello to a fresh one and
    /// sends the `reset` with the world's setup (in lock step, or as the first message of
    /// the world's first batch when `ahead` is asked and the server announced batches).
    /// Returns the world's epoch.
    func begin(resetFields: String, ahead wanted: Bool = false) -> UInt64 {
        epoch += 1
        seq = 0
        failure = nil
        transcript = []
        sentLines = []
        sentBytes = 0
        ahead = false
        aheadFailed = false
        pendingLines.removeAll(keepingCapacity: true)
        pendingExpected.removeAll(keepingCapacity: true)
        if inFlight != nil {
            // A world left a batch unread (it was never settled): start a fresh connection
            // rather than read another world's replies.
            inFlight = nil
            close()
        }
        if WireInterrupt.requested {
            fail(.unresponsive, Self.interruptedReason, sent: "", received: nil)
            return epoch
        }
        if transport == nil {
            do {
                switch endpoint {
                case .process(let command):
                    newDataDirectory()
                    transport = try ProcessTransport(command: command, environment: dataEnvironment)
                case .http(let url): transport = try HTTPTransport(url: url, timeout: max(timeout, Self.startupTimeout))
                }
            } catch {
                if error == .interrupted { fail(.unresponsive, Self.interruptedReason, sent: "", received: nil); return epoch }
                fail(.exited, "the server could not be reached: \(Self.describe(error))", sent: "", received: nil)
                return epoch
            }
            // The hello is message 0 of the connection; each world's messages count from its reset, 1.
            guard let hello = call("hello", ",\"protocol\":\(WireProtocol.version),\"client\":\"simkit\"", advance: false) else { return epoch }
            guard let v = hello["protocol"]?.uint, v == WireProtocol.version else {
                fail(.protocolError, "the hello reply's \"protocol\" must be \(WireProtocol.version)", sent: lastSent, received: lastReceived)
                return epoch
            }
            serverName = hello["server"]?.string
            batches = hello["batch"]?.bool == true
        }
        if wanted, batches, wantsAhead() {
            ahead = true
            queue("reset", resetFields, .reset)
            return epoch
        }
        if let r = call("reset", resetFields), r["ok"]?.bool != true {
            fail(.protocolError, "the reset reply must say \"ok\":true", sent: lastSent, received: lastReceived)
        }
        return epoch
    }

    var lastSent = ""
    var lastReceived: String?

    /// Sends `{"op":OP,"seq":N` + `fields` + `}` and returns the reply object, or nil
    /// once the session failed (the failure recorded, the connection closed).
    /// The bound on the hello's reply, which waits for the process to start as well: at
    /// least 20 s (an interpreter or a JVM under load), or the reply bound if longer.
    package static let startupTimeout: Double = 20

    func call(_ op: String, _ fields: String, advance: Bool = true) -> WireJSON? {
        guard failure == nil, let transport else { return nil }
        if advance { seq += 1 }
        let line = "{\"op\":\"\(op)\",\"seq\":\(seq)" + fields + "}"
        lastSent = line
        lastReceived = nil
        if op != "hello", sentLines != nil {
            sentBytes += line.utf8.count + 1
            if sentBytes > Self.messagesLimitBytes { sentLines = nil } else { sentLines!.append(line) }
        }
        if recording { transcript.append("> " + line) }
        log?.write(Data(("> " + line + "\n").utf8))
        let bound = op == "hello" ? max(timeout, Self.startupTimeout) : timeout
        switch transport.exchange(line, timeout: bound) {
        case .success(let bytes):
            exchanged += 1
            let text = String(decoding: bytes, as: UTF8.self)
            lastReceived = text
            if recording { transcript.append("< " + text) }
            log?.write(Data(("< " + text + "\n").utf8))
            guard let json = WireJSON.parse(ArraySlice(bytes)), case .object = json else {
                let what = if case .http = endpoint { "the body of the HTTP answer is not a JSON object" } else { "the reply is not a JSON object on one line" }
                fail(.protocolError, what, sent: line, received: text)
                return nil
            }
            guard let re = json["re"]?.uint, re == seq else {
                fail(.protocolError, "the reply's \"re\" must be \(seq), the message's \"seq\"", sent: line, received: text)
                return nil
            }
            return json
        case .failure(let f):
            switch f {
            case .timedOut(let s, let partial):
                fail(.unresponsive, "no reply line within \(Self.seconds(s)) of wall time" + (op == "hello" ? " (the process's start included)" : ""),
                     sent: line, received: partial.isEmpty ? nil : partial)
            case .closed(let partial, let status):
                let how = status.map { "the server exited with status \($0)" } ?? "the server closed the connection"
                fail(.exited, how + " before it replied", sent: line, received: partial.isEmpty ? nil : partial)
            case .tooLong(let n):
                let what = if case .http = endpoint { "the body of the HTTP answer is longer than \(ProcessTransport.lineLimit) bytes (\(n) announced or read)" }
                    else { "the reply is longer than \(ProcessTransport.lineLimit) bytes (\(n) read, no newline): read no further" }
                fail(.protocolError, what, sent: line, received: nil)
            case .broken(let why):
                fail(.exited, why, sent: line, received: nil)
            case .httpStatus(let code, let body):
                fail(.protocolError, "the server answered HTTP \(code), not 200", sent: line, received: body.isEmpty ? nil : body)
            case .unreadable(let why):
                fail(.protocolError, "the HTTP answer cannot be read: \(why)", sent: line, received: nil)
            case .interrupted:
                fail(.unresponsive, Self.interruptedReason, sent: line, received: nil)
            }
            return nil
        }
    }

    /// Whether this world runs ahead: always, unless the last 4 worlds' batches did not
    /// hold (the server differs from the reference's answers, or fails), then one world in
    /// 16 (a world whose batches do not hold is run twice). Only a matter of speed: every
    /// world's result is the lock step's.
    func wantsAhead() -> Bool {
        guard aheadMisses >= 4 else { return true }
        worldsSinceMiss += 1
        return worldsSinceMiss % 16 == 0
    }

    /// Queues a message of a world that runs ahead: `{"op":OP,"seq":N` + `fields` + `}`,
    /// with what the world used for its reply; a full batch is sent.
    func queue(_ op: String, _ fields: String, _ expected: WireExpectation) {
        guard ahead, !aheadFailed else { return }
        seq += 1
        pendingLines.append("{\"op\":\"\(op)\",\"seq\":\(seq)" + fields + "}")
        pendingExpected.append(expected)
        if pendingLines.count >= Self.batchLimit { flush() }
    }

    /// Sends the waiting messages as one `batch` (after reading the replies of the batch
    /// before it, so one batch at most is in flight while the world runs on).
    func flush() {
        guard ahead, !aheadFailed, !pendingLines.isEmpty else { return }
        collect()
        guard !aheadFailed, let transport else { aheadFailed = true; return }
        let first = seq - UInt64(pendingLines.count) + 1
        let line = "{\"op\":\"batch\",\"seq\":\(seq),\"calls\":[" + pendingLines.joined(separator: ",") + "]}"
        if recording { transcript.append("> " + line) }
        log?.write(Data(("> " + line + "\n").utf8))
        if transport.sendLine(line, timeout: timeout) != nil { return abandon() }
        inFlight = (pendingExpected, first)
        pendingLines.removeAll(keepingCapacity: true)
        pendingExpected.removeAll(keepingCapacity: true)
    }

    /// Reads the replies of the batch in flight and checks each against what the world
    /// used; any difference, or no reply, makes the world's run not the server's.
    func collect() {
        guard let (expected, first) = inFlight else { return }
        inFlight = nil
        guard let transport else { return abandon() }
        switch transport.receiveLine(timeout: timeout) {
        case .success(let bytes):
            exchanged += UInt64(expected.count)
            if recording || log != nil {
                let text = String(decoding: bytes, as: UTF8.self)
                if recording { transcript.append("< " + text) }
                log?.write(Data(("< " + text + "\n").utf8))
            }
            guard let json = WireJSON.parse(ArraySlice(bytes)), json["re"]?.uint == first + UInt64(expected.count) - 1,
                  case .array(let replies)? = json["replies"], replies.count == expected.count else { return abandon() }
            for (i, reply) in replies.enumerated() {
                guard reply["re"]?.uint == first + UInt64(i), WireProtocol.holds(expected[i], reply) else {
                    aheadFailed = true   // a reply the world did not go on with: the connection is sound
                    return
                }
            }
        case .failure:
            abandon()
        }
    }

    /// A batch that could not be sent or whose replies did not come whole: the world runs
    /// again in lock step, on a fresh connection (which gives the failure its verdict).
    func abandon() {
        aheadFailed = true
        close()
    }

    /// Ends a world that ran ahead: sends what waits, reads every reply, and says whether
    /// they all were what the world went on with (true for a world in lock step).
    func settle() -> Bool {
        guard ahead else { return true }
        flush()
        collect()
        ahead = false
        worldsAhead += 1
        if aheadFailed { aheadMisses += 1; worldsRunAgain += 1 } else { aheadMisses = 0; worldsSinceMiss = 0 }
        return !aheadFailed
    }

    /// Why a world that SimKit was asked to stop in ends (`WireInterrupt`); the campaign
    /// counts it as not run.
    static let interruptedReason = "SimKit was asked to stop (SIGINT or SIGTERM) while it waited for the server"

    /// Records the world's failure and ends the connection (the next world starts anew);
    /// writes the messages that led to it to a file of `messagesDirectory`.
    func fail(_ kind: WireFailure.Kind, _ reason: String, sent: String, received: String?) {
        guard failure == nil else { return }
        let interrupted = reason == Self.interruptedReason
        let stderr = interrupted ? [] : transport?.stderrLastError() ?? []
        failure = WireFailure(kind: kind, reason: reason, sent: sent, received: received, stderr: stderr,
                              endpoint: endpoint.description, message: seq, answer: transport?.answerEvidence() ?? [],
                              messages: interrupted || sent.isEmpty ? nil : writeMessages())
        transport?.close()
        transport = nil
        removeDataDirectory()
        serverName = nil
    }

    // MARK: Restarts (S10)

    /// The data directory of the process this session started (`SIMKIT_DATA_DIR` in its
    /// environment): made empty when the process starts, kept across its restarts, removed
    /// when the connection ends. So the state a process keeps there never outlives it, and
    /// each world's `reset` replaces it whole: nothing leaks from one world to the next.
    package private(set) var dataDirectory: String?

    /// The environment variable that names it.
    package static let dataDirectoryVariable = "SIMKIT_DATA_DIR"

    var dataEnvironment: [String: String] {
        dataDirectory.map { [Self.dataDirectoryVariable: $0] } ?? [:]
    }

    nonisolated(unsafe) static var directoriesMade: UInt64 = 0
    /// The data directories not yet removed, removed at the latest when SimKit exits (a
    /// session kept by a thread to the end is never closed).
    nonisolated(unsafe) static var liveDirectories: Set<String> = []
    static let removedAtExit: Void = {
        atexit {
            let dirs = WireSession.timeoutLock.withLock { WireSession.liveDirectories }
            for d in dirs.sorted() { try? FileManager.default.removeItem(atPath: d) }
        }
    }()

    /// A fresh, empty directory for the process about to start.
    func newDataDirectory() {
        removeDataDirectory()
        _ = Self.removedAtExit
        let n = Self.timeoutLock.withLock { Self.directoriesMade += 1; return Self.directoriesMade }
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("simkit-data-\(getpid())-\(n)")
        try? FileManager.default.removeItem(atPath: path)
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            dataDirectory = path
            _ = Self.timeoutLock.withLock { Self.liveDirectories.insert(path) }
        } catch {
            dataDirectory = nil
        }
    }

    func removeDataDirectory() {
        guard let path = dataDirectory else { return }
        try? FileManager.default.removeItem(atPath: path)
        _ = Self.timeoutLock.withLock { Self.liveDirectories.remove(path) }
        dataDirectory = nil
    }

    /// A restart in a world that runs ahead: the messages before it are sent and their
    /// replies read and checked (none is in flight across the restart, as in lock step),
    /// then the server restarts and the world runs on ahead. A restart that fails makes the
    /// world run again in lock step, which gives the failure its verdict.
    func restartAhead(now: SimTime) {
        flush()
        collect()
        guard !aheadFailed, transport != nil else { aheadFailed = true; return }
        restart(now: now)
        if failure != nil { aheadFailed = true }
    }

    /// S10: the server's process restarts at `now` (`server restart`). A process is ended
    /// at once (SIGKILL, a crash: what it wrote to its data directory stays) and started
    /// again with the same command and directory, and greeted with a `hello`; it gets no
    /// `reset`: it comes back from what it stored. An HTTP service gets a `restart` message
    /// (`{"op":"restart","seq":N,"now":T}`, answered `{"ok":true}`): it drops what it holds
    /// in memory and reloads from its own storage. A restart that fails ends the world's
    /// conversation like any failure.
    func restart(now: SimTime) {
        guard failure == nil, transport != nil else { return }
        switch endpoint {
        case .process(let command):
            transport?.close()
            transport = nil
            if WireInterrupt.requested { return fail(.unresponsive, Self.interruptedReason, sent: "", received: nil) }
            do {
                transport = try ProcessTransport(command: command, environment: dataEnvironment)
            } catch {
                return fail(.exited, "the server could not be started again at its restart (S10): \(Self.describe(error))", sent: "", received: nil)
            }
            guard let hello = call("hello", ",\"protocol\":\(WireProtocol.version),\"client\":\"simkit\",\"restart\":true") else { return }
            guard hello["protocol"]?.uint == WireProtocol.version else {
                return fail(.protocolError, "the hello reply's \"protocol\" must be \(WireProtocol.version)", sent: lastSent, received: lastReceived)
            }
        case .http:
            guard let r = call("restart", ",\"now\":\(now)") else { return }
            if r["ok"]?.bool != true {
                fail(.protocolError, "the restart reply must say \"ok\":true", sent: lastSent, received: lastReceived)
            }
        }
    }

    /// Ends the connection (the process exits); the next world starts it again.
    package func close() {
        transport?.close()
        transport = nil
        removeDataDirectory()
        serverName = nil
        batches = false
        inFlight = nil
    }

    /// Writes the hello and this world's lines sent so far to a file of `messagesDirectory`,
    /// one a line: what a failure's report names, to pipe into the server.
    func writeMessages() -> WireFailure.Messages {
        guard let lines = sentLines else {
            return .notWritten("this world's messages passed \(Self.messagesLimitBytes >> 20) MiB")
        }
        let dir = Self.messagesDirectory
        let hello = "{\"op\":\"hello\",\"seq\":0,\"protocol\":\(WireProtocol.version),\"client\":\"simkit\"}"
        let text = ([hello] + lines).joined(separator: "\n") + "\n"
        // Named by its content: the same messages, the same file (a report reads the same
        // whether the world ran ahead first or not).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 }
        let hex = String(hash, radix: 16)
        let path = (dir as NSString).appendingPathComponent("server-messages-\(String(repeating: "0", count: 16 - hex.count) + hex).jsonl")
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            return .notWritten("cannot write \(path): \(error.localizedDescription)")
        }
        return .written(path: path, lines: lines.count + 1)
    }

    static func seconds(_ s: Double) -> String {
        s < 1 ? "\(Int((s * 1000).rounded())) ms" : s == s.rounded() ? "\(Int(s)) s" : "\(s) s"
    }

    static func describe(_ error: Error) -> String {
        if let f = error as? TransportFailure, case .broken(let why) = f { return why }
        return "\(error)"
    }

    /// The session for `endpoint` on this thread: each thread (each `--jobs` job) has its
    /// own process, started at its first world.
    package static func onThisThread(_ endpoint: WireEndpoint) -> WireSession {
        let dict = Thread.current.threadDictionary
        let key = "simkit.wire.session." + endpoint.description
        if let s = dict[key] as? WireSession { return s }
        let s = WireSession(endpoint: endpoint)
        dict[key] = s
        return s
    }
}
