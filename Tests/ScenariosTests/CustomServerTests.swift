import Foundation
import SimKitTestSupport
import Testing
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios
import SimKitTesting
import SimKitCommand

/// A server core that wraps the reference (`inner`) and hands it every call it does not
/// implement itself, as a thin adapter over a real server's rules would.
protocol WrapsReference: ServerCore {
    var inner: ServerModel { get set }
}

extension WrapsReference {
    mutating func handle(_ request: Request, now: SimTime) -> ServerReply { inner.handle(request, now: now) }
    func deviceRecord(_ device: DeviceIndex) -> DeviceRecord? { inner.deviceRecord(device) }
    func forEachEarlierRecord(of device: DeviceIndex, _ body: (DeviceRecord) -> Void) { inner.forEachEarlierRecord(of: device, body) }
    mutating func rotate(app: AppID, newKey: KeyID, oldKey: SimKit.OldKeyPolicy, now: SimTime) -> RotateOutcome {
        inner.rotate(app: app, newKey: newKey, oldKey: oldKey, now: now)
    }
    mutating func stopOldKey(app: AppID, key: KeyID, now: SimTime) -> Bool { inner.stopOldKey(app: app, key: key, now: now) }
    mutating func disable(app: AppID, now: SimTime) -> Bool { inner.disable(app: app, now: now) }
    mutating func enable(app: AppID, now: SimTime) -> Bool { inner.enable(app: app, now: now) }
    mutating func rollup(_ action: RollupAppAction, app: AppID, now: SimTime) -> Bool { inner.rollup(action, app: app, now: now) }
    mutating func rollup(_ action: RollupAccountAction, account: AccountID, now: SimTime) -> Bool {
        inner.rollup(action, account: account, now: now)
    }
    mutating func forgetDevice(_ device: DeviceIndex, now: SimTime) -> Bool { inner.forgetDevice(device, now: now) }
}

/// A backend team's server core that keeps every rule: it hands every call to the
/// reference. Nothing in it is `ServerModel` to the engine: it runs through the generic
/// `ServerCore` seam.
struct DelegatingServer: WrapsReference {
    var inner: ServerModel
    init(setup: ServerSetup) { inner = ServerModel(setup: setup) }
}

/// A server core with a bug no `ServerFlaws` mutant has: the dashboard's disable is
/// stored (and reported as applied) but the request path never reads it, so a disabled
/// app's installs go on being served (S2.2, S4). Rollup's rejections still stop them.
struct IgnoresDisableServer: WrapsReference {
    var inner: ServerModel
    /// Per app, whether the developer disabled it, as this server's dashboard table says.
    var disabled: [Bool]
    init(setup: ServerSetup) {
        inner = ServerModel(setup: setup)
        disabled = Array(repeating: false, count: setup.apps.count)
    }
    mutating func disable(app: AppID, now: SimTime) -> Bool {
        guard !disabled[Int(app)] else { return false }
        disabled[Int(app)] = true   // the bug: the rules below never see it
        return true
    }
    mutating func enable(app: AppID, now: SimTime) -> Bool {
        guard disabled[Int(app)] else { return false }
        disabled[Int(app)] = false
        return true
    }
}

/// Custom server cores run everywhere the reference server does, by name, and a wrong one
/// is caught from the trace alone, shrunk, and named in its reproducer.
@Suite struct CustomServerTests {
    static let cores = SDKCores([:], servers: ["backend": DelegatingServer.self, "leaky": IgnoresDisableServer.self])

    static let scenario = """
    scenario "custom server"
    sdk reference
    server custom leaky
    account acme
    app photos account acme key rk_live_A
    devices 3 app photos
    at 0s launch all
    at 1d disable photos
    at 1d1h open all
    at 1d2h expect all photos locked

    """

    /// The first seed (of 2,000) on which plain fuzzing catches the leaky server.
    static let failingSeed: UInt64 = {
        for seed in 0..<2_000 as Range<UInt64> where !SimKitTest.seed(seed, server: .custom("leaky"), cores: cores).passed {
            return seed
        }
        return .max
    }()

