import SimKit
import PhotoAccess

/// The SDK's I/O on a simulated device: it answers the store's reads from the device's disk
/// as SimKit handed it for this step, and turns every write, request, timer and callback
/// into a SimKit effect, in order. It keeps nothing between steps but its effect list's memory.
final class SimulatedDevice: IndexStore, AccessAPI, Timers, AppHost {
    /// The disk as it is now: SimKit's copy for this step, with this step's writes applied.
    var disk = LocalData()
    var now: Millis = 0
    /// The phone's wall clock's offset from the true time, ms, for this step (P2).
    var wallClockOffsetMs: Int64 = 0
    var wallClock: Int64 { Int64(now) + wallClockOffsetMs }
    var photoCount: UInt32 = 0
    var photosAccessAllowed = false
    /// The disk is full in this step (P3): writes that take room fail.
    var diskFull = false
    /// The protected data is locked in this step (P4, a restart not yet unlocked): nothing
    /// can be read, and every write but the background task's (the OS's) fails.
    var dataLocked = false
    /// This step's effects, in order.
    var effects: [Effect] = []
    /// The request just sent: its deadline timer carries its kind (`Effect.setTimeout`), so
    /// SimKit traces the firing as that request's timeout.
    var lastSent: (id: UInt32, kind: RequestKind)?

    func begin(now: SimTime, context: SDKContext, disk: LocalData) {
        self.now = now
        self.disk = disk
        wallClockOffsetMs = context.wallClockOffsetMs
        photoCount = context.photoCount
        photosAccessAllowed = context.photosAllowed
        diskFull = context.diskFull
        dataLocked = context.dataLocked
        lastSent = nil
    }

    // MARK: IndexStore

    var isReadable: Bool { !dataLocked }
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
    var backgroundTaskRegistered: Bool { disk.backgroundScheduled }

    func write(_ change: StoreChange) -> Bool {
        let op: StoreOp
        switch change {
        case .setLastKeyVerdictWallClock(let wall):
            guard disk.lastAnsweredCheck != LocalData.never else { return true }
            let offset = wall - Int64(disk.lastAnsweredCheck)
            guard offset != disk.lastCheckWallOffsetMs else { return true }
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
        case .registerBackgroundTask: op = .scheduleBackground
        case .cancelBackgroundTask: op = .cancelBackground
        }
        effects.append(.store(op))
        if diskFull, op.takesRoom { return false }   // P3: SimKit traces it as failed
        if dataLocked, op != .scheduleBackground, op != .cancelBackground { return false }   // P4: refused
        disk.apply(op)
        return true
    }

    // MARK: AccessAPI

    func send(_ endpoint: Endpoint, id: UInt32, token: DeviceToken?) {
        let kind = RequestKind(endpoint)
        lastSent = (id, kind)
        effects.append(.send(id: id, kind: kind, credential: token.map(Credential.init) ?? .none))
    }

    // MARK: Timers

    func start(_ timer: TimerName, at: Millis, tag: UInt32) {
        if timer == .requestDeadline {
            guard let sent = lastSent, sent.id == tag else { preconditionFailure("a request deadline for a request not just sent") }
            effects.append(.setTimeout(of: tag, kind: sent.kind, at: at))
        } else {
            effects.append(.setTimer(TimerKind(timer), at: at, arg: tag))
        }
    }

    func cancel(_ timer: TimerName) { effects.append(.cancelTimer(TimerKind(timer))) }

    // MARK: AppHost

    func publish(_ state: PublicState) { effects.append(.state(SDKState(state))) }
    func finished(_ call: Call, _ result: CallResult) {
        let api: APICall = call == .search ? .search : call == .query ? .query : .profile
        effects.append(.callResult(api, result == .ok ? .returned : result == .accessRevoked ? .threwAccessRevoked : .failed))
    }
    func indexingStarted(background: Bool) { effects.append(.runStarted(background: background)) }
    func indexingEnded() { effects.append(.runEnded) }
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
    /// What a SimKit answer means to the SDK.
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
        // A captive portal or a proxy answered in the server's place (P6): no verdict.
        case .notRollup: self = .unreachable
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

extension TimerKind {
    init(_ t: TimerName) {
        switch t {
        case .nextChunk: self = .indexChunk
        case .requestDeadline: self = .requestTimeout
        case .retryDeviceDeletion: self = .resetRetry
        case .retryReportUpload: self = .reportRetry
        }
    }
}

extension TimerName {
    init(_ k: TimerKind) {
        switch k {
        case .indexChunk: self = .nextChunk
        case .requestTimeout: self = .requestDeadline
        case .resetRetry: self = .retryDeviceDeletion
        case .reportRetry: self = .retryReportUpload
        }
    }
}

extension SDKState {
    init(_ s: PublicState) {
        switch s {
        case .notConfigured: self = .unconfigured
        case .indexing: self = .indexing
        case .idle: self = .idle
        case .locked: self = .locked
        case .purged: self = .purged
        }
    }
}
