/// The SDK: one actor per app process, with the async API the app calls. It checks its
/// key with the server (D1), locks when access stops (D2, D3), unlocks only on a newer
/// 200 (D4), deletes its data when the server says access has been stopped 30 days (D5),
/// never locks on a transient failure (D6), resets (D7), drops the index when Photos
/// access is revoked (D8), ignores stale answers (D9) and uploads its run reports (D10).
///
/// Its work runs in tasks it owns: the key check, downloads and the indexing loop of a
/// run, report uploads and the server-side deletion, each retried with back-off on its
/// injected clock; a lock cancels the indexing and the retries. Every request races the
/// transport against the request timeout in a task group.
public actor Rollup {
    let transport: any RollupTransport
    let store: any RollupStore
    let clock: any RollupClock
    /// The phone's calendar clock (P2), if injected: D1 is kept by it too.
    let wallClock: (any RollupWallClock)?
    let scheduler: any BackgroundTaskScheduler
    let photos: any PhotoLibrary
    let observer: any RollupObserver
    public let settings: RollupSettings

    enum Stage: Sendable { case verifying, models, placeData, indexing }
    var configured = false
    var foreground = false
    /// The indexing run in progress, if any.
    var stage: Stage?
    var checkInFlight = false
    /// `checkReenters` only: the one slot its key checks complete (the bug).
    var checkSlotOpen = false
    var downloadInFlight = false
    var uploadInFlight = false
    var uploadCount: UInt32 = 0
    var callsInFlight = 0
    /// The newest server verdict acted on: an older one arriving late is ignored (D4, D9).
    var newestVerdict: Millis = 0
    var resumeOnUnlock = false
    var published: RollupState = .notConfigured
    var deletionFailures: UInt8 = 0
    var uploadFailures: UInt8 = 0
    /// Run reports a full disk refused (P3): written before the next report, lost with the process.
    var unwrittenReports: UInt32 = 0
    /// The app launched while the store could not be read (a restart, the phone not yet
    /// unlocked, P4): the launch is finished at the first call after the unlock.
    var launchAwaitsUnlock = false
    /// Bumped by `reset()` and by a purge: answers to requests sent before are stale (D9).
    var epoch: UInt64 = 0
    /// Bumped when a run's chunk loop must stop.
    var indexGeneration: UInt64 = 0
    var indexTask: Task<Void, Never>?
    /// Requests in flight, oldest first: a reset or a purge cancels them (their callers
    /// then settle in that step, and a late answer finds nobody waiting).
    var inFlight: [(serial: UInt64, task: Task<Reply, Never>)] = []
    var serial: UInt64 = 0
    var uploadRetry: Task<Void, Never>?
    var deletionRetry: Task<Void, Never>?
    let updates: AsyncStream<RollupState>
    let updatesContinuation: AsyncStream<RollupState>.Continuation

    public init(settings: RollupSettings = RollupSettings(), transport: any RollupTransport, store: any RollupStore,
                clock: any RollupClock, scheduler: any BackgroundTaskScheduler, photos: any PhotoLibrary,
                observer: any RollupObserver, wallClock: (any RollupWallClock)? = nil) {
        self.settings = settings; self.transport = transport; self.store = store; self.clock = clock
        self.wallClock = wallClock
        self.scheduler = scheduler; self.photos = photos; self.observer = observer
        (updates, updatesContinuation) = AsyncStream.makeStream(of: RollupState.self, bufferingPolicy: .bufferingNewest(8))
    }

    var now: Millis { clock.nowMillis }

    /// The last key verdict is over a day old in elapsed time or on the phone's calendar
    /// clock, or that clock reads earlier than it did then (the person set it back).
    var keyCheckIsDue: Bool {
        guard let last = store.lastKeyVerdict else { return true }
        if now - last > settings.checkInterval { return true }
        guard let wall = wallClock?.nowMillis, let lastWall = store.lastKeyVerdictWallClock else { return false }
        return wall < lastWall || wall - lastWall > Int64(settings.checkInterval)
    }
    var bugs: PlantedBugs { settings.bugs }

    /// The state, as it changes (the newest few are kept for a slow reader).
    public nonisolated var stateUpdates: AsyncStream<RollupState> { updates }
    public var state: RollupState { published }

    // MARK: - The app's lifecycle

    /// The store can be read (SPEC P4). After a restart, until the person first unlocks the
    /// phone, it cannot: nothing is decided from it, for unreadable is not "none" (no token,
    /// no progress, not locked). A launch made meanwhile is finished here, at the first call
    /// after the unlock.
    func storeReadable() -> Bool {
        guard store.isReadable else { return false }
        if launchAwaitsUnlock {
            launchAwaitsUnlock = false
            configure(inBackground: !foreground)
        }
        return true
    }

    /// The app calls `configure` at each launch (`inBackground`: the OS launched it for a background run).
    public func configure(inBackground: Bool = false) {
        guard store.isReadable else {
            foreground = !inBackground
            launchAwaitsUnlock = true
            scheduler.register { [weak self] in await self?.backgroundTaskFired() }
            return
        }
        configured = true
        foreground = !inBackground
        scheduler.register { [weak self] in await self?.backgroundTaskFired() }
        finishWhatAKillCutShort()
        dropIndexIfPhotosRevoked()
        if store.tokenAwaitingDeletion != nil { startDeletion() }
        if store.isLocked {
            publish(.accessRevoked(dataDeleted: store.isPurged))
            resumeOnUnlock = !inBackground
            verifyKey()
            return
        }
        publish(.idle)
        if !scheduler.isScheduled { scheduler.schedule() }
        if inBackground || hasWork { startRun(background: inBackground) } else { verifyKey() }
        uploadReports()   // D10: queued reports go up at every launch
    }

    public func applicationDidBecomeActive() {
        guard storeReadable() else { foreground = true; return }
        guard configured else { return }
        foreground = true
        dropIndexIfPhotosRevoked()
        if store.isLocked {
            resumeOnUnlock = true
            // Every activation while locked checks, even with a check in flight: that one
            // may have been judged before access came back.
            verifyKey(evenIfInFlight: true)
        } else {
            if stage == nil, hasWork {
                startRun(background: false)
            } else if keyCheckIsDue {
                verifyKey(evenIfInFlight: bugs.contains(.checkReenters))
            }
            uploadReports()   // D10: and at every activation
        }
    }

    public func applicationDidEnterBackground() { foreground = false }

    /// The OS runs the background task the SDK registered.
    func backgroundTaskFired() {
        guard storeReadable(), configured, !store.isLocked, stage == nil else { return }
        scheduler.onExpiration { [weak self] in Task { await self?.backgroundTimeExpiring() } }
        startRun(background: true)
    }

    /// The OS says the background run's time is up (SPEC P5): each chunk was written as it
    /// was indexed, so the run ends now with its report, keeping them; the task stays
    /// scheduled and the next run resumes from what was written (D4).
    func backgroundTimeExpiring() {
        guard stage != nil else { return }
        endRun()
    }

    // MARK: - The public API

    /// On-device search over the index.
    public func search() throws -> Int {
        guard storeReadable() else { throw RollupError.unavailable }
        guard configured else { throw RollupError.notConfigured }
        if store.isLocked { throw RollupError.accessRevoked }
        return Int(store.indexedPhotos)
    }

    /// A server-backed query (S7).
    public func query() async throws { try await serverCall(.query) }
    /// The person's profile, from the server (S7).
    public func profile() async throws { try await serverCall(.profile) }

    func serverCall(_ endpoint: Endpoint) async throws {
        guard storeReadable() else { throw RollupError.unavailable }
        guard configured else { throw RollupError.notConfigured }
        if store.isLocked { throw RollupError.accessRevoked }
        guard let token = store.token, callsInFlight < settings.callsMax else { throw RollupError.unavailable }
        callsInFlight += 1
        let outcome = await exchange(endpoint, token: token)
        guard case .reply(let reply) = outcome else {
            if case .olderVerdict = outcome { callsInFlight = max(0, callsInFlight - 1) }
            throw store.isLocked ? RollupError.accessRevoked : RollupError.unavailable
        }
        callsInFlight = max(0, callsInFlight - 1)
        if stopsAccess(reply) { await lockOrPurge(reply); throw RollupError.accessRevoked }
        if store.isLocked { throw RollupError.accessRevoked }
        if case .refused(.deviceUnknown, _, _) = reply { deviceForgotten(); throw RollupError.unavailable }
        guard case .served = reply else { throw RollupError.unavailable }
    }

    /// `reset()`: forget everything on the device and have the server forget the device;
    /// the deletion is retried until the server confirms it, across launches (D7).
    public func reset() {
        guard storeReadable() else { return }   // nothing can be deleted before the unlock
        if bugs.contains(.uploaderOutlivesReset), store.queuedReports > 0, let token = store.token {
            // The bug: a last flush of the queue, meant to go before the wipe, is a task of
            // its own that nobody awaits: it runs after reset() with the token it captured.
            Task { _ = await self.exchange(.runReport, token: token) }
        }
        stopRun(queueingReport: false)
        unwrittenReports = 0   // D7: the reports kept in memory go too
        forgetInFlight()
        let old = store.token ?? store.tokenAwaitingDeletion
        // The app can be killed between any two writes (SPEC P1): a mark first, so that the
        // next launch finishes a reset cut short from the disk (`finishWhatAKillCutShort`).
        store.write(.setLastKeyVerdict(Self.resetMark))
        deleteForReset()
        resumeOnUnlock = false
        publish(configured ? .idle : .notConfigured)
        if configured, !scheduler.isScheduled { scheduler.schedule() }
        deletionFailures = 0
        if old != nil { startDeletion() }
    }

    /// A reset's and a purge's marks: the last key verdict's place on the disk holds one
    /// while they are under way (no verdict's time comes near them).
    static let resetMark: Millis = .max - 1
    static let purgeMark: Millis = .max - 2

    /// The server-side deletion marked pending first, the local data, the mark cleared last.
    /// Done again from the disk, it writes only what is not done yet.
    func deleteForReset() {
        if let old = store.token ?? store.tokenAwaitingDeletion, store.tokenAwaitingDeletion != old {
            // D7: a deletion still owed stays owed when this reset names a newer token (a
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
        } else if store.lastKeyVerdict == Self.purgeMark {
            deleteForPurge()
            store.write(.setLastKeyVerdict(nil))
        }
        if store.isLocked, scheduler.isScheduled { scheduler.cancel() }
        if !store.isLocked, store.lockedSince != nil { store.write(.setLockedSince(nil)) }
    }

    // MARK: - Requests

    /// Sends `endpoint` and awaits its answer, raced against the request timeout. Nil when
    /// the answer is stale: a reset or a purge came while it was in flight (D9), or it is
    /// older than a verdict already acted on (D4, D9); an ignored answer changes nothing.
    func exchange(_ endpoint: Endpoint, token: DeviceToken?) async -> Outcome {
        let sentEpoch = epoch
        let baseline = newestVerdict
        serial &+= 1
        let mine = serial
        let task = Task { await self.race(endpoint, token: token) }
        inFlight.append((mine, task))
        let reply = await task.value
        inFlight.removeAll { $0.serial == mine }
        if epoch != sentEpoch, !bugs.contains(.answerAfterReset) { return .stale }
        if endpoint.isKeyCheck { checkInFlight = false }
        // Only the newest verdict counts: a deletion's 200 says nothing about access.
        if let at = reply.verdictAt, endpoint != .deleteDevice || stopsAccess(reply) {
            let newest = bugs.contains(.verdictReadBeforeAwait) ? baseline : newestVerdict
            if at < newest {
                // A registration's 200 made a record whatever came since: keep its token.
                if endpoint == .register, case .served(_, let issued?) = reply, store.token != issued { store.write(.setToken(issued)) }
                return .olderVerdict
            }
            newestVerdict = max(newestVerdict, at)
        }
        if endpoint.isKeyCheck, reply.verdictAt != nil {
            store.write(.setLastKeyVerdict(now))
            if let wall = wallClock?.nowMillis { store.write(.setLastKeyVerdictWallClock(wall)) }
        }
        return .reply(reply)
    }

    /// How a request ended, for its caller.
    enum Outcome: Sendable {
        case reply(Reply)
        /// Older than a verdict acted on: settle as failed, change nothing (D4, D9).
        case olderVerdict
        /// A reset or purge came while it was in flight: do nothing at all (D9).
        case stale
    }

    /// The transport against the clock: whichever ends first. The transport delivers an
    /// answer whenever it arrives, late ones too: past `requestTimeout` the request has
    /// timed out, and an answer that comes after is never seen (the transport is cancelled).
    func race(_ endpoint: Endpoint, token: DeviceToken?) async -> Reply {
        let transport = self.transport, clock = self.clock, timeout = settings.requestTimeout
        let lateAnswerWins = bugs.contains(.lateAnswerWins)
        return await withTaskGroup(of: Reply?.self) { group in
            group.addTask { try? await transport.send(endpoint, token: token) }
            group.addTask {
                do { try await clock.sleep(for: .milliseconds(timeout)) } catch { return nil }
                // The bug: the timeout only marks the time; the race goes on for the answer.
                return lateAnswerWins ? nil : .unreachable
            }
            var answer: Reply = .unreachable
            if lateAnswerWins {
                for await result in group { if let result { answer = result; break } }
            } else if let first = await group.next(), let first {
                answer = first
            }
            group.cancelAll()
            return answer
        }
    }

    func stopsAccess(_ reply: Reply) -> Bool {
        guard case .refused(let refusal, _, _) = reply else { return false }
        return refusal.stopsAccess
    }

    /// The key check: `keyCheck` with a token, `register` without. One at a time, except
    /// the check of each activation while locked.
    func verifyKey(evenIfInFlight: Bool = false) {
        guard !checkInFlight || evenIfInFlight else { return }
        checkInFlight = true
        checkSlotOpen = true
        let token = store.token
        let endpoint: Endpoint = token == nil ? .register : .keyCheck
        Task { await self.keyCheck(endpoint, token: token) }
    }

    func keyCheck(_ endpoint: Endpoint, token: DeviceToken?) async {
        let outcome = await exchange(endpoint, token: token)
        if bugs.contains(.checkReenters) {
            // The bug: whichever check answers first completes the slot; later ones find it closed.
            guard checkSlotOpen else { return }
            checkSlotOpen = false
        }
        guard case .reply(let reply) = outcome else {
            if case .olderVerdict = outcome, !store.isLocked { continueRun() }
            return
        }
        if stopsAccess(reply) { return await lockOrPurge(reply) }
        if store.isLocked { return lockedKeyCheckAnswered(reply, endpoint) }
        switch reply {
        case .refused(.deviceUnknown, _, _): deviceForgotten()
        case .served(_, let token):
            if endpoint == .register, let token { store.write(.setToken(token)) }
            continueRun()
        case .unreachable: continueRun()
        case .refused: endRun()   // pending approval, attestation: no run
        }
    }

    /// The server forgot this device: register again and carry on (D6).
    func deviceForgotten() {
        // A key check in flight carries the token the server forgot: it does not stand in
        // for the registration, which goes at once.
        let hadToken = store.token != nil
        if hadToken { store.write(.setToken(nil)) }
        if stage != nil { stage = .verifying }
        verifyKey(evenIfInFlight: hadToken)
    }

    // MARK: - Losing and regaining access

    /// A lock error: lock (D3), or purge when the server says the stop is 30 days old (D5).
    /// The lock is written, then the SDK waits for the storage to be done with it (its
    /// time, while other calls of the SDK run), so everything the lock stops is stopped
    /// before: the chunk loop or a call that runs meanwhile finds the SDK locked. A purge
    /// due at this answer goes at once, with the lock, without waiting.
    func lockOrPurge(_ reply: Reply) async {
        if !store.isLocked {
            if store.lockedSince == nil { store.write(.setLockedSince(now)) }
            store.write(.lock)
            if purgeIsDue(reply) {
                stopForLock()
                return purge()
            }
            let stopsLate = bugs.contains(.stopsAfterTheLockIsWritten)
            if stopsLate { publish(.accessRevoked(dataDeleted: false)) } else { stopForLock() }
            await store.synchronize()
            if stopsLate { stopForLock() }   // the bug: all of it went on while the lock was written
            return
        }
        if purgeIsDue(reply) { purge() }
    }

    /// What a lock stops: the run (its report queued), the background task, the retries.
    func stopForLock() {
        stopRun(queueingReport: true)
        if scheduler.isScheduled { scheduler.cancel() }
        if !bugs.contains(.retryOutlivesLock) { uploadRetry?.cancel(); uploadRetry = nil }
        publish(.accessRevoked(dataDeleted: false))
    }

    /// The server says access has been stopped for 30 days in a row (D5).
    func purgeIsDue(_ reply: Reply) -> Bool {
        guard !store.isPurged, case .refused(_, let at, let since) = reply, let since, since <= at else { return false }
        return at - since >= settings.purgeAfter
    }

    func purge() {
        forgetInFlight()
        // A mark first (SPEC P1), the deletions, the verdict's time back last.
        let last = store.lastKeyVerdict
        store.write(.setLastKeyVerdict(Self.purgeMark))
        deleteForPurge()
        store.write(.setLastKeyVerdict(last))
        publish(.accessRevoked(dataDeleted: true))
        // A reset's delete still owed goes on: the server deletes the record whatever the
        // state of the key, app or account (S8), within the back-off (D7).
        if store.tokenAwaitingDeletion != nil { startDeletion() }
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
        if !scheduler.isScheduled { scheduler.schedule() }
        publish(.idle)
        // Indexing resumes where it stopped: at once in the foreground, and after a launch
        // or activation that checked while locked (D4).
        let resume = resumeOnUnlock || stage != nil || foreground
        resumeOnUnlock = false
        if stage == nil, resume, hasWork {
            stage = .verifying
            observer.indexingStarted(background: false)
        }
        if stage != nil { publish(.indexing); continueRun() }
        uploadReports()
    }

    // MARK: - Indexing runs

    var hasWork: Bool {
        photos.isAuthorized && (store.indexedPhotos < photos.count || !store.hasModels || !store.hasPlaceData)
    }

    /// D8: Photos access revoked: the index goes the next time the app runs.
    func dropIndexIfPhotosRevoked() {
        if !photos.isAuthorized, store.indexedPhotos > 0 { store.write(.deleteIndex) }
    }

    /// Every run starts with a key check (D1).
    func startRun(background: Bool) {
        stage = .verifying
        observer.indexingStarted(background: background)
        publish(.indexing)
        verifyKey()
    }

    /// Takes the run as far as it can go now: models, place data, then the chunk loop.
    func continueRun() {
        guard stage != nil else { return }
        guard photos.isAuthorized else { return endRun() }
        if !store.hasModels || !store.hasPlaceData {
            guard let token = store.token else { return endRun() }
            var endpoint: Endpoint = store.hasModels ? .placeData : .models
            if bugs.contains(.downloadsInSetOrder), !store.hasModels, !store.hasPlaceData {
                // The bug: the missing assets as a Set, downloaded in its iteration order.
                endpoint = Set<Endpoint>([.models, .placeData]).first!
            }
            stage = endpoint == .placeData ? .placeData : .models
            guard !downloadInFlight else { return }   // its answer takes the run on
            downloadInFlight = true
            Task { await self.download(endpoint, token: token) }
            return
        }
        stage = .indexing
        if store.indexedPhotos < photos.count { startIndexing() } else { endRun() }
    }

    func download(_ endpoint: Endpoint, token: DeviceToken) async {
        let outcome = await exchange(endpoint, token: token)
        if case .stale = outcome { return }
        downloadInFlight = false
        guard case .reply(let reply) = outcome else {
            if !store.isLocked { continueRun() }
            return
        }
        if stopsAccess(reply) { return await lockOrPurge(reply) }
        if store.isLocked { return }
        switch reply {
        case .refused(.deviceUnknown, _, _): deviceForgotten()
        case .served:
            // P3: a download a full disk refused is not done; the next run downloads it again.
            if store.write(endpoint == .models ? .saveModels : .savePlaceData) { continueRun() } else { endRun() }
        default: endRun()
        }
    }

    /// The chunk loop, in a task of its own: a lock, a reset or the run's end cancels it.
    func startIndexing() {
        guard indexTask == nil else { return }
        indexGeneration &+= 1
        let generation = indexGeneration
        indexTask = Task { await self.indexLoop(generation) }
    }

    func indexLoop(_ generation: UInt64) async {
        defer { if indexGeneration == generation { indexTask = nil } }
        for _ in 0..<100_000 {
            if bugs.contains(.indexesAfterCancel) {
                try? await clock.sleep(for: .milliseconds(settings.chunkDuration))
            } else {
                do { try await clock.sleep(for: .milliseconds(settings.chunkDuration)) } catch { return }
                guard indexGeneration == generation, stage == .indexing else { return }
            }
            guard photos.isAuthorized else { return endRun() }
            let from = store.indexedPhotos
            if from < photos.count {
                // P3: a full disk ends the run; the next run indexes the chunk again.
                guard store.write(.indexed(from: from, count: UInt16(min(UInt32(settings.photosPerChunk), photos.count - from)))) else { break }
            }
            if store.indexedPhotos >= photos.count || stage != .indexing { break }
        }
        if indexGeneration == generation { indexTask = nil }
        if stage == .indexing { endRun() }
    }

    /// Each run ends with a run report, queued and then uploaded (D10).
    func endRun() {
        guard stage != nil else { return }
        stopRun(queueingReport: true)
        publish(store.isLocked ? .accessRevoked(dataDeleted: store.isPurged) : .idle)
        uploadReports()
    }

    func stopRun(queueingReport: Bool) {
        guard stage != nil else { return }
        indexGeneration &+= 1
        indexTask?.cancel()
        indexTask = nil
        stage = nil
        observer.indexingEnded()
        if queueingReport {
            // P3: the reports a full disk refused go first; a refused one is kept.
            while unwrittenReports > 0, store.write(.queueReport) { unwrittenReports -= 1 }
            if !store.write(.queueReport) { unwrittenReports += 1 }
        }
    }

    // MARK: - Run reports

    func uploadReports() {
        guard !store.isLocked, !uploadInFlight, store.queuedReports > 0, let token = store.token else { return }
        uploadRetry?.cancel(); uploadRetry = nil
        uploadInFlight = true
        uploadCount = store.queuedReports
        Task { await self.upload(token: token) }
    }

    func upload(token: DeviceToken) async {
        let outcome = await exchange(.runReport, token: token)
        if case .stale = outcome { return }
        let count = uploadCount
        uploadInFlight = false; uploadCount = 0
        guard case .reply(let reply) = outcome else { return retryUpload(count) }
        if stopsAccess(reply) { return await lockOrPurge(reply) }
        if case .refused(.deviceUnknown, _, _) = reply { return store.isLocked ? () : deviceForgotten() }
        if case .served = reply {
            if count > 0 { store.write(.reportsUploaded(count)) }
            uploadFailures = 0
            uploadReports()
            return
        }
        retryUpload(count)
    }

    /// Tries the upload again after a back-off, unless it is locked.
    func retryUpload(_ count: UInt32) {
        guard count > 0, !store.isLocked else { return }
        uploadFailures = min(uploadFailures + 1, 30)
        let delay = backoff(uploadFailures)
        uploadRetry?.cancel()
        uploadRetry = Task {
            do { try await self.clock.sleep(for: .milliseconds(delay)) } catch { return }
            await self.retryUploadFired()
        }
    }

    func retryUploadFired() {
        uploadRetry = nil
        if bugs.contains(.retryOutlivesLock), store.isLocked, let token = store.token, store.queuedReports > 0 {
            // The bug: the retry checked the lock before its back-off, not after.
            uploadInFlight = true
            uploadCount = store.queuedReports
            Task { await self.upload(token: token) }
            return
        }
        uploadReports()
    }

    // MARK: - Deleting the device on the server

    func startDeletion() {
        deletionRetry?.cancel()
        let token = store.tokenAwaitingDeletion
        let earlier = store.earlierTokenAwaitingDeletion
        deletionRetry = Task { await self.deleteOnServer(token: token, earlier: earlier) }
    }

    /// Sends the deletions owed until the server confirms each, backing off between tries:
    /// an earlier reset's first (still owed when a later reset named a newer token), then
    /// the current one.
    func deleteOnServer(token: DeviceToken?, earlier: DeviceToken?) async {
        if let earlier {
            guard await deleteUntilConfirmed(earlier, current: false) else { return }
            if store.earlierTokenAwaitingDeletion != nil { store.write(.setEarlierTokenAwaitingDeletion(nil)) }
        }
        guard await deleteUntilConfirmed(token, current: true) else { return }
        if store.tokenAwaitingDeletion != nil { store.write(.setTokenAwaitingDeletion(nil)) }
        deletionRetry = nil
    }

    /// Sends the deletion of `token` until the server confirms it: true then; false when
    /// cancelled (a newer reset, or a purge while it was in flight: the next launch sends
    /// it again) or out of tries.
    func deleteUntilConfirmed(_ token: DeviceToken?, current: Bool) async -> Bool {
        for _ in 0..<1_000 {
            let sentEpoch = epoch
            // The bug: each try reads the token again, so a registration since is the one named.
            let named = current && bugs.contains(.resetRetryReadsCurrentToken) ? (store.token ?? token) : token
            let reply = await race(.deleteDevice, token: named)
            if Task.isCancelled || epoch != sentEpoch { return false }
            if stopsAccess(reply), let at = reply.verdictAt, at >= newestVerdict {
                newestVerdict = at
                await lockOrPurge(reply)
                if Task.isCancelled || epoch != sentEpoch { return false }   // a reset came while the lock was written
            }
            switch reply {
            case .served, .refused(.deviceUnknown, _, _):
                deletionFailures = 0
                return true
            default:
                deletionFailures = min(deletionFailures + 1, 30)
                do { try await clock.sleep(for: .milliseconds(backoff(deletionFailures))) } catch { return false }
            }
        }
        return false
    }

    func forgetInFlight() {
        epoch &+= 1
        if !bugs.contains(.answerAfterReset) {
            let cancelled = inFlight
            inFlight.removeAll()
            for r in cancelled { r.task.cancel() }
        }
        checkInFlight = false
        downloadInFlight = false
        uploadInFlight = false; uploadCount = 0
        callsInFlight = 0
        uploadRetry?.cancel(); uploadRetry = nil
        deletionRetry?.cancel(); deletionRetry = nil
    }

    func backoff(_ failures: UInt8) -> Millis {
        min(settings.retryFirst << Millis(min(failures, 20) - 1), settings.retryMax)
    }

    func publish(_ state: RollupState) {
        guard state != published else { return }
        published = state
        observer.stateChanged(state)
        updatesContinuation.yield(state)
    }
}
