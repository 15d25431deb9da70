import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The protocol over HTTP/1.1 to a server that is already running: each message is the
/// body of a `POST` to the base URL's path (default `/simkit`), its reply the body of the
/// `200` answer. A minimal blocking client over a socket, so that the engine stays
/// synchronous and every wait has the reply bound, that reads HTTP as services speak it
/// (`HTTPAnswer`): a body framed by `Content-Length`, chunked, or by the close; interim
/// `100 Continue` answers; a connection kept alive, or closed after each answer
/// (`Connection: close`, HTTP/1.0), or closed by the service while idle, each followed by
/// a fresh connection for the next message.
package final class HTTPTransport: WireTransport, @unchecked Sendable {
    package let url: String
    let host: String
    let port: UInt16
    let path: String
    /// The socket, or -1 between connections.
    var fd: Int32 = -1
    /// Answers read on the current connection: one that already carried an answer may have
    /// been closed by the service while idle, and is opened again before a message is lost on it.
    var answersOnConnection = 0
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    /// The last answer as a report shows it (`HTTPAnswer.evidence`), made only when asked:
    /// its head and the first bytes of its body, kept from each answer.
    var evidence: [String] = []
    var lastHead: [UInt8] = []
    var lastBodyStart: [UInt8] = []
    var lastBodyBytes = 0
    /// Connections opened since the transport was made (for tests: a service that closes
    /// after each answer gets one a message).
    package private(set) var connections = 0
    /// This transport's `X-SimKit-Session` header: the jobs of one campaign (and of
    /// campaigns side by side) run their worlds on one service, each in a state of its own.
    package let session: String

    static let sessions = Mutex<UInt64>(0)
    /// The most bytes of one answer read, framing included: twice the body bound and the head's.
    static let rawLimit = 2 * ProcessTransport.lineLimit + HTTPAnswer.headLimit

    /// Parses `http://HOST:PORT[/PATH]` and connects, waiting at most `timeout` seconds.
    package init(url: String, timeout: Double = 20) throws(TransportFailure) {
        self.url = url
        guard let parsed = HTTPTransport.parse(url) else {
            throw .broken("'\(url)' is not http://HOST:PORT[/PATH]")
        }
        (host, port, path) = parsed
        let n = HTTPTransport.sessions.withLock { $0 += 1; return $0 }
        session = "\(getpid())-\(n)"
        try connectSocket(timeout: timeout)
    }

    deinit { close() }

    /// `http://HOST:PORT[/PATH]` as its parts, or nil.
    package static func parse(_ url: String) -> (String, UInt16, String)? {
        guard url.hasPrefix("http://") else { return nil }
        let rest = url.dropFirst(7)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let hostPort = rest[..<slash]
        let path = slash == rest.endIndex ? "/simkit" : String(rest[slash...])
        guard let colon = hostPort.lastIndex(of: ":"), let port = UInt16(hostPort[hostPort.index(after: colon)...]), port > 0 else { return nil }
        let host = String(hostPort[..<colon])
        guard !host.isEmpty else { return nil }
        return (host, port, path)
    }

    /// Opens a new connection, waiting at most `timeout` seconds for it.
    func connectSocket(timeout: Double) throws(TransportFailure) {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var res: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, "\(port)", &hints, &res) == 0, let ai = res else { throw .broken("cannot resolve host '\(host)'") }
        defer { freeaddrinfo(res) }
        let s = socket(ai.pointee.ai_family, ai.pointee.ai_socktype, ai.pointee.ai_protocol)
        guard s >= 0 else { throw .broken("socket failed: errno \(errno)") }
        // Non-blocking from the start: a host that drops the connection's packets costs the
        // bound, not the kernel's two minutes.
        _ = fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK)
        if connect(s, ai.pointee.ai_addr, ai.pointee.ai_addrlen) != 0 {
            var e = errno
            if e == EINPROGRESS {
                switch SocketWait.wait(s, for: Int16(POLLOUT), until: monotonicSeconds() + timeout) {
                case .ready:
                    var soError: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(s, SOL_SOCKET, SO_ERROR, &soError, &length)
                    e = soError
                case .timedOut: e = ETIMEDOUT
                case .interrupted: Glibc.close(s); throw .interrupted
                }
            }
            if e != 0 {
                Glibc.close(s)
                throw .broken("cannot connect to \(host):\(port) (errno \(e)): is the server running?")
            }
        }
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        fd = s
        answersOnConnection = 0
        buffer.removeAll(keepingCapacity: true)
        connections += 1
    }

    package func exchange(_ line: String, timeout: Double) -> Result<[UInt8], TransportFailure> {
        if let f = sendLine(line, timeout: timeout) { return .failure(f) }
        return receiveLine(timeout: timeout)
    }

    package func sendLine(_ line: String, timeout: Double) -> TransportFailure? {
        evidence = []
        lastHead = []
        // A connection that carried an answer and has something to say before it was asked
        // (its close, most often: an idle timeout) is done with: the message goes on a new one.
        if fd >= 0, answersOnConnection > 0, !buffer.isEmpty || readable() { closeSocket() }
        if fd < 0 {
            do { try connectSocket(timeout: timeout) } catch { return error }
        }
        let deadline = monotonicSeconds() + timeout
        let body = Array(line.utf8)
        var bytes = Array("POST \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\nX-SimKit-Session: \(session)\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
        bytes += body
        var sent = 0
        // Bounded: each round sends bytes, waits within the deadline, or ends; one new connection at most.
        var retried = false
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                switch SocketWait.wait(fd, for: Int16(POLLOUT), until: deadline) {
                case .ready: continue
                case .timedOut: return .timedOut(seconds: timeout, partial: "")
                case .interrupted: return .interrupted
                }
            }
            // A kept-alive connection the service closed under the first bytes: it never read
            // the message, so it goes once more on a new connection.
            if sent == 0, answersOnConnection > 0, !retried {
                retried = true
                closeSocket()
                do { try connectSocket(timeout: timeout) } catch { return error }
                continue
            }
            return .closed(partial: "", status: nil)
        }
        return nil
    }

    /// Whether the connection has bytes or its close waiting (polled without waiting).
    func readable() -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) > 0
    }

    package func receiveLine(timeout: Double) -> Result<[UInt8], TransportFailure> {
        guard fd >= 0 else { return .failure(.closed(partial: "", status: nil)) }
        let deadline = monotonicSeconds() + timeout
        var closed = false
        // Bounded: each round reads bytes (at most the body bound and the head bound in all),
        // sees the close, or waits within the deadline.
        while true {
            if !buffer.isEmpty || closed {
                switch HTTPAnswer.read(buffer, closed: closed, bodyLimit: ProcessTransport.lineLimit) {
                case .answer(let a):
                    buffer.removeSubrange(..<a.consumed)
                    answersOnConnection += 1
                    lastHead = a.head
                    lastBodyStart = Array(a.body.prefix(400))
                    lastBodyBytes = a.body.count
                    if !a.keepAlive || closed { closeSocket() }   // the next message opens a new connection
                    if a.status != 200 {
                        return .failure(.httpStatus(a.status, body: String(decoding: a.body.prefix(400), as: UTF8.self)))
                    }
                    var reply = a.body
                    while let last = reply.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { reply.removeLast() }
                    return .success(reply)
                case .needMore:
                    break
                case .unreadable(let why, _):
                    evidence = HTTPAnswer.evidence(of: buffer)
                    closeSocket()
                    return .failure(.unreadable(why))
                case .tooLong(let n, _):
                    evidence = HTTPAnswer.evidence(of: buffer)
                    closeSocket()
                    return .failure(.tooLong(bytes: n))
                }
                if closed {
                    closeSocket()
                    return .failure(.closed(partial: "", status: nil))
                }
            }
            switch SocketWait.wait(fd, for: Int16(POLLIN), until: deadline) {
            case .ready: break
            case .timedOut:
                evidence = HTTPAnswer.evidence(of: buffer)
                return .failure(.timedOut(seconds: timeout, partial: String(decoding: buffer.prefix(4096), as: UTF8.self)))
            case .interrupted: return .failure(.interrupted)
            }
            // Reads on while each read fills the chunk, and past 64 KiB until nothing more is
            // there to read, so that a stream is read whole before it is parsed again (once a
            // pause, not once a read: a read cut short by a busy sender is no pause, and parsing
            // 2 MiB of one-byte chunks once a read took past the bound on a loaded machine).
            // Bounded by the raw bytes: a body of tiny chunks carries more framing than body.
            var n = 0
            repeat {
                if buffer.count > Self.rawLimit {
                    evidence = HTTPAnswer.evidence(of: buffer)
                    let read = buffer.count
                    closeSocket()
                    return .failure(.tooLong(bytes: read))
                }
                n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 65_536, Int32(MSG_DONTWAIT)) }
                if n > 0 { buffer.append(contentsOf: chunk[0..<n]) }
                else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { closed = true }
            } while n == 65_536 || (n > 0 && buffer.count > 65_536)
        }
    }

    package func answerEvidence() -> [String] {
        if evidence.isEmpty, !lastHead.isEmpty {
            return HTTPAnswer.evidence(head: HTTPAnswer.lines(lastHead[...]), body: lastBodyStart[...], bodyBytes: lastBodyBytes)
        }
        return evidence
    }

    package func stderrLastError() -> [String] { [] }

    /// Ends the current connection; the next message opens a new one.
    func closeSocket() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
        buffer.removeAll(keepingCapacity: true)
    }

    package func close() { closeSocket() }
}
