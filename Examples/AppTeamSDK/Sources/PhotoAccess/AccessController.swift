/// The SDK's key-and-access logic: one object per app process, driven by the app's
/// lifecycle, its API calls, answers from the network and timer firings. It decides; its
/// collaborators (`IndexStore`, `AccessAPI`, `Timers`, `AppHost`) do the I/O.
///
/// Everything a process remembers lives in `memory`, a plain value: what survives the
/// process lives in the store. That split is what lets a simulator copy a device.
public final class AccessController {
    /// What the process remembers (lost when the app is killed).
    public struct Memory: Sendable {
        enum Stage: Sendable { case verifying, models, placeData, indexing }
        struct Pending: Sendable { var id: UInt32; var endpoint: Endpoint }
        var configured = false
        var foreground = false
        /// The indexing run in progress, if any.
        var stage: Stage?
        var runInBackground = false
        /// Requests awaited, oldest first.
        var pending: [Pending] = []
        var nextID: UInt32 = 1
        var keyCheckID: UInt32?
        var downloadID: UInt32?
        var uploadID: UInt32?
        var uploadCount: UInt32 = 0
        var callsInFlight = 0
        /// The newest server verdict acted on: an older one arriving late is ignored.
        var newestVerdict: Millis = 0
        /// Resume indexing when access comes back.
        var resumeOnUnlock = false
        var published: PublicState = .notConfigured
        var deletionFailures: UInt8 = 0
        /// The deletion of the earlier token awaiting it, in flight (its answer clears that slot).
        var earlierDeletionID: UInt32?
        var uploadFailures: UInt8 = 0
        /// Run reports a full disk refused: written when it has room (lost with the process).
        var unwrittenReports: UInt32 = 0
        /// The app launched while the store could not be read (a restart, the phone not yet
        /// unlocked): the launch is finished at the first input after the unlock.
        var launchAwaitsUnlock = false
        /// Requests whose answers are awaited.
        public var awaited: Int { pending.count }
    }

    public var memory = Memory()
    public var settings: AccessSettings
    let store: IndexStore
    let api: AccessAPI
    let timers: Timers
    let host: AppHost

    public init(settings: AccessSettings, store: IndexStore, api: AccessAPI, timers: Timers, host: AppHost) {
        self.settings = settings; self.store = store; self.api = api; self.timers = timers; self.host = host
    }

    var now: Millis { host.now }

    /// The last key verdict is over a day old in elapsed time or on the phone's calendar
    /// clock, or that clock reads earlier than it did then (the person set it back).
    var keyCheckIsDue: Bool {
        guard let last = store.lastKeyVerdict else { return true }
        if now - last > settings.checkInterval { return true }
        guard let lastWall = store.lastKeyVerdictWallClock else { return false }
        let wallAge = host.wallClock - lastWall
        return wallAge < 0 || wallAge > Int64(settings.checkInterval)
    }
    var bugs: PlantedBugs { settings.bugs }

    // MARK: - The app's lifecycle

    /// The store can be read (SPEC P4). After a restart, until the person first unlocks the
    /// phone, it cannot: nothing is decided from it, for unreadable is not "none" (no token,
    /// no progress, not locked). A launch made meanwhile is finished here, at the first input
    /// after the unlock.
    func storeReadable() -> Bool {
        guard store.isReadable else { return false }
        if memory.launchAwaitsUnlock {
            memory.launchAwaitsUnlock = false
            launched(inBackground: !memory.foreground)
        }
        return true
    }

    /// The app process started and called `configure`.
    public func launched(inBackground: Bool) {
        guard store.isReadable else {
            memory.foreground = !inBackground
            memory.launchAwaitsUnlock = true
            return
        }
        memory.configured = true
        memory.foreground = !inBackground
        finishWhatAKillCutShort()
        dropIndexIfPhotosRevoked()
        if store.tokenAwaitingDeletion != nil { sendDeletion() }
        if store.isLocked {
            publish(store.isPurged ? .purged : .locked)
            memory.resumeOnUnlock = !inBackground
            verifyKey()
            return
        }
        publish(.idle)
        if !store.backgroundTaskRegistered { store.write(.registerBackgroundTask) }
        if inBackground || hasWork { startRun(background: inBackground) } else { verifyKey() }
        uploadReports()   // queued reports go up at every launch
    }

