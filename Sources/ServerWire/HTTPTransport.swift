import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The protocol over HTTP/1.1 to a server that is already running: each message is the
/// body of a `POST` to the base URL's path (default `/simkit`), its reply the body of the
/// `200` answer, on one kept-alive connection. A minimal blocking client over a socket,
/// so that the engine stays synchronous and every wait has the reply bound.
package final class HTTPTransport: WireTransport, @unchecked Sendable {
    package let url: String
    let host: String
    let port: UInt16
    let path: String
    var fd: Int32 = -1
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    /// This connection's `X-SimKit-Session` header: the jobs of one campaign (and of
    /// campaigns side by side) run their worlds on one service, each in a state of its own.
    package let session: String

    static let sessions = Mutex<UInt64>(0)

    /// Parses `http://HOST:PORT[/PATH]` and connects.
    package init(url: String) throws(TransportFailure) {
        self.url = url
        guard let parsed = HTTPTransport.parse(url) else {
            throw .broken("'\(url)' is not http://HOST:PORT[/PATH]")
        }
        (host, port, path) = parsed
        let n = HTTPTransport.sessions.withLock { $0 += 1; return $0 }
        session = "\(getpid())-\(n)"
        try connectSocket()
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

    func connectSocket() throws(TransportFailure) {
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
        guard connect(s, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 else {
            let e = errno
            Glibc.close(s)
            throw .broken("cannot connect to \(host):\(port) (errno \(e)): is the server running?")
        }
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK)
        fd = s
    }

    package func exchange(_ line: String, timeout: Double) -> Result<[UInt8], TransportFailure> {
        if let f = sendLine(line, timeout: timeout) { return .failure(f) }
        return receiveLine(timeout: timeout)
    }

    package func sendLine(_ line: String, timeout: Double) -> TransportFailure? {
        guard fd >= 0 else { return .closed(partial: "", status: nil) }
        let deadline = monotonic() + timeout
        let body = Array(line.utf8)
        var bytes = Array("POST \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\nX-SimKit-Session: \(session)\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
        bytes += body
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                guard wait(Int16(POLLOUT), until: deadline) else { return .timedOut(seconds: timeout, partial: "") }
                continue
            }
            return .closed(partial: "", status: nil)
        }
        return nil
    }

    package func receiveLine(timeout: Double) -> Result<[UInt8], TransportFailure> {
        guard fd >= 0 else { return .failure(.closed(partial: "", status: nil)) }
        let deadline = monotonic() + timeout
        // Headers, then Content-Length bytes of body.
        var headerEnd: Int?
        var contentLength = 0
        var status = 0
        while true {
            if headerEnd == nil, let r = find([13, 10, 13, 10], in: buffer) {
                headerEnd = r + 4
                let head = String(decoding: buffer[..<r], as: UTF8.self)
                let lines = head.split(separator: "\r\n")
                let first = lines.first.map { $0.split(separator: " ") } ?? []
                status = first.count >= 2 ? Int(first[1]) ?? 0 : 0
                for l in lines.dropFirst() where l.lowercased().hasPrefix("content-length:") {
                    contentLength = Int(l.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
                guard status > 0, contentLength <= ProcessTransport.lineLimit else {
                    return .failure(.broken("the answer is not HTTP/1.1 with a Content-Length of at most 1 MiB"))
                }
            }
            if let h = headerEnd, buffer.count >= h + contentLength {
                var reply = Array(buffer[h..<h + contentLength])
                buffer.removeSubrange(..<(h + contentLength))
                while reply.last == 0x0A || reply.last == 0x0D { reply.removeLast() }
                if status != 200 { return .failure(.httpStatus(status, body: String(decoding: reply, as: UTF8.self))) }
                return .success(reply)
            }
            if buffer.count > ProcessTransport.lineLimit + 65_536 { return .failure(.tooLong(bytes: buffer.count)) }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 65_536, Int32(MSG_DONTWAIT)) }
            if n > 0 { buffer.append(contentsOf: chunk[0..<n]); continue }
            if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return .failure(.closed(partial: String(decoding: buffer, as: UTF8.self), status: nil))
            }
            guard wait(Int16(POLLIN), until: deadline) else {
                return .failure(.timedOut(seconds: timeout, partial: String(decoding: buffer, as: UTF8.self)))
            }
        }
    }

    func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<i + needle.count]) == needle { return i }
        return nil
    }

    func wait(_ events: Int16, until deadline: Double) -> Bool {
        while true {
            let left = deadline - monotonic()
            if left <= 0 { return false }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let r = poll(&p, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
            if r > 0 { return true }
            if r < 0, errno != EINTR { return true }
        }
    }

    package func stderrTail(lines: Int) -> [String] { [] }

    package func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    func monotonic() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}
