/// The reference SDK's decision points (the `mutant…` calls in `ReferenceSDK.swift`): where
/// each deliberate bug of `SDKFlaws` bends a rule. Each takes the rule's own answer; with
/// no flaws (the reference) it returns that answer and does nothing else. Adding a mutant
/// means a flaw in `SDKFlaws`, its bend here, and its entry in the catalogue (`Mutants.all`, Sources/Invariants/MutantCatalogue.swift).
extension ReferenceSDK {
    // MARK: Lifecycle

    /// A background wake the rules ignore (a run is going, or the SDK is locked).
    /// `restartsRunOnBackgroundWake`: a wake while a foreground run waits for its key check
    /// starts the run again and forgets that check. Not inlined: inlined, it pushed
    /// `handle`'s other helpers out of the optimiser's inlining budget.
    @inline(never)
    mutating func mutantIgnoredWake(_ s: inout Step) {
        guard flaws.contains(.restartsRunOnBackgroundWake) else { return }
        guard phase == .checking, !runInBackground, !foreground, configured, !s.disk.isLocked else { return }
        _ = take(checkInFlight)
        startRun(background: true, &s)
    }

    /// P5: the run asked to stop keeps what it wrote. `rewindsChunkOnExpiry`: the handler
    /// sets the index back by a chunk; `dropsTaskOnExpiry`: it cancels the background task.
    @inline(never)
    mutating func mutantExpiring(_ s: inout Step) {
        guard !flaws.isDisjoint(with: [.rewindsChunkOnExpiry, .dropsTaskOnExpiry]) else { return }
        if flaws.contains(.rewindsChunkOnExpiry), phase == .indexing, s.disk.indexedCount > 0 {
            s.store(.indexPhotos(from: s.disk.indexedCount - min(s.disk.indexedCount, UInt32(s.config.chunkPhotos)), count: 0))
        }
        if flaws.contains(.dropsTaskOnExpiry), s.disk.backgroundScheduled { s.store(.cancelBackground) }
    }

    /// P4: the disk handed to a step whose data is locked is not read. `unreadableAsAbsent`:
    /// it reads an empty one.
    @inline(__always)
    func mutantReadsLockedAsEmpty(_ dataLocked: Bool) -> Bool {
        dataLocked && flaws.contains(.unreadableAsAbsent)
    }

