import SimKit
import ScenarioLanguage
import Scenarios

/// The requests of a run as windows in time: when each left its device, when the server
/// judged it, and when its answer came back. The generator reads them from a run of the
/// script it is writing, to place an action inside one (aiming at the trace).
struct RequestWindow: Equatable {
    var device: DeviceIndex
    var id: UInt32
    var kind: RequestKind
    var sentAt: SimTime
    /// When the server judged it, or nil (offline, an outage, a 5xx never reaches it).
    var servedAt: SimTime?
    /// What the server answered, when it judged it.
    var served: Answer?
    /// When the answer (or the SDK's own timeout) reached the device, or nil (the run
    /// ended first, or the process died).
    var deliveredAt: SimTime?
    /// The device's SDK reported `.locked` or `.purged` when it sent this request.
    var sentWhileLocked: Bool
}

/// Collects the `RequestWindow`s of a run, up to `limit` of them (then it stops keeping
/// more: a bound on memory, not a sample).
struct TraceWindowRecorder: TraceObserver {
    let limit: Int
    var windows: [RequestWindow] = []
    /// Windows not yet answered, by (device, id): looked up, never iterated.
    var open: [UInt64: Int] = [:]
    /// Devices whose SDK reports a lock, by index.
    var locked: [Bool] = []

    init(limit: Int = 20_000) { self.limit = limit }

    mutating func begin(_ facts: WorldFacts) { locked = Array(repeating: false, count: Int(facts.deviceCount)) }

    static func key(_ d: DeviceIndex, _ id: UInt32) -> UInt64 { UInt64(d) << 32 | UInt64(id) }

    mutating func observe(_ r: TraceRecord) {
        let d = r.device
        switch r.event {
        case .requestSent(let id, let kind, _, _):
            guard windows.count < limit else { return }
            open[TraceWindowRecorder.key(d, id)] = windows.count
            let wasLocked = Int(d) < locked.count && locked[Int(d)]
            windows.append(RequestWindow(device: d, id: id, kind: kind, sentAt: r.time, sentWhileLocked: wasLocked))
        case .served(let id, _, _, _, let reply, _):
            if let i = open[TraceWindowRecorder.key(d, id)] { windows[i].servedAt = r.time; windows[i].served = reply.answer }
        case .delivered(let id, _, _, _, _, _, _):
            if let i = open.removeValue(forKey: TraceWindowRecorder.key(d, id)) { windows[i].deliveredAt = r.time }
        case .processStarted:
            // Ids start again in a new process: what the old one awaited is gone.
            open = open.filter { $0.key >> 32 != UInt64(d) }
        case .state(let s):
            if Int(d) < locked.count { locked[Int(d)] = s == .locked || s == .purged }
        default:
            break
        }
    }
}

extension ScenarioGenerator {
    /// Runs `script` on the reference SDK and server up to `untilMs` and returns its request
    /// windows, or nil when the script does not compile. The reference, whatever the seed
    /// will run: the script of a seed is the same for every core it is run against.
    static func windows(of script: ScenarioFile, untilMs: SimTime) -> [RequestWindow]? {
        var s = script
        s.duration = min(script.duration, max(1, untilMs))
        s.sdk = .reference
        s.server = .reference
        guard var setup = try? ScenarioCompiler.compile(s, sdk: .reference).setup else { return nil }
        setup.eventBudget = min(setup.eventBudget, 2_000_000)
        var world = World<ReferenceSDK, TraceWindowRecorder>(setup: setup, observer: TraceWindowRecorder())
        world.run()
        return world.observer.windows
    }

    /// The index of the first device of `group` (the devices of the groups declared
    /// before it come first), or nil when no group has that name.
    func firstDevice(of group: String) -> DeviceIndex? {
        var first: UInt64 = 0
        for g in s.groups {
            if g.name == group { return DeviceIndex(first) }
            first += g.count
        }
        return nil
    }

    /// The group name and 1-based index of device `d` in the script's declaration order
    /// (the order the compiler lays devices out in), or nil past the last group.
    func place(of d: DeviceIndex) -> (group: String, index: UInt64)? {
        var first: UInt64 = 0
        for g in s.groups {
            if UInt64(d) < first + g.count { return (g.name, UInt64(d) - first + 1) }
            first += g.count
        }
        return nil
    }
}
