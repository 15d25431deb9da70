// swift-tools-version:6.0
// A second, independent async SDK under SimKit: `BlobSDK` (the `Lumen` actor) keeps its
// whole state in one persisted blob, talks to ports (HTTP, time, blob storage, background
// scheduler, Photos) and publishes only its states. `BlobSDKSimKit` is the adapter onto
// SimKitAsync; `blob-sim` is every `simkit` command for it (`--sdk custom:blob`).
import PackageDescription

let package = Package(
    name: "BlobSDK",
    products: [
        .library(name: "BlobSDK", targets: ["BlobSDK"]),
        .executable(name: "blob-sim", targets: ["blob-sim"]),
    ],
    dependencies: [
        // In your package: .package(url: "https://…/SimKit.git", from: "0.1.0")
        .package(name: "SimKit", path: "../.."),
    ],
    targets: [
        /// The SDK as it ships: no SimKit.
        .target(name: "BlobSDK"),
        /// The adapter: the SDK's ports on SimKitAsync's services, and its storage mapping.
        .target(name: "BlobSDKSimKit", dependencies: [
            "BlobSDK", .product(name: "SimKit", package: "SimKit"), .product(name: "SimKitAsync", package: "SimKit"),
        ]),
        /// The host: SimKit's executors first, then every simkit command.
        .executableTarget(name: "blob-sim", dependencies: [
            "BlobSDKSimKit", .product(name: "SimKitAsync", package: "SimKit"),
        ], linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic"])]),
        .testTarget(name: "BlobSDKTests", dependencies: ["blob-sim"]),
    ],
    swiftLanguageModes: [.v6]
)
