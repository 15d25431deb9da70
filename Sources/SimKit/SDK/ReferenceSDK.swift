/// The reference SDK core: every D rule of SPEC §1.2, as a sans-IO state machine.
///
/// One value is one app process (48 bytes). Persistent state lives in `LocalData`;
/// this value holds only what a process forgets when it dies: requests in flight, the
/// indexing run, and the state last reported.
///
/// Calls named `mutant…` are the decision points where a deliberate bug (a mutant, see
/// `Sources/SimKit/Mutants`) may bend a rule: each takes the rule's own answer and, in the
/// reference (no flaws), returns it unchanged and does nothing else.
public struct ReferenceSDK: SDKCore {
    /// The phase of the current indexing run.
    enum RunPhase: UInt8, Sendable { case none, checking, models, placeData, indexing }

    /// The newest verdict (`servedAt`) this process acted on (D4, D9): an older one, which
    /// the network delivered late, neither locks nor unlocks nor purges.
    var newestVerdictAt: SimTime = 0
    /// The next request id; ids start at 1 and never repeat within a process.
    @usableFromInline var nextRequestID: UInt32 = 1
    /// Requests in flight, a window over the 32 newest ids: bit i is id `nextRequestID-1-i`.
    /// The key check, the download and the upload are awaited by their own ids below until
    /// their timeouts, however many requests follow; a query, profile or reset further
    /// back than the window is no longer awaited (a bound on this value's memory: with at
    /// most 8 calls in flight, it takes 24 more answered within one timeout).
    @usableFromInline var inFlight: UInt32 = 0
    /// The key check (`check` or `register`) in flight, or 0: there is never more than one.
    @usableFromInline var checkInFlight: UInt32 = 0
    /// The model or place-data download in flight, or 0: a run waits for it rather than
    /// send another (two answered 200 would save the models twice, against D4).
    @usableFromInline var downloadInFlight: UInt32 = 0
    /// The run-report upload in flight, or 0, and the reports it carries (at most 65,535
    /// an upload; the rest go with the next).
    @usableFromInline var uploadInFlight: UInt32 = 0
    var reportsUploading: UInt16 = 0
    /// `query` and `profile` calls in flight, at most `apiCallsMax`.
    var apiCallsInFlight: UInt8 = 0
    /// The window of awaited ids (1…32), a choice of this SDK's (`init(requestWindow:)`).
    @usableFromInline var window: UInt8 = 32
    var phase: RunPhase = .none
    /// Bit 0: the run was fired by the OS (`runInBackground`); bits 1–6, the run reports a
    /// full disk refused to queue (`reportsUnwritten`); bit 7, a launch waits for its data
    /// (`awaitingUnlock`). One byte for all, so that this value stays 48 bytes.
    var bits: UInt8 = 0
    /// Whether the current run was fired by the OS.
    var runInBackground: Bool {
        get { bits & 1 != 0 }
        set { bits = bits & ~1 | (newValue ? 1 : 0) }
    }
    /// P3: run reports whose queue write failed on a full disk, kept in memory and written
    /// at the first step whose disk has room (lost with the process, P1). At most 63: more
    /// runs than that ended on one full disk in one process lose the excess.
    var reportsUnwritten: UInt8 {
        get { bits >> 1 & 63 }
        set { bits = bits & 0x81 | min(newValue, 63) << 1 }
    }
    /// P4: the process was launched while its protected data was locked: `configure` waits
    /// for the first step whose data is readable.
    var awaitingUnlock: Bool {
        get { bits & 0x80 != 0 }
        set { bits = bits & 0x7F | (newValue ? 0x80 : 0) }
    }
    /// Bit 0: resume indexing once a check in flight unlocks the SDK (D4,
    /// `resumeAfterUnlock`); bit 1, `configure` was called (`configured`). One byte for
    /// both, so that this value stays 48 bytes.
    var modes: UInt8 = 0
    var resumeAfterUnlock: Bool { get { modes & 1 != 0 } set { modes = modes & ~1 | (newValue ? 1 : 0) } }
    var configured: Bool { get { modes & 2 != 0 } set { modes = modes & ~2 | (newValue ? 2 : 0) } }
    @usableFromInline var foreground = false
    /// The earlier owed delete in flight (`LocalData.earlierPendingReset`), as its id's
    /// `tag`, or 0: its answer clears that slot, the others' the pending one (D7). A tag
    /// tells it apart: both deletes go out together, each time, and a reset further back
    /// than the window of awaited ids (at most 32) is no longer awaited.
    var earlierResetInFlight: UInt8 = 0
    /// A request id in one byte, never 0: ids less than 255 apart have different tags.
    static func tag(_ id: UInt32) -> UInt8 { UInt8(id % 255) + 1 }
    var state: SDKState = .unconfigured
    /// Back-off exponents of the reset and report retries (bounded by `retryMaxMs`).
    var resetAttempts: UInt8 = 0
    var reportAttempts: UInt8 = 0