    @Test func theLanguageHasAServerLine() throws {
        let parsed = ScenarioParser.parse(Self.scenario, file: "s.scenario", context: ScenarioRunner.standardContext(cores: Self.cores))
        let scenario = try #require(parsed.scenario, "\(parsed.rendered)")
        #expect(scenario.server == .custom("leaky"))
        let printed = ScenarioPrinter.print(scenario)
        #expect(printed.contains("\nserver custom leaky\n"), "\(printed)")
        #expect(ScenarioParser.parse(printed, file: "p", context: ScenarioRunner.standardContext(cores: Self.cores)).scenario == scenario)
        // The reference server is the default and is not printed.
        var reference = scenario
        reference.server = .reference
        #expect(!ScenarioPrinter.print(reference).contains("\nserver "))
        let explicit = ScenarioParser.parse(Self.scenario.replacingOccurrences(of: "server custom leaky", with: "server reference"), file: "r")
        #expect(explicit.scenario?.server == .reference)
        let bad = ScenarioParser.parse(Self.scenario.replacingOccurrences(of: "server custom leaky", with: "server mutant x"), file: "b.scenario")
        #expect(bad.rendered.contains("b.scenario:3:8: error: unknown server 'mutant'"), "\(bad.rendered)")
    }

    @Test func anUnknownServerIsALocatedErrorAndExits2() throws {
        let parsed = ScenarioParser.parse(Self.scenario, file: "c.scenario", context: ScenarioRunner.standardContext(cores: SDKCores([:], servers: ["leak": DelegatingServer.self])))
        #expect(parsed.hasErrors)
        #expect(parsed.rendered.contains("c.scenario:3:15: error: unknown server core 'leaky'"), "\(parsed.rendered)")
        #expect(parsed.rendered.contains("leak"), "a did-you-mean or the list of known cores: \(parsed.rendered)")
        #expect(throws: ScenarioRunError.self) { try SimKitTest.scenario(source: Self.scenario) }
        #expect(throws: ScenarioRunError.self) { try SimKitTest.scenario(source: Self.scenario, server: .custom("nope"), cores: Self.cores) }

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-server-\(ProcessInfo.processInfo.processIdentifier)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/unknown.scenario"
        try Self.scenario.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(SimKitCommand.run(["check", file]) == 2)
        #expect(SimKitCommand.run(["run", "--quiet", file]) == 2)
        #expect(SimKitCommand.run(["check", file], cores: Self.cores) == 0)
        #expect(SimKitCommand.run(["fuzz", "--seeds", "1", "--server", "custom:nope", "--quiet"], cores: Self.cores) == 2)
        #expect(SimKitCommand.run(["replay", "1", "--server", "custom:backend", "--twice", "--processes"], cores: Self.cores) == 2)
    }

    @Test func theScenarioRunsTheServerItNames() throws {
        // The leaky server serves the disabled app: the scenario's expectation fails and
        // the checkers name S4, from the trace alone.
        let leaky = try SimKitTest.scenario(source: Self.scenario, cores: Self.cores)
        #expect(!leaky.passed)
        #expect(leaky.broken.contains(.disableStopsEveryKey), "\(leaky)")
        // The same file on the reference server, or on the delegating one, passes with one trace.
        let reference = try SimKitTest.scenario(source: Self.scenario, server: .reference, cores: Self.cores)
        #expect(reference.passed, "\(reference)")
        let backend = try SimKitTest.scenario(source: Self.scenario, server: .custom("backend"), cores: Self.cores)
        #expect(backend.passed, "\(backend)")
        #expect(backend.outcome.fingerprint == reference.outcome.fingerprint)
        let page = try Timeline.run(leaky.scenario, cores: Self.cores)
        #expect(page.html.contains("server custom:leaky"))
        #expect(page.broken.contains(.disableStopsEveryKey))
    }

    /// (a) A server core that keeps every rule passes a fuzz sweep, with the same trace as
    /// the reference server on every seed.
    @Test(.tags(.slow), .slowTier, arguments: 0..<10 as Range<UInt64>)
    func aDelegatingServerPassesTheSweep(block: UInt64) {
        for seed in block * 30..<(block + 1) * 30 {
            let run = SimKitTest.seed(seed, server: .custom("backend"), cores: Self.cores)
            #expect(run.passed, "\(run)")
            #expect(run.result.server == "custom:backend")
            if seed % 10 == 0 {
                #expect(run.result.fingerprint == SimKitTest.seed(seed).result.fingerprint, "seed \(seed)")
            }
        }
    }