    public func becameActive() {
        guard storeReadable() else { memory.foreground = true; return }
        guard memory.configured else { return }
        memory.foreground = true
        dropIndexIfPhotosRevoked()
        if store.isLocked {
            memory.resumeOnUnlock = true
            // Every activation while locked checks, even with a check in flight: that one
            // may have been judged before access came back.
            verifyKey(evenIfInFlight: true)
        } else {
            if memory.stage == nil, hasWork {
                startRun(background: false)
            } else if keyCheckIsDue {
                verifyKey()
            }
            uploadReports()   // and at every activation
        }
    }

    public func wentToBackground() { memory.foreground = false }

    /// The OS runs the background task the SDK registered.
    public func backgroundTaskFired() {
        guard storeReadable(), memory.configured, !store.isLocked, memory.stage == nil else { return }
        startRun(background: true)
    }

    /// The OS asks the background run to stop: its time is up (iOS's expiration handler).
    /// Each chunk is saved as it is indexed, so the run ends now with its report, keeping
    /// what it saved; the task stays registered and the next run resumes from there.
    public func backgroundTimeExpiring() {
        guard storeReadable() else { return }   // no run could start before the unlock
        endRun()
    }

    // MARK: - The public API

    public func called(_ call: Call) {
        guard storeReadable(), memory.configured else { return host.finished(call, .failed) }
        if store.isLocked { return host.finished(call, .accessRevoked) }
        let endpoint: Endpoint
        switch call {
        case .search: return host.finished(call, .ok)
        case .query: endpoint = .query
        case .profile: endpoint = .profile
        }
        guard let token = store.token, memory.callsInFlight < settings.callsMax else { return host.finished(call, .failed) }
        memory.callsInFlight += 1
        send(endpoint, token: token)
    }

    /// The disk has room (SPEC P3): the run reports it refused are written now.
    public func diskHasRoom() {
        guard store.isReadable else { return }
        while memory.unwrittenReports > 0, store.write(.queueReport) { memory.unwrittenReports -= 1 }
    }

    /// `reset()`: forget everything on the device and have the server forget the device.
    public func reset() {
        guard storeReadable() else { return }   // nothing can be deleted before the unlock
        stopRun(queueingReport: false)
        memory.unwrittenReports = 0
        forgetPending()
        let old = store.token ?? store.tokenAwaitingDeletion
        // The app can be killed between any two writes (SPEC P1): a mark first, so that the
        // next launch finishes a reset cut short from the disk (`finishWhatAKillCutShort`).
        store.write(.setLastKeyVerdict(Self.resetMark))
        deleteForReset()
        memory.resumeOnUnlock = false
        publish(memory.configured ? .idle : .notConfigured)
        if memory.configured, !store.backgroundTaskRegistered { store.write(.registerBackgroundTask) }
        memory.deletionFailures = 0
        if old != nil { sendDeletion() }
    }

    /// A reset's and a purge's marks: the last key verdict's place on the disk holds one
    /// while they are under way (no verdict's time comes near them).
    static let resetMark: Millis = .max - 1
    static let purgeMark: Millis = .max - 2

