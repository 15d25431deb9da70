// swift-tools-version:6.0
// An app team's SDK written with Swift concurrency, run unported under SimKit: `Rollup` is
// the SDK as it ships (an actor, async API, tasks, Task.sleep on its injected clock, a
// task-group timeout race, retries with back-off, a background task handler, URLSession)
// and knows nothing of SimKit; `RollupSimKit` maps its protocols onto SimKit's simulated
// services (SimKitAsync); `rollup-sim` is every `simkit` command for it, on SimKit's
// executors (`--sdk custom:rollup`).
import PackageDescription

let package = Package(
    name: "AsyncSDK",
    products: [
        .library(name: "Rollup", targets: ["Rollup"]),
        .executable(name: "rollup-sim", targets: ["rollup-sim"]),
    ],
    dependencies: [
        // In your package: .package(url: "https://…/SimKit.git", from: "0.1.0")
        .package(name: "SimKit", path: "../.."),
    ],
    targets: [
        /// The SDK as it ships: no SimKit.
        .target(name: "Rollup"),
        /// The adapter: each SimKit device's services behind the SDK's protocols; the planted bugs.
        .target(name: "RollupSimKit", dependencies: [
            "Rollup", .product(name: "SimKit", package: "SimKit"), .product(name: "SimKitAsync", package: "SimKit"),
        ]),
        /// The host: SimKit's executors, then every simkit command. Exporting its symbols
        /// lets its `clock_gettime` stand in for libc's (an SDK's `Date()` is then seen).
        .executableTarget(name: "rollup-sim", dependencies: [
            "RollupSimKit", .product(name: "SimKitAsync", package: "SimKit"),
        ], linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic"])]),
        .testTarget(name: "RollupTests", dependencies: ["rollup-sim"]),
    ],
    swiftLanguageModes: [.v6]
)
