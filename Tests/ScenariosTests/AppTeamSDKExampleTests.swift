import Foundation
import SimKitTestSupport
import Testing

/// `Examples/AppTeamSDK`, a separate package that depends on SimKit by path, builds against
/// this checkout, its own tests pass, and its command line (`SimKitCommand.main(sdks:)` in three lines) fuzzes
/// its SDK: the SDK as shipped passes a short sweep, and each planted bug is caught with a
/// reproducer that names the core that failed. Its own build folder sits under this
/// package's `.build`, so later runs rebuild only what changed.
@Suite("Examples/AppTeamSDK", .tags(.slow), .slowTier, .serialized)
struct AppTeamSDKExampleTests {
    static let example = PackageRoot.path + "/Examples/AppTeamSDK"
    static let buildPath = PackageRoot.path + "/.build/examples/AppTeamSDK"

    /// Runs `tool` with `args` in `directory`; status and both outputs (through files, so a
    /// long build log cannot fill a pipe and stall the child).
    static func run(_ tool: String, _ args: [String], in directory: String) throws -> (status: Int32, out: String, err: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("appteam-run-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let outURL = dir.appendingPathComponent("out"), errURL = dir.appendingPathComponent("err")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        p.currentDirectoryURL = URL(fileURLWithPath: directory)
        p.standardOutput = try FileHandle(forWritingTo: outURL)
        p.standardError = try FileHandle(forWritingTo: errURL)
        try p.run()
        p.waitUntilExit()
        return (p.terminationStatus, try String(contentsOf: outURL, encoding: .utf8), try String(contentsOf: errURL, encoding: .utf8))
    }

    /// The `swift` driver that runs this test (`SWIFT_EXEC`-free: found on PATH).
    static var swift: String {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = "\(dir)/swift"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "/usr/bin/swift"
    }

    @Test func itsTestsPassAndItsCommandLineCatchesThePlantedBugs() throws {
        let started = Date()
        // Its own tests: the SDK as shipped passes fuzz seeds and SimKit's scenarios (the
        // conformance kit), each planted bug is caught and shrunk, copies are deep.
        let test = try Self.run(Self.swift, ["test", "--package-path", Self.example, "--build-path", Self.buildPath], in: Self.example)
        try #require(test.status == 0, "swift test in Examples/AppTeamSDK failed:\n\(test.out.suffix(6_000))\(test.err.suffix(4_000))")
        let built = Date().timeIntervalSince(started)
        let tool = Self.buildPath + "/debug/photo-access-sim"
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("appteam-\(ProcessInfo.processInfo.processIdentifier)").path

        // The SDK as shipped keeps every promise on a short sweep.
        let sweep = try Self.run(tool, ["fuzz", "--sdk", "custom:app-team", "--seeds", "40", "--jobs", "2", "--out", out, "--quiet"],
                                 in: Self.example)
        #expect(sweep.status == 0, "\(sweep.out)\(sweep.err)")
        #expect(sweep.out.contains("simkit fuzz --sdk custom:app-team: 40 of 40 seeds"), "\(sweep.out)")
        #expect(sweep.out.contains("no invariant broken"), "\(sweep.out)")

        // Each planted bug is caught, then its first failing seed is shrunk, and the
        // reproducer names its core: it fails on it, and not on the SDK as shipped.
        for (core, invariant, seeds) in [("app-team-any-403", "never-lock-on-transient", 30),
                                         ("app-team-device-clock", "purge-only-after-30-continuous-days", 80)] {
            let r = try Self.run(tool, ["fuzz", "--sdk", "custom:\(core)", "--seeds", "\(seeds)", "--jobs", "2", "--no-shrink",
                                        "--out", out], in: Self.example)
            #expect(r.status == 1, "\(core): \(r.out)\(r.err)")
            let failing = r.out.split(separator: "\n").filter { $0.hasPrefix("FAIL seed ") && $0.contains("[\(invariant)]") }
                .compactMap { UInt64($0.dropFirst("FAIL seed ".count).prefix { $0 != ":" }) }
            let seed = try #require(failing.min(), "\(core) broke no \(invariant) in \(seeds) seeds: \(r.out)")
            #expect(r.out.contains("simkit replay \(seed) --sdk custom:\(core)"), "\(core): \(r.out)")
            let file = out + "/\(core)-seed\(seed).scenario"
            let shrunk = try Self.run(tool, ["shrink", "--seed", "\(seed)", "--sdk", "custom:\(core)", "--invariant", invariant,
                                             "-o", file], in: Self.example)
            #expect(shrunk.status == 1, "\(shrunk.out)\(shrunk.err)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.contains("sdk custom \(core)\n") && text.contains("--sdk custom:\(core)"), "\(text)")
            let again = try Self.run(tool, ["run", "--quiet", file], in: Self.example)
            #expect(again.status == 1, "\(again.out)\(again.err)")
            let shipped = try Self.run(tool, ["run", "--sdk", "custom:app-team", file], in: Self.example)
            #expect(shipped.status == 0, "\(shipped.out)\(shipped.err)")
        }
        print("Examples/AppTeamSDK: built and tested in \(Int(built)) s, its command line checked in \(Int(Date().timeIntervalSince(started) - built)) s")
    }
}

