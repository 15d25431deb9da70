// swift-tools-version:6.0
// SimKit: a deterministic simulation and chaos-testing framework for the
// key-and-revocation lifecycle of a photo-indexing SDK. No package dependencies.
import PackageDescription

// No `unsafeFlags` anywhere: SwiftPM refuses a versioned dependency (`from: "0.1.0"`) whose
// targets carry them, and SimKit is meant to be one. Release speed comes from the code
// instead: the engine (`World`, the event queue, the request pool, the device tables) is
// `@inlinable`, so each program that runs a world specialises it on its own SDK core and
// observer, and the busiest trace sites are functions of their own (see
// `World+SDKStep.swift` and docs/performance.md for what this cost and bought back).
let package = Package(
    name: "SimKit",
    products: [
        .library(name: "SimKit", targets: ["SimKit"]),
        .library(name: "Invariants", targets: ["Invariants"]),
        /// The scenario modules, one product: the language (`ScenarioLanguage`), the runner and
        /// what a run produces (`Scenarios`), the search tools (`ScenarioSearch`) and the
        /// Swift Testing API (`SimKitTesting`, `SimKitTest`).
        .library(name: "Scenarios", targets: ["ScenarioLanguage", "Scenarios", "ScenarioSearch", "SimKitTesting"]),
        .library(name: "ServerWire", targets: ["ServerWire"]),
        /// The command line as a library: `SimKitCommand.main(sdks: ["mine": MySDK.self])`
        /// in a package's own executable gives every `simkit` command for its SDK core.
        .library(name: "SimKitCommand", targets: ["SimKitCommand"]),
        .executable(name: "simkit", targets: ["simkit"]),
        /// Real async Swift SDKs under SimKit, unported: SimKit's executors run every job
        /// on one thread on the virtual clock (`SimKitAsyncHost.main`, `AsyncCore`; docs/async.md).
        .library(name: "SimKitAsync", targets: ["SimKitAsync"]),
    ],
    targets: [
        /// One C function: a cache prefetch hint, which Swift cannot spell (see World.run).
        .target(name: "SimKitPrefetch"),
        .target(name: "SimKit", dependencies: ["SimKitPrefetch"]),
        .target(name: "Invariants", dependencies: ["SimKit"]),
        /// A server in any language, as a `ServerCore`: the wire protocol of
        /// docs/server-protocol.md over a child process's stdin/stdout or HTTP.
        .target(name: "ServerWire", dependencies: ["SimKit"]),
        /// The scenario modules keep the one folder, Sources/Scenarios, each target its subfolders.
        /// The language: lexer, parser, AST, validator, printer, diagnostics.
        .target(name: "ScenarioLanguage", dependencies: ["SimKit", "ServerWire"], path: "Sources/Scenarios/Language"),
        /// The runner and what a run produces: the compiler and runner, core registries,
        /// failure stories, the HTML timeline, the determinism guard.
        .target(name: "Scenarios", dependencies: ["SimKit", "Invariants", "ServerWire", "ScenarioLanguage"],
                exclude: ["Language", "Fuzz", "Explore", "Testing"]),
        /// The search tools: the generator, fuzzer (plain and guided), shrinker, hostile
        /// inputs, and the exhaustive explorer.
        .target(name: "ScenarioSearch", dependencies: ["SimKit", "Invariants", "ServerWire", "ScenarioLanguage", "Scenarios"],
                path: "Sources/Scenarios", exclude: ["Language", "Runner", "Story", "Timeline", "Determinism", "Testing", "Scenarios.swift"]),
        /// The Swift Testing API: `SimKitTest` (seeds, scenario files, conformance).
        .target(name: "SimKitTesting", dependencies: ["SimKit", "Invariants", "ScenarioLanguage", "Scenarios", "ScenarioSearch"],
                path: "Sources/Scenarios/Testing"),
        .target(name: "SimKitCommand", dependencies: ["SimKit", "Invariants", "ScenarioLanguage", "Scenarios", "ScenarioSearch", "SimKitTesting", "ServerWire"]),
        .executableTarget(name: "simkit", dependencies: ["SimKitCommand"]),
        .target(name: "SimKitAsync", dependencies: ["SimKit", "ScenarioLanguage", "Scenarios", "SimKitTesting", "SimKitCommand"]),
        /// The canary: installs the executors and runs a little of everything async
        /// (SimKitAsyncTests runs it as a child process; it fails loudly when the SPI changes).
        .executableTarget(name: "simkit-async-canary", dependencies: ["SimKitAsync", "SimKit"], path: "Tests/AsyncCanary"),
        /// What the test targets share: the slow tier's tag and switch (`SIMKIT_SLOW=1`).
        .target(name: "SimKitTestSupport", path: "Tests/Support"),
        .testTarget(name: "SimKitTests", dependencies: ["SimKit", "SimKitTestSupport"]),
        .testTarget(name: "InvariantsTests", dependencies: ["SimKit", "Invariants", "SimKitTestSupport"]),
        .testTarget(name: "SimKitAsyncTests", dependencies: ["SimKitAsync", "simkit-async-canary", "SimKitTestSupport"]),
        .testTarget(name: "ScenariosTests", dependencies: ["SimKit", "Invariants", "ScenarioLanguage", "Scenarios", "ScenarioSearch", "SimKitTesting", "SimKitCommand", "simkit", "ServerWire", "SimKitTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
