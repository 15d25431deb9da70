import Foundation
import Testing
import SimKit
import Scenarios
import ScenarioSearch
import ServerWire
import SimKitTestSupport

/// What a server that fails costs and tells: its last error whole, the messages that led
/// there in a file that replays them, a reply line read no further than its bound, and a
/// campaign that stops within a second of a signal whatever the server does.
@Suite("Server on the wire: reports, bounds and stops", .serialized)
struct ServerWireReportsTests {
    static func fixture(_ name: String) -> String { "python3 " + PackageRoot.path + "/Tests/WireFixtures/" + name }

    /// The last error of standard error, for the stacks a backend is written in: the
    /// exception's message is always shown, however long its stack.
    @Test("the last error of standard error: a Python, Node, Java, Go exception whole with its message; a long one cut in the middle")
    func lastError() {
        let python = """
        listening
        Traceback (most recent call last):
          File "server.py", line 9, in <module>
            main()
          File "server.py", line 5, in main
            raise KeyError("app 3")
        KeyError: 'app 3'
        """
        #expect(StderrTail.lastError(in: "earlier noise\n" + python + "\n\n") == Array(python.split(separator: "\n").dropFirst().map(String.init)))
        let node = """
        listening on 8035
        /srv/app/server.js:41
            const row = db.apps[m.app].disabled;
                                       ^

        TypeError: Cannot read properties of undefined (reading 'disabled')
            at Server.disable (/srv/app/server.js:41:32)
            at Server.message (/srv/app/server.js:90:21)
            at Interface.<anonymous> (/srv/app/server.js:120:30)

        Node.js v20.20.2
        """
        let shownNode = StderrTail.lastError(in: node)
        #expect(shownNode.first == "/srv/app/server.js:41" && shownNode.contains("TypeError: Cannot read properties of undefined (reading 'disabled')")
                && shownNode.last == "Node.js v20.20.2", "\(shownNode)")
        // Logged without the source line (console.error(err)): the message and its frames.
        let logged = StderrTail.lastError(in: "a\nb\nError: boom\n    at f (x.js:1:1)\n    at g (x.js:2:1)\n")
        #expect(logged == ["Error: boom", "    at f (x.js:1:1)", "    at g (x.js:2:1)"], "\(logged)")
        let java = """
        INFO started
        Exception in thread "main" java.lang.IllegalStateException: wrapped
        \tat Server.handle(Server.java:10)
        \t... 3 more
        Caused by: java.sql.SQLException: no such table: apps
        \tat Db.query(Db.java:5)
        """
        #expect(StderrTail.lastError(in: java).first == "Exception in thread \"main\" java.lang.IllegalStateException: wrapped")
        let go = "ok\npanic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.handle(...)\n\t/srv/main.go:12 +0x1d\n"
        #expect(StderrTail.lastError(in: go).first == "panic: runtime error: index out of range [3] with length 3")
        // Nothing recognised: the last lines. A very long error: its start and its end.
        let plain = (1...50).map { "line \($0)" }.joined(separator: "\n")
        #expect(StderrTail.lastError(in: plain) == (31...50).map { "line \($0)" })
        let deep = "Traceback (most recent call last):\n" + (1...200).map { "  File \"s.py\", line \($0), in f\n    f()" }.joined(separator: "\n")
            + "\nRecursionError: maximum recursion depth exceeded"
        let shownDeep = StderrTail.lastError(in: deep)
        #expect(shownDeep.count == StderrTail.maxLines && shownDeep.first == "Traceback (most recent call last):"
                && shownDeep.last == "RecursionError: maximum recursion depth exceeded" && shownDeep.contains("… (343 lines left out) …"),
                "\(shownDeep.count) \(shownDeep.suffix(3))")
    }

    /// A Python server that dies of an exception after logging 30 lines: the report shows
    /// the exception (not 8 lines of log), and the messages file, piped back into the same
    /// server, ends it the same way.
    @Test("a crash report keeps the exception's message; the messages that led there replay the crash when piped into the server")
    func crashReport() throws {
        let dir = NSTemporaryDirectory() + "simkit-wire-crash-\(getpid())"
        WireSession.messagesDirectory = dir
        defer { WireSession.messagesDirectory = NSTemporaryDirectory() + "simkit-server-\(getpid())" }
        let command = Self.fixture("raises.py")
        WireSession.onThisThread(.process(command)).timeout = 5
        var options = GeneratorOptions(maxDevicesPerGroup: 5, maxDurationDays: 10)
        options.server = .process(command)
        let r = Fuzz.run(seed: 1, options: options, cores: SDKCores()).0
        #expect(r.broken == ["server-exited"])
        let text = r.firstViolation ?? ""
        #expect(text.contains("the server exited with status 1 before it replied (message 2 to process:"), "\(text)")
        #expect(text.contains(" lines):\n    Traceback (most recent call last):\n"), "\(text)")
        #expect(text.contains("    ValueError: raises: the disable of app 0 is not in table apps\n"), "\(text)")
        #expect(!text.contains("raises: log line"), "the log before the error is not the error:\n\(text)")
        let file = try #require(text.range(of: "messages: ").map { text[$0.upperBound...].prefix { $0 != " " } }.map(String.init), "\(text)")
        #expect(file.hasPrefix(dir + "/server-messages-") && text.contains("(3 lines: the hello, then this world's from its reset; to run them again: "))
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3 && lines[0].hasPrefix("{\"op\":\"hello\",\"seq\":0") && lines[1].hasPrefix("{\"op\":\"reset\",\"seq\":1")
                && lines[2].hasPrefix("{\"op\":\"request\",\"seq\":2"), "\(lines)")
        // Piped back in: the same crash.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "\(command) < '\(file)'"]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 1 && said.contains("ValueError: raises: the disable of app 0 is not in table apps"), "\(said)")
    }

    /// A Node server that dies of an uncaught TypeError 12 calls deep after logging 30
    /// lines: Node writes the source line, the message, ten frames and its version, so the
    /// last 8 lines were frames and the version; the report shows the error from its
    /// `FILE:LINE` to the end, message included, and none of the log.
    @Test("a Node crash report keeps the error's FILE:LINE, its message and its frames, not the log before it", .needsNode)
    func nodeCrashReport() throws {
        let node = try #require(NodeJS.path, "no Node.js: apt-get install nodejs (or set SIMKIT_NODE)")
        let command = "\(node) \(PackageRoot.path)/Tests/WireFixtures/node_raises.js"
        let r = ServerWireTests.seed(1, command)
        #expect(r.broken == ["server-exited"], "\(r.broken)")
        let text = r.firstViolation ?? ""
        #expect(text.contains("the server exited with status 1 before it replied (message 2 to process:"), "\(text)")
        #expect(text.contains(" lines):\n    \(PackageRoot.path)/Tests/WireFixtures/node_raises.js:10\n"), "\(text)")
        #expect(text.contains("\n    TypeError: Cannot read properties of undefined (reading 'disabled')\n"), "\(text)")
        #expect(text.contains("\n        at deep (") && text.contains("\n    Node.js v"), "\(text)")
        #expect(!text.contains("node_raises: log line"), "the log before the error is not the error:\n\(text)")
    }

    /// A 200 MiB reply line: refused at the bound, never read whole.
    @Test("a reply line past the bound (200 MiB) is a server-protocol verdict, read no further than the bound")
    func hugeLine() throws {
        let start = Date()
        let r = ServerWireTests.seed(2, Self.fixture("huge_line.py"))
        #expect(r.broken == ["server-protocol"], "\(r.broken)")
        let text = r.firstViolation ?? ""
        #expect(text.contains("server-protocol: the reply is longer than 1048576 bytes ("), "\(text)")
        // How much was read: at most the bound and one read more.
        let read = text.range(of: "bytes (").flatMap { Int(text[$0.upperBound...].prefix { $0.isNumber }) }
        let n = try #require(read, "\(text)")
        #expect(n > ProcessTransport.lineLimit && n <= ProcessTransport.lineLimit + 65_536, "\(n) bytes read")
        #expect(Date().timeIntervalSince(start) < 10)
    }

    /// The peak memory of `simkit ARGS` (and of the processes it started and waited for),
    /// in KiB, with its exit status and output: run under a Python wrapper that reads its
    /// children's `ru_maxrss`.
    static func peakMemory(_ args: [String]) throws -> (kib: Int, status: Int32, output: String) {
        let wrapper = "import resource, subprocess, sys\n"
            + "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            + "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)\n"
            + "print(r.stdout + r.stderr)\n"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", wrapper, SimkitProcess.binary] + args
        p.currentDirectoryURL = URL(fileURLWithPath: PackageRoot.path)
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let first = text.prefix { $0 != "\n" }.split(separator: " ")
        let kib = try #require(first.first.flatMap { Int($0) }, "\(text)")
        return (kib, Int32(first.last ?? "") ?? -1, text)
    }

    /// The issue's figure: a 200 MB reply line was read whole, 424 MB at the peak. A
    /// campaign on servers answering every request so, over stdio (one line) and over HTTP
    /// (one-byte chunks), stays under 100 MB: each reply is read to its bound and no further.
    @Test("simkit fuzz on servers answering 200 MiB replies (a line, one-byte chunks) peaks under 100 MB of memory")
    func hugeRepliesPeakMemory() throws {
        let out = NSTemporaryDirectory() + "simkit-wire-huge-\(getpid())"
        let common = ["fuzz", "--seeds", "4", "--jobs", "2", "--devices", "8", "--quiet", "--out", out]
        let line = try Self.peakMemory(common + ["--server", "process:" + Self.fixture("huge_line.py")])
        #expect(line.status == 1 && line.output.contains("server-protocol"), "\(line.output)")
        #expect(line.kib < 100_000, "stdio: \(line.kib) KiB at the peak")
        let service = try WireService.python("http_framings.py", ["--huge"])
        defer { service.stop() }
        let http = try Self.peakMemory(common + ["--server", service.url])
        #expect(http.status == 1 && http.output.contains("server-protocol"), "\(http.output)")
        #expect(http.kib < 100_000, "HTTP: \(http.kib) KiB at the peak")
    }

    /// A server that answers each message after a second, within the bound: a SIGTERM stops
    /// the campaign at once, the seeds in flight counted as not run, the JSON written.
    @Test("SIGTERM stops a campaign on a slow server within a second: exit 3, the seeds in flight not run, the JSON written",
          arguments: [SIGTERM, SIGINT])
    func signalStopsASlowServer(sig: Int32) throws {
        try Self.stop(sig, server: "process:" + Self.fixture("slow.py") + " 8")
    }

    /// The same over HTTP: Python's http.server answering each message 8 s late, on a
    /// thread a connection: every wait of the HTTP client (connect, send, the answer) ends too.
    @Test("SIGTERM stops a campaign on a slow HTTP service within a second: exit 3, the seeds in flight not run, the JSON written")
    func signalStopsASlowHTTPService() throws {
        let service = try WireService.python("python_http_server.py", ["--slow", "8"])
        defer { service.stop() }
        try Self.stop(SIGTERM, server: service.url)
    }

    /// Starts a 6-seed campaign on `server` (which answers each message 8 s late, the reply
    /// bound raised to 20 s), sends `sig` once both jobs wait in the middle of a world, and
    /// checks the stop: within 3 s (a stop that waited for the reply in flight would take
    /// 5 s or more), exit 3, no seed run, the JSON written.
    static func stop(_ sig: Int32, server: String) throws {
        let json = try freshPath("wire-stop-\(sig)-\(server.hasPrefix("http") ? "http" : "process").json")
        let run = try LiveSimkit(["fuzz", "--seeds", "6", "--jobs", "2", "--json", json, "--out", NSTemporaryDirectory() + "simkit-wire-stop",
                                  "--server", server], environment: ["SIMKIT_SERVER_TIMEOUT": "20s"])
        Thread.sleep(forTimeInterval: 2.5)   // both servers started, each in the middle of a world
        let sent = Date()
        kill(run.process.processIdentifier, sig)
        let status = run.waitForExit(timeout: 30)
        let took = Date().timeIntervalSince(sent)
        #expect(status == 3, "exit \(String(describing: status)): \(run.stdout)\(run.stderrText)")
        #expect(took < 3, "the stop took \(took) s")
        #expect(run.stdout.contains("INCOMPLETE: stopped by \(sig == SIGTERM ? "SIGTERM" : "SIGINT"); 6 seeds of 6 not run"), "\(run.stdout)")
        let object = try jsonObject(json)
        #expect(object["interrupted"] as? Bool == true && object["seedsRun"] as? Int == 0, "\(object)")
        #expect((object["results"] as? [Any])?.isEmpty == true)
    }
}