    /// P4: a step whose data is locked reads nothing. `unreadableAsAbsent`: it goes on as
    /// if the disk were empty (its writes are refused anyway).
    @inline(__always)
    func mutantWaitsForUnlock(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.unreadableAsAbsent)
    }

    /// P4: a launch before the unlock waits. `wipesUnreadableIndex`: it deletes the index it
    /// could not read.
    mutating func mutantLaunchedLocked(_ s: inout Step) {
        guard flaws.contains(.wipesUnreadableIndex) else { return }
        s.store(.deleteIndex)
    }

    /// P3: a run report a full disk refused is kept in memory and written when the disk has
    /// room. `dropsUnwrittenReport`: it is dropped.
    @inline(__always)
    func mutantKeepsUnwrittenReport(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.dropsUnwrittenReport)
    }

    /// D4: a locked SDK becoming active checks again. `noCheckOnActivationWhenLocked`: it does not.
    @inline(__always)
    func mutantChecksOnLockedActivation(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.noCheckOnActivationWhenLocked)
    }

    /// D8: without Photos access the index is deleted. `ignoresPhotosRevoked`: it is kept.
    @inline(__always)
    func mutantDeletesIndexWithoutPhotos(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.ignoresPhotosRevoked)
    }

    /// D1: a check is due when the last answered one is older than the interval.
    /// `checksEvery48h` doubles the interval; `checksAgeInWholeSeconds` compares whole seconds.
    func mutantCheckIsDue(_ rule: Bool, _ s: Step) -> Bool {
        guard !flaws.isDisjoint(with: [.checksEvery48h, .checksAgeInWholeSeconds, .checksIntervalOnWallClock]) else { return rule }
        let interval = flaws.contains(.checksEvery48h) ? 2 * s.config.checkIntervalMs : s.config.checkIntervalMs
        if flaws.contains(.checksIntervalOnWallClock), s.disk.lastAnsweredCheck != LocalData.never {
            let wallAge = s.context.wallClock(at: s.now) - (Int64(s.disk.lastAnsweredCheck) + s.disk.lastCheckWallOffsetMs)
            return wallAge > Int64(interval)   // a clock set back: a negative age, never due
        }
        if flaws.contains(.checksAgeInWholeSeconds), s.disk.lastAnsweredCheck != LocalData.never {
            return (s.now - s.disk.lastAnsweredCheck) / Ms.second > interval / Ms.second
        }
        return s.disk.lastAnsweredCheck == LocalData.never || s.now - s.disk.lastAnsweredCheck > interval
    }

    /// D3: a locked SDK throws from every call. `queriesWhileLocked`: query and profile go to the server.
    @inline(__always)
    func mutantThrowsWhenLocked(_ rule: Bool, _ call: APICall) -> Bool {
        rule && !(call != .search && flaws.contains(.queriesWhileLocked))
    }

    /// D7: a reset deletes the credential. `resetKeepsCredential`: it keeps it.
    func mutantResetDeletesCredential(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.resetKeepsCredential)
    }

    /// D7: a reset's server-side delete is retried until it succeeds. `resetNotRetried`: never.
    @inline(__always)
    func mutantRetriesReset(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.resetNotRetried)
    }

    /// D7: after `reset()` nothing it deleted reaches the server. `uploaderOutlivesReset`:
    /// the uploader sends the dropped reports with the deleted credential `old`.
    mutating func mutantResetting(_ old: Credential, reportsQueued: UInt32, _ s: inout Step) {
        guard flaws.contains(.uploaderOutlivesReset), reportsQueued > 0, !old.isNone else { return }
        send(.runReport, credential: old, &s)
    }

    /// D10: queued reports go up at launches, activations and on the retry back-off.
    /// `uploadsOnlyAtRunEnd`: only when a run ends.
    @inline(__always)
    func mutantRetriesUploads(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.uploadsOnlyAtRunEnd)
    }

    /// D6: a call throws `accessRevoked` only when locked or answered a lock error.
    /// `throwsOnPending`: `app_pending` makes it throw too.
    @inline(__always)
    func mutantCallOutcome(_ rule: CallOutcome, _ a: Answer) -> CallOutcome {
        a == .appPending && flaws.contains(.throwsOnPending) ? .threwAccessRevoked : rule
    }

    // MARK: Runs

    /// D1: every run starts with a key check. `skipsBackgroundCheck`: a background run
    /// does not; `skipsBackgroundCheckAfterRecentCheck`: not within a minute of an answer.
    @inline(__always)
    func mutantChecksAtRunStart(_ rule: Bool, background: Bool, _ s: Step) -> Bool {
        guard background, !flaws.isEmpty else { return rule }
        if flaws.contains(.skipsBackgroundCheck) { return false }
        if flaws.contains(.skipsBackgroundCheckAfterRecentCheck), s.disk.lastAnsweredCheck != LocalData.never,
           s.now - s.disk.lastAnsweredCheck < Ms.minute { return false }
        return rule
    }

    // MARK: Answers

    /// D9: an answer no longer awaited is ignored. `appliesStaleResponses`: it is applied.
    @inline(__always)
    mutating func mutantStaleAnswer(_ kind: RequestKind, _ reply: ServerReply, _ s: inout Step) {
        if flaws.contains(.appliesStaleResponses) { answer(kind, reply, &s) }
    }

    /// D2, D6: only the three lock errors stop access. The `locksOn…` flaws add one more.
    @inline(__always)
    func mutantStopsAccess(_ rule: Bool, _ reply: ServerReply) -> Bool {
        if rule || flaws.isEmpty { return rule }
        switch reply.answer {
        case .notRollup: return flaws.contains(.locksOnBare403) && reply.notRollup?.status == 403
        case .serverError: return flaws.contains(.locksOn5xx)
        case .timedOut: return flaws.contains(.locksOnTimeout)
        case .appPending: return flaws.contains(.locksOnPending)
        case .deviceUnknown: return flaws.contains(.locksOnDeviceUnknown)
        case .offline: return flaws.contains(.locksOffline)
        default: return false
        }
    }

    /// D4, D9: an offline failure changes no verdict. `forgetsVerdictsWhenOffline`: it
    /// forgets the newest one acted on.
    @inline(__always)
    func mutantNewestVerdictAfterOffline(_ rule: SimTime) -> SimTime {
        flaws.contains(.forgetsVerdictsWhenOffline) ? 0 : rule
    }

    /// D4, D9: a verdict older than the newest acted on is ignored. `unlocksOnStaleOK`
    /// acts on an older 200, `locksOnStaleRefusal` on an older lock error.
    @inline(__always)
    func mutantIgnoresOlderVerdict(_ rule: Bool, _ a: Answer) -> Bool {
        guard rule, !flaws.isEmpty else { return rule }
        return !((a == .ok && flaws.contains(.unlocksOnStaleOK)) || (a.isLockError && flaws.contains(.locksOnStaleRefusal)))
    }

    /// D4, D9: every verdict acted on becomes the newest. `unlockForgetsItsVerdict`: the
    /// 200 of a check that unlocks does not.
    @inline(__always)
    func mutantRecordsVerdict(_ rule: Bool, _ a: Answer, isCheck: Bool, _ s: Step) -> Bool {
        rule && !(s.disk.isLocked && a == .ok && isCheck && flaws.contains(.unlockForgetsItsVerdict))
    }

    /// D10: an upload's 200 settles its reports. `settlesReportsOnDeviceUnknown`: so does `device_unknown`.
    @inline(__always)
    func mutantUploadDelivered(_ rule: Bool, _ a: Answer) -> Bool {
        rule || (a == .deviceUnknown && flaws.contains(.settlesReportsOnDeviceUnknown))
    }

    /// D2, D3: a lock error to a download locks like any other. `ignoresLockOnDownload`:
    /// it ends the run as a failed download; returns true when it did.
    @inline(__always)
    mutating func mutantIgnoredLockOnDownload(_ a: Answer, _ kind: RequestKind, _ s: inout Step) -> Bool {
        guard a.isLockError, kind == .modelDownload || kind == .placeData, flaws.contains(.ignoresLockOnDownload) else { return false }
        endRun(&s)
        return true
    }

    // MARK: Locks and purges

    /// D3: a lock stops the run. `keepsIndexingWhenLocked`: it goes on.
    @inline(__always)
    func mutantStopsRunOnLock(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.keepsIndexingWhenLocked)
    }

    /// After an answer locked (or purged). `keepsIndexingWhenLocked`: a check's lock
    /// error takes the run on.
    @inline(__always)
    mutating func mutantLockedByAnswer(isCheck: Bool, _ s: inout Step) {
        if isCheck, flaws.contains(.keepsIndexingWhenLocked) { continueRun(&s) }
    }

    /// D5: purge when the server says access has been stopped for 30 days in a row. The
    /// purge flaws move the deadline, use the first lock seen, or never purge.
    func mutantPurgeIsDue(_ rule: Bool, _ reply: ServerReply, byCheck: Bool, _ s: Step) -> Bool {
        guard !flaws.isEmpty else { return rule }
        if s.disk.purged || flaws.contains(.neverPurges) { return false }
        if !byCheck, flaws.contains(.purgesOnlyOnCheck) { return false }
        if flaws.contains(.purgesFromFirstLockSeen) {
            return byCheck && s.now >= s.disk.lockedSince &+ s.config.purgeAfterMs
        }
        let after = flaws.contains(.purgesAt29Days) ? s.config.purgeAfterMs - Ms.day
            : flaws.contains(.purgesHalfHourLate) ? s.config.purgeAfterMs + 30 * Ms.minute : s.config.purgeAfterMs
        if flaws.contains(.purgesOnWallClock) {
            let wallAge = Int64(reply.servedAt) + s.context.wallClockOffsetMs - Int64(reply.stoppedSince)
            return reply.stoppedSince != ServerReply.none && wallAge >= Int64(after)
        }
        if flaws.contains(.purgesStrictlyAfter30Days) {
            return reply.stoppedSince != ServerReply.none && reply.stoppedForMs > after
        }
        return reply.stoppedSince != ServerReply.none && reply.stoppedForMs >= after
    }

    /// D5 keeps queued run reports through a purge. `dropsReportsOnPurge`: it drops them.
    mutating func mutantPurging(_ s: inout Step) {
        if flaws.contains(.dropsReportsOnPurge), s.disk.reportsQueued > 0 { s.store(.dropReports) }
    }

    /// D5, D6: a transient failure of a locked SDK's check decides nothing.
    /// `purgesOnTransientCheck`: it purges 30 days after the lock the SDK saw.
    mutating func mutantTransientWhileLocked(_ reply: ServerReply, _ s: inout Step) {
        guard !flaws.isEmpty else { return }
        // P6: a portal's 200 is no verdict. `unlocksOnPortal200`: it unlocks.
        if flaws.contains(.unlocksOnPortal200), reply.notRollup?.status == 200 { return unlock(&s) }
        guard flaws.contains(.purgesOnTransientCheck) else { return }
        if !s.disk.purged && s.now >= s.disk.lockedSince &+ s.config.purgeAfterMs { purge(&s) }
    }

    // MARK: Unlocking

    /// D4: a locked check's 200 unlocks. `unlocksOnlyInForeground`: only in the foreground.
    func mutantUnlocks(_ rule: Bool, _ s: Step) -> Bool {
        rule && !(!foreground && flaws.contains(.unlocksOnlyInForeground))
    }

    /// D6: an SDK whose credential is unknown registers again. `registersOnlyAtKeyCheck`:
    /// with no run going it waits for its next key check, so a call in between fails unregistered.
    func mutantRegistersOnDeviceUnknown(_ rule: Bool, runGoing: Bool) -> Bool {
        rule && (runGoing || !flaws.contains(.registersOnlyAtKeyCheck))
    }

    /// D5: unlocking ends the stop the SDK saw. `lockedSinceSurvivesUnlock`: it keeps its start.
    func mutantClearsLockedSince(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.lockedSinceSurvivesUnlock)
    }

    /// D4: unlocking registers the background task again. `noBackgroundAfterUnlock`: it does not.
    func mutantSchedulesBackgroundOnUnlock(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.noBackgroundAfterUnlock)
    }

    /// D4: unlocking keeps the index, models and place data. The `redownloads…` and
    /// `reindexesOnUnlock` flaws delete one of them.
    mutating func mutantUnlocking(_ s: inout Step) {
        guard !flaws.isEmpty else { return }
        if flaws.contains(.redownloadsModelsOnUnlock), s.disk.modelsPresent { s.store(.deleteModels) }
        if flaws.contains(.reindexesOnUnlock), s.disk.indexedCount > 0 { s.store(.deleteIndex) }
        if flaws.contains(.redownloadsPlaceDataOnUnlock), s.disk.placeDataPresent { s.store(.deletePlaceData) }
    }

    /// D4: indexing resumes after an unlock. `noRunAfterUnlock`: no new run starts.
    func mutantRunsAfterUnlock(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.noRunAfterUnlock)
    }

    /// D4: the run resumes where it stopped. `noResumeAfterUnlock`: it ends instead;
    /// returns true when it did.
    mutating func mutantEndedRunAtUnlock(_ s: inout Step) -> Bool {
        guard flaws.contains(.noResumeAfterUnlock) else { return false }
        endRun(&s)
        return true
    }

    // MARK: Run reports

    /// D10: a failed upload keeps its reports queued. `dropsReportsOnFailedUpload`: it drops them.
    mutating func mutantUploadFailing(_ s: inout Step) {
        if flaws.contains(.dropsReportsOnFailedUpload), s.disk.reportsQueued > 0 { s.store(.dropReports) }
    }

    // MARK: Async races (issue 46)

    /// D9: a request whose timeout fired is no longer awaited. `timeoutRaceTakesLateAnswer`:
    /// the timeout is handled, but the request stays awaited, so its late answer is acted on.
    @inline(__always)
    mutating func mutantTimedOut(_ id: UInt32) {
        guard flaws.contains(.timeoutRaceTakesLateAnswer) else { return }
        let age = nextRequestID - 1 - id
        if age < 32 { inFlight |= UInt32(1) << age }
    }

    /// D1: a check already in flight serves an activation's reason to check.
    /// `checkReentersOnActivation`: the activation sends one of its own.
    @inline(__always)
    func mutantChecksWhileInFlight(_ rule: Bool) -> Bool {
        rule || flaws.contains(.checkReentersOnActivation)
    }

    /// D2, D4, D9: each check's answer is its own. `checkReentersOnActivation`: the first
    /// check answer to arrive completes the newest check sent (one "pending check" slot), so
    /// that check's own answer, arriving after, is no longer awaited.
    @inline(__always)
    mutating func mutantCompletesPendingCheck(_ id: UInt32, _ kind: RequestKind) {
        guard flaws.contains(.checkReentersOnActivation), kind == .check || kind == .register,
              checkInFlight != 0, id != checkInFlight, awaiting(id) else { return }
        _ = take(checkInFlight)
    }

    /// D7, S8: a reset's retry names the credential the reset deleted.
    /// `resetRetriesCurrentCredential`: it names the one the SDK holds now, if any.
    @inline(__always)
    func mutantResetCredential(_ rule: Credential, _ s: Step) -> Credential {
        flaws.contains(.resetRetriesCurrentCredential) && !s.disk.credential.isNone ? s.disk.credential : rule
    }

    /// D7: a delete still owed stays owed when a later `reset()` names a newer
    /// registration. `secondResetDropsOwedDelete`: the later reset forgets it.
    @inline(__always)
    func mutantKeepsOwedDelete(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.secondResetDropsOwedDelete)
    }

    // MARK: A kill at any write (P1)

    /// P1: a reset writes its mark first. `resetMarksPendingLast`: it does not.
    @inline(__always)
    func mutantMarksResetFirst(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.resetMarksPendingLast)
    }

    /// `resetMarksPendingLast`: the local data first, the pending delete of `old` last.
    mutating func mutantResetWithoutMark(_ old: Credential, _ s: inout Step) {
        if s.disk.indexedCount > 0 { s.store(.deleteIndex) }
        if s.disk.modelsPresent { s.store(.deleteModels) }
        if s.disk.placeDataPresent { s.store(.deletePlaceData) }
        if s.disk.reportsQueued > 0 { s.store(.dropReports) }
        if !s.disk.credential.isNone { s.store(.deleteCredential) }
        if s.disk.isLocked { s.store(.unlock) }
        if s.disk.lockedSince != LocalData.never { s.store(.setLockedSince(LocalData.never)) }
        if s.disk.lastAnsweredCheck != LocalData.never { s.store(.setLastAnsweredCheck(LocalData.never)) }
        if !s.disk.pendingReset.isNone, s.disk.pendingReset != old, s.disk.earlierPendingResetGeneration == 0, mutantKeepsOwedDelete(true) {
            s.store(.setEarlierPendingReset(generation: s.disk.pendingReset.generation))
        }
        if !old.isNone, s.disk.pendingReset != old { s.store(.setPendingReset(old)) }
    }

    /// P1, D3: a lock written before its background task was cancelled has it cancelled at
    /// the next launch. (No mutant bends it yet.)
    @inline(__always)
    func mutantCancelsBackgroundAtLockedLaunch(_ rule: Bool) -> Bool { rule }

    /// P1: the lock's date is written before the lock. `lockTrustedByItsDate`: after it.
    @inline(__always)
    func mutantDatesLockFirst(_ rule: Bool) -> Bool {
        rule && !flaws.contains(.lockTrustedByItsDate)
    }

    /// `lockTrustedByItsDate`: at a launch, a lock without its date is lifted.
    mutating func mutantDiscardsUndatedLock(_ s: inout Step) {
        guard flaws.contains(.lockTrustedByItsDate), s.disk.isLocked, s.disk.lockedSince == LocalData.never else { return }
        s.store(.unlock)
    }
}
