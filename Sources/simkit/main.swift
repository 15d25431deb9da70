import Foundation
import SimKit

let args = Array(CommandLine.arguments.dropFirst())
let seed = UInt64(args.first ?? "1") ?? 1
let devices = UInt32(args.count > 1 ? args[1] : "1000") ?? 1000
let days = UInt64(args.count > 2 ? args[2] : "60") ?? 60
var world = World<ReferenceSDK, NoObserver>(setup: StandardWorkload.setup(seed: seed, devices: devices, days: days), observer: NoObserver())
let t0 = DispatchTime.now().uptimeNanoseconds
world.run()
let secs = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
print("fingerprint \(world.fingerprint) events \(world.eventsHandled) records \(world.fingerprint.records) \(Int(Double(world.eventsHandled)/secs)) ev/s")
var counts = [Int](repeating: 0, count: 5)
for d in world.devices { counts[Int(d.reportedState.rawValue)] += 1 }
print(counts, world.devices.map { Int($0.disk.indexedCount) }.reduce(0,+), world.devices.map { Int($0.photoCount) }.reduce(0,+))
