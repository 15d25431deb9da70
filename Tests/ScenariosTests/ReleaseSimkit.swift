import Foundation

/// The slow tier's one release `simkit`: `swift build -c release --static-swift-stdlib
/// --product simkit` of the package as it is, into a scratch folder of its own (so it never
/// waits on the lock of the `swift test` running it). `explore`'s default world runs it
/// (a debug build is about ten times slower) and `Packaging` checks it links no Swift
/// library: one release build for both instead of two, which is minutes of CI.
enum ReleaseSimkit {
    /// The binary's path, built once per test process (incrementally after the first time);
    /// a second caller waits for the first one's build.
    static let path: Result<String, any Error> = Result {
        let scratch = PackageRoot.path + "/.build/slow-release"
        let built = try Command.run("swift", ["build", "-c", "release", "--static-swift-stdlib", "--product", "simkit",
                                              "--package-path", PackageRoot.path, "--scratch-path", scratch])
        guard built.status == 0 else { throw BuildFailed(output: built.output) }
        return scratch + "/release/simkit"
    }

    struct BuildFailed: Error, CustomStringConvertible {
        var output: String
        var description: String { "swift build -c release --static-swift-stdlib failed:\n\(output)" }
    }
}
