/// The SDK's boundary: what it needs from the device, injected. In the app these are
/// URLSession (`URLSessionTransport`), the file system, `ContinuousClock`, BGTaskScheduler
/// and PhotoKit; under SimKit, the adapter in `RollupSimKit` maps each onto SimKit's
/// simulated services. Nothing here knows SimKit.

/// Milliseconds on the SDK's clock; only differences and order matter to it.
public typealias Millis = UInt64

/// The network. `send` suspends until the answer: a verdict, or `.unreachable` (offline, a
/// 5xx, the transport's own timeout). Cancelling the calling task abandons the request.
public protocol RollupTransport: Sendable {
    func send(_ endpoint: Endpoint, token: DeviceToken?) async throws -> Reply
}

/// The SDK's clock: its time, and sleeping on it (`Task.sleep(for:clock:)` on the clock it wraps).
public protocol RollupClock: Sendable {
    var nowMillis: Millis { get }
    func sleep(for duration: Duration) async throws
}

/// The phone's calendar clock (`Date()`), in ms: the person may set it back or forward at
/// any time, while `RollupClock` (elapsed time) runs on untouched. Never slept on.
public protocol RollupWallClock: Sendable {
    var nowMillis: Int64 { get }
}

/// What the device keeps on disk between launches of the app: reads are immediate, each
/// `write` is durable before it returns.
public protocol RollupStore: Sendable {
    /// False after the phone restarts, until the person first unlocks it (iOS data
    /// protection): nothing stored can be read or written then, which is not "nothing stored".
    var isReadable: Bool { get }
    var token: DeviceToken? { get }
    /// A reset whose deletion on the server has not been confirmed yet: the old token.
    var tokenAwaitingDeletion: DeviceToken? { get }
    /// A deletion still owed from an earlier reset when a later one named a newer token
    /// (each reset's deletion is retried until confirmed, D7); set only while
    /// `tokenAwaitingDeletion` is.
    var earlierTokenAwaitingDeletion: DeviceToken? { get }
    var indexedPhotos: UInt32 { get }
    var hasModels: Bool { get }
    var hasPlaceData: Bool { get }
    var queuedReports: UInt32 { get }
    var isLocked: Bool { get }
    var isPurged: Bool { get }
    var lockedSince: Millis? { get }
    var lastKeyVerdict: Millis? { get }
    /// What the phone's calendar clock read at that verdict, nil if not known.
    var lastKeyVerdictWallClock: Int64? { get }
    /// Writes one change, durably; false when the disk refused it (it is full, P3): the old
    /// value stays, and the SDK must not count the change as done.
    @discardableResult
    func write(_ change: StoreChange) -> Bool
    /// Returns when the storage is done with the writes made so far (a file store's
    /// `fsync`), which takes time: other calls of the SDK may run meanwhile. By default
    /// it returns at once.
    func synchronize() async
}

extension RollupStore {
    public func synchronize() async {}
}

/// One durable change of the SDK's disk.
public enum StoreChange: Equatable, Sendable {
    case setToken(DeviceToken?)
    case setTokenAwaitingDeletion(DeviceToken?)
    case setEarlierTokenAwaitingDeletion(DeviceToken?)
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
}

/// The OS's background task scheduling (BGTaskScheduler).
public protocol BackgroundTaskScheduler: Sendable {
    /// What runs when the OS fires the SDK's task; registered at each launch.
    func register(_ handler: @escaping @Sendable () async -> Void)
    /// What the OS calls when the running task's time is up (BGTask's `expirationHandler`);
    /// set by each run the task starts.
    func onExpiration(_ handler: @escaping @Sendable () -> Void)
    var isScheduled: Bool { get }
    func schedule()
    func cancel()
}

/// The Photos library and the person's permission.
public protocol PhotoLibrary: Sendable {
    var count: UInt32 { get }
    var isAuthorized: Bool { get }
}

/// What the SDK tells the app (and its analytics): the state, and indexing runs.
public protocol RollupObserver: Sendable {
    func stateChanged(_ state: RollupState)
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
}

/// The SDK's state, as the app sees it.
public enum RollupState: Sendable, Equatable {
    case notConfigured, indexing, idle
    /// `.failed(.accessRevoked)`; `dataDeleted` after 30 days without access.
    case accessRevoked(dataDeleted: Bool)
}

