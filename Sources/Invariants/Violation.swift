import SimKit

/// One broken promise: which invariant, when, on which device, in plain words, and the
/// device's last trace records before it.
public struct Violation: Sendable {
    public var invariant: InvariantID
    public var time: SimTime
    /// The device, or `Event.world` for a server-wide violation.
    public var device: DeviceIndex
    /// `photos#17`.
    public var deviceName: String
    /// One sentence: what happened and which rule it breaks.
    public var message: String
    /// The device's last records, oldest first (from the checker's per-device ring).
    public var lastEvents: [TraceRecord]

    public init(invariant: InvariantID, time: SimTime, device: DeviceIndex, deviceName: String, message: String, lastEvents: [TraceRecord]) {
        self.invariant = invariant; self.time = time; self.device = device
        self.deviceName = deviceName; self.message = message; self.lastEvents = lastEvents
    }

    /// `[never-lock-on-transient] 3d02h00m00.120s photos#17: …`
    public var headline: String {
        "[\(invariant.rawValue)] \(DurationText.clock(time)) \(deviceName): \(message) (\(invariant.rules))"
    }
}
