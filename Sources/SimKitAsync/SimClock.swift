import SimKit

/// The phone's wall clock, for an async SDK's calendar-time port (`Date()` in the app): the
/// world's time plus the offset a `clock` fault set (SPEC P2), read at the step in which the
/// SDK asks. It cannot be slept on: sleeps and timeouts run on `SimClock`, elapsed time.
public struct SimWallClock: Sendable {
    let device: SimDevice
    /// Milliseconds since the world's start on the phone's clock (negative when it was set
    /// back before the start).
    public var nowMillis: Int64 { Int64(device.now) + device.wallClockOffsetMs }
}

/// A `Clock` on the world's virtual time, one per simulated app process. `now` is the
/// world's time (ms since the start); `sleep(until:)` parks the task on the device's timer
/// list, which the adapter turns into a SimKit timer: virtual time jumps exactly when
/// nothing is runnable. Cancelling the sleeping task ends the sleep with `CancellationError`.
public struct SimClock: Clock, Sendable {
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Virtual milliseconds since the world's start.
        public var ms: SimTime
        public init(ms: SimTime) { self.ms = ms }
        public func advanced(by d: Duration) -> Instant {
            let delta = SimClock.milliseconds(d)
            return Instant(ms: delta >= 0 ? ms &+ SimTime(delta) : ms &- min(ms, SimTime(-delta)))
        }
        public func duration(to other: Instant) -> Duration {
            other.ms >= ms ? .milliseconds(Int64(other.ms - ms)) : .milliseconds(-Int64(ms - other.ms))
        }
        public static func < (a: Instant, b: Instant) -> Bool { a.ms < b.ms }
        public var description: String { "\(ms)ms" }
    }

    let device: SimDevice
    init(device: SimDevice) { self.device = device }

    public var now: Instant { Instant(ms: device.now) }
    public var minimumResolution: Duration { .milliseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await device.sleep(until: deadline.ms)
    }

    /// Whole milliseconds of `d`, rounded up (a sleep never ends early).
    static func milliseconds(_ d: Duration) -> Int64 {
        let (s, atto) = d.components
        let ms = s &* 1000 &+ atto / 1_000_000_000_000_000
        return atto % 1_000_000_000_000_000 > 0 ? ms &+ 1 : ms
    }
}
