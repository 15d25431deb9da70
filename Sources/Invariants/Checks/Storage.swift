import SimKit

/// Writes and deletes on the device's disk, judged as they happen (D3, D4, D5, D7, D8, D10).
extension InvariantChecker {
    @usableFromInline @inline(never) mutating func store(_ d: DeviceIndex, _ op: StoreOp) {
        let i = Int(d)
        // P4 before P1: the write that starts a deferred reset is one of the reset's
        // (`resetAwaitingUnlock` is allocated with `dataUnlockAt`).
        if !dataUnlockAt.isEmpty { storeAfterDeferredReset(d, op) }
        if !kills.isEmpty { writeForKills(d, op) }
        let dev = devices[i]
        // Submitting a background task already scheduled, or cancelling one that is not,
        // changes nothing on the device: no effect (an SDK may re-submit its task at every
        // answer, as the OS's API allows; D9 asks only that a stale answer change nothing).
        switch op {
        case .scheduleBackground where dev.disk.backgroundScheduled: break
        case .cancelBackground where !dev.disk.backgroundScheduled: break
        default: effect(d, .store(op))
        }
        switch op {
        case .indexPhotos(let from, let count):
            if dev.locked { violate(.lockedIsInert, d, "indexed photos \(from)..<\(from + UInt32(count)) while its access was stopped") }
            if !dev.photosAllowed { violate(.photosRevokedDeletesIndex, d, "indexed photos \(from)..<\(from + UInt32(count)) after Photos access was revoked") }
            if from < dev.disk.indexedCount {
                if sinceExpiry(i) {
                    // P5: the expiry's progress was written; it stays, and the next run resumes from it.
                    violate(.backgroundExpiryKeepsProgress, d, count == 0
                        ? "set its index back from \(dev.disk.indexedCount) to \(from) photos \(isExpiryStep ? "when" : "after") its background time ran out: photos whose indexing was written will be indexed again"
                        : "indexed photos \(from)..<\(from + UInt32(count)) again after its background time ran out; the index already held \(dev.disk.indexedCount): the next run resumes from what was written")
                } else {
                    violate(.unlockResumesUnchanged, d, "indexed photos \(from)..<\(from + UInt32(count)) again; the index already held \(dev.disk.indexedCount)")
                }
            }
            if !diskFaults.isEmpty { judgeIndexWrite(d, from: from, count: count, held: dev.disk.indexedCount) }
        case .saveModels:
            if dev.locked { violate(.lockedIsInert, d, "downloaded models while its access was stopped") }
            if dev.disk.modelsPresent {
                violate(sinceExpiry(i) ? .backgroundExpiryKeepsProgress : .unlockResumesUnchanged, d, "downloaded the models again although they were on the device")
            }
        case .savePlaceData:
            if dev.locked { violate(.lockedIsInert, d, "downloaded place data while its access was stopped") }
            if dev.disk.placeDataPresent {
                violate(sinceExpiry(i) ? .backgroundExpiryKeepsProgress : .unlockResumesUnchanged, d, "downloaded the place data again although it was on the device")
            }
        case .queueReport:
            step.queuedReport = true
            step.reportsWritten &+= 1
        case .reportQueued(let id):
            step.queuedReport = true
            step.reportsWritten &+= 1
            namedReportQueued(d, id)
        case .reportLeft(let id):
            namedReportLeft(d, id)
        case .reportsRemoved where step.isReset:
            break   // D7: reset() deletes the queued reports
        case .reportsUploaded(let n), .reportsRemoved(let n):
            if dev.reportUploadFailed { hit(.reportUploadedAfterFailure) }
            let count = UInt32(min(n, dev.disk.reportsQueued))
            // D10: a 200 confirms only reports queued before its upload was sent.
            if let upTo = step.uploadCarriedUpTo {
                if dev.reportsSettled &+ count > max(upTo, dev.reportsSettled) {
                    let never = dev.reportsSettled &+ count - max(upTo, dev.reportsSettled)
                    violate(.reportsNotLost, d, "marked \(count) run report(s) uploaded on a 200 to an upload sent before \(never) of them were queued; they were never delivered")
                }
            } else if count > 0 {
                // D10 by receipt: only a 200 to an upload that carried them says the server has them.
                violate(ruleOfNoVerdict(.reportsNotLost), d, "marked \(count) run report(s) uploaded with no 200 to an upload in this step; the server never confirmed receiving them" + noVerdictNote)
            }
        // The truth is read again for a deletion, not passed as `dev`: a `dev` that escapes
        // to a call is a copy of all 136 bytes on every store (a memcpy), though only
        // deletions need it whole.
        // Only a deletion of what is there is judged: deleting nothing, or writing a
        // "purged" marker (which deletes nothing), breaks no rule of D5, D7, D8 or D10.
        case .deleteIndex:
            if dev.disk.indexedCount != 0 { judgeDeletion(d, op, devices[i]) }
        case .deleteModels:
            if dev.disk.modelsPresent { judgeDeletion(d, op, devices[i]) }
        case .deletePlaceData:
            if dev.disk.placeDataPresent { judgeDeletion(d, op, devices[i]) }
        case .deleteCredential:
            if dev.disk.hasCredential { judgeDeletion(d, op, devices[i]) }
        case .dropReports:
            if dev.disk.reportsQueued != 0 { judgeDeletion(d, op, devices[i]) }
        default: break
        }
        devices[i].follow(op)   // the disk replica, and the D10 report counts
        switch op {
        case .setCredential, .deleteCredential: retruth(d, at: now)   // S2.5 needs a credential
        default: break
        }
    }