public enum RollupError: Error, Sendable, Equatable {
    case accessRevoked
    case notConfigured
    /// Offline, a timeout, a server error, or a refusal that does not stop access.
    case unavailable
}

/// What came back for a request.
public enum Reply: Sendable, Equatable {
    case served(at: Millis, token: DeviceToken?)
    case refused(Refusal, at: Millis, stoppedSince: Millis?)
    case unreachable

    var verdictAt: Millis? {
        switch self { case .served(let at, _), .refused(_, let at, _): at; case .unreachable: nil }
    }
}

public enum Refusal: Sendable, Equatable {
    case keyInvalid, appDisabled, appPending, deviceUnknown, keyMismatch, attestationFailed
    public var stopsAccess: Bool { self == .keyInvalid || self == .appDisabled || self == .keyMismatch }
}

/// Bugs a team could write in async code, to see SimKit catch them (never on in the app).
public struct PlantedBugs: OptionSet, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// The indexing loop swallows the cancellation of its sleep (`try?`) and writes the
    /// next chunk after the lock cancelled it.
    public static let indexesAfterCancel = PlantedBugs(rawValue: 1 << 0)
    /// Actor re-entrancy: the newest verdict is read before the request's `await` and
    /// compared after it, so an older verdict that arrives late is acted on.
    public static let verdictReadBeforeAwait = PlantedBugs(rawValue: 1 << 1)
    /// Check-then-act split by an `await`: an answer that arrives after `reset()` (which
    /// happened while it was in flight) is acted on.
    public static let answerAfterReset = PlantedBugs(rawValue: 1 << 2)
    /// The report upload's retry loop outlives the lock: it is not cancelled and does not
    /// look again after its back-off.
    public static let retryOutlivesLock = PlantedBugs(rawValue: 1 << 3)
    /// The missing downloads are a `Set`, fetched in its iteration order: the order of the
    /// requests depends on the process's hash seed (a leak, not a rule broken).
    public static let downloadsInSetOrder = PlantedBugs(rawValue: 1 << 4)
    /// The timeout race takes the transport's late answer: when its sleep ends first it
    /// keeps waiting for the transport, and acts on an answer that came after the request
    /// timed out (D9), or waits for good on one the network lost.
    public static let lateAnswerWins = PlantedBugs(rawValue: 1 << 5)
    /// Check-await-act that re-enters: an activation whose check is due sends one of its own
    /// with one in flight, and one "pending check" slot is completed by the first check
    /// answer to come back: the newer check's answer, arriving after, finds it closed and
    /// is dropped (a lock error among them, or the 200 that unlocks).
    public static let checkReenters = PlantedBugs(rawValue: 1 << 6)
    /// The uploader outlives `reset()`: a last flush of the queued reports, meant to go
    /// before the wipe, is an unawaited task that sends them after it, with the token the
    /// reset deleted.
    public static let uploaderOutlivesReset = PlantedBugs(rawValue: 1 << 7)
    /// The deletion's retry reads the token again at each try: once the device registered
    /// again meanwhile, it deletes the new registration, and the one the reset named stays.
    public static let resetRetryReadsCurrentToken = PlantedBugs(rawValue: 1 << 8)
    /// Write-then-act across an await: a lock error reports the lock at once but stops the
    /// run, the background task and the retries only once the storage is done with the
    /// lock's write (`synchronize`),
    /// so all of them go on while the storage takes its time (a background run the OS
    /// fires then, a chunk indexed, a retry sent). Invisible while writes take no time
    /// (issue 46, part 2).
    public static let stopsAfterTheLockIsWritten = PlantedBugs(rawValue: 1 << 9)
}

/// The SDK's constants, and the ones the app's backend sets.
public struct RollupSettings: Sendable {
    public var requestTimeout: Millis = 30_000
    public var checkInterval: Millis = 86_400_000
    public var purgeAfter: Millis = 30 * 86_400_000
    public var photosPerChunk: UInt16 = 100
    public var chunkDuration: Millis = 5_000
    public var retryFirst: Millis = 15_000
    public var retryMax: Millis = 4 * 3_600_000
    /// Server-backed API calls at once; more fail at once.
    public var callsMax: Int = 4
    public var bugs: PlantedBugs = []
    public init() {}
}
