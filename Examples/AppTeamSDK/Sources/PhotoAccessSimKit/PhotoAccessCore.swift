import SimKit
import PhotoAccess

/// The app team's SDK as a SimKit core: each device's `AccessController`, wired to a
/// `SimulatedDevice` that records what it asks for as SimKit effects instead of doing I/O.
///
/// SimKit treats a core as a value: it copies one fresh core to every device and copies
/// whole worlds, and a copy must never see the original's later steps. The SDK is a class,
/// so this struct copies it on write: before a step, a core that shares its box with
/// another value gets a deep copy (the controller's `memory` is a plain value; the device
/// wrapper holds nothing between steps).
///
/// `Bugs` chooses the planted bugs at compile time, so each variant is a core of its own
/// type: `PhotoAccessCore<NoBugs>` is the SDK as shipped.
public struct PhotoAccessCore<Bugs: BugChoice>: SDKCore {
    var box: Box

    public init() { box = Box(bugs: Bugs.bugs) }

    public mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                                effects: inout EffectBuffer) {
        if !isKnownUniquelyReferenced(&box) { box = box.copy() }
        let device = box.device, controller = box.controller
        device.begin(now: now, context: context, disk: disk)
        controller.apply(world: config)
        if !context.diskFull { controller.diskHasRoom() }
        switch input {
        case .launch(let inBackground): controller.launched(inBackground: inBackground)
        case .becameActive: controller.becameActive()
        case .wentToBackground: controller.wentToBackground()
        case .backgroundRun: controller.backgroundTaskFired()
        case .backgroundExpiring: controller.backgroundTimeExpiring()
        case .call(let call): controller.called(call == .search ? .search : call == .query ? .query : .profile)
        case .reset: controller.reset()
        case .response(let id, _, let reply): controller.received(Reply(reply), for: id)
        case .timer(let kind, let arg):
            controller.fired(TimerName(kind), tag: kind == .requestTimeout ? RequestTimeout.id(inArg: arg) : arg)
        }
        for effect in device.effects { effects.append(effect) }
        device.effects.removeAll(keepingCapacity: true)
    }

    /// The deadline of a request no longer awaited does nothing: the engine may drop it.
    public func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool {
        kind == .requestTimeout && !box.controller.isAwaiting(RequestTimeout.id(inArg: arg))
    }

    /// One device's SDK process: the controller and its I/O.
    /// determinism: owned by one core value, deep-copied before a shared one is written
    /// (copy on write); SimKit runs each world on one thread.
    final class Box: @unchecked Sendable {
        let device: SimulatedDevice
        let controller: AccessController

        init(bugs: PlantedBugs) {
            var settings = AccessSettings()
            settings.bugs = bugs
            device = SimulatedDevice()
            controller = AccessController(settings: settings, store: device, api: device, timers: device, host: device)
        }

        init(copying other: Box) {
            device = SimulatedDevice()
            controller = AccessController(settings: other.controller.settings, store: device, api: device, timers: device,
                                          host: device)
            controller.memory = other.controller.memory
        }

        func copy() -> Box { Box(copying: self) }
    }
}

extension AccessController {
    /// Takes the world's settings that are the product's, not the SDK's: the request
    /// timeout, the check interval and the purge delay (D1, D5, D9). The SDK's own
    /// constants (chunks, back-off, how many requests it awaits) stay its own.
    func apply(world config: SDKConfig) {
        settings.requestTimeout = config.requestTimeoutMs
        settings.checkInterval = config.checkIntervalMs
        settings.purgeAfter = config.purgeAfterMs
    }
}

/// Which planted bugs a core type carries.
public protocol BugChoice: Sendable { static var bugs: PlantedBugs { get } }
/// The SDK as shipped.
public enum NoBugs: BugChoice { public static var bugs: PlantedBugs { [] } }
/// Every 403 locks, `app_pending` included.
public enum LockOnAny403: BugChoice { public static var bugs: PlantedBugs { .lockOnAny403 } }
/// Purges 30 days after the device locked, by the device's clock.
public enum PurgeByDeviceClock: BugChoice { public static var bugs: PlantedBugs { .purgeByDeviceClock } }

/// The cores this package registers, by the names scenarios and `--sdk custom:NAME` use.
public enum PhotoAccessCores {
    public static let all: [String: any SDKCore.Type] = [
        "app-team": PhotoAccessCore<NoBugs>.self,
        "app-team-any-403": PhotoAccessCore<LockOnAny403>.self,
        "app-team-device-clock": PhotoAccessCore<PurgeByDeviceClock>.self,
    ]
}