    /// P4: the writes only a reset makes (its pending delete, its reports dropped with no
    /// upload answered) take a reset() called before the unlock (`takeDeferredReset`).
    @inline(never)
    mutating func storeAfterDeferredReset(_ d: DeviceIndex, _ op: StoreOp) {
        switch op {
        case .setPendingReset(let c) where !c.isNone: _ = takeDeferredReset(d)
        case .dropReports: _ = takeDeferredReset(d)
        case .reportsRemoved where step.uploadCarriedUpTo == nil: _ = takeDeferredReset(d)
        case .reportLeft where step.uploadCarriedUpTo == nil: _ = takeDeferredReset(d)
        default: break
        }
    }

    /// D5, D7, D8, D10: data goes only by reset, Photos revocation, a purge that the truth
    /// allows, or (the credential) a `device_unknown` that calls for registering again; run
    /// reports go only by reset. `dev` is the device's truth before the deletion.
    mutating func judgeDeletion(_ d: DeviceIndex, _ op: StoreOp, _ dev: DeviceTruth) {
        if step.isReset { return }
        // P1: the next launch finishes a reset, or a purge (its reports kept), a kill cut short.
        if !kills.isEmpty {
            if kills[Int(d)].owesReset { return }
            if kills[Int(d)].owesPurge, !(op == .dropReports) { return }
        }
        let what: String
        switch op {
        case .deleteIndex: what = "its index (\(dev.disk.indexedCount) photos)"
        case .deleteModels: what = "its models"
        case .deletePlaceData: what = "its place data"
        case .dropReports: what = "\(dev.disk.reportsQueued) queued run report(s)"
        case .deleteCredential: what = "its device credential"
        default: what = "its data"
        }
        if case .deleteIndex = op, !dev.photosAllowed { devices[Int(d)].indexAtLock = 0; return }
        if case .deleteCredential = op, step.freshDeviceUnknown { return }
        // P4: a reset() called before the unlock, done now (unless a due purge explains it).
        if !resetAwaitingUnlock.isEmpty, !step.purgeAllowed, takeDeferredReset(d) { return }
        // P5: what was written stays when a background run's time runs out.
        if isExpiryStep, sinceExpiry(Int(d)) {
            violate(.backgroundExpiryKeepsProgress, d, "deleted \(what) when its background time ran out; what was written stays")
            return
        }
        let dropsReports = if case .dropReports = op { true } else { false }
        // P3: a full disk is no reason to delete a person's data ("making room").
        if !diskFaults.isEmpty, dropsReports || !step.purgeAllowed, onAFullDisk(d) {
            violate(.failedWriteLosesNothing, d, "deleted \(what) \(step.writeFailed ? "in a step whose write failed on a full disk" : "while its disk was full"), with no reset, Photos revocation or due purge to justify it")
        }
        if dropsReports {
            violate(.reportsNotLost, d, "dropped \(what) without a reset\(step.purgeAllowed ? " (a purge keeps them)" : "")")
            return
        }
        if step.purgeAllowed { return }
        if step.mustUnlock || step.mayUnlock {
            violate(.unlockResumesUnchanged, d, "deleted \(what) when it unlocked; unlocking must resume the index unchanged")
        } else if dev.locked || dev.stopStart != LocalData.never {
            let why: String
            if case .response(let kind, let answer, _) = step.input, !InvariantChecker.isLockError(answer) {
                why = "on a \(answer) answer to its \(kind) request, which is not a lock error"
            } else if step.olderLockError {
                why = "on a lock error served at \(clock(step.servedAt)), older than a verdict it had already received"
            } else if case .response(_, let answer, _) = step.input, InvariantChecker.isLockError(answer) {
                let stop = dev.stopStart == LocalData.never || dev.stopStart > step.servedAt
                    ? "access was not stopped" : "access had been stopped without a break only since \(clock(dev.stopStart)) (\(DurationText.format(step.servedAt - dev.stopStart)))"
                why = "when that lock error was served (\(clock(step.servedAt))), \(stop), less than 30 days in a row"
            } else {
                why = "without a lock error answering it"
            }
            violate(ruleOfNoVerdict(.purgeOnlyAfter30ContinuousDays), d, "deleted \(what): \(why)" + noVerdictNote)
            if let byClock = purgeByWallClock(d, dev) { violate(.clockChangesNothing, d, "deleted \(what): \(byClock)") }
        } else {
            violate(ruleOfNoVerdict(.purgeOnlyAfter30ContinuousDays), d, "deleted \(what) while its access was not stopped" + noVerdictNote)
        }
        // Reported once; the truth follows the disk from here, so a later unlock is not
        // blamed for data that was already gone (one wrong deletion, one violation).
        switch op {
        case .deleteIndex: devices[Int(d)].indexAtLock = 0
        case .deleteModels: devices[Int(d)].modelsAtLock = false
        default: break
        }
    }

