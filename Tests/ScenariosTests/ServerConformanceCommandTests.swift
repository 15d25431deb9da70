import Foundation
import Testing
import SimKitTestSupport

/// `simkit conformance --server …`: a server's S rules in seconds, each rule broken named,
/// with where and how to replay it; a server that leaves the protocol with its evidence.
@Suite("Command line: simkit conformance", .serialized)
struct ServerConformanceCommandTests {
    static let example = "process:python3 Examples/PythonServer/server.py"

    /// Three of SimKit's scenario files, one for each planted bug and one on S2's order.
    static func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "simkit-conformance-cli-\(getpid())"
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for name in ["rollup-revocation-developer-cannot-lift", "disable-stops-old-key-in-grace", "first-rule-that-applies"] {
            try FileManager.default.copyItem(atPath: PackageRoot.path + "/scenarios/\(name).scenario", toPath: dir + "/\(name).scenario")
        }
        return dir
    }

    @Test("the example server keeps every rule; each planted bug fails naming its S rule, the invariant, where, and the replay")
    func namesTheRule() throws {
        let dir = try Self.folder()
        let out = NSTemporaryDirectory() + "simkit-conformance-cli-out-\(getpid())"
        let common = ["conformance", "--scenarios", dir, "--seeds", "6", "--devices", "10", "--jobs", "2", "--out", out]
        let pass = try SimkitProcess.run(common + ["--server", Self.example])
        #expect(pass.status == 0, "\(pass.stdout)\(pass.stderr)")
        #expect(pass.stdout.hasPrefix("conformance of server \(Self.example): 3 scenario files rule by rule, then 6 fuzz seeds (at most 10 devices, 90 days)\n"))
        #expect(pass.stdout.contains("  S5  kept    2 files   only Rollup lifts what Rollup did"), "\(pass.stdout)")
        #expect(pass.stdout.contains("PASS: every S rule kept (3 scenario files, 6 seeds, "), "\(pass.stdout)")
        for (bug, rule, invariant, file) in [("enable-lifts-rollup", "S5: only Rollup lifts what Rollup did", "only-rollup-restores (S5)",
                                              "rollup-revocation-developer-cannot-lift.scenario"),
                                             ("disable-spares-grace-keys", "S4: a disabled app is refused with every key", "disable-stops-every-key (S4)",
                                              "disable-stops-old-key-in-grace.scenario")] {
            let server = Self.example + " --bug " + bug
            let r = try SimkitProcess.run(common + ["--server", server])
            #expect(r.status == 1, "\(bug): \(r.stdout)\(r.stderr)")
            #expect(r.stdout.contains("\nBROKEN \(rule)"), "\(bug): \(r.stdout)")
            #expect(r.stdout.contains("\n  caught by \(invariant) in 1 scenario file and "), "\(bug): \(r.stdout)")
            #expect(r.stdout.contains("\n  first: \(file): [\(invariant.prefix { $0 != " " })] "), "\(bug): \(r.stdout)")
            #expect(r.stdout.contains("\n  replay: simkit run --server '\(server)' \(dir)/\(file)\n"), "\(bug): \(r.stdout)")
            #expect(r.stdout.contains("\nFAIL: ") && r.stdout.contains(String(rule.prefix(2))), "\(bug): \(r.stdout)")
        }
    }

    @Test("a server that leaves the protocol: its evidence (last error, messages file), exit 1; no --server is bad input")
    func serverLeavesTheProtocol() throws {
        let dir = try Self.folder()
        let out = NSTemporaryDirectory() + "simkit-conformance-cli-out-\(getpid())"
        let r = try SimkitProcess.run(["conformance", "--scenarios", dir, "--seeds", "2", "--devices", "5", "--out", out,
                                       "--server", "process:python3 Tests/WireFixtures/raises.py"])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("SERVER LEFT THE PROTOCOL in 5 runs (nothing judged there); the first, "), "\(r.stdout)")
        #expect(r.stdout.contains("ValueError: raises: the disable of app 0 is not in table apps"), "\(r.stdout)")
        #expect(r.stdout.contains("  messages: \(out)/server-messages-"), "\(r.stdout)")
        #expect(r.stdout.contains("\nFAIL: the server left the protocol in 5 runs ("), "\(r.stdout)")
        let none = try SimkitProcess.run(["conformance", "--seeds", "1"])
        #expect(none.status == 2 && none.stderr.contains("--server is required"), "\(none.stderr)")
        let help = try SimkitProcess.run(["conformance", "--help"])
        #expect(help.status == 0 && help.stdout.hasPrefix("usage: simkit conformance --server"))
    }

    /// The whole kit as a backend team runs it: every scenario file and 200 seeds.
    @Test("simkit conformance on the example server passes; on each planted bug it fails naming the rule", .tags(.slow), .slowTier)
    func wholeKit() throws {
        let pass = try SimkitProcess.run(["conformance", "--server", Self.example])
        #expect(pass.status == 0 && pass.stdout.contains("PASS: every S rule kept ("), "\(pass.stdout)\(pass.stderr)")
        for (bug, rule) in [("enable-lifts-rollup", "BROKEN S5: "), ("disable-spares-grace-keys", "BROKEN S4: "), ("state-in-memory", "BROKEN S10: ")] {
            let r = try SimkitProcess.run(["conformance", "--server", Self.example + " --bug " + bug])
            #expect(r.status == 1 && r.stdout.contains("\n" + rule), "\(bug): \(r.stdout)")
        }
    }
}