    /// (b) A server core that skips S4 is caught by plain fuzzing within 2,000 seeds, and
    /// shrunk to a reproducer that names it.
    @Test func aLeakyServerIsCaughtShrunkAndNamed() throws {
        let seed = Self.failingSeed
        try #require(seed < 2_000, "the leaky server broke nothing in 2,000 seeds")
        let run = SimKitTest.seed(seed, server: .custom("leaky"), cores: Self.cores)
        #expect(run.broken.contains(.disableStopsEveryKey), "\(run)")
        #expect(run.result.server == "custom:leaky")
        #expect("\(run)".contains("replay: simkit replay \(seed) --sdk reference --server custom:leaky"), "\(run)")
        let reproducer = run.reproducer
        #expect(reproducer.contains("\nserver custom leaky\n"), "\(reproducer)")
        #expect(reproducer.contains("--server custom:leaky"), "\(reproducer)")
        let small = try SimKitTest.scenario(source: reproducer, cores: Self.cores)
        let invariant = try #require(run.violations.first?.invariant)
        #expect(small.broken.contains(invariant))
        #expect(small.scenario.statementCount <= 10, "\(reproducer)")
        let onReference = try SimKitTest.scenario(source: reproducer, server: .reference, cores: Self.cores)
        #expect(!onReference.broken.contains(invariant), "\(onReference)")
        // The generic entry point names the core after its type.
        let byType = SimKitTest.seed(seed, server: IgnoresDisableServer.self)
        #expect(byType.result.server == "custom:ignores-disable-server")
        #expect(byType.result.fingerprint == run.result.fingerprint)
    }

    @Test func theCommandLineKnowsTheRegisteredServers() throws {
        let seed = Self.failingSeed
        try #require(seed < 2_000)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-server-cli-\(ProcessInfo.processInfo.processIdentifier)").path
        let out = dir + "/out"
        #expect(SimKitCommand.run(["replay", "\(seed)", "--server", "custom:leaky"], cores: Self.cores) == 1)
        #expect(SimKitCommand.run(["replay", "\(seed)", "--server", "custom:backend"], cores: Self.cores) == 0)
        let status = SimKitCommand.run(["fuzz", "--seeds", "1", "--from", "\(seed)", "--server", "custom:leaky", "--jobs", "1",
                                        "--out", out, "--quiet"], cores: Self.cores)
        #expect(status == 1)
        let files = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix("-seed\(seed).scenario") }
        let path = out + "/" + (try #require(files.first))
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.contains("\nserver custom leaky\n") && written.contains("--server custom:leaky"), "\(written)")
        #expect(SimKitCommand.run(["run", "--quiet", path], cores: Self.cores) == 1)
        #expect(SimKitCommand.run(["run", "--quiet", "--server", "reference", path], cores: Self.cores) == 0)
        #expect(SimKitCommand.run(["shrink", path, "-o", out + "/again.scenario"], cores: Self.cores) == 1)
        #expect(try String(contentsOfFile: out + "/again.scenario", encoding: .utf8).contains("server custom leaky"))
        #expect(SimKitCommand.run(["timeline", path, "-o", out + "/t.html", "--quiet"], cores: Self.cores) == 1)
    }

    /// The campaign's JSON names the server core, so shards run on different servers are
    /// not merged as one campaign.
    @Test func mergeRefusesShardsOfAnotherServer() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-server-merge-\(ProcessInfo.processInfo.processIdentifier)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = dir + "/a.json", b = dir + "/b.json"
        #expect(SimKitCommand.run(["fuzz", "--seeds", "4", "--shard", "1/2", "--server", "custom:backend", "--no-shrink", "--quiet",
                                   "--json", a, "--out", dir], cores: Self.cores) == 0)
        #expect(SimKitCommand.run(["fuzz", "--seeds", "4", "--shard", "2/2", "--no-shrink", "--quiet", "--json", b, "--out", dir],
                                  cores: Self.cores) == 0)
        let json = try String(contentsOfFile: a, encoding: .utf8)
        #expect(json.contains("\"server\" : \"custom:backend\""), "\(json.prefix(600))")
        #expect(SimKitCommand.run(["merge", a, b], cores: Self.cores) == 2)
    }
}
