import Foundation
import SimKitTestSupport
import Testing

/// Shipping SimKit: as a versioned dependency of another package, and as a `simkit` binary
/// that needs no Swift runtime. The first builds SimKit from scratch in a temporary folder
/// (a debug build of the three libraries), the second is the slow tier's release build of
/// the tool (`ReleaseSimkit`), so they are the slowest tests of the suite: minutes, not
/// seconds. They need `git` and `ldd` on the `PATH`
/// and no network. `swift test --skip Packaging` leaves them out while iterating.
@Suite("Packaging", .tags(.slow), .slowTier, .serialized)
struct PackagingTests {
    /// A package that depends on SimKit by a versioned git URL builds and runs. This is what
    /// `unsafeFlags` in SimKit's `Package.swift` broke ("contains unsafe build flags").
    @Test("Examples/VersionedDependency builds against a tagged clone, from: the version", .timeLimit(.minutes(25)))
    func versionedDependency() throws {
        let version = try Self.simkitVersion()
        let temp = try Scratch("versioned")
        defer { temp.remove() }
        let repo = try Self.taggedCopyOfSimKit(in: temp.url, tag: version)

        // The example as committed, with its URL (the normal https form) pointed at the copy.
        let example = temp.url.appendingPathComponent("VersionedDependency")
        try FileManager.default.copyItem(at: URL(fileURLWithPath: PackageRoot.path + "/Examples/VersionedDependency"), to: example)
        let manifest = example.appendingPathComponent("Package.swift")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let dependency = try #require(text.firstMatch(of: /\.package\(url: "([^"]+)", from: "([^"]+)"\)/),
                                      "the example's Package.swift names no `.package(url: …, from: …)`")
        #expect(dependency.1.hasPrefix("https://"), "the committed example should show the normal https URL")
        try text.replacingOccurrences(of: String(dependency.1), with: repo.absoluteString)
            .write(to: manifest, atomically: true, encoding: .utf8)

        let build = temp.url.appendingPathComponent("build")
        let built = try Command.run("swift", ["build", "--package-path", example.path, "--scratch-path", build.path,
                                              "--disable-dependency-cache"])
        try #require(built.status == 0, "swift build of the example failed:\n\(built.output)")
        #expect(!built.output.contains("unsafe build flags"))

        // It runs, and its world is the one `simkit fingerprint` builds: same fingerprint.
        let ran = try Command.run(build.appendingPathComponent("debug/versioned-example").path, [])
        #expect(ran.status == 0, "\(ran.output)")
        #expect(ran.output.contains("fuzz seed 1: passed"), "\(ran.output)")
        let reference = try SimkitProcess.run(["fingerprint", "--devices", "50", "--days", "3", "--check"])
        let line = try #require(reference.stdout.split(separator: "\n").first, "\(reference.stdout)\(reference.stderr)")
        #expect(line.hasPrefix("fingerprint "))
        #expect(ran.output.split(separator: "\n").first == line, "example: \(ran.output)\nsimkit: \(reference.stdout)")
    }

    /// `swift build -c release --static-swift-stdlib` makes a `simkit` that links no Swift
    /// library (the Docker image copies it into a slim Debian that has no Swift runtime),
    /// runs with a bare environment, and computes the same fingerprint as the debug build.
    /// The build is the slow tier's one release build (`ReleaseSimkit`, which `explore`'s
    /// default world runs too), from scratch on a fresh clone.
    @Test("swift build -c release --static-swift-stdlib: a simkit without the Swift runtime", .timeLimit(.minutes(25)))
    func staticBinary() throws {
        let binary = try ReleaseSimkit.path.get()

        let ldd = try Command.run("ldd", [binary])
        let libraries = ldd.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(!libraries.isEmpty, "ldd printed nothing: \(ldd.output)")
        let swiftLibraries = libraries.filter { line in
            ["libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime", "/swift/"].contains { line.contains($0) }
        }
        #expect(swiftLibraries.isEmpty, "linked Swift libraries:\n\(swiftLibraries.joined(separator: "\n"))")

        // No LD_LIBRARY_PATH, no toolchain on the PATH: what a slim image gives it.
        let expected = try Self.simkitVersion()
        let version = try Command.run(binary, ["--version"], environment: [:])
        #expect(version.status == 0 && version.output == "SimKit \(expected)\n", "\(version.output)")
        let fingerprint = try Command.run(binary, ["fingerprint", "--devices", "50", "--days", "3", "--check"], environment: [:])
        let reference = try SimkitProcess.run(["fingerprint", "--devices", "50", "--days", "3", "--check"])
        #expect(fingerprint.status == 0 && fingerprint.output == reference.stdout, "static: \(fingerprint.output)\ndebug: \(reference.stdout)")
    }

    /// The number `simkit --version` prints (`SimKit 0.2.0` → `0.2.0`).
    static func simkitVersion() throws -> String {
        let r = try SimkitProcess.run(["--version"])
        let match = try #require(r.stdout.firstMatch(of: /^SimKit (\d+\.\d+\.\d+)\n$/), "simkit --version printed '\(r.stdout)'")
        return String(match.1)
    }

    /// Copies what a clone of SimKit holds that SwiftPM reads (the manifest, `Sources/`,
    /// `Tests/`) to `destination`: the working tree as it is, edits included.
    static func copySimKit(to destination: URL) throws {
        let fm = FileManager.default
        try fm.createDirectory(at: destination, withIntermediateDirectories: true)
        for item in ["Package.swift", "Sources", "Tests"] {
            try fm.copyItem(at: URL(fileURLWithPath: PackageRoot.path + "/" + item), to: destination.appendingPathComponent(item))
        }
    }

    /// A git repository at `folder/SimKit` holding a copy of SimKit in one commit tagged
    /// `tag`; returns its `file://` URL.
    static func taggedCopyOfSimKit(in folder: URL, tag: String) throws -> URL {
        let repo = folder.appendingPathComponent("SimKit")
        try copySimKit(to: repo)
        let git = ["-C", repo.path, "-c", "user.name=SimKit tests", "-c", "user.email=tests@simkit.invalid",
                   "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", "-c", "init.defaultBranch=main"]
        for args in [["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "SimKit \(tag)"], ["tag", tag]] {
            let r = try Command.run("git", git + args)
            try #require(r.status == 0, "git \(args.joined(separator: " ")) failed: \(r.output)")
        }
        return repo
    }
}

/// A fresh folder under the temporary directory, removed by `remove()`.
struct Scratch {
    let url: URL
    init(_ name: String) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("simkit-packaging-\(name)-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Runs a program found on the `PATH` (or at a path), standard output and error together.
enum Command {
    struct Result { var status: Int32; var output: String }

    /// `environment` nil inherits this process's environment.
    static func run(_ program: String, _ args: [String], environment: [String: String]? = nil) throws -> Result {
        let p = Process()
        if program.hasPrefix("/") {
            p.executableURL = URL(fileURLWithPath: program)
            p.arguments = args
        } else {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = [program] + args
        }
        if let environment { p.environment = environment }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