    /// The server-side deletion marked pending first, the local data, the mark cleared last.
    /// Done again from the disk, it writes only what is not done yet.
    func deleteForReset() {
        if let old = store.token ?? store.tokenAwaitingDeletion, store.tokenAwaitingDeletion != old {
            // A deletion still owed stays owed when this reset names a newer token (a
            // registration since, while that deletion failed). One more slot: a third owed
            // at once gives up the middle one.
            if let owed = store.tokenAwaitingDeletion, store.earlierTokenAwaitingDeletion == nil {
                store.write(.setEarlierTokenAwaitingDeletion(owed))
            }
            store.write(.setTokenAwaitingDeletion(old))
        }
        if store.indexedPhotos > 0 { store.write(.deleteIndex) }
        if store.hasModels { store.write(.deleteModels) }
        if store.hasPlaceData { store.write(.deletePlaceData) }
        if store.queuedReports > 0 { store.write(.dropReports) }
        if store.token != nil { store.write(.setToken(nil)) }
        if store.isLocked { store.write(.unlock) }
        if store.lockedSince != nil { store.write(.setLockedSince(nil)) }
        if store.lastKeyVerdict != nil { store.write(.setLastKeyVerdict(nil)) }
    }

    /// At launch: a reset or purge a kill cut short is finished; a lock written before its
    /// background task was cancelled has it cancelled; a lock's date written without the
    /// lock is cleared (that lock died with the process).
    func finishWhatAKillCutShort() {
        if store.lastKeyVerdict == Self.resetMark {
            deleteForReset()
            if !store.backgroundTaskRegistered { store.write(.registerBackgroundTask) }
        } else if store.lastKeyVerdict == Self.purgeMark {
            deleteForPurge()
            store.write(.setLastKeyVerdict(nil))
        }
        if store.isLocked, store.backgroundTaskRegistered { store.write(.cancelBackgroundTask) }
        if !store.isLocked, store.lockedSince != nil { store.write(.setLockedSince(nil)) }
    }

    // MARK: - Answers and timers

    /// Whether the answer to (or the deadline of) request `id` would still be acted on.
    public func isAwaiting(_ id: UInt32) -> Bool { memory.pending.contains { $0.id == id } }

    /// The answer to request `id` arrived.
    public func received(_ reply: Reply, for id: UInt32) {
        guard storeReadable(), let endpoint = take(id) else { return }   // given up, or from before a reset: stale
        handle(reply, to: endpoint, id: id)
    }

    public func fired(_ timer: TimerName, tag: UInt32) {
        guard storeReadable() else { return }
        switch timer {
        case .nextChunk: indexNextChunk()
        case .requestDeadline:
            guard let endpoint = take(tag) else { return }
            handle(.unreachable, to: endpoint, id: tag)
        case .retryDeviceDeletion: if store.tokenAwaitingDeletion != nil { sendDeletion() }
        case .retryReportUpload: uploadReports()
        }
    }

    func handle(_ reply: Reply, to endpoint: Endpoint, id: UInt32) {
        if endpoint.isKeyCheck { memory.keyCheckID = nil }
        if endpoint.call != nil { memory.callsInFlight = max(0, memory.callsInFlight - 1) }
        // Only the newest verdict counts: a deletion's 200 says nothing about access.
        if let at = reply.verdictAt, endpoint != .deleteDevice || stopsAccess(reply) {
            if at < memory.newestVerdict {
                // A registration's 200 made a record whatever came since: keep its token.
                if endpoint == .register, case .served(_, let token?) = reply, store.token != token { store.write(.setToken(token)) }
                return settleIgnored(endpoint)
            }
            memory.newestVerdict = at
        }
        // An ignored (older) verdict does not count as the last key check either.
        if endpoint.isKeyCheck, reply.verdictAt != nil {
            store.write(.setLastKeyVerdict(now))
            store.write(.setLastKeyVerdictWallClock(host.wallClock))
        }
        if endpoint == .runReport { reportUploadAnswered(reply) }
        if endpoint == .deleteDevice { deletionAnswered(reply, earlier: id == memory.earlierDeletionID) }

        if stopsAccess(reply) {
            lockOrPurge(reply)
            if let call = endpoint.call { host.finished(call, .accessRevoked) }
            return
        }
        if store.isLocked {
            if endpoint.isKeyCheck { lockedKeyCheckAnswered(reply, endpoint) }
            if let call = endpoint.call { host.finished(call, .accessRevoked) }
            return
        }
        if case .refused(.deviceUnknown, _, _) = reply, endpoint != .deleteDevice {
            // The server forgot this device: register again and carry on, at once even with a
            // key check in flight (it carries the token the server forgot).
            let hadToken = store.token != nil
            if hadToken { store.write(.setToken(nil)) }
            if let call = endpoint.call { host.finished(call, .failed) }
            if endpoint == .runReport { memory.uploadID = nil; memory.uploadCount = 0 }
            if memory.stage != nil { memory.stage = .verifying }
            verifyKey(evenIfInFlight: hadToken)
            return
        }
        switch (endpoint, reply) {
        case (.keyCheck, .served), (.register, .served):
            if endpoint == .register, case .served(_, let token?) = reply { store.write(.setToken(token)) }
            continueRun()
        case (.keyCheck, .unreachable), (.register, .unreachable):
            continueRun()
        case (.keyCheck, _), (.register, _):
            endRun()   // pending approval, attestation: no run
        case (.models, .served):
            if store.write(.saveModels) { continueRun() } else { endRun() }   // a full disk: downloaded again
        case (.placeData, .served):
            if store.write(.savePlaceData) { continueRun() } else { endRun() }
        case (.models, _), (.placeData, _):
            endRun()
        case (.runReport, .served):
            uploadReports()
        case (.query, _), (.profile, _):
            if case .served = reply { host.finished(endpoint.call!, .ok) } else { host.finished(endpoint.call!, .failed) }
        case (.runReport, _), (.deleteDevice, _):
            break
        }
    }

