import Foundation
import Testing
import SimKit
import Scenarios
import ScenarioSearch
import ServerWire
import SimKitTestSupport

/// Node.js for the tests that run a service in Node's own `http` module: `SIMKIT_NODE`,
/// or `node` (or `nodejs`) on the PATH (`.ci/run` installs Debian's `nodejs` when missing).
enum NodeJS {
    static let path: String? = {
        if let given = ProcessInfo.processInfo.environment["SIMKIT_NODE"], FileManager.default.isExecutableFile(atPath: given) { return given }
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        for name in ["node", "nodejs"] {
            for dir in dirs where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") { return "\(dir)/\(name)" }
        }
        return nil
    }()
}

extension Trait where Self == ConditionTrait {
    /// Runs where Node.js is found, and always under `CI=true`, where a missing Node fails
    /// the test instead of skipping it (as the browser test does).
    static var needsNode: Self {
        .enabled(if: NodeJS.path != nil || HeadlessBrowser.inCI,
                 "skipped: no Node.js (apt-get install nodejs, or set SIMKIT_NODE); under CI=true this test runs and fails instead")
    }
}

/// A service from Tests/WireFixtures started for a test: it listens on a free port and
/// prints `listening on URL` on its standard output; stopped (SIGKILL) by `stop()`.
final class WireService {
    let process = Process()
    let url: String

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: PackageRoot.path)
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line, within 20 s (an interpreter starting on a loaded machine).
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        let handle = out.fileHandleForReading
        while !text.contains("\n"), Date() < deadline, process.isRunning {
            var p = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 100) > 0 {
                let data = handle.availableData
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
            }
        }
        guard let line = text.split(separator: "\n").first, let at = line.range(of: "http://") else {
            kill(process.processIdentifier, SIGKILL)
            throw ServiceError(text: "\(executable) \(arguments) did not say where it listens: \(text.debugDescription)")
        }
        url = String(line[at.lowerBound...])
    }

    struct ServiceError: Error, CustomStringConvertible { var text: String; var description: String { text } }

    func stop() {
        // SIGKILL: a child of the test process may start with SIGTERM blocked.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    static func python(_ fixture: String, _ arguments: [String] = []) throws -> WireService {
        try WireService("/usr/bin/env", ["python3", PackageRoot.path + "/Tests/WireFixtures/" + fixture] + arguments)
    }
}

/// HTTP as services speak it: the answer reader on every framing HTTP/1.x allows, and
/// real services with their stacks' defaults (Node's `http`, chunked and kept alive;
/// Python's `http.server`, HTTP/1.0 closed after each answer) under `simkit fuzz`.
@Suite("Server on the wire: HTTP as services speak it", .serialized)
struct ServerWireHTTPTests {
    static let limit = 1 << 20

    static func read(_ text: String, closed: Bool = false) -> HTTPAnswer.Read {
        HTTPAnswer.read(Array(text.utf8), closed: closed, bodyLimit: limit)
    }

    static func body(_ r: HTTPAnswer.Read) -> String? {
        if case .answer(let a) = r { return String(decoding: a.body, as: UTF8.self) }
        return nil
    }

    /// Every framing, read whole and read from every prefix: each prefix short of the end
    /// needs more, the whole is the answer, and the bytes it took are counted exactly.
    @Test("the answer reader: Content-Length, chunked with extensions and trailers, 1xx first, the close, HTTP/1.0, bare LF")
    func framings() {
        let cases: [(String, String, Bool, Bool)] = [   // answer, body, keep-alive, needs the close
            ("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"a\":1}", "{\"a\":1}", true, false),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\n{\"a\r\n4\r\n\":1}\r\n0\r\nX-Done: yes\r\n\r\n", "{\"a\":1}", true, false),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n7\r\n{\"a\":1}\r\n0\r\n\r\n", "{\"a\":1}", true, false),
            ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", "{}", true, false),
            ("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", "{}", false, false),
            ("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}", "{}", true, false),
            ("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", "{}", false, false),
            ("HTTP/1.1 200 OK\nContent-Length: 2\n\n{}", "{}", true, false),
            ("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"a\":1}", "{\"a\":1}", false, true),
            ("HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"a\":1}", "{\"a\":1}", false, true),
            ("HTTP/1.1 204 No Content\r\n\r\n", "", true, false),
        ]
        for (text, body, keepAlive, needsClose) in cases {
            let bytes = Array(text.utf8)
            for n in 0..<bytes.count {
                let r = HTTPAnswer.read(Array(bytes[..<n]), closed: false, bodyLimit: Self.limit)
                #expect(r == .needMore, "\(text.debugDescription) cut at \(n): \(r)")
            }
            let whole = HTTPAnswer.read(bytes, closed: needsClose, bodyLimit: Self.limit)
            guard case .answer(let a) = whole else { Issue.record("\(text.debugDescription): \(whole)"); continue }
            #expect(String(decoding: a.body, as: UTF8.self) == body && a.keepAlive == keepAlive && a.consumed == bytes.count,
                    "\(text.debugDescription): \(a)")
            if needsClose { #expect(HTTPAnswer.read(bytes, closed: false, bodyLimit: Self.limit) == .needMore) }
        }
        // The bytes after an answer are the next one's: it takes only its own.
        guard case .answer(let a) = Self.read("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1") else { Issue.record("no answer"); return }
        #expect(a.consumed == 40 && a.status == 200 && a.headers == ["Content-Length: 2"])
    }

