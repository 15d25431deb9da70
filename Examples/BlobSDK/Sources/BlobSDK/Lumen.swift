import Foundation

/// What the SDK shows its app.
public enum LumenState: Sendable, Equatable {
    case unconfigured, indexing, idle
    case failed(LumenFailure)
}

public enum LumenFailure: Sendable, Equatable { case accessRevoked }

public enum LumenError: Error, Equatable {
    /// Access to Rollup stopped (the SDK is locked, or this call's answer stopped it).
    case accessRevoked
    case notConfigured
    /// Refused for another reason (the app is pending, a reset happened meanwhile, …).
    case unavailable
    /// No answer from Rollup (offline, timeout, server error).
    case network
}

/// The SDK's own choices, as the README states them.
public struct LumenOptions: Sendable {
    /// Every request races this timeout (D9).
    public var requestTimeoutMs: UInt64 = 30_000
    /// An activation checks the key when the last answered check is older than this (D1).
    public var staleCheckMs: UInt64 = 24 * 3_600_000
    /// Access stopped this long in a row wipes the data (D5).
    public var wipeAfterMs: UInt64 = 30 * 86_400_000
    /// Run-report uploads: after a failed upload, none at a launch, activation or run end
    /// before this back-off, doubling from the first value to the cap.
    public var uploadBackoffFirstMs: UInt64 = 60_000
    public var uploadBackoffCapMs: UInt64 = 2 * 3_600_000
    /// A reset's server-side delete is retried after this back-off, doubling to the cap.
    public var unenrollBackoffFirstMs: UInt64 = 15_000
    public var unenrollBackoffCapMs: UInt64 = 3_600_000
    /// Indexing works in chunks of this many photos, pausing between chunks.
    public var chunkSize: UInt32 = 250
    public var chunkPauseMs: UInt64 = 500
    public init() {}
}