    func stopsAccess(_ reply: Reply) -> Bool {
        guard case .refused(let refusal, _, _) = reply else { return false }
        return refusal.stopsAccess || (bugs.contains(.lockOnAny403) && refusal.status == 403)
    }

    /// A verdict older than one acted on: neither locks nor unlocks; the request is
    /// settled as failed so that nothing waits for it.
    func settleIgnored(_ endpoint: Endpoint) {
        switch endpoint {
        case .query, .profile: host.finished(endpoint.call!, store.isLocked ? .accessRevoked : .failed)
        case .runReport: reportUploadAnswered(.unreachable)
        case .keyCheck, .register, .models, .placeData: if !store.isLocked { continueRun() }
        case .deleteDevice: break
        }
    }

    // MARK: - Losing and regaining access

    func lockOrPurge(_ reply: Reply) {
        if !store.isLocked {
            if store.lockedSince == nil { store.write(.setLockedSince(now)) }
            store.write(.lock)
            stopRun(queueingReport: true)
            if store.backgroundTaskRegistered { store.write(.cancelBackgroundTask) }
            timers.cancel(.retryReportUpload)
            publish(.locked)
        }
        if purgeIsDue(reply) { purge() }
    }

    /// The server says access has been stopped for 30 days in a row.
    func purgeIsDue(_ reply: Reply) -> Bool {
        guard !store.isPurged, case .refused(_, let at, let since) = reply else { return false }
        if bugs.contains(.purgeByDeviceClock) {
            guard let locked = store.lockedSince else { return false }
            return now >= locked + settings.purgeAfter
        }
        guard let since, since <= at else { return false }
        return at - since >= settings.purgeAfter
    }

    func purge() {
        forgetPending()
        // A mark first (SPEC P1), the deletions, the verdict's time back last.
        let last = store.lastKeyVerdict
        store.write(.setLastKeyVerdict(Self.purgeMark))
        deleteForPurge()
        store.write(.setLastKeyVerdict(last))
        publish(.purged)
    }

    func deleteForPurge() {
        if store.indexedPhotos > 0 { store.write(.deleteIndex) }
        if store.hasModels { store.write(.deleteModels) }
        if store.hasPlaceData { store.write(.deletePlaceData) }
        if store.token != nil { store.write(.setToken(nil)) }
        if !store.isPurged { store.write(.markPurged) }
    }

