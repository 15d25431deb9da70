// swift-tools-version:6.0
// An app team's SDK, shaped so that SimKit can run its decisions: `PhotoAccess` is the SDK's
// logic and knows nothing of SimKit; `PhotoAccessSimKit` adapts it to SimKit's `SDKCore`;
// `photo-access-sim` is every `simkit` command for it (`--sdk custom:app-team`).
import PackageDescription

let package = Package(
    name: "AppTeamSDK",
    products: [
        .library(name: "PhotoAccess", targets: ["PhotoAccess"]),
        .executable(name: "photo-access-sim", targets: ["photo-access-sim"]),
    ],
    dependencies: [
        // In your package: .package(url: "https://…/SimKit.git", from: "0.1.0")
        .package(name: "SimKit", path: "../.."),
    ],
    targets: [
        /// The SDK's decisions: a class-based state machine over its own storage, network,
        /// timer and host protocols. No SimKit, no Foundation: this is the code that ships.
        .target(name: "PhotoAccess"),
        /// The adapter: SimKit's sans-IO `SDKCore` over `PhotoAccess`, and the planted bugs.
        .target(name: "PhotoAccessSimKit", dependencies: ["PhotoAccess", .product(name: "SimKit", package: "SimKit")]),
        .executableTarget(name: "photo-access-sim", dependencies: [
            "PhotoAccessSimKit", .product(name: "SimKitCommand", package: "SimKit"),
        ]),
        .testTarget(name: "PhotoAccessTests", dependencies: [
            "PhotoAccess", "PhotoAccessSimKit",
            .product(name: "SimKit", package: "SimKit"), .product(name: "Invariants", package: "SimKit"),
            .product(name: "Scenarios", package: "SimKit"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
