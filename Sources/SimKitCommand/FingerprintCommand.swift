import Foundation
import SimKit
import Invariants

/// `simkit fingerprint`: runs the standard workload from one seed and prints the trace
/// fingerprint, so two processes (or two machines) can be compared byte for byte.
enum FingerprintCommand {
    static let help = """
    usage: simkit fingerprint [--seed N] [--devices N] [--days N] [--sdk reference|mutant:NAME] [--check]

    Runs the standard workload (SimKit.StandardWorkload) and prints one line:
      fingerprint <16 hex digits> events <N> records <N>
    The same seed prints the same line in any process, on any machine.

    options:
      --seed N      the seed (default 1)
      --devices N   devices in the world, 1...1000000 (default 1000)
      --days N      virtual days, 1...3650 (default 30)
      --sdk S       reference (default) or mutant:NAME
      --check       also check every invariant and print the violations (exit 1 if any)

    """

    static func run(_ argv: [String]) throws -> Int32 {
        let a = try Arguments(argv, switches: ["check"], options: ["seed", "devices", "days", "sdk"])
        if a.has("help") { print(help, terminator: ""); return 0 }
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument '\(a.positionals[0])'") }
        let seed = try a.uint("seed", default: 1)
        let devices = try a.uint("devices", default: 1_000, range: 1...1_000_000)
        let days = try a.uint("days", default: 30, range: 1...3_650)
        var setup = StandardWorkload.setup(seed: seed, devices: UInt32(devices), days: days)
        if let sdk = a.string("sdk"), sdk != "reference" {
            guard sdk.hasPrefix("mutant:"), let m = Mutants.named(String(sdk.dropFirst(7))) else {
                throw UsageError("unknown --sdk '\(sdk)'; use reference or mutant:NAME (see 'simkit mutants --list')")
            }
            setup.sdk.flaws = m.sdkFlaws
            setup.serverFlaws = m.serverFlaws
        }
        if a.has("check") {
            var world = World<ReferenceSDK, InvariantChecker>(setup: setup, observer: InvariantChecker())
            world.run()
            print("fingerprint \(world.fingerprint) events \(world.eventsHandled) records \(world.fingerprint.records)")
            for v in world.observer.violations { print(v.headline) }
            for inv in world.observer.broken { print("broken: \(inv.rawValue) x\(world.observer.count(of: inv))") }
            print("coverage missing: \(world.observer.coverage.missing.map(\.description).joined(separator: ", "))")
            return world.observer.broken.isEmpty ? 0 : 1
        }
        var world = World<ReferenceSDK, NoObserver>(setup: setup, observer: NoObserver())
        world.run()
        print("fingerprint \(world.fingerprint) events \(world.eventsHandled) records \(world.fingerprint.records)")
        return 0
    }
}