    /// The window of request ids awaited (`window`, at most this) for queries, profiles and
    /// resets: one of those is abandoned (its answer and timeout are stale to this SDK) once
    /// that many newer ones were sent. The check, download and upload are never abandoned:
    /// D2 and D9 make every answer before its timeout count, and those decide locks.
    @usableFromInline static let inFlightWindow: UInt32 = 32
    /// Server-backed API calls in flight at once; more fail at once (a bound, not a rule).
    static let apiCallsMax: UInt8 = 8

    /// The deliberate bugs this process runs with (`SDKFlaws`); none in the reference.
    let flaws: SDKFlaws

    public init() { flaws = [] }

    /// The reference with another window of awaited request ids for queries, profiles and
    /// resets (1…32, default 32): a request further back is abandoned, its answer stale. A
    /// choice of the SDK's, not a rule: the checkers know nothing of it.
    public init(requestWindow: UInt8) {
        flaws = []
        window = min(max(requestWindow, 1), UInt8(ReferenceSDK.inFlightWindow))
    }

    /// A mutant: the reference with the deliberate bugs `flaws`.
    @usableFromInline package init(flaws: SDKFlaws) { self.flaws = flaws }

    public mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                                effects: inout EffectBuffer) {
        // Two inputs need no step built: going to the background only clears a flag (the
        // engine asks `handledAlone` itself first, in a world with no phone fault), and
        // the timeout of a request already answered is ignored (as `timer` would ignore
        // it; the engine drops most of those before they get here, see `ignoresTimer`).
        if handledAlone(input) { return }
        if case .timer(let kind, let arg) = input, ignoresTimer(kind, arg: arg) { return }
        withUnsafeMutablePointer(to: &effects) { out in
            withUnsafePointer(to: config) { config in
                // The disk goes straight into the step: choosing between it and an empty one
                // in the initialiser's argument copied it twice, 56 bytes, at every step.
                var step = Step(disk: disk, configAt: config, now: now, out: out, context: context)
                if mutantReadsLockedAsEmpty(context.dataLocked) { step.disk = LocalData() }
                handle(input, &step)
            }
        }
    }

    /// Going to the background only clears a flag: no step is needed (`SDKCore.handledAlone`).
    @inlinable @inline(__always)
    public mutating func handledAlone(_ input: SDKInput) -> Bool {
        guard case .wentToBackground = input else { return false }
        foreground = false
        return true
    }

    /// D9: the timeout of a request no longer awaited (answered, abandoned, or forgotten by
    /// a reset or purge) does nothing, so the engine may drop it unseen: in the standard
    /// workload one event in five is such a timeout (`docs/performance.md`).
    @inlinable @inline(__always)
    public func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool {
        kind == .requestTimeout && !awaiting(RequestTimeout.id(inArg: arg))
    }

    @inline(__always)
    mutating func handle(_ input: SDKInput, _ step: inout Step) {
        // P4: protected data not readable yet (a restart, not unlocked): nothing is read.
        if step.context.dataLocked, mutantWaitsForUnlock(true) { dataLocked(input, &step); return }
        if bits > 1 {
            // P4: the launch that waited for the data configures now.
            if awaitingUnlock { awaitingUnlock = false; launch(inBackground: !foreground, &step) }
            // P3: reports a full disk refused are written at the first step with room.
            if reportsUnwritten > 0, !step.context.diskFull { writeUnwrittenReports(&step) }
        }
        switch input {
        case .launch(let inBackground): launch(inBackground: inBackground, &step)
        case .becameActive: becameActive(&step)
        case .wentToBackground: break   // handled before a step is built, above
        case .backgroundRun:
            if configured, !step.disk.isLocked, phase == .none { startRun(background: true, &step) }
            else { mutantIgnoredWake(&step) }
        case .backgroundExpiring: backgroundExpiring(&step)
        case .call(let call): apiCall(call, &step)
        case .reset: reset(&step)
        case .response(let id, let kind, let reply): response(id: id, kind: kind, reply: reply, &step)
        case .timer(let kind, let arg): timer(kind, arg: arg, &step)
        }
    }

    /// One handling: the time, the device's facts, a working copy of the disk kept in step
    /// with the `.store` effects, and the caller's effects buffer.
    struct Step {
        // Word-sized and word-aligned fields first, the 9 bytes of `context` last: with the
        // odd-sized field in the middle, building a step copied it in overlapping pieces.
        var disk: LocalData
        /// The caller's `config`, valid for the one `handle` call, like `out`: read where a
        /// rule needs it, not copied (56 bytes) into every step.
        let configAt: UnsafePointer<SDKConfig>
        var config: SDKConfig { @inline(__always) get { configAt.pointee } }
        let now: SimTime
        /// The caller's `effects`, valid for the one `handle` call that made this step. A
        /// pointer, not the buffer moved in and out: a step then holds no reference, so
        /// making and ending one costs no retain, release or swap.
        let out: UnsafeMutablePointer<EffectBuffer>
        let context: SDKContext
        /// The effects so far; appending goes straight to the caller's buffer.
        var effects: EffectBuffer {
            get { out.pointee }
            nonmutating _modify { yield &out.pointee }
        }
        /// Writes `op`; false when it failed: a full disk refuses a write that takes room
        /// (P3, `SDKContext.diskFull`), and the old value stays.
        /// Inlined: most steps write, and a call a write cost more than the write.
        @discardableResult @inline(__always)
        mutating func store(_ op: StoreOp) -> Bool {
            effects.append(.store(op))
            if context.diskFull || context.dataLocked, context.dataLocked || op.takesRoom { return false }
            disk.apply(op)
            return true
        }
    }

    // MARK: - Lifecycle

    /// D1, D4, D8: a cold start calls `configure`, which checks the key.
    mutating func launch(inBackground: Bool, _ s: inout Step) {
        configured = true
        foreground = !inBackground
        // P1: a reset or purge that a kill cut short is finished before anything else.
        finishCutShort(&s)
        deleteIndexIfPhotosRevoked(&s)
        // D7: the server-side delete of a reset is retried until it succeeds; the retry
        // timer died with the last process, the pending credential is on disk.
        if !s.disk.pendingReset.isNone, mutantRetriesReset(true) { sendReset(&s) }
        if s.disk.isLocked {
            report(s.disk.purged ? .purged : .locked, &s)
            resumeAfterUnlock = !inBackground
            sendCheck(&s)
            return
        }
        report(.idle, &s)
        if !s.disk.backgroundScheduled { s.store(.scheduleBackground) }
        if inBackground || hasWork(s) { startRun(background: inBackground, &s) } else { sendCheck(&s) }
        // D10: queued reports go up at every launch (a new process keeps no back-off).
        if mutantRetriesUploads(true) { uploadReports(&s) }
    }

    /// D1, D4, D8: becoming active checks when locked or when the last answer is old.
    @inline(__always)
    mutating func becameActive(_ s: inout Step) {
        guard configured else { return }
        foreground = true
        deleteIndexIfPhotosRevoked(&s)
        if s.disk.isLocked {
            guard mutantChecksOnLockedActivation(true) else { return }
            resumeAfterUnlock = true
            // D4: checks again every time, even with a check in flight: that one may have
            // been judged before access came back, and its answer would keep the lock.
            sendCheck(&s, evenIfInFlight: true)
        } else if phase == .none, hasWork(s) {
            startRun(background: false, &s)
        } else if checkIsDue(s) {
            sendCheck(&s, evenIfInFlight: mutantChecksWhileInFlight(false))
        }
        // D10: and at every activation; this SDK's back-off only spaces its own retries.
        if mutantRetriesUploads(true) { uploadReports(&s) }
    }

    /// D8: without Photos access the index is deleted when the app runs.
    mutating func deleteIndexIfPhotosRevoked(_ s: inout Step) {
        if mutantDeletesIndexWithoutPhotos(!s.context.photosAllowed && s.disk.indexedCount > 0) {
            s.store(.deleteIndex)
        }
    }

    /// D1: the last answered check is more than 24 h old, in truth (elapsed time, which the
    /// phone's clock never touches) or by the phone's clock (P2), or the phone's clock reads
    /// earlier than when it was answered (set back past it). With a true clock, or one not
    /// moved since the check, the three are one.
    func checkIsDue(_ s: Step) -> Bool {
        let last = s.disk.lastAnsweredCheck
        var due = last == LocalData.never || s.now - last > s.config.checkIntervalMs
        if !due, s.context.wallClockOffsetMs != s.disk.lastCheckWallOffsetMs {
            let wallAge = (Int64(s.now) + s.context.wallClockOffsetMs) - (Int64(last) + s.disk.lastCheckWallOffsetMs)
            due = wallAge < 0 || wallAge > Int64(s.config.checkIntervalMs)
        }
        return mutantCheckIsDue(due, s)
    }

    func hasWork(_ s: Step) -> Bool {
        s.context.photosAllowed
            && (s.disk.indexedCount < s.context.photoCount || !s.disk.modelsPresent || !s.disk.placeDataPresent)
    }

    /// P4: a step while the protected data is locked: nothing can be read, so nothing is
    /// decided from it. A launch waits for the data (`awaitingUnlock`); a background run
    /// does nothing (it cannot read its progress, its credential or its lock); a call fails.
    mutating func dataLocked(_ input: SDKInput, _ s: inout Step) {
        switch input {
        case .launch(let inBackground):
            foreground = !inBackground
            awaitingUnlock = true
            mutantLaunchedLocked(&s)
        case .becameActive: foreground = true
        case .call(let call): s.effects.append(.callResult(call, .failed))
        default: break
        }
    }

    /// P3: the run reports kept in memory since a full disk refused them are queued now.
    mutating func writeUnwrittenReports(_ s: inout Step) {
        while reportsUnwritten > 0, s.store(.queueReport) { reportsUnwritten -= 1 }
    }

    // MARK: - API calls

    /// D3: a locked SDK throws from search, query and profile without contacting the server.
    mutating func apiCall(_ call: APICall, _ s: inout Step) {
        guard configured else { s.effects.append(.callResult(call, .failed)); return }
        if mutantThrowsWhenLocked(s.disk.isLocked, call) {
            s.effects.append(.callResult(call, .threwAccessRevoked))
            return
        }
        guard let kind = call.requestKind else { s.effects.append(.callResult(call, .returned)); return }
        guard !s.disk.credential.isNone, apiCallsInFlight < ReferenceSDK.apiCallsMax else {
            s.effects.append(.callResult(call, .failed)); return
        }
        apiCallsInFlight += 1
        send(kind, &s)
    }

    // MARK: - Reset (D7)

    mutating func reset(_ s: inout Step) {
        let reportsBefore = s.disk.reportsQueued
        stopRun(queueReport: false, &s)
        reportsUnwritten = 0   // D7: the reports in memory go with the rest
        forgetRequestsInFlight()   // they answer a store that no longer exists (D9)
        let old = s.disk.credential.isNone ? s.disk.pendingReset : s.disk.credential
        if mutantMarksResetFirst(true) {
            // P1, write-ahead: the mark first; every write after it is done again from the
            // disk by the next launch if a kill cuts the reset short (`finishCutShort`).
            s.store(.setLastAnsweredCheck(ReferenceSDK.resetMark))
            deleteForReset(&s)
        } else {
            mutantResetWithoutMark(old, &s)
        }
        reportsUploading = 0; uploadInFlight = 0
        resumeAfterUnlock = false
        report(configured ? .idle : .unconfigured, &s)
        // A lock had cancelled the background task; the reset SDK indexes again from scratch.
        if configured, !s.disk.backgroundScheduled { s.store(.scheduleBackground) }
        resetAttempts = 0
        if !s.disk.pendingReset.isNone { sendReset(&s) }
        mutantResetting(old, reportsQueued: reportsBefore, &s)
    }

    /// The `lastAnsweredCheck` a reset writes first and clears last (P1): on the disk, a
    /// reset a kill cut short. It is never a check's time (the run's clock stops far sooner).
    static let resetMark: SimTime = LocalData.never - 1
    /// The same for a purge.
    static let purgeMark: SimTime = LocalData.never - 2

    /// D7, from the disk as it is: the credential the server must delete (the one on the
    /// disk, or the one a reset still owes) is marked pending, then every piece of local
    /// data goes, and the reset's mark is cleared last. Done again whole, it writes only
    /// what is not done yet.
    mutating func deleteForReset(_ s: inout Step) {
        let old = s.disk.credential.isNone ? s.disk.pendingReset : s.disk.credential
        // A delete still owed stays owed when this reset names a newer registration (made
        // since, while the delete failed): it moves to the earlier slot. One slot: a third
        // owed at once (that needs two deletes failing while registrations succeed) gives
        // up the middle one, a bound docs/reference-sdk.md states.
        if !s.disk.pendingReset.isNone, s.disk.pendingReset != old, s.disk.earlierPendingResetGeneration == 0, mutantKeepsOwedDelete(true) {
            s.store(.setEarlierPendingReset(generation: s.disk.pendingReset.generation))
        }
        if !old.isNone, s.disk.pendingReset != old { s.store(.setPendingReset(old)) }
        if s.disk.indexedCount > 0 { s.store(.deleteIndex) }
        if s.disk.modelsPresent { s.store(.deleteModels) }
        if s.disk.placeDataPresent { s.store(.deletePlaceData) }
        if s.disk.reportsQueued > 0 { s.store(.dropReports) }
        if !s.disk.credential.isNone, mutantResetDeletesCredential(true) { s.store(.deleteCredential) }
        if s.disk.isLocked { s.store(.unlock) }
        if s.disk.lockedSince != LocalData.never { s.store(.setLockedSince(LocalData.never)) }
        if s.disk.lastAnsweredCheck != LocalData.never { s.store(.setLastAnsweredCheck(LocalData.never)) }
    }

    /// P1: at a launch, a reset or purge whose mark is on the disk was cut short by a kill:
    /// it is finished from the disk, before anything reads it. A lock written before its
    /// background task was cancelled has it cancelled now (D3), and a lock's date written
    /// without the lock is cleared. None of these writes happens in a run without kills.
    mutating func finishCutShort(_ s: inout Step) {
        if s.disk.lastAnsweredCheck == ReferenceSDK.resetMark {
            deleteForReset(&s)
            if !s.disk.backgroundScheduled { s.store(.scheduleBackground) }
        } else if s.disk.lastAnsweredCheck == ReferenceSDK.purgeMark {
            deleteForPurge(&s)
            s.store(.setLastAnsweredCheck(LocalData.never))
        }
        mutantDiscardsUndatedLock(&s)
        if s.disk.isLocked, s.disk.backgroundScheduled, mutantCancelsBackgroundAtLockedLaunch(true) { s.store(.cancelBackground) }
        // A lock's date written, the lock not: that lock died with the process, and its
        // date must not stand for a later one (D3: the first lock error since access was granted).
        if !s.disk.isLocked, s.disk.lockedSince != LocalData.never, mutantClearsLockedSince(true) { s.store(.setLockedSince(LocalData.never)) }
    }

    /// D7: the deletes owed, each naming its own registration (S8).
    mutating func sendReset(_ s: inout Step) {
        send(.reset, credential: mutantResetCredential(s.disk.pendingReset, s), &s)
        if s.disk.earlierPendingResetGeneration != 0 { earlierResetInFlight = Self.tag(send(.reset, credential: s.disk.earlierPendingReset, &s)) }
    }

    // MARK: - Indexing runs

    /// D1: every run, foreground or background, starts with a key check.
    @inline(__always)
    mutating func startRun(background: Bool, _ s: inout Step) {
        phase = .checking
        runInBackground = background
        s.effects.append(.runStarted(background: background))
        report(.indexing, &s)
        if mutantChecksAtRunStart(true, background: background, s) { sendCheck(&s) } else { continueRun(&s) }
    }

    /// Takes the run as far as it can go now: models, place data, then chunks of photos.
    @inline(__always)
    mutating func continueRun(_ s: inout Step) {
        guard phase != .none else { return }
        guard s.context.photosAllowed else { endRun(&s); return }
        if !s.disk.modelsPresent || !s.disk.placeDataPresent {
            guard !s.disk.credential.isNone else { endRun(&s); return }
            phase = s.disk.modelsPresent ? .placeData : .models
            // A download sent before (say, ahead of a re-registration) is still the one to
            // wait for: its answer takes the run on.
            guard downloadInFlight == 0 else { return }
            let kind: RequestKind = s.disk.modelsPresent ? .placeData : .modelDownload
            downloadInFlight = send(kind, credential: s.disk.credential, &s)
            return
        }
        phase = .indexing
        if s.disk.indexedCount < s.context.photoCount {
            s.effects.append(.setTimer(.indexChunk, at: s.now + s.config.chunkMs, arg: 0))
        } else {
            endRun(&s)
        }
    }

    @inline(__always)
    mutating func indexChunk(_ s: inout Step) {
        guard phase == .indexing else { return }
        guard s.context.photosAllowed else { endRun(&s); return }
        let from = s.disk.indexedCount
        if from < s.context.photoCount {
            let count = UInt16(min(UInt32(s.config.chunkPhotos), s.context.photoCount - from))
            // P3: a full disk suspends indexing; the next run indexes the chunk again.
            guard s.store(.indexPhotos(from: from, count: count)) else { endRun(&s); return }
        }
        if s.disk.indexedCount < s.context.photoCount {
            s.effects.append(.setTimer(.indexChunk, at: s.now + s.config.chunkMs, arg: 0))
        } else {
            endRun(&s)
        }
    }

    /// P5: the OS asks the background run to stop (its time is up). Every chunk indexed so
    /// far is on the disk (one write a chunk); the chunk in progress is only in memory and
    /// the next run indexes it. The run ends now, with its report (D10), so the OS has no
    /// process to kill; the background task stays registered, and the next run resumes
    /// from what was written (D4).
    mutating func backgroundExpiring(_ s: inout Step) {
        guard phase != .none else { return }
        mutantExpiring(&s)
        endRun(&s)
    }

    /// D10: each run ends with a run report, queued and then uploaded.
    mutating func endRun(_ s: inout Step) {
        guard phase != .none else { return }
        stopRun(queueReport: true, &s)
        report(s.disk.isLocked ? (s.disk.purged ? .purged : .locked) : .idle, &s)
        uploadReports(&s)
    }

    @inline(__always)
    mutating func stopRun(queueReport: Bool, _ s: inout Step) {
        guard phase != .none else { return }
        if phase == .indexing { s.effects.append(.cancelTimer(.indexChunk)) }
        phase = .none
        s.effects.append(.runEnded)
        // P3: a report the full disk refused is kept, and written when the disk has room.
        if queueReport, !s.store(.queueReport), mutantKeepsUnwrittenReport(true) { reportsUnwritten += 1 }
    }

    @inline(__always)
    mutating func uploadReports(_ s: inout Step) {
        guard !s.disk.isLocked, reportsUploading == 0, s.disk.reportsQueued > 0, !s.disk.credential.isNone else { return }
        reportsUploading = UInt16(min(s.disk.reportsQueued, UInt32(UInt16.max)))
        uploadInFlight = send(.runReport, credential: s.disk.credential, &s)
    }

    // MARK: - Requests and answers

    /// The key check: `check` with a credential, `register` (with App Attest) without one.
    /// A check already in flight serves every reason to check until it is answered.
    /// `evenIfInFlight`: a locked SDK becoming active checks again regardless (D4).
    mutating func sendCheck(_ s: inout Step, evenIfInFlight: Bool = false) {
        guard checkInFlight == 0 || evenIfInFlight else { return }
        checkInFlight = send(s.disk.credential.isNone ? .register : .check, credential: s.disk.credential.isNone ? .none : s.disk.credential, &s)
    }

    @inline(__always)
    mutating func send(_ kind: RequestKind, _ s: inout Step) {
        _ = send(kind, credential: kind == .register ? .none : s.disk.credential, &s)
    }

    /// Sends a request and arms its timeout (D9).
    @discardableResult
    @inline(__always)
    mutating func send(_ kind: RequestKind, credential: Credential, _ s: inout Step) -> UInt32 {
        let id = nextRequestID
        precondition(id < (1 << 28), "request ids exhausted in one process")
        nextRequestID += 1
        inFlight = (inFlight << 1) | 1
        s.effects.append(.send(id: id, kind: kind, credential: credential))
        s.effects.append(.setTimeout(of: id, kind: kind, at: s.now + s.config.requestTimeoutMs))
        return id
    }

    /// Every request in flight becomes stale: its answer will be ignored (D9).
    mutating func forgetRequestsInFlight() {
        inFlight = 0
        earlierResetInFlight = 0
        checkInFlight = 0
        apiCallsInFlight = 0
        reportsUploading = 0; uploadInFlight = 0
        downloadInFlight = 0
    }

    /// Whether request `id` is still awaited: the check, download or upload in flight
    /// (until answered or timed out), or a request among the `window` newest not answered.
    @inlinable @inline(__always)
    func awaiting(_ id: UInt32) -> Bool {
        guard id < nextRequestID, id != 0 else { return false }
        if id == checkInFlight || id == downloadInFlight || id == uploadInFlight { return true }
        let age = nextRequestID - 1 - id
        return age < UInt32(window) && inFlight & (1 << age) != 0
    }

    /// Whether request `id` is still awaited; it no longer is afterwards. So handling an
    /// awaited id always changes this value, which `ignoresTimer` relies on.
    @inline(__always)
    mutating func take(_ id: UInt32) -> Bool {
        guard awaiting(id) else { return false }
        let age = nextRequestID - 1 - id
        if age < 32 { inFlight &= ~(UInt32(1) << age) }
        if id == checkInFlight { checkInFlight = 0 }
        if id == downloadInFlight { downloadInFlight = 0 }
        if id == uploadInFlight { uploadInFlight = 0 }
        return true
    }

    mutating func response(id: UInt32, kind: RequestKind, reply: ServerReply, _ s: inout Step) {
        mutantCompletesPendingCheck(id, kind)
        guard take(id) else { mutantStaleAnswer(kind, reply, &s); return }   // D9: stale
        answer(kind, reply, id: id, &s)
    }

    @inline(__always)
    mutating func timer(_ kind: TimerKind, arg: UInt32, _ s: inout Step) {
        switch kind {
        case .indexChunk: indexChunk(&s)
        case .requestTimeout:
            guard let timeout = RequestTimeout(arg: arg), take(timeout.id) else { return }
            mutantTimedOut(timeout.id)
            answer(timeout.kind, ServerReply(.timedOut), id: timeout.id, &s)
        case .resetRetry:
            if !s.disk.pendingReset.isNone { sendReset(&s) }
        case .reportRetry:
            uploadReports(&s)
        }
    }

    /// Whether `reply` stops access: the three lock errors of D2, and nothing else (D6, P6).
    func stopsAccess(_ reply: ServerReply) -> Bool {
        mutantStopsAccess(reply.answer.isLockError, reply)
    }

    mutating func answer(_ kind: RequestKind, _ reply: ServerReply, id: UInt32 = 0, _ s: inout Step) {
        let a = reply.answer
        let isCheck = kind == .check || kind == .register
        if kind == .query || kind == .profile { apiCallsInFlight -= min(apiCallsInFlight, 1) }
        if a == .offline { newestVerdictAt = mutantNewestVerdictAfterOffline(newestVerdictAt) }
        // D4, D9: act only on a verdict at least as new as the newest acted on. A reset's
        // 200 says nothing of access (S8) and does not count; a lock error to it does (D2).
        if a.isVerdict, kind != .reset || a.isLockError {
            if mutantIgnoresOlderVerdict(reply.servedAt < newestVerdictAt, a) {
                olderVerdictIgnored(kind, reply, &s)
                return
            }
            if mutantRecordsVerdict(true, a, isCheck: isCheck, s) { newestVerdictAt = max(newestVerdictAt, reply.servedAt) }
        }
        // D1: an answered check, unless it was ignored above as older than one acted on.
        if isCheck, a.isVerdict {
            s.store(.setLastAnsweredCheck(s.now))
            // P2: and what the phone's clock read then, as its offset (written when it moved).
            if s.disk.lastCheckWallOffsetMs != s.context.wallClockOffsetMs { s.store(.setLastCheckWallOffset(s.context.wallClockOffsetMs)) }
        }
        // D10: an upload's answer settles exactly the reports it carried, locked or not.
        if kind == .runReport {
            if mutantUploadDelivered(a == .ok, a) {
                if reportsUploading > 0 { s.store(.reportsUploaded(UInt32(reportsUploading))) }
                reportsUploading = 0; uploadInFlight = 0
                reportAttempts = 0
            } else if reportsUploading > 0 {
                uploadFailed(&s)
            }
        }
        if kind == .reset { resetAnswered(a, earlier: id != 0 && Self.tag(id) == earlierResetInFlight, &s) }

        if mutantIgnoredLockOnDownload(a, kind, &s) { return }
        if stopsAccess(reply) {
            lockOrPurge(reply, byCheck: isCheck, &s)
            mutantLockedByAnswer(isCheck: isCheck, &s)
            if let call = kind.apiCall { s.effects.append(.callResult(call, .threwAccessRevoked)) }
            return
        }
        if s.disk.isLocked {
            if isCheck { lockedCheckAnswered(kind, reply, &s) }
            if let call = kind.apiCall { s.effects.append(.callResult(call, .threwAccessRevoked)) }
            return
        }
        if a == .deviceUnknown, kind != .reset {
            // D6: the server forgot this device; register again and go on. A key check still
            // in flight carries the credential it forgot, so it does not stand in for the
            // registration (its answer still counts when it comes, D2).
            let hadCredential = !s.disk.credential.isNone
            if hadCredential { s.store(.deleteCredential) }
            if let call = kind.apiCall { s.effects.append(.callResult(call, .failed)) }
            if kind == .runReport { reportsUploading = 0; uploadInFlight = 0 }
            if phase != .none { phase = .checking }
            if mutantRegistersOnDeviceUnknown(true, runGoing: phase != .none) { sendCheck(&s, evenIfInFlight: hadCredential) }
            return
        }
        switch kind {
        case .check, .register:
            if a == .ok, kind == .register { s.store(.setCredential(reply.credential)) }
            if a == .ok || a.isTransient { continueRun(&s) } else { endRun(&s) }   // pending, attestation: no run
        case .modelDownload, .placeData:
            // P3: a download a full disk refused is not done: the next run downloads it again.
            if a == .ok, s.store(kind == .modelDownload ? .saveModels : .savePlaceData) { continueRun(&s) }
            else { endRun(&s) }
        case .runReport:
            if a == .ok { uploadReports(&s) }   // more may have been queued meanwhile
        case .query, .profile:
            s.effects.append(.callResult(kind.apiCall!, mutantCallOutcome(a == .ok ? .returned : .failed, a)))
        case .reset:
            break
        }
    }

    /// D4, D9: a verdict older than one already acted on is ignored: it neither locks, nor
    /// unlocks, nor purges. The request is settled as if it had failed, so nothing waits
    /// for it: a call fails, an upload is retried, a run goes on (or ends, if locked).
    mutating func olderVerdictIgnored(_ kind: RequestKind, _ reply: ServerReply, _ s: inout Step) {
        // D6: a registration's 200 made a record whatever came since: its credential is
        // kept (a newer device_unknown answered a request with the credential before it).
        if kind == .register, reply.answer == .ok, s.disk.credential != reply.credential { s.store(.setCredential(reply.credential)) }
        switch kind {
        case .query, .profile:
            s.effects.append(.callResult(kind.apiCall!, s.disk.isLocked ? .threwAccessRevoked : .failed))
        case .runReport:
            if reportsUploading > 0 { uploadFailed(&s) }
        case .check, .register, .modelDownload, .placeData:
            if !s.disk.isLocked { continueRun(&s) }
        case .reset:
            break
        }
    }

    /// D3, D5: the first lock error locks; one whose `stoppedSince` is 30 days or more
    /// before its `servedAt` purges, at once (the server's word on the stop, D5).
    mutating func lockOrPurge(_ reply: ServerReply, byCheck: Bool, _ s: inout Step) {
        if !s.disk.isLocked {
            if mutantDatesLockFirst(true) {
                if s.disk.lockedSince == LocalData.never { s.store(.setLockedSince(s.now)) }
                s.store(.lock)
            } else {
                s.store(.lock)
                if s.disk.lockedSince == LocalData.never { s.store(.setLockedSince(s.now)) }
            }
            if mutantStopsRunOnLock(true) { stopRun(queueReport: true, &s) }
            if s.disk.backgroundScheduled { s.store(.cancelBackground) }
            s.effects.append(.cancelTimer(.reportRetry))   // an upload in flight still settles its reports
            report(.locked, &s)
        }
        if purgeIsDue(reply, byCheck: byCheck, s) { purge(&s) }
    }

    /// D5: the server says access has been stopped for 30 days in a row.
    func purgeIsDue(_ reply: ServerReply, byCheck: Bool, _ s: Step) -> Bool {
        let due = !s.disk.purged && reply.stoppedSince != ServerReply.none && reply.stoppedForMs >= s.config.purgeAfterMs
        return mutantPurgeIsDue(due, reply, byCheck: byCheck, s)
    }

    /// D5: delete the index, the models and the credential, and the place data with them
    /// (allowed); queued run reports stay (D10).
    mutating func purge(_ s: inout Step) {
        forgetRequestsInFlight()
        // P1, write-ahead: the mark first, then the deletions, then the check's time back
        // (a kill between them leaves the mark, and the next launch finishes the purge).
        let lastCheck = s.disk.lastAnsweredCheck
        s.store(.setLastAnsweredCheck(ReferenceSDK.purgeMark))
        deleteForPurge(&s)
        mutantPurging(&s)
        s.store(.setLastAnsweredCheck(lastCheck))
        report(.purged, &s)
    }

    /// D5: the index, the models and the credential go, and the place data with them
    /// (allowed); queued run reports stay (D10). Done again whole, it writes only what is
    /// not done yet.
    mutating func deleteForPurge(_ s: inout Step) {
        if s.disk.indexedCount > 0 { s.store(.deleteIndex) }
        if s.disk.modelsPresent { s.store(.deleteModels) }
        if s.disk.placeDataPresent { s.store(.deletePlaceData) }
        if !s.disk.credential.isNone { s.store(.deleteCredential) }
        if !s.disk.purged { s.store(.markPurged) }
    }

    /// D4: while locked only checks matter; a served one unlocks and the run resumes.
    mutating func lockedCheckAnswered(_ kind: RequestKind, _ reply: ServerReply, _ s: inout Step) {
        switch reply.answer {
        case .ok:
            if kind == .register { s.store(.setCredential(reply.credential)) }
            if mutantUnlocks(true, s) { unlock(&s) }
        case .deviceUnknown:
            if !s.disk.credential.isNone { s.store(.deleteCredential) }
            sendCheck(&s)
        case .timedOut, .offline, .serverError, .notRollup:
            mutantTransientWhileLocked(reply, &s)
        default:
            break
        }
    }

    mutating func unlock(_ s: inout Step) {
        s.store(.unlock)
        if mutantClearsLockedSince(true) { s.store(.setLockedSince(LocalData.never)) }
        if !s.disk.backgroundScheduled, mutantSchedulesBackgroundOnUnlock(true) { s.store(.scheduleBackground) }
        mutantUnlocking(&s)
        report(.idle, &s)
        // D4: indexing resumes where it stopped: in the foreground at once, and after a
        // launch or activation that checked while locked.
        let resume = mutantRunsAfterUnlock(resumeAfterUnlock || phase != .none || foreground)
        resumeAfterUnlock = false
        if phase == .none, resume, hasWork(s) {
            phase = .checking
            runInBackground = false
            s.effects.append(.runStarted(background: false))
            report(.indexing, &s)
        }
        if mutantEndedRunAtUnlock(&s) { return }
        if phase != .none { report(.indexing, &s); continueRun(&s) }
        uploadReports(&s)
    }

    mutating func uploadFailed(_ s: inout Step) {
        guard reportsUploading > 0 else { return }
        reportsUploading = 0; uploadInFlight = 0
        mutantUploadFailing(&s)
        guard !s.disk.isLocked, mutantRetriesUploads(true) else { return }
        reportAttempts = min(reportAttempts + 1, 30)
        s.effects.append(.setTimer(.reportRetry, at: s.now + backoff(reportAttempts, s.config), arg: 0))
    }

    /// A delete's answer: the pending one, or the `earlier` one (`earlierResetInFlight`).
    mutating func resetAnswered(_ a: Answer, earlier: Bool, _ s: inout Step) {
        if earlier { earlierResetInFlight = 0 }
        if a == .ok || a == .deviceUnknown {
            let earlierOwed = s.disk.earlierPendingResetGeneration
            if earlier {
                if earlierOwed != 0 { s.store(.setEarlierPendingReset(generation: 0)) }
            } else if earlierOwed != 0 {
                // The earlier delete, still owed, takes the pending slot (it names this device).
                s.store(.setPendingReset(s.disk.earlierPendingReset))
                s.store(.setEarlierPendingReset(generation: 0))
            } else if !s.disk.pendingReset.isNone {
                s.store(.setPendingReset(.none))
            }
            resetAttempts = 0
        } else if mutantRetriesReset(true) {
            resetAttempts = min(resetAttempts + 1, 30)
            s.effects.append(.setTimer(.resetRetry, at: s.now + backoff(resetAttempts, s.config), arg: 0))
        }
    }

    /// Exponential back-off from `retryFirstMs`, capped at `retryMaxMs`.
    func backoff(_ attempts: UInt8, _ config: SDKConfig) -> SimTime {
        let shift = SimTime(min(attempts, 20))
        return min(config.retryFirstMs << (shift - 1), config.retryMaxMs)
    }

    @inline(__always)
    mutating func report(_ new: SDKState, _ s: inout Step) {
        guard new != state else { return }
        state = new
        s.effects.append(.state(new))
    }
}

extension RequestKind {
    /// The API call this request serves, for `query` and `profile`.
    var apiCall: APICall? {
        switch self { case .query: .query; case .profile: .profile; default: nil }
    }
}
