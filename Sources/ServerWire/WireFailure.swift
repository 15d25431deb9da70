/// A seed that ended because the server did not keep the protocol: its own verdict,
/// never an invariant's and never a pass.
public struct WireFailure: Error, Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// A reply that is not JSON, not an object, or not what the message asks for.
        case protocolError = "server-protocol"
        /// No reply within the bound.
        case unresponsive = "server-unresponsive"
        /// The process exited, the connection closed, or could not be made.
        case exited = "server-exited"
    }
    public var kind: Kind
    /// What was wrong, one sentence.
    public var reason: String
    /// The message SimKit sent (one line), or "" when none was sent yet.
    public var sent: String
    /// What came back (possibly partial), or nil when nothing did.
    public var received: String?
    /// The server process's last error on its standard error (`StderrTail.lastError`):
    /// bounded, but with the exception's message.
    public var stderr: [String]
    /// Where: the endpoint.
    public var endpoint: String
    /// The message's number in this world (1 is the `reset`).
    public var message: UInt64
    /// HTTP: the answer as it came (status line, headers, the first bytes of the body).
    public var answer: [String] = []
    /// The file holding the messages that led here, one a line (the hello, then this
    /// world's from its reset to the one that failed), to pipe into the server again; or
    /// why it was not written. Nil when nothing was sent.
    public var messages: Messages?

    /// Where the messages that led to a failure went.
    public enum Messages: Equatable, Sendable {
        /// Written to the file, this many lines.
        case written(path: String, lines: Int)
        /// Not written: why.
        case notWritten(String)
    }

    public init(kind: Kind, reason: String, sent: String, received: String?, stderr: [String], endpoint: String, message: UInt64,
                answer: [String] = [], messages: Messages? = nil) {
        self.kind = kind; self.reason = reason; self.sent = sent; self.received = received; self.stderr = stderr
        self.endpoint = endpoint; self.message = message; self.answer = answer; self.messages = messages
    }

    /// The verdict's headline and its evidence, each on a line of its own.
    public var text: String {
        var s = "\(kind.rawValue): \(reason) (message \(message) to \(endpoint))\n"
        s += "  sent:     \(sent.isEmpty ? "(nothing)" : WireFailure.clip(sent))\n"
        s += "  received: \(received.map { $0.isEmpty ? "(an empty line)" : WireFailure.clip($0) } ?? "(nothing)")\n"
        if !answer.isEmpty {
            s += "  HTTP answer:\n"
            for l in answer { s += "    \(WireFailure.clip(l))\n" }
        }
        if !endpoint.hasPrefix("http") {
            if stderr.isEmpty { s += "  stderr:   (nothing)\n" } else {
                s += "  stderr (its last error, \(stderr.count) line\(stderr.count == 1 ? "" : "s")):\n"
                for l in stderr { s += "    \(WireFailure.clip(l))\n" }
            }
        }
        switch messages {
        case .written(let path, let lines)?:
            let again = endpoint.hasPrefix("process:")
                ? "to run them again: \(endpoint.dropFirst("process:".count)) < \(path)"
                : "to send them again, POST each line to \(endpoint)"
            s += "  messages: \(path) (\(lines) line\(lines == 1 ? "" : "s"): the hello, then this world's from its reset; \(again))\n"
        case .notWritten(let why)?:
            s += "  messages: not written (\(why))\n"
        case nil:
            break
        }
        return s
    }

    /// The headline alone.
    public var headline: String { "\(kind.rawValue): \(reason)" }

    static func clip(_ s: String) -> String { s.count > 400 ? String(s.prefix(400)) + "… (\(s.count) characters)" : s }
}
