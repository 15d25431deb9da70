import Foundation

/// One HTTP/1.x answer, read from the bytes received so far: sans-IO, so that every framing
/// a service may use is tested without a socket. Interim answers (`100 Continue` and the
/// other 1xx) are skipped; the body is framed by `Transfer-Encoding: chunked`, by
/// `Content-Length`, or by the connection's close (RFC 9112 §6.3), and bounded.
package struct HTTPAnswer: Equatable, Sendable {
    /// The status line and header lines as sent, without the empty line after them.
    package var head: [UInt8]
    package var status: Int
    /// The body, chunked framing removed.
    package var body: [UInt8]
    /// Whether the connection stays open for the next message: HTTP/1.1 unless
    /// `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`, never after a body
    /// framed by the close.
    package var keepAlive: Bool
    /// The bytes of the buffer the answer took, interim answers included.
    package var consumed: Int

    /// The status line, as sent (`HTTP/1.1 200 OK`).
    package var statusLine: String { Self.lines(head[...]).first ?? "" }
    /// The header lines, as sent.
    package var headers: [String] { Array(Self.lines(head[...]).dropFirst()) }

    /// What the bytes received so far hold.
    package enum Read: Equatable, Sendable {
        /// A whole answer.
        case answer(HTTPAnswer)
        /// Not yet a whole answer: read more.
        case needMore
        /// Bytes SimKit cannot read as an HTTP answer: why, and the status line and headers
        /// when they were read.
        case unreadable(String, head: [String])
        /// A body (or head) longer than the bound: the bytes it announced or that were read.
        case tooLong(Int, head: [String])
    }

    /// The longest status line and headers read: 64 KiB.
    package static let headLimit = 64 << 10

    /// The headers that frame an answer, read from its head without making a string of it
    /// (the reader runs once a message).
    struct Framing {
        var chunked = false
        /// A transfer coding other than chunked last: the body runs to the close.
        var otherCoding = false
        var contentLength: Int?
        /// Two Content-Length values that differ, or one that is not a whole number.
        var badLength = false
        var close = false
        var keepAliveToken = false
    }

    /// Reads one answer from the start of `bytes`. `closed`: the other side closed the
    /// connection after them (a body framed by the close ends there). `bodyLimit`: the
    /// longest body read; a longer one is `tooLong`, and no more of it needs reading.
    /// - Complexity: O(bytes).
    package static func read(_ bytes: [UInt8], closed: Bool, bodyLimit: Int) -> Read {
        var start = 0
        // Bounded: each interim answer consumes at least its status line.
        while true {
            guard let (headEnd, next) = endOfHead(bytes, from: start) else {
                if bytes.count - start > headLimit { return .tooLong(bytes.count - start, head: []) }
                if closed, bytes.count > start {
                    return .unreadable("the connection closed before the end of the answer's headers", head: lines(bytes[start...]))
                }
                return .needMore
            }
            let headBytes = bytes[start..<headEnd]
            let firstEnd = headBytes.firstIndex(of: 0x0A) ?? headEnd
            guard let (http11, status) = parseStatusLine(headBytes[..<firstEnd]) else {
                return .unreadable("it does not begin with an HTTP/1.x status line", head: lines(headBytes))
            }
            if (100..<200).contains(status) {
                guard status != 101 else {
                    return .unreadable("it switches protocols (101), which the wire protocol never asks", head: lines(headBytes))
                }
                start = next
                continue
            }
            var framing = Framing()
            if let bad = readHeaders(headBytes[min(firstEnd + 1, headEnd)...], into: &framing) {
                return .unreadable("a header line has no name and colon: \(bad.debugDescription)", head: lines(headBytes))
            }
            let keepAlive = http11 ? !framing.close : framing.keepAliveToken
            var answer = HTTPAnswer(head: Array(headBytes), status: status, body: [], keepAlive: keepAlive, consumed: next)
            if status == 204 || status == 304 { return .answer(answer) }
            if framing.chunked {
                return chunked(bytes, from: next, answer: answer, closed: closed, limit: bodyLimit, head: headBytes)
            }
            if framing.otherCoding {
                // A coding other than chunked last: the body runs to the close (RFC 9112 §6.3).
                answer.keepAlive = false
                return untilClose(bytes, from: next, closed: closed, answer: answer, limit: bodyLimit, head: headBytes)
            }
            if framing.badLength {
                return .unreadable("its Content-Length is not one whole number", head: lines(headBytes))
            }
            if let length = framing.contentLength {
                if length > bodyLimit { return .tooLong(length, head: lines(headBytes)) }
                guard bytes.count - next >= length else {
                    if closed {
                        return .unreadable("the connection closed after \(bytes.count - next) of the \(length) bytes its Content-Length announced",
                                           head: lines(headBytes))
                    }
                    return .needMore
                }
                answer.body = Array(bytes[next..<next + length])
                answer.consumed = next + length
                return .answer(answer)
            }
            answer.keepAlive = false
            return untilClose(bytes, from: next, closed: closed, answer: answer, limit: bodyLimit, head: headBytes)
        }
    }

    /// Reads the header lines that frame the body into `framing`; the first line that is
    /// no header (no name and colon), or nil.
    static func readHeaders(_ bytes: ArraySlice<UInt8>, into framing: inout Framing) -> String? {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let end = bytes[i...].firstIndex(of: 0x0A) ?? bytes.endIndex
            var line = bytes[i..<end]
            if line.last == 0x0D { line = line.dropLast() }
            i = end + 1
            if line.isEmpty || line.first == 0x20 || line.first == 0x09 { continue }   // an obsolete folded line: ignored
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon != line.startIndex else {
                return String(decoding: line, as: UTF8.self)
            }
            let name = line[..<colon]
            let value = line[(colon + 1)...]
            if equalsLowercased(name, "content-length") {
                let text = trimmed(value)
                guard !text.isEmpty, text.count <= 18, text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                      let n = Int(String(decoding: text, as: UTF8.self)) else { framing.badLength = true; continue }
                if let known = framing.contentLength, known != n { framing.badLength = true }
                framing.contentLength = n
            } else if equalsLowercased(name, "transfer-encoding") {
                for token in value.split(separator: UInt8(ascii: ",")) {
                    let chunked = equalsLowercased(trimmed(token), "chunked")
                    framing.chunked = chunked
                    framing.otherCoding = !chunked
                }
            } else if equalsLowercased(name, "connection") {
                for token in value.split(separator: UInt8(ascii: ",")) {
                    if equalsLowercased(trimmed(token), "close") { framing.close = true }
                    if equalsLowercased(trimmed(token), "keep-alive") { framing.keepAliveToken = true }
                }
            }
        }
        return nil
    }

    /// Whether `bytes`, ASCII letters folded to lower case, are `word`.
    static func equalsLowercased(_ bytes: ArraySlice<UInt8>, _ word: StaticString) -> Bool {
        guard bytes.count == word.utf8CodeUnitCount else { return false }
        return word.withUTF8Buffer { w in
            zip(bytes, w).allSatisfy { b, c in (b >= 0x41 && b <= 0x5A ? b | 0x20 : b) == c }
        }
    }

    /// `bytes` without spaces and tabs at either end.
    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = bytes
        while let f = s.first, f == 0x20 || f == 0x09 { s = s.dropFirst() }
        while let l = s.last, l == 0x20 || l == 0x09 { s = s.dropLast() }
        return s
    }

    /// A body that runs to the connection's close (no length, not chunked).
    static func untilClose(_ bytes: [UInt8], from start: Int, closed: Bool, answer: HTTPAnswer, limit: Int,
                           head: ArraySlice<UInt8>) -> Read {
        if bytes.count - start > limit { return .tooLong(bytes.count - start, head: lines(head)) }
        guard closed else { return .needMore }
        var a = answer
        a.body = Array(bytes[start...])
        a.consumed = bytes.count
        return .answer(a)
    }

    /// A chunked body: `SIZE[;ext]CRLF DATA CRLF` … `0 CRLF [trailers] CRLF`.
    static func chunked(_ bytes: [UInt8], from start: Int, answer: HTTPAnswer, closed: Bool, limit: Int,
                        head headBytes: ArraySlice<UInt8>) -> Read {
        var body: [UInt8] = []
        var p = start
        var head: [String] { lines(headBytes) }
        let more: Read = closed ? .unreadable("the connection closed in the middle of its chunked body", head: head) : .needMore
        // Bounded: every chunk consumes at least its size line.
        while true {
            guard let lf = bytes[p...].firstIndex(of: 0x0A) else { return bytes.count - p > 1024 ? .unreadable("a chunk size line is longer than 1 KiB", head: head) : more }
            let sizeLine = bytes[p..<lf].last == 0x0D ? bytes[p..<lf - 1] : bytes[p..<lf]
            guard let size = chunkSize(sizeLine) else {
                return .unreadable("a chunk size is not a hexadecimal number: \(String(decoding: sizeLine, as: UTF8.self).debugDescription)",
                                   head: head)
            }
            p = lf + 1
            if size == 0 {
                // Trailer lines, then an empty line.
                while true {
                    guard let end = bytes[p...].firstIndex(of: 0x0A) else { return more }
                    let line = bytes[p..<end]
                    p = end + 1
                    if line.isEmpty || line == [0x0D] { break }
                }
                var a = answer
                a.body = body
                a.consumed = p
                return .answer(a)
            }
            if body.count + size > limit { return .tooLong(body.count + size, head: head) }
            guard bytes.count - p >= size + 1 else { return more }
            body.append(contentsOf: bytes[p..<p + size])
            p += size
            if bytes[p] == 0x0D {
                guard bytes.count - p >= 2 else { return more }
                p += 1
            }
            guard bytes[p] == 0x0A else { return .unreadable("a chunk of \(size) bytes is not followed by CRLF", head: head) }
            p += 1
        }
    }

    /// A chunk size line's size (`1a`, `1A;name=value`, spaces around), or nil when it is
    /// no hexadecimal number of at most 15 digits.
    static func chunkSize(_ line: ArraySlice<UInt8>) -> Int? {
        let digits = trimmed(line.prefix { $0 != UInt8(ascii: ";") })
        guard !digits.isEmpty, digits.count <= 15 else { return nil }
        var size = 0
        for d in digits {
            let v: UInt8
            switch d {
            case 0x30...0x39: v = d - 0x30
            case 0x61...0x66: v = d - 0x61 + 10
            case 0x41...0x46: v = d - 0x41 + 10
            default: return nil
            }
            size = size << 4 | Int(v)
        }
        return size
    }

    /// Where the status line and headers end (the index of their last line's end), and where
    /// what follows them begins: at the first empty line (CRLF CRLF, or a bare LF LF).
    static func endOfHead(_ bytes: [UInt8], from start: Int) -> (Int, Int)? {
        var i = start
        while let lf = bytes[i...].firstIndex(of: 0x0A) {
            if lf + 1 < bytes.count, bytes[lf + 1] == 0x0A { return (lf, lf + 2) }
            if lf + 2 < bytes.count, bytes[lf + 1] == 0x0D, bytes[lf + 2] == 0x0A { return (lf, lf + 3) }
            if lf + 2 >= bytes.count { return nil }
            i = lf + 1
        }
        return nil
    }

    /// `HTTP/1.x CODE [REASON]` (a CR at its end allowed): whether it is HTTP/1.1, and the code; or nil.
    static func parseStatusLine(_ line: ArraySlice<UInt8>) -> (Bool, Int)? {
        let l = Array(line.last == 0x0D ? line.dropLast() : line)
        guard l.count >= 12, Array(l[0..<7]) == Array("HTTP/1.".utf8), l[7] == 0x30 || l[7] == 0x31, l[8] == 0x20,
              l[9...11].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), l.count == 12 || l[12] == 0x20 else { return nil }
        return (l[7] == 0x31, Int(l[9] - 0x30) * 100 + Int(l[10] - 0x30) * 10 + Int(l[11] - 0x30))
    }

    /// The lines of `bytes` (LF or CRLF), without their ends.
    static func lines(_ bytes: ArraySlice<UInt8>) -> [String] {
        bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map {
            String(decoding: $0.last == 0x0D ? $0.dropLast() : $0, as: UTF8.self)
        }
    }

    /// The answer as a report shows it: its status line and headers, then the first bytes
    /// of its body, so that an answer SimKit cannot use is seen for what it is (a login page,
    /// a proxy's error, a body that is not JSON).
    package static func evidence(head: [String], body: ArraySlice<UInt8>, bodyBytes: Int) -> [String] {
        let shown = 300
        var out = head.prefix(24).map { String($0.prefix(200)) }
        if head.count > 24 { out.append("… (\(head.count - 24) more header lines)") }
        let text = String(decoding: body.prefix(shown), as: UTF8.self)
        let flat = text.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
        out.append(bodyBytes == 0 ? "(no body)" : "(body, \(bodyBytes) bytes\(bodyBytes > shown ? ", the first \(shown)" : "")) \(flat)")
        return out
    }

    /// `evidence` of the raw bytes received: the status line and headers when they came
    /// whole, then what followed them; or the first bytes, when nothing reads as a head.
    package static func evidence(of bytes: [UInt8]) -> [String] {
        if let (headEnd, next) = endOfHead(bytes, from: 0) {
            let firstEnd = bytes[..<headEnd].firstIndex(of: 0x0A) ?? headEnd
            if parseStatusLine(bytes[..<firstEnd]) != nil {
                return evidence(head: lines(bytes[..<headEnd]), body: bytes[next...], bodyBytes: bytes.count - next)
            }
        }
        if bytes.isEmpty { return ["(nothing)"] }
        let shown = 300
        let text = String(decoding: bytes.prefix(shown), as: UTF8.self)
            .replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
        return ["(\(bytes.count) bytes\(bytes.count > shown ? ", the first \(shown)" : ""), no HTTP status line and headers) \(text)"]
    }
}