    func lockedKeyCheckAnswered(_ reply: Reply, _ endpoint: Endpoint) {
        switch reply {
        case .served(_, let token):
            if endpoint == .register, let token { store.write(.setToken(token)) }
            unlock()
        case .refused(.deviceUnknown, _, _):
            if store.token != nil { store.write(.setToken(nil)) }
            verifyKey()
        default:
            break
        }
    }

    func unlock() {
        store.write(.unlock)
        store.write(.setLockedSince(nil))
        if !store.backgroundTaskRegistered { store.write(.registerBackgroundTask) }
        publish(.idle)
        // Indexing resumes where it stopped: at once in the foreground, and after a launch
        // or activation that checked while locked.
        let resume = memory.resumeOnUnlock || memory.stage != nil || memory.foreground
        memory.resumeOnUnlock = false
        if memory.stage == nil, resume, hasWork {
            memory.stage = .verifying
            memory.runInBackground = false
            host.indexingStarted(background: false)
        }
        if memory.stage != nil { publish(.indexing); continueRun() }
        uploadReports()
    }

    // MARK: - Indexing runs

    var hasWork: Bool {
        host.photosAccessAllowed && (store.indexedPhotos < host.photoCount || !store.hasModels || !store.hasPlaceData)
    }

    func dropIndexIfPhotosRevoked() {
        if !host.photosAccessAllowed, store.indexedPhotos > 0 { store.write(.deleteIndex) }
    }

    /// Every run starts with a key check.
    func startRun(background: Bool) {
        memory.stage = .verifying
        memory.runInBackground = background
        host.indexingStarted(background: background)
        publish(.indexing)
        verifyKey()
    }

    /// Takes the run as far as it can go now: models, place data, then chunks of photos.
    func continueRun() {
        guard memory.stage != nil else { return }
        guard host.photosAccessAllowed else { return endRun() }
        if !store.hasModels || !store.hasPlaceData {
            guard let token = store.token else { return endRun() }
            memory.stage = store.hasModels ? .placeData : .models
            guard memory.downloadID == nil else { return }   // its answer takes the run on
            memory.downloadID = send(store.hasModels ? .placeData : .models, token: token)
            return
        }
        memory.stage = .indexing
        if store.indexedPhotos < host.photoCount {
            timers.start(.nextChunk, at: now + settings.chunkDuration, tag: 0)
        } else {
            endRun()
        }
    }

    func indexNextChunk() {
        guard memory.stage == .indexing else { return }
        guard host.photosAccessAllowed else { return endRun() }
        let from = store.indexedPhotos
        if from < host.photoCount {
            // A full disk: the chunk is not indexed; the next run indexes it again.
            guard store.write(.indexed(from: from, count: UInt16(min(UInt32(settings.photosPerChunk), host.photoCount - from)))) else {
                return endRun()
            }
        }
        if store.indexedPhotos < host.photoCount {
            timers.start(.nextChunk, at: now + settings.chunkDuration, tag: 0)
        } else {
            endRun()
        }
    }

    /// Each run ends with a run report, queued and then uploaded.
    func endRun() {
        guard memory.stage != nil else { return }
        stopRun(queueingReport: true)
        publish(store.isLocked ? (store.isPurged ? .purged : .locked) : .idle)
        uploadReports()
    }

    func stopRun(queueingReport: Bool) {
        guard let stage = memory.stage else { return }
        if stage == .indexing { timers.cancel(.nextChunk) }
        memory.stage = nil
        host.indexingEnded()
        if queueingReport, !store.write(.queueReport) { memory.unwrittenReports += 1 }
    }

    func uploadReports() {
        guard !store.isLocked, memory.uploadID == nil, store.queuedReports > 0, let token = store.token else { return }
        memory.uploadCount = store.queuedReports
        memory.uploadID = send(.runReport, token: token)
    }

