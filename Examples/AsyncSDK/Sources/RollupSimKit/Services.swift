import Foundation
import SimKit
import SimKitAsync
import Rollup

/// The SDK's network on SimKit's: each request suspends until the world answers.
struct SimTransport: RollupTransport {
    let device: SimDevice
    func send(_ endpoint: Endpoint, token: DeviceToken?) async throws -> Reply {
        Reply(try await device.send(RequestKind(endpoint), credential: token.map(Credential.init) ?? .none))
    }
}

/// The SDK's clock on SimKit's virtual time: `Task.sleep` on a `SimClock`.
struct SimRollupClock: RollupClock {
    let clock: SimClock
    var nowMillis: Millis { clock.now.ms }
    func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration, clock: clock) }
}

/// The phone's calendar clock on SimKit's (`SimDevice.wallClock`, P2).
struct SimRollupWallClock: RollupWallClock {
    let wall: SimWallClock
    var nowMillis: Int64 { wall.nowMillis }
}

/// The SDK's disk on the device's `LocalData`: each write is a SimKit store effect.
struct SimStore: RollupStore {
    let device: SimDevice
    var disk: LocalData { device.disk }
    var isReadable: Bool { !device.dataLocked }
    var token: DeviceToken? { DeviceToken(disk.credential) }
    var tokenAwaitingDeletion: DeviceToken? { DeviceToken(disk.pendingReset) }
    var earlierTokenAwaitingDeletion: DeviceToken? { DeviceToken(disk.earlierPendingReset) }
    var indexedPhotos: UInt32 { disk.indexedCount }
    var hasModels: Bool { disk.modelsPresent }
    var hasPlaceData: Bool { disk.placeDataPresent }
    var queuedReports: UInt32 { disk.reportsQueued }
    var isLocked: Bool { disk.locked }
    var isPurged: Bool { disk.purged }
    var lockedSince: Millis? { disk.lockedSince == LocalData.never ? nil : disk.lockedSince }
    var lastKeyVerdict: Millis? { disk.lastAnsweredCheck == LocalData.never ? nil : disk.lastAnsweredCheck }
    /// Kept on SimKit's disk as the clock's offset from the check's true time (written only
    /// when it moved, so a true clock writes nothing).
    var lastKeyVerdictWallClock: Int64? {
        disk.lastAnsweredCheck == LocalData.never ? nil : Int64(disk.lastAnsweredCheck) + disk.lastCheckWallOffsetMs
    }

    func write(_ change: StoreChange) -> Bool {
        guard let op = op(change) else { return true }
        return device.write(op)
    }

    /// The storage's time for the writes made so far (the scenario's `storage latency`).
    func synchronize() async { await device.synchronize() }

    /// SimKit's store operation for `change`, or nil when it changes nothing on SimKit's disk.
    func op(_ change: StoreChange) -> StoreOp? {
        let op: StoreOp
        switch change {
        case .setLastKeyVerdictWallClock(let wall):
            guard disk.lastAnsweredCheck != LocalData.never else { return nil }
            let offset = wall - Int64(disk.lastAnsweredCheck)
            guard offset != disk.lastCheckWallOffsetMs else { return nil }
            op = .setLastCheckWallOffset(offset)
        case .setToken(let t): op = t.map { .setCredential(Credential($0)) } ?? .deleteCredential
        case .setTokenAwaitingDeletion(let t): op = .setPendingReset(t.map(Credential.init) ?? .none)
        case .setEarlierTokenAwaitingDeletion(let t): op = .setEarlierPendingReset(generation: t.map { Credential($0).generation } ?? 0)
        case .indexed(let from, let count): op = .indexPhotos(from: from, count: count)
        case .deleteIndex: op = .deleteIndex
        case .saveModels: op = .saveModels
        case .deleteModels: op = .deleteModels
        case .savePlaceData: op = .savePlaceData
        case .deletePlaceData: op = .deletePlaceData
        case .queueReport: op = .queueReport
        case .reportsUploaded(let n): op = .reportsUploaded(n)
        case .dropReports: op = .dropReports
        case .lock: op = .lock
        case .unlock: op = .unlock
        case .markPurged: op = .markPurged
        case .setLockedSince(let t): op = .setLockedSince(t ?? LocalData.never)
        case .setLastKeyVerdict(let t): op = .setLastAnsweredCheck(t ?? LocalData.never)
        }
        return op
    }
}

/// BGTaskScheduler on SimKit's: the world fires the task (`background` in a scenario).
struct SimScheduler: BackgroundTaskScheduler {
    let tasks: SimBackgroundTasks
    func register(_ handler: @escaping @Sendable () async -> Void) { tasks.register(handler) }
    func onExpiration(_ handler: @escaping @Sendable () -> Void) { tasks.expirationHandler = handler }
    var isScheduled: Bool { tasks.isScheduled }
    func schedule() { tasks.schedule() }
    func cancel() { tasks.cancel() }
}

struct SimPhotos: PhotoLibrary {
    let device: SimDevice
    var count: UInt32 { device.photoCount }
    var isAuthorized: Bool { device.photosAllowed }
}

struct SimObserver: RollupObserver {
    let device: SimDevice
    func stateChanged(_ state: RollupState) {
        switch state {
        case .notConfigured: device.publish(.unconfigured)
        case .indexing: device.publish(.indexing)
        case .idle: device.publish(.idle)
        case .accessRevoked(let deleted): device.publish(deleted ? .purged : .locked)
        }
    }
    func indexingStarted(background: Bool) { device.indexingStarted(background: background) }
    func indexingEnded() { device.indexingEnded() }
}

// MARK: - Between the SDK's words and SimKit's

extension DeviceToken {
    init?(_ c: Credential) {
        guard !c.isNone else { return nil }
        self.init(raw: UInt64(c.device) << 32 | UInt64(c.generation))
    }
}

extension Credential {
    init(_ t: DeviceToken) {
        self.init(device: DeviceIndex(truncatingIfNeeded: t.raw >> 32), generation: UInt32(truncatingIfNeeded: t.raw))
    }
}

extension Reply {
    init(_ r: ServerReply) {
        let since = r.stoppedSince == ServerReply.none ? nil : r.stoppedSince
        switch r.answer {
        case .ok: self = .served(at: r.servedAt, token: DeviceToken(r.credential))
        case .appKeyInvalid: self = .refused(.keyInvalid, at: r.servedAt, stoppedSince: since)
        case .appDisabled: self = .refused(.appDisabled, at: r.servedAt, stoppedSince: since)
        case .appPending: self = .refused(.appPending, at: r.servedAt, stoppedSince: since)
        case .deviceUnknown: self = .refused(.deviceUnknown, at: r.servedAt, stoppedSince: since)
        case .appKeyMismatch: self = .refused(.keyMismatch, at: r.servedAt, stoppedSince: since)
        case .attestationFailed: self = .refused(.attestationFailed, at: r.servedAt, stoppedSince: since)
        case .serverError, .timedOut, .offline: self = .unreachable
        // A captive portal or a proxy answered in the server's place (P6): its status and
        // bytes go through the decoder the app ships, as they would on a real network.
        case .notRollup:
            self = r.notRollup.map { URLSessionTransport.reply(status: $0.status, body: Data($0.body)) } ?? .unreachable
        }
    }
}

extension RequestKind {
    init(_ e: Endpoint) {
        switch e {
        case .keyCheck: self = .check
        case .register: self = .register
        case .query: self = .query
        case .profile: self = .profile
        case .placeData: self = .placeData
        case .models: self = .modelDownload
        case .runReport: self = .runReport
        case .deleteDevice: self = .reset
        }
    }
}
