/// Which devices an action applies to; a share is drawn anew at each firing, from the
/// seed, the statement and the firing number, so it is the same on every run.
public struct DeviceSelection: Sendable, Equatable {
    public enum Mode: Sendable, Equatable {
        case every
        case count(UInt32)
        /// A share in basis points (10,000 = 100 %), rounded down.
        case shareBp(UInt32)
        /// One device, by its 0-based index within the group.
        case single(UInt32)
    }
    /// The group, or nil for every device in the world.
    public var group: Int?
    public var mode: Mode
    public init(group: Int?, mode: Mode) { self.group = group; self.mode = mode }
    public static let all = DeviceSelection(group: nil, mode: .every)
}

/// What a scheduled statement does when it fires.
public enum WorldAction: Sendable, Equatable {
    /// `arg`: photos for `addPhotos`; for `update`, the shipped key + 1, or 0 for the app's current key.
    case person(PersonAction, DeviceSelection, arg: UInt32)
    /// An injected fault (SPEC §1.4): its kind's file in `Faults/` says what it does.
    case fault(Fault)
    case dashboard(DashboardAction)
    case forgetDevice(DeviceSelection)
    /// Marks a point in the trace where an expectation is judged.
    case probe(UInt32)
}

/// `at T` (period 0) or `every D [jitter J] [from T] [until T]`.
public struct ScheduledAction: Sendable, Equatable {
    public var firstAtMs: SimTime
    /// 0 fires once.
    public var periodMs: SimTime
    /// No firing after this time.
    public var untilMs: SimTime
    /// Each device's firing is moved later by a random amount in `0...jitterMs`.
    public var jitterMs: SimTime
    public var action: WorldAction
    public init(firstAtMs: SimTime, periodMs: SimTime = 0, untilMs: SimTime = .max, jitterMs: SimTime = 0, action: WorldAction) {
        self.firstAtMs = firstAtMs; self.periodMs = periodMs; self.untilMs = untilMs
        self.jitterMs = jitterMs; self.action = action
    }
    public static func at(_ t: SimTime, _ action: WorldAction) -> ScheduledAction { .init(firstAtMs: t, action: action) }
}
