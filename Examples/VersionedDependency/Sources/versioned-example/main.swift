// Uses each of SimKit's three library products from a versioned dependency: a world of the
// standard workload with every invariant checked (the engine is `@inlinable`, so it is
// specialised here, on the reference SDK and the checker), then one fuzz seed through the
// Swift Testing API. Prints what `simkit fingerprint --check` prints for the same world,
// so a test can compare the two; exits 1 if an invariant broke.
import Foundation
import Invariants
import SimKit
import SimKitTesting

let setup = StandardWorkload.setup(seed: 1, devices: 50, days: 3)
var world = World<ReferenceSDK, InvariantChecker>(setup: setup, observer: InvariantChecker())
world.run()
print("fingerprint \(world.fingerprint) events \(world.eventsHandled) records \(world.fingerprint.records)")
for invariant in world.observer.broken { print("broken: \(invariant.rawValue)") }

let seed = SimKitTest.seed(1, devices: 5)
print("fuzz seed 1: \(seed.passed ? "passed" : "FAILED\n\(seed)")")
exit(world.observer.broken.isEmpty && seed.passed ? 0 : 1)
