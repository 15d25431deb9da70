import Foundation

// The SDK's ports: everything it needs from the outside world, as protocols. The app
// passes production implementations; a test harness passes its own. Nothing here knows
// how the other side works.

/// The endpoints of Rollup's API that the SDK calls.
public enum Route: String, Sendable, Codable, CaseIterable {
    /// Key check for a device that is enrolled (D1).
    case verifyKey
    /// App Attest enrolment; it is also the key check of a device without an id.
    case enroll
    case query, profile
    /// Place data and model downloads.
    case places, models
    /// Run reports.
    case telemetry
    /// Deletes the device's record (reset).
    case unenroll
}

/// A refusal with Rollup's error code.
public enum Refusal: Sendable, Equatable {
    /// 401 `app_key_invalid`, 403 `app_disabled`, 401 `app_key_mismatch`: access stopped.
    case keyInvalid, appDisabled, keyMismatch
    /// 403 `app_pending`.
    case pending
    /// 401 `device_unknown`: enrol again.
    case unknownDevice
    /// 401 `attestation_failed`.
    case attestation

    public var stopsAccess: Bool { self == .keyInvalid || self == .appDisabled || self == .keyMismatch }
}

/// What came back over HTTP, as the SDK reads it. Only Rollup's own answers carry the
/// server's time; anything else (a 5xx, no network, a portal's page) is no verdict.
public enum WireResult: Sendable, Equatable {
    case ok(serverTime: UInt64, deviceID: UInt64?)
    case refused(Refusal, serverTime: UInt64, stoppedSince: UInt64?)
    case noVerdict
}

/// HTTP to Rollup. `deviceID` is the enrolled device's id (nil before enrolment). The
/// port may take as long as it likes: the SDK applies its own timeout.
public protocol HTTPPort: Sendable {
    func send(_ route: Route, deviceID: UInt64?) async throws -> WireResult
}

/// Time: the phone's clock in milliseconds, and sleeping on elapsed time.
public protocol TimePort: Sendable {
    /// Elapsed time (monotonic): back-offs, timeouts.
    var nowMs: UInt64 { get }
    /// The phone's calendar clock (`Date()`), which the person may set back or forward.
    var wallMs: Int64 { get }
    func sleep(ms: UInt64) async throws
}

/// Durable storage of whole blobs by key (a file each, written atomically).
public protocol BlobPort: Sendable {
    func load(_ key: String) throws -> Data?
    func store(_ key: String, _ data: Data) throws
    /// Waits until what was stored has reached the disk (`fsync`): it may take a while,
    /// and the actor takes other calls meanwhile.
    func flush() async
}

extension BlobPort {
    /// A store that is on the disk when it returns has nothing to wait for.
    public func flush() async {}
}

/// The OS's background task scheduler.
public protocol SchedulerPort: Sendable {
    /// Registers what runs when the OS fires the task.
    func register(_ work: @escaping @Sendable () async -> Void)
    /// What the OS calls when the running task's time is up (BGTask's `expirationHandler`),
    /// set by each run the task starts.
    func onExpiration(_ handler: @escaping @Sendable () -> Void)
    func submit()
    func withdraw()
}

/// The Photos library.
public protocol PhotosPort: Sendable {
    var assetCount: UInt32 { get }
    var isAuthorized: Bool { get }
}
