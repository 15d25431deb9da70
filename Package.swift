// swift-tools-version:6.0
// SimKit: a deterministic simulation and chaos-testing framework for the
// key-and-revocation lifecycle of a photo-indexing SDK. No package dependencies.
import PackageDescription

/// Release builds optimise across modules so the generic engine specialises on the
/// SDK and checker types that other modules plug in (see issue 8).
let optimise: [SwiftSetting] = [
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "SimKit",
    products: [
        .library(name: "SimKit", targets: ["SimKit"]),
        .library(name: "Invariants", targets: ["Invariants"]),
        .library(name: "Scenarios", targets: ["Scenarios"]),
        .executable(name: "simkit", targets: ["simkit"]),
    ],
    targets: [
        /// One C function: a cache prefetch hint, which Swift cannot spell (see World.run).
        .target(name: "SimKitPrefetch"),
        .target(name: "SimKit", dependencies: ["SimKitPrefetch"], swiftSettings: optimise),
        .target(name: "Invariants", dependencies: ["SimKit"], swiftSettings: optimise),
        .target(name: "Scenarios", dependencies: ["SimKit", "Invariants"], swiftSettings: optimise),
        .executableTarget(name: "simkit", dependencies: ["SimKit", "Invariants", "Scenarios"], swiftSettings: optimise),
        .testTarget(name: "SimKitTests", dependencies: ["SimKit"]),
        .testTarget(name: "InvariantsTests", dependencies: ["SimKit", "Invariants"]),
        .testTarget(name: "ScenariosTests", dependencies: ["SimKit", "Invariants", "Scenarios"]),
    ],
    swiftLanguageModes: [.v6]
)
