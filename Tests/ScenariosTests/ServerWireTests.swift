import Foundation
import Testing
import SimKit
import ScenarioLanguage
import Scenarios
import ScenarioSearch
import SimKitTesting
import ServerWire
import SimKitTestSupport

/// A server in any language under SimKit: the wire protocol (docs/server-protocol.md) over
/// a child process, the Python example server that keeps every S rule, and hostile servers
/// (Tests/WireFixtures) that each get a verdict of their own within the reply bound.
@Suite("Server on the wire", .serialized)
struct ServerWireTests {
    static let python = "python3 " + PackageRoot.path + "/Examples/PythonServer/server.py"
    static func fixture(_ name: String) -> String { "python3 " + PackageRoot.path + "/Tests/WireFixtures/" + name }

    /// Fuzz seed `seed` on the server `command`, as `simkit fuzz --server process:CMD` runs it,
    /// with the reply bound `timeout` on this thread's session.
    static func seed(_ seed: UInt64, _ command: String, timeout: Double = 5, devices: UInt64 = 8,
                     checkDeterminism: Bool = false) -> SeedResult {
        WireSession.onThisThread(.process(command)).timeout = timeout
        var options = GeneratorOptions(maxDevicesPerGroup: devices, maxDurationDays: 20)
        options.server = .process(command)
        return checkDeterminism
            ? Fuzz.run(seed: seed, options: options, cores: SDKCores(), checkDeterminism: true).0
            : Fuzz.run(seed: seed, options: options, cores: SDKCores()).0
    }