    /// P2: a deletion D5 does not allow, by a device whose phone's clock is off and reads 30
    /// days or more past the start of the stop (by the checkers' timeline, else past the
    /// SDK's lock): a purge only the phone's clock justifies. Says why, or nil.
    func purgeByWallClock(_ d: DeviceIndex, _ dev: DeviceTruth) -> String? {
        let i = Int(d)
        guard i < wallOffsetMs.count, wallOffsetMs[i] != 0 else { return nil }
        let since = dev.stopStart != LocalData.never ? dev.stopStart : dev.lockedSince
        guard since != LocalData.never else { return nil }
        let wallAge = Int64(now) + wallOffsetMs[i] - Int64(since)
        guard wallAge >= Int64(InvariantChecker.purgeAfterMs) else { return nil }
        let off = wallOffsetMs[i] < 0 ? "\(DurationText.format(SimTime(-wallOffsetMs[i]))) behind" : "\(DurationText.format(SimTime(wallOffsetMs[i]))) ahead"
        return "its phone's clock (\(off)) reads \(DurationText.format(SimTime(wallAge))) past the stop's start at \(clock(since)), but in truth it is \(DurationText.format(now - min(now, since))) old: only the phone's clock justifies the purge (P2, D5)"
    }

    /// Whether the step can break a rule of `checkData` at all: every rule there needs one
    /// of these, so most steps skip the call; a run that ended and queued its report, and
    /// sent it, skips it too (D10). Debug builds prove a skipped step clean (`endStep`).
    @inline(__always)
    func mayBreakData(_ dev: DeviceTruth) -> Bool {
        // One test of the flags first: most steps have none of them.
        (step.hasAny(StepTruth.mustUnlockBit | StepTruth.purgeDueBit | StepTruth.isResetBit
                     | StepTruth.runEndedBit | StepTruth.carriedBit)
            && (step.hasAny(StepTruth.mustUnlockBit | StepTruth.purgeDueBit | StepTruth.isResetBit | StepTruth.carriedBit)
                || (step.runEnded && (!step.queuedReport || dev.disk.indexedCount < dev.runPhotos))))
            || (step.isActivation && !dev.photosAllowed)
    }