    func reportUploadAnswered(_ reply: Reply) {
        if case .served = reply {
            if memory.uploadCount > 0 { store.write(.reportsUploaded(memory.uploadCount)) }
            memory.uploadID = nil; memory.uploadCount = 0
            memory.uploadFailures = 0
            return
        }
        guard memory.uploadCount > 0 else { return }
        memory.uploadID = nil; memory.uploadCount = 0
        guard !store.isLocked else { return }
        memory.uploadFailures = min(memory.uploadFailures + 1, 30)
        timers.start(.retryReportUpload, at: now + backoff(memory.uploadFailures), tag: 0)
    }

    // MARK: - Deleting the device on the server

    /// Each deletion owed, naming its own token: the current one, and an earlier reset's.
    func sendDeletion() {
        send(.deleteDevice, token: store.tokenAwaitingDeletion)
        if let earlier = store.earlierTokenAwaitingDeletion { memory.earlierDeletionID = send(.deleteDevice, token: earlier) }
    }

    /// A deletion's answer: the current one's, or the `earlier` one's.
    func deletionAnswered(_ reply: Reply, earlier: Bool) {
        if earlier { memory.earlierDeletionID = nil }
        switch reply {
        case .served, .refused(.deviceUnknown, _, _):
            if earlier {
                if store.earlierTokenAwaitingDeletion != nil { store.write(.setEarlierTokenAwaitingDeletion(nil)) }
            } else if let owed = store.earlierTokenAwaitingDeletion {
                // The earlier deletion, still owed, takes the current one's place.
                store.write(.setTokenAwaitingDeletion(owed))
                store.write(.setEarlierTokenAwaitingDeletion(nil))
            } else if store.tokenAwaitingDeletion != nil {
                store.write(.setTokenAwaitingDeletion(nil))
            }
            memory.deletionFailures = 0
        default:
            memory.deletionFailures = min(memory.deletionFailures + 1, 30)
            timers.start(.retryDeviceDeletion, at: now + backoff(memory.deletionFailures), tag: 0)
        }
    }

    // MARK: - Requests

    /// The key check: `keyCheck` with a token, `register` without. One at a time.
    func verifyKey(evenIfInFlight: Bool = false) {
        guard memory.keyCheckID == nil || evenIfInFlight else { return }
        memory.keyCheckID = store.token == nil ? send(.register, token: nil) : send(.keyCheck, token: store.token)
    }

    @discardableResult
    func send(_ endpoint: Endpoint, token: DeviceToken?) -> UInt32 {
        let id = memory.nextID
        memory.nextID += 1
        if memory.pending.count >= settings.pendingMax,
           let oldest = memory.pending.firstIndex(where: { $0.endpoint != .deleteDevice }) {
            giveUp(memory.pending.remove(at: oldest).id)
        }
        memory.pending.append(.init(id: id, endpoint: endpoint))
        api.send(endpoint, id: id, token: token)
        timers.start(.requestDeadline, at: now + settings.requestTimeout, tag: id)
        return id
    }

    /// No longer waits for request `id`: whatever waited on it may go again.
    func giveUp(_ id: UInt32) {
        if memory.keyCheckID == id { memory.keyCheckID = nil }
        if memory.downloadID == id { memory.downloadID = nil }
        if memory.uploadID == id { memory.uploadID = nil; memory.uploadCount = 0 }
    }

    /// Request `id`'s endpoint if it is awaited; it no longer is afterwards.
    func take(_ id: UInt32) -> Endpoint? {
        guard let i = memory.pending.firstIndex(where: { $0.id == id }) else { return nil }
        let endpoint = memory.pending.remove(at: i).endpoint
        if memory.downloadID == id { memory.downloadID = nil }
        return endpoint
    }

    func forgetPending() {
        memory.pending.removeAll()
        memory.keyCheckID = nil
        memory.downloadID = nil
        memory.uploadID = nil; memory.uploadCount = 0
        memory.callsInFlight = 0
        memory.earlierDeletionID = nil
    }

    func backoff(_ failures: UInt8) -> Millis {
        min(settings.retryFirst << Millis(min(failures, 20) - 1), settings.retryMax)
    }

    func publish(_ state: PublicState) {
        guard state != memory.published else { return }
        memory.published = state
        host.publish(state)
    }
}
