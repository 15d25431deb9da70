/// The SDK's boundary: everything `AccessController` decides goes out through these
/// protocols, and everything it learns comes in through its methods. In the app, they are
/// implemented by the file system, URLSession, BGTaskScheduler and the public API's
/// callbacks; under SimKit, by one recording object per device (`PhotoAccessSimKit`).
///
/// The rule that makes the SDK testable by simulation: the controller never waits. It
/// sends a request and returns; the answer comes back later as a call of `received`.

/// Milliseconds since some origin; only differences and order matter to the SDK.
public typealias Millis = UInt64

/// What the device keeps on disk between launches of the app.
public protocol IndexStore: AnyObject {
    /// False after the phone restarts, until the person first unlocks it (iOS data
    /// protection): nothing stored can be read or written then, which is not "nothing stored".
    var isReadable: Bool { get }
    var token: DeviceToken? { get }
    /// A reset whose deletion on the server has not been confirmed yet: the old token.
    var tokenAwaitingDeletion: DeviceToken? { get }
    /// A deletion still owed from an earlier reset when a later one named a newer token
    /// (each reset's deletion is retried until confirmed); set only while
    /// `tokenAwaitingDeletion` is.
    var earlierTokenAwaitingDeletion: DeviceToken? { get }
    var indexedPhotos: UInt32 { get }
    var hasModels: Bool { get }
    var hasPlaceData: Bool { get }
    var queuedReports: UInt32 { get }
    var isLocked: Bool { get }
    /// The data was deleted after 30 days without access.
    var isPurged: Bool { get }
    var lockedSince: Millis? { get }
    /// When the server last gave a verdict on the key to a key check.
    var lastKeyVerdict: Millis? { get }
    /// What the phone's calendar clock read then (`AppHost.wallClock`), nil if not known.
    var lastKeyVerdictWallClock: Int64? { get }
    var backgroundTaskRegistered: Bool { get }
    /// Writes one change, durably, before returning; false when the disk refused it (it is
    /// full): the old value stays, and the SDK must not count the change as done.
    @discardableResult
    func write(_ change: StoreChange) -> Bool
}

/// One durable change of the SDK's disk.
public enum StoreChange: Equatable, Sendable {
    case setToken(DeviceToken?)
    case setTokenAwaitingDeletion(DeviceToken?)
    case setEarlierTokenAwaitingDeletion(DeviceToken?)
    /// Photos `from..<from+count` are indexed.
    case indexed(from: UInt32, count: UInt16)
    case deleteIndex
    case saveModels, deleteModels
    case savePlaceData, deletePlaceData
    case queueReport
    case reportsUploaded(UInt32)
    case dropReports
    case lock, unlock, markPurged
    case setLockedSince(Millis?)
    case setLastKeyVerdict(Millis?)
    /// The phone's calendar clock at the last key verdict (written after `setLastKeyVerdict`).
    case setLastKeyVerdictWallClock(Int64)
    case registerBackgroundTask, cancelBackgroundTask
}

/// The network: requests go out, answers come back through `AccessController.received`.
public protocol AccessAPI: AnyObject {
    /// Sends `endpoint` with the device token (nil for `register`); `id` comes back with the answer.
    func send(_ endpoint: Endpoint, id: UInt32, token: DeviceToken?)
}

/// Timers; a firing comes back through `AccessController.fired`.
public protocol Timers: AnyObject {
    /// Starts (or restarts) `timer` to fire at `at` with `tag`. Restarting a timer other
    /// than `requestDeadline` replaces its earlier firing; deadlines are one per request.
    func start(_ timer: TimerName, at: Millis, tag: UInt32)
    func cancel(_ timer: TimerName)
}

/// The app around the SDK: its public state, its calls' results, and the facts it may read.
public protocol AppHost: AnyObject {
    var now: Millis { get }
    /// The phone's calendar clock (`Date()`), in ms: the person may set it back or forward
    /// at any time, while `now` (elapsed time) runs on untouched.
    var wallClock: Int64 { get }
    var photoCount: UInt32 { get }
    var photosAccessAllowed: Bool { get }
    func publish(_ state: PublicState)
    func finished(_ call: Call, _ result: CallResult)
    func indexingStarted(background: Bool)
    func indexingEnded()
}

/// A device token issued by the server at registration.
public struct DeviceToken: Equatable, Sendable {
    public var raw: UInt64
    public init(raw: UInt64) { self.raw = raw }
}

public enum Endpoint: UInt8, Sendable, CaseIterable {
    case keyCheck, register, query, profile, placeData, models, runReport, deleteDevice
    var isKeyCheck: Bool { self == .keyCheck || self == .register }
    var call: Call? { self == .query ? .query : self == .profile ? .profile : nil }
}

public enum Call: Sendable { case search, query, profile }
public enum CallResult: Sendable { case ok, accessRevoked, failed }
public enum PublicState: Sendable { case notConfigured, indexing, idle, locked, purged }
public enum TimerName: Sendable { case nextChunk, requestDeadline, retryDeviceDeletion, retryReportUpload }

/// What came back for a request.
public enum Reply: Sendable, Equatable {
    /// 200, served at the server's time `at`; a registration carries the new token.
    case served(at: Millis, token: DeviceToken?)
    /// A 4xx verdict at the server's time `at`; a refusal that stops access carries since
    /// when the server has refused this device without a break.
    case refused(Refusal, at: Millis, stoppedSince: Millis?)
    /// Offline, a timeout or a 5xx: no verdict.
    case unreachable

    /// The server's time of the verdict, or nil.
    var verdictAt: Millis? {
        switch self { case .served(let at, _), .refused(_, let at, _): at; case .unreachable: nil }
    }
}

public enum Refusal: Sendable, Equatable {
    case keyInvalid, appDisabled, appPending, deviceUnknown, keyMismatch, attestationFailed
    /// The three refusals that stop access.
    public var stopsAccess: Bool { self == .keyInvalid || self == .appDisabled || self == .keyMismatch }
    /// The HTTP status the server sends it with.
    public var status: Int {
        switch self { case .appDisabled, .appPending: 403; default: 401 }
    }
}

/// Bugs the team can switch on to see SimKit catch them (never on in the app).
public struct PlantedBugs: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// "Every 403 means we lost access": locks on `app_pending` too (D6 says it must not).
    public static let lockOnAny403 = PlantedBugs(rawValue: 1 << 0)
    /// Deletes the data 30 days after this device locked, by its own clock, instead of
    /// when the server says access has been stopped for 30 days (D5).
    public static let purgeByDeviceClock = PlantedBugs(rawValue: 1 << 1)
}

/// The SDK's own constants, and the ones the app's backend sets.
public struct AccessSettings: Sendable {
    public var requestTimeout: Millis = 30_000
    /// Check on activation when the last verdict is older than this (D1: a day).
    public var checkInterval: Millis = 86_400_000
    /// Delete the data after access has been stopped this long (D5: 30 days).
    public var purgeAfter: Millis = 30 * 86_400_000
    public var photosPerChunk: UInt16 = 100
    public var chunkDuration: Millis = 5_000
    public var retryFirst: Millis = 15_000
    public var retryMax: Millis = 4 * 3_600_000
    /// Requests awaited at once; the oldest is given up beyond this (a deletion never is).
    public var pendingMax: Int = 24
    /// Server-backed API calls at once; more fail at once.
    public var callsMax: Int = 4
    public var bugs: PlantedBugs = []
    public init() {}
}
