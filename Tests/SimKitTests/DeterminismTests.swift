import Foundation
import Testing
@testable import SimKit

/// Finding the package root and the built `simkit` executable, for tests that need files
/// or other processes. Test-only code: the engine itself never touches the file system.
enum PackageFiles {
    /// The directory holding `Package.swift`, found by walking up from this source file.
    static func root(from file: String = #filePath) -> URL? {
        var dir = URL(fileURLWithPath: file).deletingLastPathComponent()
        while dir.path != "/" {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) { return dir }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// Where `simkit` may be: beside the test bundle (on Linux the bundle is an
    /// executable in `.build/<config>/`), beside the running test executable, then the
    /// package's `.build/debug/`.
    static func simkitCandidates() -> [URL] {
        var dirs: [URL] = []
        let bundle = Bundle.main.bundleURL
        dirs.append(bundle)
        dirs.append(bundle.deletingLastPathComponent())
        if let arg0 = CommandLine.arguments.first {
            dirs.append(URL(fileURLWithPath: arg0).deletingLastPathComponent())
        }
        if let root = root() { dirs.append(root.appendingPathComponent(".build/debug")) }
        var seen: [String] = []
        return dirs.map { $0.appendingPathComponent("simkit").standardizedFileURL }.filter { url in
            if seen.contains(url.path) { return false }
            seen.append(url.path)
            return true
        }
    }

    static func simkit() -> URL? {
        simkitCandidates().first { url in
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir) && !isDir.boolValue
                && FileManager.default.isExecutableFile(atPath: url.path)
        }
    }

    /// Runs `executable` with `arguments`; returns (exit status, stdout, stderr).
    static func run(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = executable
        p.arguments = arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Read before waiting so a full pipe cannot block the child.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }
}

@Suite struct DeterminismTests {
    static let devices: UInt32 = 300
    static let days: UInt64 = 20

    static func fingerprintArguments(seed: UInt64) -> [String] {
        ["fingerprint", "--seed", "\(seed)", "--devices", "\(devices)", "--days", "\(days)"]
    }

    static func requireSimkit() throws -> URL {
        let found = PackageFiles.simkit()
        let tried = PackageFiles.simkitCandidates().map(\.path).joined(separator: ", ")
        return try #require(found, "the simkit executable was not found (tried \(tried)); run `swift build` before `swift test`")
    }

    static func inProcess(seed: UInt64) -> World<ReferenceSDK, NoObserver> {
        var world = World<ReferenceSDK, NoObserver>(
            setup: StandardWorkload.setup(seed: seed, devices: devices, days: days), observer: NoObserver())
        world.run()
        return world
    }

    /// Two separate processes, same seed: same line, byte for byte. Each process seeds
    /// Swift's hashing differently, so any Set or Dictionary order that reaches the
    /// trace shows up here.
    @Test func sameSeedSameOutputAcrossProcesses() throws {
        let simkit = try Self.requireSimkit()
        let a = try PackageFiles.run(simkit, Self.fingerprintArguments(seed: 7))
        let b = try PackageFiles.run(simkit, Self.fingerprintArguments(seed: 7))
        try #require(a.status == 0, "simkit exited \(a.status): \(a.err)")
        try #require(b.status == 0, "simkit exited \(b.status): \(b.err)")
        #expect(a.out.hasPrefix("fingerprint ") && a.out.contains(" events ") && a.out.contains(" records "), "unexpected output: \(a.out)")
        #expect(a.out == b.out, "seed 7 printed\n\(a.out)and then\n\(b.out)")

        // The in-process run must print the same line as the processes.
        let world = Self.inProcess(seed: 7)
        let line = "fingerprint \(world.fingerprint) events \(world.eventsHandled) records \(world.fingerprint.records)\n"
        #expect(a.out == line, "process printed \(a.out), in-process run gives \(line)(a stale simkit binary? run `swift build`)")
    }

    @Test func differentSeedDifferentFingerprint() throws {
        let simkit = try Self.requireSimkit()
        let a = try PackageFiles.run(simkit, Self.fingerprintArguments(seed: 7))
        let c = try PackageFiles.run(simkit, Self.fingerprintArguments(seed: 8))
        try #require(a.status == 0 && c.status == 0, "simkit failed: \(a.err) \(c.err)")
        let fa = a.out.split(separator: " ").dropFirst().first, fc = c.out.split(separator: " ").dropFirst().first
        #expect(fa != nil && fa != fc, "seeds 7 and 8 both printed \(a.out)")
    }

    @Test func sameSeedTwiceInProcess() {
        let a = Self.inProcess(seed: 7), b = Self.inProcess(seed: 7)
        #expect(a.fingerprint == b.fingerprint)
        #expect(a.eventsHandled == b.eventsHandled)
        #expect(a.fingerprint.records > 0 && a.eventsHandled > 0, "the workload did nothing")
        let c = Self.inProcess(seed: 8)
        #expect(c.fingerprint != a.fingerprint, "seeds 7 and 8 gave \(a.fingerprint)")
    }
}
