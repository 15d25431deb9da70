// swift-tools-version:6.0
// A package that uses SimKit the way Swift packages are normally used: by a versioned git
// URL. It is also a test: `Tests/ScenariosTests/PackagingTests.swift` (part of `swift test`)
// copies SimKit's sources into a temporary git repository, tags it with the version
// `simkit --version` reports, points the URL below at it (`file:///tmp/…`, since nothing here
// may fetch from the network) and builds this package. SwiftPM refuses a versioned
// dependency whose targets carry `unsafeFlags`; this build is what fails if one comes back.
import PackageDescription

let package = Package(
    name: "VersionedDependency",
    dependencies: [
        // Put your SimKit repository's URL here.
        .package(url: "https://github.com/your-org/SimKit.git", from: "0.2.0"),
    ],
    targets: [
        .executableTarget(name: "versioned-example", dependencies: [
            .product(name: "SimKit", package: "SimKit"),
            .product(name: "Invariants", package: "SimKit"),
            .product(name: "Scenarios", package: "SimKit"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