    @Test("the JSON reader reads what servers write and refuses what is not JSON")
    func json() throws {
        let j = try #require(WireJSON.parse(#"{"re":3,"status":"ok","servedAt":12,"record":{"owner":0,"generation":2},"x":[1,-2.5e3,null,true],"s":"a\"\u00e9"}"#))
        #expect(j["re"]?.uint == 3 && j["status"]?.string == "ok" && j["record"]?["generation"]?.uint == 2)
        #expect(j["s"]?.string == "a\"é")
        #expect(j["x"] == .array([.number("1"), .number("-2.5e3"), .null, .bool(true)]))
        for bad in ["", "{", "{status: ok", "{\"a\":1}x", "[1,]", "nul", "{\"a\" 1}"] { #expect(WireJSON.parse(bad) == nil, "\(bad)") }
        #expect(WireJSON.quote("a\"b\\\n") == #""a\"b\\\n""#)
    }

    @Test("the Python example server keeps every rule: fuzz seeds over stdio break nothing")
    func pythonServerPasses() {
        for s: UInt64 in 0..<4 {
            let r = Self.seed(s, Self.python)
            #expect(r.passed, "seed \(s): \(r.broken) \(r.firstViolation ?? "")")
            #expect(r.events > 0)
        }
    }

    /// S10 on the wire: at a restart the process is killed and started again with the same
    /// command and data directory (`SIMKIT_DATA_DIR`), and comes back from what it stored.
    /// Default seed 8 restarts the server after acknowledged actions: the Python example
    /// (SQLite in that directory) and the reference behind the wire (its journal there) pass
    /// it, in batches and in lock step; the Python example with its state in memory, and the
    /// reference with no data directory, do not.
    @Test("a server restart kills the process and starts it again on its data directory; a server that keeps its state in memory is caught (S10)")
    func restartsOnTheWire() {
        func run(_ command: String) -> SeedResult {
            var options = GeneratorOptions()
            options.server = .process(command)
            return Fuzz.run(seed: 8, options: options, cores: SDKCores()).0
        }
        let script = ScenarioGenerator.generate(seed: 8, options: .init())
        #expect(ScenarioPrinter.print(script).contains("server restart"), "default seed 8 no longer restarts the server")
        let reference = SimkitProcess.binary + " serve-reference"
        for command in [Self.python, Self.python + " --no-batch", reference, reference + " --no-batch"] {
            let r = run(command)
            #expect(r.passed, "\(command): \(r.broken) \(r.firstViolation ?? "")")
        }
        let forgetful = run(Self.python + " --bug state-in-memory")
        // What it forgot may also show as another rule broken after the restart (a key it
        // rotated out is current again: rotation-grace), but S10 is named.
        #expect(forgetful.broken.contains("server-restart-loses-nothing"), "\(forgetful.broken) \(forgetful.firstViolation ?? "")")
        // The reference behind the wire with no data directory comes back empty: a request
        // naming a key it never heard of ends it.
        #expect(!run("env -u SIMKIT_DATA_DIR " + reference).passed)
    }

    /// A world on a server that announced batches runs ahead of its replies; every reply is
    /// checked at the end, and a world whose replies were not the reference's answers runs
    /// again in lock step. So batches change no result: the same verdicts, fingerprints and
    /// events as one message a round trip, for a server that keeps the rules and for one
    /// with a planted bug (whose failing seeds are the ones run again).
    @Test("batches change nothing: the same verdicts, fingerprints and events as lock step, planted bugs included")
    func batchesChangeNothing() {
        // Seeds 5 and 17 are where plain fuzzing first catches the two planted bugs
        // (docs/server-protocol.md): there the batches do not hold and the world runs again.
        for (command, seeds) in [(Self.python, [0, 1, 2, 3] as [UInt64]),
                                 (Self.python + " --bug enable-lifts-rollup", [16, 17]),
                                 (Self.python + " --bug disable-spares-grace-keys", [4, 5])] {
            let session = WireSession.onThisThread(.process(command))
            let (ahead, again) = (session.worldsAhead, session.worldsRunAgain)
            var broken: UInt64 = 0
            for s in seeds {
                var options = GeneratorOptions()
                options.server = .process(command)
                let batched = Fuzz.run(seed: s, options: options, cores: SDKCores()).0
                options.server = .process(command + " --no-batch")
                let lockStep = Fuzz.run(seed: s, options: options, cores: SDKCores()).0
                #expect(batched.fingerprint == lockStep.fingerprint && batched.events == lockStep.events
                        && batched.broken == lockStep.broken && batched.firstViolation == lockStep.firstViolation,
                        "\(command) seed \(s): \(batched.broken) \(batched.fingerprint) vs \(lockStep.broken) \(lockStep.fingerprint)")
                if !batched.passed { broken += 1 }
            }
            #expect(session.batches && session.worldsAhead - ahead == UInt64(seeds.count), "\(command): the worlds did not run ahead")
            #expect(WireSession.onThisThread(.process(command + " --no-batch")).batches == false)
            // A planted bug breaks its seed: that world's batches did not hold, and it ran again.
            #expect(broken == (command == Self.python ? 0 : 1) && session.worldsRunAgain - again == broken,
                    "\(command): \(broken) broken, \(session.worldsRunAgain - again) run again")
        }
    }

    /// A world on the wire holds a connection: a fork would share the process.
    @Test("forking a world whose server is on the wire stops the tool: exit 2 and the reason")
    func forkRefused() async throws {
        let result = await #expect(processExitsWith: .exitCode(2), observing: [\.standardErrorContent]) {
            let world = SimWorld<ReferenceSDK, WireServer, NoObserver>(setup: StandardWorkload.setup(seed: 1, devices: 2, days: 1),
                                                                      observer: NoObserver())
            _ = world.fork()
        }
        let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(stderr.contains("error: cannot fork this world: its server is on the wire (a process or a service), whose state cannot be copied"),
                "\(stderr)")
    }

    /// A server mutant plants its bug in the reference server, which a server on the wire
    /// replaces: asking for both is bad input, never the wire server run under the mutant's name.
    @Test("a server mutant with a server on the wire, mutants or explore with --server: bad input, exit 2, with the reason")
    func serverMutantsRefuseTheWire() throws {
        let wire = "process:" + Self.python
        for argv in [["fuzz", "--seeds", "1", "--sdk", "mutant:enable-lifts-rollup", "--server", wire],
                     ["replay", "3", "--sdk", "mutant:grace-one-day-late", "--server", wire],
                     ["fingerprint", "--devices", "5", "--days", "2", "--sdk", "mutant:enable-lifts-rollup", "--server", wire],
                     ["run", "--server", wire, PackageRoot.path + "/scenarios/mutant-enable-lifts-rollup.scenario"]] {
            let r = try SimkitProcess.run(argv)
            #expect(r.status == 2 && (r.stdout + r.stderr).contains("a server mutant cannot reach a server on the wire"),
                    "\(argv): \(r.status) \(r.stdout)\(r.stderr)")
        }
        // An SDK mutant's bug is in the SDK: it runs on the wire as on the reference.
        let sdkMutant = try SimkitProcess.run(["fingerprint", "--devices", "5", "--days", "2", "--sdk", "mutant:no-resume-after-unlock", "--server", wire])
        #expect(sdkMutant.status == 0, "\(sdkMutant.stdout)\(sdkMutant.stderr)")
        let mutants = try SimkitProcess.run(["mutants", "--server", wire])
        #expect(mutants.status == 2 && mutants.stderr.contains("mutants takes no --server"), "\(mutants.stderr)")
        let explore = try SimkitProcess.run(["explore", "--server", wire])
        #expect(explore.status == 2 && explore.stderr.contains("explore takes no --server: it forks worlds mid-run"), "\(explore.stderr)")
    }

    @Test("a server that never answers: server-unresponsive within the bound, and the next seed runs")
    func sleeps() {
        let start = Date()
        let first = Self.seed(1, Self.fixture("sleeps.py"), timeout: 0.4)
        let second = Self.seed(2, Self.fixture("sleeps.py"), timeout: 0.4)
        let took = Date().timeIntervalSince(start)
        for r in [first, second] {
            #expect(!r.passed && r.broken == ["server-unresponsive"], "\(r.broken)")
            #expect(r.firstViolation?.contains("no reply line within 400 ms of wall time") == true, "\(r.firstViolation ?? "")")
            #expect(r.firstViolation?.contains("sent:     {\"op\":\"request\",\"seq\":2,") == true, "\(r.firstViolation ?? "")")
        }
        #expect(took < 4, "two seeds with a 0.4 s bound took \(took) s")
    }

    @Test("a server that exits at the third message: server-exited with its status and last stderr; restarted for the next seed")
    func exitsAtThird() {
        for s: UInt64 in 0..<3 {
            let r = Self.seed(s, Self.fixture("exits_at_third.py"))
            #expect(r.broken == ["server-exited"], "\(r.broken)")
            let text = r.firstViolation ?? ""
            #expect(text.contains("the server exited with status 7 before it replied (message 2 to process:"), "\(text)")
            #expect(text.contains("exits_at_third: giving up at message 3"), "\(text)")
        }
    }

    @Test("a server that answers garbage: server-protocol with what was sent and what came back")
    func invalidJSON() {
        let r = Self.seed(3, Self.fixture("invalid_json.py"))
        #expect(r.broken == ["server-protocol"], "\(r.broken)")
        let text = r.firstViolation ?? ""
        #expect(text.contains("server-protocol: the reply is not a JSON object on one line"), "\(text)")
        #expect(text.contains("received: {status: ok"), "\(text)")
    }

    @Test("a valid reply with the wrong status is the checkers' to catch")
    func wrongStatus() {
        let broken = (0..<6).flatMap { Self.seed($0, Self.fixture("wrong_status.py"), devices: 20).broken }
        #expect(broken.contains("server-enforces-access"), "\(broken)")
        #expect(!broken.contains { Fuzz.isServerFailure($0) }, "\(broken)")
    }

    @Test("a server whose replies depend on the wall clock is NONDETERMINISTIC, with the first differing reply")
    func wallClock() throws {
        let found = (0..<4).compactMap { Self.seed($0, Self.fixture("wall_clock.py"), checkDeterminism: true).nondeterminism }
        let n = try #require(found.first, "no seed was found nondeterministic")
        #expect(n.text().contains("server answered check"), "\(n.text())")
        #expect(n.text().contains("the server on the wire answered the same message differently"), "\(n.text())")
    }

    @Test("replies out of the protocol are refused, each with its reason")
    func outOfProtocol() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-wire-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // Each replaces the example server's reply to the first request with a broken one.
        let cases: [(String, String)] = [
            ("out['servedAt'] = m['now'] + 1", "not the message's \"now\""),
            ("out['status'] = 'teapot'", "\"status\" is \"teapot\", not one of ok,"),
            ("del out['record']", "the reply has no \"record\""),
            ("out['re'] = 99", "the reply's \"re\" must be"),
            ("out['status'] = 'app_disabled'; out.pop('stoppedSince', None)", "needs \"stoppedSince\""),
        ]
        for (i, (edit, reason)) in cases.enumerated() {
            let file = dir.appendingPathComponent("broken\(i).py")
            try """
            import sys
            sys.path.insert(0, \(WireJSON.quote(PackageRoot.path + "/Examples/PythonServer")))
            import server
            class Broken(server.Server):
                def message(self, m):
                    out = super().message(m)
                    if m["op"] == "request":
                        \(edit)
                    return out
            server.serve_stdio(Broken())
            """.write(to: file, atomically: true, encoding: .utf8)
            let r = Self.seed(0, "python3 " + file.path)
            #expect(r.broken == ["server-protocol"], "\(edit): \(r.broken)")
            #expect(r.firstViolation?.contains(reason) == true, "\(edit): \(r.firstViolation ?? "")")
        }
    }

    /// A server that announces batches and then fails inside one (it exits, or breaks a
    /// reply) gets the verdict lock step gives it: the world runs again in lock step, on a
    /// fresh process, and that run's message, reply and stderr are the report.
    @Test("a batch server that exits or breaks a reply mid-batch gets the lock step's verdict, word for word")
    func failsInsideABatch() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-wire-batch-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (i, (edit, verdict)) in [("sys.stderr.write('dying at request 40\\n'); sys.stderr.flush(); os._exit(7)", "server-exited"),
                                     ("out['servedAt'] = m['now'] + 1", "server-protocol")].enumerated() {
            let file = dir.appendingPathComponent("fails\(i).py")
            try """
            import os, sys
            sys.path.insert(0, \(WireJSON.quote(PackageRoot.path + "/Examples/PythonServer")))
            import server
            class Fails(server.Server):
                requests = 0
                def message(self, m):
                    out = super().message(m)
                    if m["op"] == "reset":
                        self.requests = 0   # each world the same after its reset, as the protocol asks
                    if m["op"] == "request":
                        self.requests += 1
                        if self.requests == 40:
                            \(edit)
                    return out
            server.serve_stdio(Fails(batch="--no-batch" not in sys.argv))
            """.write(to: file, atomically: true, encoding: .utf8)
            let batched = Self.seed(2, "python3 " + file.path)
            let lockStep = Self.seed(2, "python3 " + file.path + " --no-batch")
            #expect(batched.broken == [verdict] && lockStep.broken == [verdict], "\(batched.broken) \(lockStep.broken)")
            // The same words but the command's own flag.
            #expect(batched.firstViolation == lockStep.firstViolation?.replacingOccurrences(of: " --no-batch", with: "")
                    && batched.fingerprint == lockStep.fingerprint,
                    "batched:\n\(batched.firstViolation ?? "")\nlock step:\n\(lockStep.firstViolation ?? "")")
            #expect(WireSession.onThisThread(.process("python3 " + file.path)).worldsRunAgain == 1)
        }
    }

    @Test("scenario lines: server process and server http, with located errors for bad ones")
    func language() throws {
        let head = "scenario \"w\"\nduration 1d\n"
        let good = ScenarioParser.parse(head + "server process \"python3 s.py --bug x\"\n", file: "a.scenario", context: ScenarioRunner.standardContext)
        #expect(good.scenario?.server == .process("python3 s.py --bug x"), "\(good.rendered)")
        let printed = ScenarioPrinter.print(try #require(good.scenario))
        #expect(printed.contains("server process \"python3 s.py --bug x\"\n"))
        let http = ScenarioParser.parse(head + "server http \"http://127.0.0.1:8035\"\n", file: "b.scenario", context: ScenarioRunner.standardContext)
        #expect(http.scenario?.server == .http("http://127.0.0.1:8035"), "\(http.rendered)")
        for (line, message) in [("server process \"\"", "c.scenario:3:16: error: empty server command"),
                                ("server process python3", "c.scenario:3:16: error: expected quoted command"),
                                ("server http \"ftp://x\"", "c.scenario:3:13: error: invalid server URL \"ftp://x\""),
                                ("server proces \"x\"", "c.scenario:3:8: error: unknown server 'proces'")] {
            let bad = ScenarioParser.parse(head + line + "\n", file: "c.scenario", context: ScenarioRunner.standardContext)
            #expect(bad.hasErrors && bad.rendered.contains(message), "\(line): \(bad.rendered)")
        }
    }

    @Test("the command line: --server process:CMD and http URLs; bad values are bad input; a dead server fails the seed, exit 1")
    func commandLine() throws {
        #expect(try SimkitProcess.run(["fuzz", "--seeds", "1", "--server", "process:"]).status == 2)
        #expect(try SimkitProcess.run(["fuzz", "--seeds", "1", "--server", "http://nope"]).status == 2)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-wire-cli-\(ProcessInfo.processInfo.processIdentifier)").path
        let r = try SimkitProcess.run(["fuzz", "--seeds", "2", "--jobs", "2", "--devices", "5", "--out", out,
                                       "--server", "process:" + Self.fixture("exits_at_third.py")])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("server-exited                        2 seeds (first: 0)"), "\(r.stdout)")
        #expect(r.stdout.contains("replay:     simkit run \(out)/server-exited-seed0.scenario   or   simkit replay 0 --sdk reference --server 'process:python3 "), "\(r.stdout)")
        let stopped = try SimkitProcess.run(["fuzz", "--seeds", "50", "--jobs", "1", "--max-server-failures", "3", "--quiet", "--out", out,
                                             "--server", "process:" + Self.fixture("exits_at_third.py")])
        #expect(stopped.status == 1 && stopped.stdout.contains("3 of 50 seeds")
                && stopped.stdout.contains("stopped by --max-server-failures (3 seeds ended by the server)"), "\(stopped.stdout)")
        let nowhere = try SimkitProcess.run(["fuzz", "--seeds", "1", "--out", out, "--server", "http://127.0.0.1:1"])
        #expect(nowhere.status == 1 && nowhere.stdout.contains("server-exited: the server could not be reached: cannot connect to 127.0.0.1:1"), "\(nowhere.stdout)")
    }

    /// The example keeps the reference's rules so closely that the standard workload's whole
    /// trace is the same: the same fingerprint as the reference server's.
    @Test("simkit fingerprint on the Python example server prints the reference's; on a broken server, its failure and exit 1")
    func fingerprintMatchesTheReference() throws {
        let reference = try SimkitProcess.run(["fingerprint", "--devices", "30", "--days", "10"])
        let python = try SimkitProcess.run(["fingerprint", "--devices", "30", "--days", "10", "--server", "process:" + Self.python])
        #expect(reference.status == 0 && python.status == 0, "\(python.stdout)\(python.stderr)")
        #expect(python.stdout == reference.stdout && reference.stdout.hasPrefix("fingerprint "), "\(python.stdout) vs \(reference.stdout)")
        // The reference itself behind the wire (the bench's ceiling), in batches and in lock step.
        for flags in ["", " --no-batch"] {
            let wired = try SimkitProcess.run(["fingerprint", "--devices", "30", "--days", "10",
                                               "--server", "process:" + SimkitProcess.binary + " serve-reference" + flags])
            #expect(wired.status == 0 && wired.stdout == reference.stdout, "serve-reference\(flags): \(wired.stdout)\(wired.stderr)")
        }
        let broken = try SimkitProcess.run(["fingerprint", "--devices", "5", "--days", "2", "--server", "process:" + Self.fixture("invalid_json.py")])
        #expect(broken.status == 1 && broken.stdout.hasPrefix("server-protocol: "), "\(broken.stdout)")
    }

    /// docs/server-protocol.md shows every line of one short scenario's exchange; it must be
    /// what SimKit and the example server say (regenerate it: see the page).
    @Test("the protocol page's exchanges are what SimKit and the example server send, in lock step and in a batch")
    func documentedExchange() throws {
        let page = try String(contentsOfFile: PackageRoot.path + "/docs/server-protocol.md", encoding: .utf8)
        for (marker, command) in [("exchange: Examples/PythonServer/short.scenario", Self.python + " --no-batch"),
                                  ("exchange, batched: Examples/PythonServer/short.scenario", Self.python)] {
            let session = WireSession.onThisThread(.process(command))
            session.recording = true
            defer { session.recording = false }
            let file = PackageRoot.path + "/Examples/PythonServer/short.scenario"
            let source = try String(contentsOfFile: file, encoding: .utf8)
            let outcome = ScenarioRunner(server: .process(command)).run(file: "short.scenario", source: source)
            #expect(outcome.passed, "\(ScenarioReport.block(outcome))")
            let block = page.components(separatedBy: "<!-- \(marker) -->\n```text\n").dropFirst().first?
                .components(separatedBy: "\n```").first
            let shown = try #require(block, "docs/server-protocol.md has no block '\(marker)'").split(separator: "\n").map(String.init)
            let real = session.transcript.filter { !$0.contains("\"op\":\"hello\"") && !$0.contains("\"server\":\"python-example") }
            #expect(shown == real, "the page shows:\n\(shown.joined(separator: "\n"))\nSimKit sent and got:\n\(real.joined(separator: "\n"))")
        }
    }

    /// The example's CI run: plain fuzzing over stdio and over HTTP breaks nothing, and each
    /// planted bug is caught by plain fuzzing.
    @Test("the Python example server: 500 fuzz seeds over stdio and 40 over HTTP break nothing; each planted bug is caught",
          .tags(.slow), .slowTier)
    func pythonServerCampaigns() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-wire-slow-\(ProcessInfo.processInfo.processIdentifier)").path
        let stdio = try SimkitProcess.run(["fuzz", "--seeds", "500", "--jobs", "2", "--quiet", "--out", out,
                                           "--server", "process:python3 Examples/PythonServer/server.py"])
        #expect(stdio.status == 0 && stdio.stdout.contains("no invariant broken"), "\(stdio.stdout)\(stdio.stderr)")

        let port = 18_000 + Int(ProcessInfo.processInfo.processIdentifier % 10_000)
        let service = Process()
        service.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        service.arguments = ["python3", PackageRoot.path + "/Examples/PythonServer/server.py", "--http", "\(port)"]
        service.standardError = FileHandle.nullDevice
        try service.run()
        // SIGKILL: a child of the test process may start with SIGTERM blocked (as libdispatch's threads have it).
        defer { kill(service.processIdentifier, SIGKILL); service.waitUntilExit() }
        usleep(500_000)   // it listens within a few ms; a refused connection would fail the run, not hang it
        let http = try SimkitProcess.run(["fuzz", "--seeds", "40", "--jobs", "2", "--quiet", "--out", out,
                                          "--server", "http://127.0.0.1:\(port)"])
        #expect(http.status == 0 && http.stdout.contains("no invariant broken"), "\(http.stdout)\(http.stderr)")

        for (bug, invariant) in [("enable-lifts-rollup", "only-rollup-restores"), ("disable-spares-grace-keys", "disable-stops-every-key"),
                                 ("state-in-memory", "server-restart-loses-nothing")] {
            let r = try SimkitProcess.run(["fuzz", "--seeds", "40", "--jobs", "2", "--quiet", "--no-shrink", "--out", out,
                                           "--server", "process:python3 Examples/PythonServer/server.py --bug \(bug)"])
            #expect(r.status == 1 && r.stdout.contains(invariant), "\(bug): \(r.stdout)")
        }
    }

    /// The conformance kit on the Python example server: every scenario file but the
    /// mutants' and fuzz seeds, over stdio. A dead server is a problem, never a pass.
    @Test("the conformance kit: the Python example server keeps every rule; a server that exits is not judged a pass",
          .tags(.slow), .slowTier)
    func pythonServerConformance() {
        let report = SimKitTest.conformance(sdk: .reference, server: .process(Self.python), cores: SDKCores(),
                                            scenarios: PackageRoot.path + "/scenarios", seeds: 0..<20, devices: 20)
        #expect(report.passed, "\(report)")
        #expect(report.scenarioFiles > 30 && report.seeds == 20)
        let dead = SimKitTest.conformance(sdk: .reference, server: .process(Self.fixture("exits_at_third.py")), cores: SDKCores(),
                                          scenarios: PackageRoot.path + "/scenarios", seeds: 0..<2, devices: 5)
        #expect(!dead.passed && dead.problems.contains { $0.contains("server-exited") }, "\(dead)")
    }
}