    /// Judged at the end of a step that may break one of these rules (`mayBreakData`):
    /// D4 (unlock resumes), D5 (purge when due), D7, D8, D10.
    @inline(never) mutating func checkData(_ d: DeviceIndex) {
        let dev = devices[Int(d)]   // the device's truth at the end of the step
        checkUnlockResumes(d, dev)
        if step.purgeDue { checkPurged(d, dev) }
        if step.isReset { checkResetDeleted(d, dev) }
        if step.isActivation, !dev.photosAllowed {
            if dev.disk.indexedCount > 0 {
                violate(.photosRevokedDeletesIndex, d, "\(inputName) with Photos access revoked but kept \(dev.disk.indexedCount) indexed photos")
            } else if step.diskBefore.indexedCount > 0 {
                hit(.photosRevokedIndexDeleted)
            }
        }
        if step.runEnded, !step.queuedReport, !step.isReset {
            violate(.reportsNotLost, d, "an indexing run ended without a run report")
        }
        // D4: a run that had all it needs (access, Photos, models, place data) and ended on
        // its own indexes every photo the library had when it started: the photos a lock cut
        // short, or new ones, are indexed by the next run.
        if step.runEnded, !step.isReset, !step.writeFailed, !dev.locked, dev.photosAllowed, dev.disk.modelsPresent, dev.disk.placeDataPresent,
           dev.disk.indexedCount < dev.runPhotos, runEndedOnItsOwn, !runExpired(Int(d)) {
            violate(.unlockResumesUnchanged, d, "an indexing run ended after \(inputName) with \(dev.runPhotos - dev.disk.indexedCount) of the \(dev.runPhotos) photos the library had when it started not indexed, though nothing stopped it")
        }
        // D10: a 200 that leaves reports queued before its upload was sent starts the next
        // upload at once (an SDK may upload in batches, but the backlog drains). A 200 older
        // than a verdict already delivered is ignored (D9). (The uploads owed at a launch,
        // an activation or a run's end are judged when they fall due: Liveness.swift.)
        if let upTo = step.uploadCarriedUpTo, !step.olderVerdict, !dev.locked, !dev.disk.locked, dev.disk.hasCredential, dev.disk.reportsQueued > 0,
           dev.reportsSettled < upTo, !step.sentReport, !dev.reportAwaited(at: now) {
            violate(.reportsNotLost, d, "its upload was answered 200 but \(upTo - dev.reportsSettled) run report(s) queued before it was sent are still queued, and it sent no upload for them")
        }
    }

    /// D4: an SDK that unlocked in this step has what it had when access stopped (index,
    /// models, background task) and, in the foreground with work to do, is indexing.
    mutating func checkUnlockResumes(_ d: DeviceIndex, _ dev: DeviceTruth) {
        if step.mustUnlock, !step.unlockFromPurge, dev.photosAllowed {
            if dev.disk.indexedCount < dev.indexAtLock {
                violate(.unlockResumesUnchanged, d, "unlocked with \(dev.disk.indexedCount) photos indexed; it had \(dev.indexAtLock) when access stopped")
            }
            if dev.modelsAtLock, !dev.disk.modelsPresent {
                violate(.unlockResumesUnchanged, d, "unlocked without the models it had when access stopped")
            }
        }
        // D4: indexing resumes where it stopped, once the SDK has unlocked in this step:
        if step.mustUnlock, !dev.disk.locked, !InvariantChecker.revoked(dev.state) {
            // background runs too: the task the lock cancelled (D3) is registered again;
            if dev.backgroundAtLock, !dev.disk.backgroundScheduled {
                violate(.unlockResumesUnchanged, d, "unlocked without registering its background task again; it had one when access stopped (indexing resumes where it stopped)")
            }
            // and in the foreground at once: with work to do (Photos allowed, and photos not
            // indexed or the models or place data missing) a run is going when the step ends,
            // not at the next activation.
            if dev.foreground, !dev.running, dev.photosAllowed,
               dev.disk.indexedCount < dev.photoCount || !dev.disk.modelsPresent || !dev.disk.placeDataPresent {
                let missing = dev.disk.indexedCount < dev.photoCount ? "\(dev.photoCount - dev.disk.indexedCount) of \(dev.photoCount) photos not indexed" : "its models or place data missing"
                violate(.unlockResumesUnchanged, d, "unlocked in the foreground with \(missing) but started no indexing run (indexing resumes where it stopped)")
            }
        }
    }