    @Test("what the answer reader refuses, each with its reason; a body past the bound is read no further")
    func refusals() {
        let unreadable: [(String, Bool, String)] = [
            ("<html>Please log in</html>\r\n\r\n", false, "it does not begin with an HTTP/1.x status line"),
            ("HTTP/2 200\r\n\r\n", false, "it does not begin with an HTTP/1.x status line"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, "a chunk size is not a hexadecimal number: \"zz\""),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}xx", false, "a chunk of 2 bytes is not followed by CRLF"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\n{}", false, "its Content-Length is not one whole number"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}", true, "the connection closed after 2 of the 9 bytes its Content-Length announced"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n", true, "the connection closed in the middle of its chunked body"),
            ("HTTP/1.1 200 OK\r\nContent-", true, "the connection closed before the end of the answer's headers"),
            ("HTTP/1.1 101 Switching Protocols\r\n\r\n", false, "it switches protocols"),
            ("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", false, "a header line has no name and colon"),
        ]
        for (text, closed, reason) in unreadable {
            let r = Self.read(text, closed: closed)
            guard case .unreadable(let why, _) = r else { Issue.record("\(text.debugDescription): \(r)"); continue }
            #expect(why.hasPrefix(reason), "\(text.debugDescription): \(why)")
        }
        // Past the bound: said at once from the length, or as soon as the bytes pass it.
        #expect(Self.read("HTTP/1.1 200 OK\r\nContent-Length: 209715200\r\n\r\n") == .tooLong(209_715_200, head: ["HTTP/1.1 200 OK", "Content-Length: 209715200"]))
        let big = String(repeating: "x", count: Self.limit + 1)
        if case .tooLong = Self.read("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + big) {} else { Issue.record("a close-framed body past the bound") }
        if case .tooLong = Self.read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100001\r\n") {} else { Issue.record("a chunk past the bound") }
        if case .tooLong = Self.read("HTTP/1.1 200 OK\r\n" + String(repeating: "X-A: b\r\n", count: 9_000)) {} else { Issue.record("headers past 64 KiB") }
        // How a report shows an answer: status line, headers, the first bytes of the body.
        let shown = HTTPAnswer.evidence(of: Array("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html>\r\nlog in</html>".utf8))
        #expect(shown == ["HTTP/1.1 200 OK", "Content-Type: text/html", "(body, 21 bytes) <html>\\r\\nlog in</html>"], "\(shown)")
        #expect(HTTPAnswer.evidence(of: Array("SSH-2.0-OpenSSH\r\n".utf8)) == ["(17 bytes, no HTTP status line and headers) SSH-2.0-OpenSSH\\r\\n"])
    }

    /// A raw service answering in every framing in turn (Tests/WireFixtures/http_framings.py):
    /// fuzz seeds in batches and in lock step pass, as on the example server.
    @Test("a service answering in every framing in turn passes fuzz seeds, in batches and in lock step")
    func everyFraming() throws {
        for flags in [[], ["--no-batch"]] {
            let service = try WireService.python("http_framings.py", flags)
            defer { service.stop() }
            for seed: UInt64 in 0..<3 {
                var options = GeneratorOptions(maxDevicesPerGroup: 8, maxDurationDays: 20)
                options.server = .http(service.url)
                let r = Fuzz.run(seed: seed, options: options, cores: SDKCores()).0
                #expect(r.passed && r.events > 0, "\(flags), seed \(seed): \(r.broken) \(r.firstViolation ?? "")")
            }
            #expect(WireSession.onThisThread(.http(service.url)).batches == flags.isEmpty)
        }
    }

    /// A connection closed after each answer is opened again for the next message; one the
    /// service closed while idle (as Node does after 5 s) too, without losing the message.
    @Test("a connection closed after each answer, or closed by the service while idle, is opened again for the next message")
    func reconnects() throws {
        let closing = try WireService.python("http_framings.py", ["close"])
        defer { closing.stop() }
        let t = try HTTPTransport(url: closing.url)
        for seq in 0..<4 {
            let reply = t.exchange("{\"op\":\"hello\",\"seq\":\(seq),\"protocol\":1,\"client\":\"simkit\"}", timeout: 5)
            guard case .success(let bytes) = reply else { Issue.record("message \(seq): \(reply)"); return }
            #expect(WireJSON.parse(ArraySlice(bytes))?["re"]?.uint == UInt64(seq))
        }
        #expect(t.connections == 4)
        let idle = try WireService.python("http_framings.py", ["length", "--idle-close-ms", "100"])
        defer { idle.stop() }
        let u = try HTTPTransport(url: idle.url)
        for seq in 0..<3 {
            let reply = u.exchange("{\"op\":\"hello\",\"seq\":\(seq),\"protocol\":1,\"client\":\"simkit\"}", timeout: 5)
            guard case .success(let bytes) = reply else { Issue.record("message \(seq): \(reply)"); return }
            #expect(WireJSON.parse(ArraySlice(bytes))?["re"]?.uint == UInt64(seq))
            Thread.sleep(forTimeInterval: 0.4)   // the service closes the idle connection meanwhile
        }
        #expect(u.connections == 3)
    }

    /// A captive portal's 200 login page is no reply: reported for what it is.
    @Test("an answer that is not the protocol's (a portal's login page) is reported with its status line, headers and first bytes")
    func portal() throws {
        let service = try WireService.python("http_framings.py", ["--portal"])
        defer { service.stop() }
        var options = GeneratorOptions(maxDevicesPerGroup: 5, maxDurationDays: 10)
        options.server = .http(service.url)
        let r = Fuzz.run(seed: 1, options: options, cores: SDKCores()).0
        #expect(r.broken == ["server-protocol"], "\(r.broken)")
        let text = r.firstViolation ?? ""
        for part in ["server-protocol: the body of the HTTP answer is not a JSON object (message 2 to http://",
                     "  HTTP answer:\n    HTTP/1.1 200 OK\n    Content-Type: text/html\n    Transfer-Encoding: chunked\n",
                     "    (body, 78 bytes) <html><head><title>Hotel Wi-Fi</title>",
                     "  messages: "] {
            #expect(text.contains(part), "no \(part.debugDescription) in:\n\(text)")
        }
    }

    /// A body of 200 MiB in one-byte chunks: refused at the bound, framing counted.
    @Test("a chunked body past the bound (200 MiB in one-byte chunks) is a server-protocol verdict, read no further than the bound")
    func hugeChunkedBody() throws {
        let service = try WireService.python("http_framings.py", ["--huge"])
        defer { service.stop() }
        var options = GeneratorOptions(maxDevicesPerGroup: 5, maxDurationDays: 10)
        options.server = .http(service.url)
        let r = Fuzz.run(seed: 1, options: options, cores: SDKCores()).0
        let text = r.firstViolation ?? ""
        #expect(r.broken == ["server-protocol"] && text.contains("the body of the HTTP answer is longer than 1048576 bytes ("), "\(text)")
        let read = text.range(of: "bytes (").flatMap { Int(text[$0.upperBound...].prefix { $0.isNumber }) }
        let n = try #require(read, "\(text)")
        #expect(n <= 2 * ProcessTransport.lineLimit + HTTPAnswer.headLimit + 65_536, "\(n) bytes read")
    }

    /// The hello, `count` times on one transport: the head of each answer as the reader
    /// kept it, and the transport (its connections counted).
    static func hellos(_ url: String, count: Int) throws -> ([[String]], HTTPTransport) {
        let t = try HTTPTransport(url: url)
        var heads: [[String]] = []
        for seq in 0..<count {
            let reply = t.exchange("{\"op\":\"hello\",\"seq\":\(seq),\"protocol\":1,\"client\":\"simkit\"}", timeout: 5)
            guard case .success(let bytes) = reply, WireJSON.parse(ArraySlice(bytes))?["re"]?.uint == UInt64(seq) else {
                Issue.record("hello \(seq) on \(url): \(reply)")
                break
            }
            heads.append(t.answerEvidence())
        }
        return (heads, t)
    }

    /// Python's `http.server` with its defaults: HTTP/1.0, no Content-Length, the
    /// connection closed after every answer; and as HTTP/1.1 with a `Connection: close`
    /// header and no length, the body ending at the close (Tests/WireFixtures/python_http_server.py).
    @Test("simkit fuzz passes on Python's http.server: its defaults (HTTP/1.0, no Content-Length, closed) and HTTP/1.1 with Connection: close",
          arguments: [[], ["--close"]])
    func pythonHTTPServer(flags: [String]) throws {
        let service = try WireService.python("python_http_server.py", flags)
        defer { service.stop() }
        // The form is the one named, and each answer took a connection of its own.
        let (heads, t) = try Self.hellos(service.url, count: 3)
        for head in heads {
            #expect(head.first == (flags.isEmpty ? "HTTP/1.0 200 OK" : "HTTP/1.1 200 OK") && !head.contains { $0.hasPrefix("Content-Length") }
                    && head.contains("Connection: close") == !flags.isEmpty, "\(head)")
        }
        #expect(t.connections == 3)
        let out = NSTemporaryDirectory() + "simkit-wire-pyhttp-\(getpid())"
        let r = try SimkitProcess.run(["fuzz", "--seeds", "20", "--jobs", "2", "--devices", "10", "--quiet", "--out", out, "--server", service.url])
        #expect(r.status == 0 && r.stdout.contains("20 of 20 seeds") && r.stdout.contains("no invariant broken"), "\(r.stdout)\(r.stderr)")
    }

    /// Node's `http` module with its defaults: chunked replies on kept-alive connections;
    /// and with `--mixed`, every form Node's API gives a reply in turn: a `100 Continue`
    /// and a `102` first, a Content-Length, a `Connection: close` with the body ending at
    /// the close (Tests/WireFixtures/node_http_server.js, relaying to `simkit serve-reference`).
    @Test("simkit fuzz passes on Node's http module: its defaults (chunked, kept alive), and 100 Continue, Content-Length and Connection: close in turn",
          .needsNode, arguments: [[], ["--mixed"]])
    func nodeHTTPServer(flags: [String]) throws {
        let node = try #require(NodeJS.path, "no Node.js: apt-get install nodejs (or set SIMKIT_NODE)")
        let service = try WireService(node, [PackageRoot.path + "/Tests/WireFixtures/node_http_server.js"] + flags + [SimkitProcess.binary, "serve-reference"])
        defer { service.stop() }
        // Each form for real, before the campaign turns the service's counter: the reader
        // saw it, and a connection closed after its answer was opened again.
        let (heads, t) = try Self.hellos(service.url, count: 8)
        let forms = flags.isEmpty ? Array(repeating: "chunked", count: 8) : ["chunked", "continue", "length", "close", "chunked", "continue", "length", "close"]
        for (head, form) in zip(heads, forms) {
            #expect(head.contains("Transfer-Encoding: chunked") == (form == "chunked" || form == "continue")
                    && head.contains { $0.hasPrefix("Content-Length: ") } == (form == "length")
                    && head.contains("Connection: close") == (form == "close")
                    && (flags.isEmpty || head.contains("X-Form: \(form)")), "\(form): \(head)")
        }
        #expect(heads.count == 8 && t.connections == (flags.isEmpty ? 1 : 2), "\(t.connections) connections")
        t.close()
        let out = NSTemporaryDirectory() + "simkit-wire-nodehttp-\(getpid())"
        let r = try SimkitProcess.run(["fuzz", "--seeds", "20", "--jobs", "2", "--devices", "10", "--quiet", "--out", out, "--server", service.url])
        #expect(r.status == 0 && r.stdout.contains("20 of 20 seeds") && r.stdout.contains("no invariant broken"), "\(r.stdout)\(r.stderr)")
    }

    /// The campaigns: the default device count and duration, a few hundred seeds each.
    @Test("simkit fuzz: 200 seeds on Node's http (chunked; every form in turn) and on Python's http.server (HTTP/1.0 closed; HTTP/1.1 Connection: close), nothing broken",
          .tags(.slow), .slowTier, .needsNode)
    func campaigns() throws {
        let node = try #require(NodeJS.path, "no Node.js: apt-get install nodejs (or set SIMKIT_NODE)")
        let out = NSTemporaryDirectory() + "simkit-wire-http-slow-\(getpid())"
        let script = PackageRoot.path + "/Tests/WireFixtures/node_http_server.js"
        for service in [try WireService(node, [script, SimkitProcess.binary, "serve-reference"]),
                        try WireService(node, [script, "--mixed", SimkitProcess.binary, "serve-reference"]),
                        try WireService.python("python_http_server.py"), try WireService.python("python_http_server.py", ["--close"])] {
            defer { service.stop() }
            let r = try SimkitProcess.run(["fuzz", "--seeds", "200", "--jobs", "2", "--quiet", "--out", out, "--server", service.url])
            #expect(r.status == 0 && r.stdout.contains("200 of 200 seeds") && r.stdout.contains("no invariant broken"), "\(r.stdout)\(r.stderr)")
        }
    }
}