/// Rollup's photo-indexing SDK. One actor; its whole persistent state is one `Ledger`
/// blob; it tells its app only its state, through `onState`.
public actor Lumen {
    let options: LumenOptions
    let http: any HTTPPort
    let time: any TimePort
    let blobs: any BlobPort
    let scheduler: any SchedulerPort
    let photos: any PhotosPort
    let onState: @Sendable (LumenState) -> Void

    var ledger = Ledger()
    var loaded = false
    /// `configure` could not read the ledger (P4): the first call after the unlock finishes it.
    var launchAwaitsUnlock = false
    /// Run reports not written yet: each run's report joins the ledger with the next save,
    /// and a full disk (SPEC P3) keeps it here, in memory, until a save has room for it.
    var reportsHeld: UInt32 = 0
    var state = LumenState.unconfigured
    var foreground = false
    /// Bumped by a reset and by a wipe: answers to requests sent before are ignored (D9).
    var era: UInt64 = 0
    /// The indexing run going now, if any (its number: a run that finds another number stops).
    var runNumber: UInt64 = 0
    var running = false
    var runTask: Task<Void, Never>?
    var enrolment: Task<Enrolled, Never>?
    var uploading = false
    /// The upload under way is this one (a lock or reset forgets it; its answer is then not taken).
    var uploadNumber: UInt64 = 0
    var uploadBackoffMs: UInt64 = 0
    var uploadNotBefore: UInt64 = 0
    var unenroller: Task<Void, Never>?

    public init(options: LumenOptions = LumenOptions(), http: any HTTPPort, time: any TimePort, blobs: any BlobPort,
                scheduler: any SchedulerPort, photos: any PhotosPort, onState: @escaping @Sendable (LumenState) -> Void) {
        self.options = options; self.http = http; self.time = time; self.blobs = blobs
        self.scheduler = scheduler; self.photos = photos; self.onState = onState
    }

    // MARK: - The app's API

    /// Called at every launch. `inBackground`: the OS launched the app for a background task.
    public func configure(inBackground: Bool = false) async {
        foreground = !inBackground
        // Before the first unlock after a restart the ledger cannot be read (SPEC P4), which
        // is not "no ledger": the launch is finished by the first call after the unlock.
        guard load() else { launchAwaitsUnlock = true; return }
        await launched()
    }

    /// A launch that could not read the ledger (P4) reads it now, if it can, and finishes in
    /// a task of its own; whether the ledger is loaded.
    func loadedLate() -> Bool {
        if loaded { return true }
        guard launchAwaitsUnlock, load() else { return false }
        launchAwaitsUnlock = false
        Task { await self.launched() }
        return true
    }

    /// The launch, the ledger read.
    func launched() async {
        scheduler.register { [weak self] in await self?.backgroundTaskFired() }
        forgetIndexIfPhotosRevoked()
        show(ledger.revoked ? .failed(.accessRevoked) : .idle)
        if !ledger.owedUnenroll.isEmpty { startUnenroller() }
        if !ledger.revoked { scheduler.submit() }
        startUploadIfDue()
        let startedIn = era
        // A reset or a wipe while the check was out, or an answer it had to ignore: no run on it.
        guard await checkKey() != .stale, era == startedIn, !ledger.revoked else { return }
        startUploadIfDue()
        if foreground, hasWork { beginRun() }
    }

    public func didBecomeActive() async {
        // A launch before the first unlock after a restart could not read the ledger (P4):
        // the app in front, it is finished now, as a launch in the foreground.
        if !loaded {
            foreground = true
            if launchAwaitsUnlock, load() { launchAwaitsUnlock = false; await launched() }
            return
        }
        foreground = true
        forgetIndexIfPhotosRevoked()
        if ledger.revoked {
            await checkKey()   // unlocking starts the run itself
            return
        }
        startUploadIfDue()
        let now = time.nowMs, wall = time.wallMs
        let freshByClock = ledger.lastCheckWallMs.map { wall >= $0 && UInt64(wall - $0) <= options.staleCheckMs } ?? true
        if let last = ledger.lastCheckAt, now >= last, now - last <= options.staleCheckMs, freshByClock { return }
        await checkKey()
    }

    public func didEnterBackground() { foreground = false }

    /// On-device search over the index.
    public func search() throws -> UInt32 {
        guard loadedLate() else { throw LumenError.notConfigured }
        if ledger.revoked { throw LumenError.accessRevoked }
        return ledger.indexed
    }

    public func query() async throws { try await remote(.query) }
    public func profile() async throws { try await remote(.profile) }

    /// Deletes everything on the phone at once, and the device's record on Rollup's
    /// server, retried on a back-off until it is gone (across launches: it is in the ledger).
    public func reset() async {
        guard loadedLate() else { return }
        era &+= 1
        running = false
        runTask?.cancel()
        runTask = nil
        uploading = false
        reportsHeld = 0   // D7: the reports in memory go with the rest
        var fresh = Ledger()
        fresh.owedUnenroll = ledger.owedUnenroll
        if let id = ledger.deviceID, !fresh.owedUnenroll.contains(id) { fresh.owedUnenroll.append(id) }
        fresh.watermark = ledger.watermark
        fresh.nextReport = ledger.nextReport
        guard save(fresh) else { return }
        show(.idle)
        scheduler.submit()
        startUnenroller()
    }

    // MARK: - Key checks and verdicts

    /// D1's check: enrolment for a device without an id, else `verifyKey`; enrolling again
    /// when the server no longer knows the device.
    /// A check is always a request of its own, never one already in flight (that one may
    /// have been judged before this moment).
    @discardableResult
    func checkKey() async -> Outcome {
        guard let id = ledger.deviceID else { return await enrol().outcome }
        let outcome = await exchange(.verifyKey, id, isCheck: true)
        if case .refused(.unknownDevice) = outcome, ledger.deviceID == nil { return await enrol().outcome }
        return outcome
    }

    enum Outcome: Equatable {
        case served(deviceID: UInt64?)
        case stopped
        case refused(Refusal)
        /// An answer from before a verdict already acted on, or from before a reset or wipe.
        case stale
        case noAnswer
    }

    struct Enrolled: Sendable { var outcome: Outcome; var id: UInt64? }

    /// Enrols the device, once at a time: concurrent callers share one enrolment.
    func enrolled() async -> Enrolled {
        if let id = ledger.deviceID { return Enrolled(outcome: .served(deviceID: id), id: id) }
        if let pending = enrolment { return await pending.value }
        let task = Task { await self.enrol() }
        enrolment = task
        let result = await task.value
        enrolment = nil
        return result
    }

    private func enrol() async -> Enrolled {
        let outcome = await exchange(.enroll, nil, isCheck: true)
        // The newest registration served wins (an older answer arriving later is stale).
        if case .served(let id?) = outcome, !ledger.revoked {
            var next = ledger
            next.deviceID = id
            if save(next) { return Enrolled(outcome: outcome, id: id) }
        }
        return Enrolled(outcome: outcome, id: ledger.deviceID)
    }

    /// One request, raced against the timeout, and its verdict taken in.
    func exchange(_ route: Route, _ id: UInt64?, isCheck: Bool) async -> Outcome {
        let sentIn = era
        let result = await race(route, id)
        return takeIn(result, sentIn: sentIn, id: id, isCheck: isCheck)
    }

    /// The timeout race: the transport against the SDK's own sleep; the first to finish
    /// wins and the other is cancelled (a late answer is never seen).
    func race(_ route: Route, _ id: UInt64?) async -> WireResult? {
        let http = self.http, time = self.time, limit = options.requestTimeoutMs
        enum Lap: Sendable { case answer(WireResult), expired, gaveUp }
        return await withTaskGroup(of: Lap.self) { group in
            group.addTask {
                do { return .answer(try await http.send(route, deviceID: id)) } catch { return .gaveUp }
            }
            group.addTask {
                do { try await time.sleep(ms: limit); return .expired } catch { return .gaveUp }
            }
            let first = await group.next()
            group.cancelAll()
            if case .answer(let result)? = first { return result }
            return nil
        }
    }

    /// Acts on an answer: only a verdict newer than (or as new as) the newest acted on,
    /// and only in the era it was sent in. A refusal that stops access locks (and wipes
    /// when it says access has been stopped 30 days); a 200 newer than the lock unlocks.
    func takeIn(_ result: WireResult?, sentIn: UInt64, id: UInt64?, isCheck: Bool) -> Outcome {
        guard let result else { return .noAnswer }
        guard sentIn == era else { return .stale }
        var next = ledger
        switch result {
        case .noVerdict:
            return .noAnswer
        case .ok(let served, let newID):
            if let mark = ledger.watermark, served < mark { return .stale }
            if ledger.revoked, let stop = ledger.stopVerdictAt, served <= stop { return .stale }
            next.watermark = served
            if isCheck { next.lastCheckAt = time.nowMs; next.lastCheckWallMs = time.wallMs }
            let unlocking = next.revoked
            if unlocking { next.revoked = false; next.wiped = false; next.revokedSince = nil }
            guard save(next) else { return .noAnswer }
            if unlocking { unlocked() }
            return .served(deviceID: newID)
        case .refused(let why, let served, let since):
            if let mark = ledger.watermark, served < mark { return .stale }
            next.watermark = served
            if isCheck { next.lastCheckAt = time.nowMs; next.lastCheckWallMs = time.wallMs }
            if why.stopsAccess {
                lockDown(next, servedAt: served, stoppedSince: since)
                return .stopped
            }
            if why == .unknownDevice, let id, next.deviceID == id { next.deviceID = nil }
            _ = save(next)
            return .refused(why)
        }
    }

    func lockDown(_ base: Ledger, servedAt: UInt64, stoppedSince: UInt64?) {
        var next = base
        if !next.revoked { next.revoked = true; next.revokedSince = servedAt }
        next.stopVerdictAt = max(next.stopVerdictAt ?? 0, servedAt)
        var wiping = false
        if let since = stoppedSince, servedAt >= since, servedAt - since >= options.wipeAfterMs, !next.wiped {
            wiping = true
            next.wiped = true
            next.indexed = 0; next.hasModels = false; next.hasPlaces = false; next.deviceID = nil
        }
        if running { endRun() }   // the run the lock cut short ends with its report
        guard save(next) else { return }
        if wiping { era &+= 1 }
        runTask?.cancel()
        runTask = nil
        uploading = false
        scheduler.withdraw()
        show(.failed(.accessRevoked))
    }

    func unlocked() {
        scheduler.submit()
        show(.idle)
        if foreground, hasWork { beginRun() }
    }

    // MARK: - Calls to the server

    /// A request that needs an enrolled device: enrols first if needed, and once more if
    /// the server has forgotten the device.
    func call(_ route: Route) async -> Outcome {
        for attempt in 0..<2 {
            if ledger.revoked { return .stopped }
            let enrolled = await enrolled()
            guard let id = enrolled.id else { return enrolled.outcome }
            if ledger.revoked { return .stopped }
            let outcome = await exchange(route, id, isCheck: false)
            if case .refused(.unknownDevice) = outcome, attempt == 0 { continue }
            return outcome
        }
        return .refused(.unknownDevice)
    }

    func remote(_ route: Route) async throws {
        guard loadedLate() else { throw LumenError.notConfigured }
        if ledger.revoked { throw LumenError.accessRevoked }
        switch await call(route) {
        case .served: return
        case .stopped: throw LumenError.accessRevoked
        case .stale: throw ledger.revoked ? LumenError.accessRevoked : LumenError.unavailable
        case .refused: throw LumenError.unavailable
        case .noAnswer: throw LumenError.network
        }
    }

    // MARK: - Indexing runs

    var hasWork: Bool { photos.isAuthorized && (!ledger.hasModels || !ledger.hasPlaces || ledger.indexed < photos.assetCount) }

    /// The OS fired the background task: check the key (D1), then index.
    func backgroundTaskFired() async {
        guard loaded else { return }
        if ledger.revoked { scheduler.withdraw(); return }
        let startedIn = era
        guard await checkKey() != .stale, era == startedIn, !ledger.revoked, !running, hasWork else { return }
        scheduler.onExpiration { [weak self] in Task { await self?.backgroundTimeExpiring() } }
        beginRun()
        await runTask?.value
    }

    /// The OS says the background run's time is up (SPEC P5): each chunk is saved as it is
    /// indexed, so the run ends now with its report; the task stays submitted and the next
    /// run resumes from the ledger (D4).
    func backgroundTimeExpiring() {
        guard running, !ledger.revoked else { return }
        endRun()
        _ = save(ledger)   // a full disk keeps the report in memory (P3)
        show(.idle)
        startUploadIfDue()
    }

    /// Starts a run now (the state is `indexing` before this returns).
    func beginRun() {
        guard !running, !ledger.revoked, photos.isAuthorized else { return }
        runNumber &+= 1
        running = true
        show(.indexing)
        let number = runNumber
        runTask = Task { await self.runBody(number) }
    }

    func isCurrent(_ number: UInt64) -> Bool { running && runNumber == number && !ledger.revoked }

    func runBody(_ number: UInt64) async {
        if !ledger.hasModels {
            let outcome = await call(.models)
            guard isCurrent(number) else { return }
            if case .served = outcome { var next = ledger; next.hasModels = true; _ = save(next) }
        }
        if !ledger.hasPlaces {
            let outcome = await call(.places)
            guard isCurrent(number) else { return }
            if case .served = outcome { var next = ledger; next.hasPlaces = true; _ = save(next) }
        }
        if ledger.hasModels, ledger.hasPlaces {
            // Bounded: each pass indexes a chunk or returns; the library grows only by the person.
            while ledger.indexed < photos.assetCount {
                do { try await time.sleep(ms: options.chunkPauseMs) } catch { return }
                guard isCurrent(number), photos.isAuthorized else { return }
                var next = ledger
                next.indexed += min(options.chunkSize, photos.assetCount - ledger.indexed)
                guard save(next) else { break }
                // The chunk is on the disk before the next is indexed; a lock, a reset or a
                // wipe may come meanwhile, and the next pass (or the end) checks for them.
                await blobs.flush()
            }
        }
        guard isCurrent(number) else { return }
        endRun()
        _ = save(ledger)   // a full disk keeps the report in memory (P3)
        show(.idle)
        startUploadIfDue()
    }

    /// The run ends with its report, written with the next save (`reportsHeld`).
    func endRun() {
        running = false
        reportsHeld += 1
    }

    func forgetIndexIfPhotosRevoked() {
        guard !photos.isAuthorized, ledger.indexed > 0 else { return }
        var next = ledger
        next.indexed = 0
        _ = save(next)
    }

    // MARK: - Run reports

    /// Uploads the queued reports unless one is under way or the back-off has not run out.
    func startUploadIfDue() {
        guard !uploading, !ledger.revoked, !ledger.reports.isEmpty, time.nowMs >= uploadNotBefore else { return }
        uploading = true
        uploadNumber &+= 1
        let number = uploadNumber
        Task { await self.upload(number) }
    }

    func upload(_ number: UInt64) async {
        let batch = ledger.reports
        let sentIn = era
        let outcome = await call(.telemetry)
        guard sentIn == era, uploading, uploadNumber == number else { return }
        uploading = false
        if case .served = outcome {
            var next = ledger
            next.reports.removeAll { batch.contains($0) }
            guard save(next) else { return }
            uploadBackoffMs = 0
            uploadNotBefore = 0
            startUploadIfDue()   // reports queued meanwhile go at once
        } else if outcome != .stale {
            // An answer older than a verdict already acted on is ignored (D9): no failure either.
            uploadBackoffMs = min(max(options.uploadBackoffFirstMs, uploadBackoffMs * 2), options.uploadBackoffCapMs)
            uploadNotBefore = time.nowMs + uploadBackoffMs
        }
    }

    // MARK: - The reset's server-side delete

    func startUnenroller() {
        guard unenroller == nil else { return }
        unenroller = Task { await self.unenrollLoop() }
    }

    /// Deletes the owed records one by one; after a failure sleeps its back-off. Each pass
    /// deletes one record or sleeps, and a cancelled task stops.
    func unenrollLoop() async {
        var backoff = options.unenrollBackoffFirstMs
        while let id = ledger.owedUnenroll.first, !Task.isCancelled {
            if case .ok? = await race(.unenroll, id) {
                var next = ledger
                next.owedUnenroll.removeAll { $0 == id }
                if save(next) { backoff = options.unenrollBackoffFirstMs; continue }
            }
            do { try await time.sleep(ms: backoff) } catch { break }
            backoff = min(backoff * 2, options.unenrollBackoffCapMs)
        }
        unenroller = nil
    }

    // MARK: - The ledger

    func load() -> Bool {
        do {
            if let data = try blobs.load(Ledger.key) { ledger = Ledger.decode(data) ?? Ledger() }
            loaded = true
            return true
        } catch {
            return false   // unreadable is not absent: try again at the next launch
        }
    }

    /// Writes the whole ledger, with the run reports held in memory if the disk has room
    /// for them, else without (a full disk refuses what takes room, SPEC P3, and the lock,
    /// a check's time or a deletion must not wait for it); only a write that succeeded
    /// becomes the SDK's state.
    func save(_ next: Ledger) -> Bool {
        if reportsHeld > 0 {
            var withReports = next
            for _ in 0..<reportsHeld {
                withReports.reports.append(withReports.nextReport)
                withReports.nextReport &+= 1
            }
            if write(withReports) { reportsHeld = 0; return true }
        }
        return next == ledger || write(next)
    }

    func write(_ next: Ledger) -> Bool {
        do {
            try blobs.store(Ledger.key, try next.encoded())
            ledger = next
            return true
        } catch {
            return false
        }
    }

    func show(_ next: LumenState) {
        guard next != state else { return }
        state = next
        onState(next)
    }
}
