import Foundation
import Dispatch
import SimKit
import SimKitAsync
import Rollup

/// Leaky services, as a team might write them by mistake: each lets work escape SimKit's
/// loop, and the host stops the first seed with a verdict naming the leak.

/// A transport that hands its answer back through `DispatchQueue.global()` (a completion
/// handler bridged with a continuation): the resume runs on a Dispatch thread.
public enum LeakDispatch: BugChoice {
    public static func transport(_ device: SimDevice) -> any RollupTransport { DispatchHopTransport(inner: SimTransport(device: device)) }
}

struct DispatchHopTransport: RollupTransport {
    let inner: SimTransport
    func send(_ endpoint: Endpoint, token: DeviceToken?) async throws -> Reply {
        let reply = try await inner.send(endpoint, token: token)
        return await withCheckedContinuation { c in DispatchQueue.global().async { c.resume(returning: reply) } }
    }
}

/// A clock that reads the wall clock (`Date()`) for its time.
public enum LeakDate: BugChoice {
    public static func clock(_ device: SimDevice) -> any RollupClock { DateClock(sleeper: SimRollupClock(clock: device.clock)) }
}

struct DateClock: RollupClock {
    let sleeper: SimRollupClock
    var nowMillis: Millis { Millis(Date().timeIntervalSince1970 * 1000) }
    func sleep(for duration: Duration) async throws { try await sleeper.sleep(for: duration) }
}

/// A transport whose request spins: it yields forever instead of waiting for an answer
/// (a polling loop without a sleep). The step never settles.
public enum LeakSpin: BugChoice {
    public static func transport(_ device: SimDevice) -> any RollupTransport { SpinTransport() }
}

struct SpinTransport: RollupTransport {
    func send(_ endpoint: Endpoint, token: DeviceToken?) async throws -> Reply {
        while true { await Task.yield() }
    }
}

/// A transport whose `query` and `profile` wait on a continuation nobody resumes (a
/// callback that never comes): the API call never returns.
public enum LeakHang: BugChoice {
    public static func transport(_ device: SimDevice) -> any RollupTransport { HangTransport(inner: SimTransport(device: device)) }
}

struct HangTransport: RollupTransport {
    /// The continuations left waiting, kept so that they are not reported as leaked.
    final class Waiting: @unchecked Sendable { var list: [UnsafeContinuation<Void, Never>] = [] }
    static let waiting = Waiting()
    let inner: SimTransport
    func send(_ endpoint: Endpoint, token: DeviceToken?) async throws -> Reply {
        guard endpoint == .query || endpoint == .profile else { return try await inner.send(endpoint, token: token) }
        await withUnsafeContinuation { c in Self.waiting.list.append(c) }
        return .unreachable
    }
}

/// Downloads in `Set` order: the trace depends on the hash seed (`hash-check` finds it).
public enum LeakSet: BugChoice { public static var bugs: PlantedBugs { .downloadsInSetOrder } }