    /// D5, in a step where the purge is due: the index, the models and the credential are
    /// gone, and the SDK still reports access revoked (D3). Which of the two revoked states
    /// it reports is its own choice: the product page names no "purged" state.
    mutating func checkPurged(_ d: DeviceIndex, _ dev: DeviceTruth) {
        // D5: the index, the models and the credential; place data may stay.
        var kept: [String] = []
        if dev.disk.indexedCount > 0 { kept.append("index (\(dev.disk.indexedCount) photos)") }
        if dev.disk.modelsPresent { kept.append("models") }
        if dev.disk.hasCredential { kept.append("credential") }
        if kept.isEmpty, InvariantChecker.revoked(dev.state) {
            devices[Int(d)].purged = true
            hit(.purge)
        } else {
            let answer: String
            if case .response(let kind, let a, _) = step.input { answer = "\(a) to its \(kind)" } else { answer = "a lock error" }
            violate(.purgeWhenDue, d, "got \(answer), served at \(clock(step.servedAt)) when access had been stopped without a break since \(clock(dev.stopStart(servedAt: step.servedAt))) (30 days or more, as the answer said), but " + (kept.isEmpty ? "reports \(dev.state), not access revoked" : "kept its " + kept.joined(separator: ", ")))
        }
    }

    /// D7, in a step that reset the SDK: nothing the page lists is kept on the device.
    mutating func checkResetDeleted(_ d: DeviceIndex, _ dev: DeviceTruth) {
        var kept: [String] = []
        if dev.disk.indexedCount > 0 { kept.append("index (\(dev.disk.indexedCount) photos)") }
        if dev.disk.modelsPresent { kept.append("models") }
        if dev.disk.placeDataPresent { kept.append("place data") }
        if dev.disk.reportsQueued > 0 { kept.append("\(dev.disk.reportsQueued) queued report(s)") }
        if dev.disk.hasCredential { kept.append("device credential") }
        if !kept.isEmpty { violate(.resetDeletesEverything, d, "reset() kept its " + kept.joined(separator: ", ")) }
        // The server's record goes within the SDK's stated back-off (Liveness.swift), not
        // necessarily in this step.
    }

    /// Whether the run ended in a step where nothing outside it ended it: its own chunk
    /// timer, or a fresh, newest 200 (to its key check, a download, or an unlock's check).
    var runEndedOnItsOwn: Bool {
        switch step.input {
        case .timer(.indexChunk): true
        case .response(let kind, .ok, true): !step.olderVerdict && kind != .runReport && kind != .reset
        default: false
        }
    }

    /// The step's input in words: `became active`, `a 503 answer to its check`.
    /// P6: a step begun by an answer that is not Rollup's (a portal, a proxy) acted on no
    /// verdict: what `otherwise` forbids of a step without a verdict is P6's own breach.
    func ruleOfNoVerdict(_ otherwise: InvariantID) -> InvariantID {
        if case .response(_, .notRollup, _) = step.input { return .notRollupIsNoVerdict }
        return otherwise
    }

    /// " (P6: …)" after a message whose rule is `ruleOfNoVerdict`'s, or nothing.
    var noVerdictNote: String {
        if case .response(_, .notRollup, _) = step.input { return " (P6: an answer that is not Rollup's is no verdict)" }
        return ""
    }

    var inputName: String {
        switch step.input {
        case .none: "did nothing"
        case .lifecycle(let l): "\(l)"
        case .response(let kind, let answer, let fresh): "a\(fresh ? "" : " stale") \(answer) answer to its \(kind) request"
        case .timer(let t): "its \(t) timer"
        }
    }
}
