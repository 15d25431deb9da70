import Foundation
import SimKit

/// `simkit bench`: throughput of the engine on this machine.
enum BenchCommand {
    static let help = """
    usage: simkit bench [--devices N] [--days N] [--seed N]

    Runs the standard workload and prints events/s and simulated device-days/s.
    Build with -c release for meaningful figures.

    options:
      --devices N   devices (default 10000)
      --days N      virtual days (default 60)
      --seed N      seed (default 1)

    """

    static func run(_ argv: [String]) throws -> Int32 {
        let a = try Arguments(argv, switches: [], options: ["devices", "days", "seed"])
        if a.has("help") { print(help, terminator: ""); return 0 }
        let devices = try a.uint("devices", default: 10_000, range: 1...1_000_000)
        let days = try a.uint("days", default: 60, range: 1...3_650)
        let seed = try a.uint("seed", default: 1)
        var world = World<ReferenceSDK, NoObserver>(
            setup: StandardWorkload.setup(seed: seed, devices: UInt32(devices), days: days, ringDepth: 0), observer: NoObserver())
        let t0 = monotonicSeconds()
        world.run()
        let secs = monotonicSeconds() - t0
        let eps = Double(world.eventsHandled) / secs
        print("world without checkers: \(devices) devices x \(days) days: \(world.eventsHandled) events in \(String(format: "%.2f", secs)) s = \(String(format: "%.2f", eps / 1e6)) M events/s, \(String(format: "%.0f", Double(devices * days) / secs)) device-days/s")
        return 0
    }
}
