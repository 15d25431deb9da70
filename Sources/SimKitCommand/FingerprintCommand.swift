import Foundation
import ServerWire
import SimKit
import Invariants
import Scenarios

/// `simkit fingerprint`: runs the standard workload from one seed and prints the trace
/// fingerprint, so two processes (or two machines) can be compared byte for byte, and a
/// custom core with the reference.
package enum FingerprintCommand {
    static let help = """
    usage: simkit fingerprint [--seed N] [--devices N] [--days N] [--sdk S] [--server S] [--check]

    Runs the standard workload (SimKit.StandardWorkload) and prints one line:
      fingerprint <16 hex digits> events <N> records <N>
    The same seed prints the same line in any process, on any machine. A custom core that
    behaves as the reference prints the reference's line.

    options:
      --seed N      the seed (default 1)
      --devices N   devices in the world, 1...1000000 (default 1000)
      --days N      virtual days, 1...3650 (default 30)
      --sdk S       reference (default), mutant:NAME (see 'simkit mutants --list') or
                    custom:NAME, an SDK core the tool registers
      --server S    reference (default) or custom:NAME, a server core the tool registers
                    (or process:CMD, http://HOST:PORT: a server on the wire, docs/server-protocol.md)
      --check       also check every invariant and print the violations (exit 1 if any)

    """

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        let (text, status) = try output(argv, cores)
        print(text, terminator: "")
        return status
    }

    /// What `simkit fingerprint argv` prints, and its exit status (the command prints it;
    /// tests compare it). Bad input throws `UsageError` (exit 2).
    package static func output(_ argv: [String], _ cores: SDKCores) throws -> (text: String, status: Int32) {
        let a = try Arguments(argv, switches: ["check"], options: ["seed", "devices", "days", "sdk", "server"])
        if a.has("help") { return (helpText(help, cores: cores), 0) }
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument '\(a.positionals[0])'") }
        let seed = try a.uint("seed", default: 1)
        let devices = try a.uint("devices", default: 1_000, range: 1...1_000_000)
        let days = try a.uint("days", default: 30, range: 1...3_650)
        let sdk = try FuzzCommand.sdkChoice(a.string("sdk"), cores: cores)
        let server = try serverChoice(a.string("server"), cores: cores) ?? .reference
        let resolved: ResolvedCores
        do { resolved = try cores.resolve(sdk: sdk, server: server) } catch { throw UsageError("\(error)") }
        var setup = StandardWorkload.setup(seed: seed, devices: UInt32(devices), days: days)
        if case .mutant(let name) = sdk, let m = Mutants.named(name) {
            setup.sdkFlaws = m.sdkFlaws
            setup.serverFlaws = m.serverFlaws
        }
        guard resolved.isReference else { return measure(resolved.sdk, resolved.server, setup: setup, check: a.has("check")) }
        // The reference (and its mutants) runs on concrete types, not through `measure`:
        // this is the path `docs/performance.md` measures with callgrind, so it must stay
        // as specialised as the engine can make it.
        if a.has("check") {
            setup.ringDepth = 0   // the checker keeps its own rings, as in every checked run
            var world = World<ReferenceSDK, InvariantChecker>(setup: setup, observer: InvariantChecker())
            world.run()
            return checked(fingerprint: world.fingerprint, events: world.eventsHandled, checker: world.observer)
        }
        var world = World<ReferenceSDK, NoObserver>(setup: setup, observer: NoObserver())
        world.run()
        return (line(world.fingerprint, events: world.eventsHandled), 0)
    }

    /// Runs `setup` on the cores `sdk` and `server` (custom ones, known only at run time):
    /// the reference's output for any other pair of cores.
    static func measure<SDK: SDKCore, Server: ServerCore>(_ sdk: SDK.Type, _ server: Server.Type, setup: WorldSetup,
                                                          check: Bool) -> (text: String, status: Int32) {
        if check {
            var setup = setup
            setup.ringDepth = 0   // the checker keeps its own rings, as in every checked run
            let world = WireRun.run { SimWorld<SDK, Server, InvariantChecker>(setup: setup, observer: InvariantChecker()) }
            if let failure = CoreFailure.of(world) { return (failure.text, 1) }
            return checked(fingerprint: world.fingerprint, events: world.eventsHandled, checker: world.observer)
        }
        let world = WireRun.run { SimWorld<SDK, Server, NoObserver>(setup: setup, observer: NoObserver()) }
        // A server on the wire that left the protocol, or an SDK core that failed in a way
        // of its own (an async SDK's escape), made no fingerprint worth the name.
        if let failure = CoreFailure.of(world) { return (failure.text, 1) }
        return (line(world.fingerprint, events: world.eventsHandled), 0)
    }

    /// `fingerprint <hex> events <N> records <N>` and a newline.
    static func line(_ fingerprint: Fingerprint, events: UInt64) -> String {
        "fingerprint \(fingerprint) events \(events) records \(fingerprint.records)\n"
    }

    /// The line, every violation, every invariant broken and the coverage missed; exit 1
    /// when an invariant broke.
    static func checked(fingerprint: Fingerprint, events: UInt64, checker: InvariantChecker) -> (text: String, status: Int32) {
        var text = line(fingerprint, events: events)
        for v in checker.violations { text += v.headline + "\n" }
        for inv in checker.broken { text += "broken: \(inv.rawValue) x\(checker.count(of: inv))\n" }
        text += "coverage missing: \(checker.coverage.missing.map(\.description).joined(separator: ", "))\n"
        return (text, checker.broken.isEmpty ? 0 : 1)
    }
}
