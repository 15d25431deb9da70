import Foundation
import SimKit
import SimKitAsync
import BlobSDK

/// Lumen under SimKit: one actor per app process over a simulated device, each world input
/// a call of its API, its ports on the device's services, its ledger read by `observe`.
public final class BlobHarness: AsyncSDKHarness {
    let device: SimDevice
    let sdk: Lumen

    public init(device: SimDevice) {
        self.device = device
        var options = LumenOptions()
        // The world's product settings (D1, D5, D9); the back-offs stay the SDK's own.
        options.requestTimeoutMs = device.config.requestTimeoutMs
        options.staleCheckMs = device.config.checkIntervalMs
        options.wipeAfterMs = device.config.purgeAfterMs
        sdk = Lumen(options: options, http: Wire(device: device), time: Ticks(clock: device.clock, wall: device.wallClock),
                    blobs: Files(device: device), scheduler: Scheduler(tasks: device.backgroundTasks),
                    photos: Library(device: device)) { [device] state in
            switch state {
            case .unconfigured: device.publish(.unconfigured)
            case .indexing: device.publish(.indexing)
            case .idle: device.publish(.idle)
            case .failed(.accessRevoked):
                let wiped = (try? device.files.read(Ledger.key)).flatMap { $0 }.flatMap { Ledger.decode(Data($0)) }?.wiped ?? false
                device.publish(wiped ? .purged : .locked)
            }
        }
    }

    public func handle(_ event: DeviceEvent) async {
        switch event {
        case .launch(let inBackground):
            await sdk.configure(inBackground: inBackground)
            if inBackground { _ = await device.backgroundTasks.fire() }   // the OS launched it for its task
        case .becameActive: await sdk.didBecomeActive()
        case .wentToBackground: await sdk.didEnterBackground()
        case .backgroundRun: _ = await device.backgroundTasks.fire()
        case .reset: await sdk.reset()
        case .call(let call):
            do {
                switch call {
                case .search: _ = try await sdk.search()
                case .query: try await sdk.query()
                case .profile: try await sdk.profile()
                }
                device.finished(call, .returned)
            } catch LumenError.accessRevoked {
                device.finished(call, .threwAccessRevoked)
            } catch {
                device.finished(call, .failed)
            }
        }
    }

    /// What the checkers need, read from the SDK's one ledger blob.
    public static func observe(_ disk: SimDiskContents) -> DiskObservation? {
        guard let bytes = disk[Ledger.key], let ledger = Ledger.decode(Data(bytes)) else { return DiskObservation() }
        return DiskObservation(indexedPhotos: ledger.indexed, modelsPresent: ledger.hasModels, placeDataPresent: ledger.hasPlaces,
                               credential: ledger.deviceID.map(Credential.init(id:)) ?? .none, locked: ledger.revoked,
                               lockedSince: ledger.revokedSince, purged: ledger.wiped, queuedReports: UInt32(ledger.reports.count),
                               pendingReset: ledger.owedUnenroll.first.map(Credential.init(id:)) ?? .none,
                               lastAnsweredCheck: ledger.lastCheckAt)
    }

    /// A clone restored from a genuine install's backup holds its device id (S6): written
    /// into the ledger, or a fresh ledger holding only it.
    public static func place(_ credential: Credential, in disk: inout SimDiskContents) -> Bool {
        var ledger = disk[Ledger.key].flatMap { Ledger.decode(Data($0)) } ?? Ledger()
        ledger.deviceID = credential.id
        guard let data = try? ledger.encoded() else { return false }
        disk[Ledger.key] = [UInt8](data)
        return true
    }

    /// The README's stated back-offs (D7, D10).
    public static var statement: SDKStatement {
        let o = LumenOptions()
        return SDKStatement(reportRetryBackoffMaxMs: o.uploadBackoffCapMs, resetRetryBackoffMaxMs: o.unenrollBackoffCapMs)
    }
}

public enum BlobCores {
    public static let all: [String: any SDKCore.Type] = ["blob": AsyncCore<BlobHarness>.self]
}

// MARK: - The ports on SimKitAsync's services

struct Wire: HTTPPort {
    let device: SimDevice
    func send(_ route: Route, deviceID: UInt64?) async throws -> WireResult {
        let kind: RequestKind = switch route {
        case .verifyKey: .check
        case .enroll: .register
        case .query: .query
        case .profile: .profile
        case .places: .placeData
        case .models: .modelDownload
        case .telemetry: .runReport
        case .unenroll: .reset
        }
        let r = try await device.send(kind, credential: deviceID.map(Credential.init(id:)) ?? .none)
        let since = r.stoppedSince == ServerReply.none ? nil : r.stoppedSince
        switch r.answer {
        case .ok: return .ok(serverTime: r.servedAt, deviceID: r.credential.isNone ? nil : r.credential.id)
        case .appKeyInvalid: return .refused(.keyInvalid, serverTime: r.servedAt, stoppedSince: since)
        case .appDisabled: return .refused(.appDisabled, serverTime: r.servedAt, stoppedSince: since)
        case .appKeyMismatch: return .refused(.keyMismatch, serverTime: r.servedAt, stoppedSince: since)
        case .appPending: return .refused(.pending, serverTime: r.servedAt, stoppedSince: nil)
        case .deviceUnknown: return .refused(.unknownDevice, serverTime: r.servedAt, stoppedSince: nil)
        case .attestationFailed: return .refused(.attestation, serverTime: r.servedAt, stoppedSince: nil)
        case .serverError, .timedOut, .offline, .notRollup: return .noVerdict
        }
    }
}

struct Ticks: TimePort {
    let clock: SimClock
    let wall: SimWallClock
    var nowMs: UInt64 { clock.now.ms }
    var wallMs: Int64 { wall.nowMillis }
    func sleep(ms: UInt64) async throws { try await clock.sleep(until: clock.now.advanced(by: .milliseconds(Int64(ms)))) }
}

struct Files: BlobPort {
    let device: SimDevice
    func load(_ key: String) throws -> Data? { try device.files.read(key).map { Data($0) } }
    func store(_ key: String, _ data: Data) throws { try device.files.write(key, Array(data)) }
    /// The scenario's `storage latency` (SimKit's fsync), else at once.
    func flush() async { await device.synchronize() }
}

struct Scheduler: SchedulerPort {
    let tasks: SimBackgroundTasks
    func register(_ work: @escaping @Sendable () async -> Void) { tasks.register(work) }
    func onExpiration(_ handler: @escaping @Sendable () -> Void) { tasks.expirationHandler = handler }
    func submit() { tasks.schedule() }
    func withdraw() { tasks.cancel() }
}

struct Library: PhotosPort {
    let device: SimDevice
    var assetCount: UInt32 { device.photoCount }
    var isAuthorized: Bool { device.photosAllowed }
}

extension Credential {
    init(id: UInt64) { self.init(device: DeviceIndex(truncatingIfNeeded: id >> 32), generation: UInt32(truncatingIfNeeded: id)) }
    var id: UInt64 { UInt64(device) << 32 | UInt64(generation) }
}
