import SimKit

/// The server's answers against the checkers' own reading of S1–S8.
extension InvariantChecker {
    @usableFromInline @inline(never) mutating func dashboard(_ action: DashboardAction) {
        guard hasBegun else { return }
        var truth = server
        switch action {
        case .disable: hit(.serverDisabledApp)
        case .rollupApp(.revoke, _): hit(.rollupRevoked)
        case .enable(let app):
            let review = truth.apps[Int(app)].review
            if review == .revoked || review == .rejected { hit(.enableRefusedByRollup) }
        default: break
        }
        truth.apply(action, now: now)
        truth.noteServable(at: now)
        truth.noteChanges(from: server, now: now)
        server = truth
        // The truth of every install may have changed (S2, D5); a rotation may add a deadline.
        retruthAll(at: now)
        nextKeyDeadline = server.nextDeadline(after: now)
        resetNextDeadline()
    }

    /// The server lost the device's record (`forget-device`). Out of line so that
    /// `dispatch` only jumps (see there).
    @usableFromInline @inline(never) mutating func forgotDevice(_ d: DeviceIndex) {
        guard hasBegun else { return }
        server.records[Int(d)] = .init()
        if !server.earlier.isEmpty { server.earlier.removeAll(of: d) }
        server.recordChangedAt[Int(d)] = now
        owedResetConditionsChanged(d)   // the record a reset had to delete is gone
        retruth(d, at: now)
    }

    /// The server holds an earlier record of the device (`holds`), listed before the
    /// `served` record of a registration or reset answered 200.
    @usableFromInline @inline(never) mutating func holds(_ d: DeviceIndex, _ generation: UInt32) {
        if heldListedDevice != d { heldListed.removeAll(keepingCapacity: true); heldListedDevice = d }
        heldListed.append(generation)
    }

    /// The server answered a request (`r` is its `served` record, passed whole: its fields
    /// are more than fit in registers, see `dispatch`).
    @usableFromInline @inline(never) mutating func served(_ d: DeviceIndex, _ r: TraceRecord) {
        guard case .served(let id, let kind, let key, let credential, let reply, let recordAfter) = r.event else { return }
        // The truth is read and changed in place: a copy of it (or of the facts) per
        // request would cost retains, and a copy-on-write of its device records.
        guard hasBegun else { return }
        // Injected: the server did nothing (S9), or never saw the request (P6).
        guard reply.answer != .serverError, reply.answer != .notRollup else {
            if reply.notRollup == .forbidden { notRollup403[d] = id }
            if now < restartAwayUntil { hit(.restartCutRequest) }   // the process was away (S10)
            return
        }
        devices[Int(d)].lastServedID = id
        // The earlier records the server listed right before this record (`holds`).
        var listed: [UInt32] = []
        if !heldListed.isEmpty {
            if heldListedDevice == d { listed = heldListed }
            heldListed.removeAll(keepingCapacity: true)
        }
        let genuine = deviceGenuine[Int(d)]
        let attested: AppID? = genuine ? deviceApp[Int(d)] : nil
        var (expected, cause) = server.expected(kind: kind, key: key, credential: credential, device: d, attestedApp: attested, now: now)
        let actual = reply.answer
        if server.namesEarlier(credential), actual == (kind == .reset ? .ok : .deviceUnknown), actual != expected {
            // An earlier record, superseded by a newer registration of the device: the
            // server may have dropped it (S8 leaves the choice), and answers as if it had.
            server.dropEarlier(credential.device, generation: credential.generation)
            (expected, cause) = server.expected(kind: kind, key: key, credential: credential, device: d, attestedApp: attested, now: now)
            owedResetConditionsChanged(d)
        } else if kind != .reset, actual == expected, expected == .ok || expected == .appKeyMismatch || expected == .attestationFailed,
                  server.namesEarlier(credential), server.heldOwner(of: credential) == nil {
            // Its answer shows the server holds it (a server that keeps records unsaid).
            server.markHeld(credential)
            retruth(d, at: now)
        }
        var keyName: String { Int(key) < keyNames.count ? keyNames[Int(key)] : "key \(key)" }

        if !genuine, actual == .ok, kind != .reset || cause != .resetOfUnknown {
            violate(.clonesNeverServed, d, "the server served a \(kind) request from a clone (a non-genuine install sending \(keyName)\(credential.isNone ? "" : " and a copy of credential \(credential)"))")
        } else if actual != expected {
            if let ground = acknowledgedBeforeRestart(key: key, credential: credential, device: d, wrong: (expected, actual)) {
                violate(.serverRestartLosesNothing, d, "the server answered a \(kind) request with \(keyName) \(actual), but S2 requires \(expected): the server restarted at \(clock(lastRestartAt)), after it acknowledged at \(clock(ground)) the change that decides this answer (a dashboard or Rollup action, or a registration or reset answered 200), and it answers as if that had not happened (S10: a restart loses nothing the server acknowledged)")
            } else {
                wrongAnswer(d, kind: kind, keyName: keyName, actual: actual, expected: expected, cause: cause)
            }
        } else if lastRestartAt != LocalData.never, actual.isVerdict,
                  acknowledgedBeforeRestart(key: key, credential: credential, device: d) != nil {
            hit(.restartKeptAcknowledged)
        }
        switch cause {
        case .graceEnded where actual == expected: hit(.oldKeyGraceEnded)
        case .clone where actual == expected:
            hit(.cloneRefused)
            if kind == .reset { hit(.cloneResetRefused) }   // a reset with a live copied credential
        case .pending where actual == expected:
            hit(.pendingAnswered)
            if server.knows(credential) { hit(.pendingToRegisteredDevice) }   // another app's key, pending
        default: break
        }
        if actual == .ok, Int(key) < server.keys.count, case .previous = server.keys[Int(key)] { hit(.oldKeyServedInGrace) }
        // What the server saw of the install, for dating its stops (S2): every request but a
        // reset, which S8 judges alone.
        var bound = SimTime.max
        if kind != .reset, actual.isVerdict {
            bound = server.judged(device: d, key: key, credential: credential, lockError: InvariantChecker.isLockError(actual), now: now)
        }
        judgeDating(d, r, key: key, reply: reply, expected: expected, bound: bound)

        // Follow what the server did to its device records, so one wrong answer is one violation.
        if kind == .register, actual == .ok, let app = server.app(of: key) {
            // The records before it stay, surely where the trace lists them (S8: a server may
            // keep each until a reset names it, or let this one supersede them).
            let before = server.records[Int(d)]
            if before.generation != 0 { server.earlier.append(before, to: d) }
            server.noteListed(d, held: listed, recordAfter: 0)
            server.records[Int(d)] = .init(owner: app, generation: reply.credential.generation)
            server.recordChangedAt[Int(d)] = now
            owedResetConditionsChanged(d)   // a record a reset owes may be superseded
            retruth(d, at: now)
        }
        if kind == .reset, actual == .ok, cause == .resetOfUnknown, !credential.isNone, credential.device == d {
            // S8: a reset naming a registration already gone leaves a newer one alone.
            let live = server.records[Int(d)].generation
            if live != 0, recordAfter != live, !listed.contains(live) {
                let changedAt = server.recordChangedAt[Int(d)]
                if lastRestartAt != LocalData.never, changedAt < lastRestartAt {
                    // The registration was acknowledged before a restart the record did not outlive.
                    violate(.serverRestartLosesNothing, d, "a reset naming registration \(credential.generation), already gone, was answered 200, and the registration \(live) the server acknowledged at \(clock(changedAt)), before its restart at \(clock(lastRestartAt)), is gone (S10: a restart loses nothing the server acknowledged)")
                } else {
                    violate(.resetDeletesEverything, d, "a reset naming registration \(credential.generation), already gone, was answered 200 and the device's newer registration \(live) is gone with it (S8: a reset deletes only the registration its credential names)")
                }
                server.records[Int(d)] = .init(owner: 0, generation: 0, deletedByReset: true)   // one bug, one violation
                server.recordChangedAt[Int(d)] = now
                retruth(d, at: now)
            } else if live != 0 {
                hit(.staleResetSparesNewer)
            }
        }
        if kind == .reset, actual == .ok, cause == .served {
            let newest = server.records[Int(d)].generation
            if newest != 0, newest != credential.generation, recordAfter == newest || listed.contains(newest) {
                hit(.staleResetSparesNewer)   // S8: the reset of an earlier record left the newer one
            }
            if server.records[Int(d)].generation == credential.generation {
                server.records[Int(d)] = .init(owner: 0, generation: 0, deletedByReset: true)
            } else {
                server.dropEarlier(d, generation: credential.generation)
            }
            server.recordChangedAt[Int(d)] = now
            retruth(d, at: now)
            // The one read of the server's store: an audit of what the 200 claims, judged
            // against the checkers' own truth (as Jepsen reads back what was written).
            if recordAfter == credential.generation || listed.contains(credential.generation) {
                violate(.resetDeletesEverything, d, "the server answered the reset of registration \(credential.generation) 200 but kept its record")
            }
        }
        if kind == .reset, actual == .ok {
            server.noteListed(d, held: listed, recordAfter: recordAfter)
            owedResetConditionsChanged(d)   // a record a reset owes may be gone
        }
    }

    /// S10: the last change the server acknowledged among what decides its answer to this
    /// request (`ServerTruth.groundChangedAt`; for a wrong answer, of the part S2 and the
    /// answer disagree on), when the server has restarted since; nil
    /// when it restarted since no such change (or never). A wrong answer then shows that it
    /// lost the change; otherwise it is judged by the rule its cause names (`wrongAnswer`).
    func acknowledgedBeforeRestart(key: KeyID, credential: Credential, device d: DeviceIndex,
                                   wrong: (expected: Answer, actual: Answer)? = nil) -> SimTime? {
        guard lastRestartAt != LocalData.never,
              let ground = server.groundChangedAt(key: key, credential: credential, device: d, wrong: wrong),
              ground < lastRestartAt else { return nil }
        return ground
    }

    /// A verdict other than S2's: the rule its cause names (a grace, a disable, Rollup, the
    /// device's app, a reset) or, failing those, server-enforces-access.
    mutating func wrongAnswer(_ d: DeviceIndex, kind: RequestKind, keyName: String, actual: Answer, expected: Answer,
                              cause: ServerTruth.Cause) {
        let said = "the server answered a \(kind) request with \(keyName) \(actual), but S2 requires \(expected)"
        switch (expected, cause) {
        case (.appKeyInvalid, .graceEnded):
            violate(.rotationGrace, d, "\(said): the old key's grace had ended")
        case (.appKeyInvalid, .stoppedKey):
            violate(.rotationGrace, d, "\(said): the old key was stopped")
        case (.appDisabled, .developerDisabled):
            violate(.disableStopsEveryKey, d, "\(said): the developer disabled the app")
        case (.appDisabled, .rollup):
            violate(.onlyRollupRestores, d, "\(said): Rollup stopped the app or its account and has not lifted it")
        case (.appKeyMismatch, _) where actual == .ok:
            violate(.deviceBelongsToApp, d, "\(said): the device was registered by another app")
        case (.attestationFailed, _) where actual == .ok:
            violate(.deviceBelongsToApp, d, "\(said): App Attest names another app than the key's")
        case (.deviceUnknown, .resetRecord) where actual == .ok:
            violate(.resetDeletesEverything, d, "\(said): the device's record was deleted by a reset")
        case (.ok, .served) where kind == .reset:
            violate(.resetDeletesEverything, d, "\(said): a reset deletes the record whatever the state of its key, app or account (S8)")
        default:
            violate(.serverEnforcesAccess, d, said)
        }
    }

    /// S2: every verdict is dated now, and a lock error's `stoppedSince` is sound (never
    /// before the true start of the install's unbroken stop) and tight (never after
    /// `bound`, the latest start the server's own history allows). The truth is the
    /// checkers' own (`stopStart`, `ServerTruth.judged`). Inlined into `served`, its one
    /// caller; a lock error's dating is judged apart.
    @inline(__always)
    mutating func judgeDating(_ d: DeviceIndex, _ r: TraceRecord, key: KeyID, reply: ServerReply, expected: Answer, bound: SimTime) {
        let answer = reply.answer
        guard answer.isVerdict else { return }
        if reply.servedAt != now {
            violate(.serverEnforcesAccess, d, "the server's \(answer) says it was served at \(clock(reply.servedAt)), not at \(clock(now)) (S2 servedAt)")
            return
        }
        guard InvariantChecker.isLockError(answer) else {
            if reply.stoppedSince != ServerReply.none {
                violate(.serverEnforcesAccess, d, "the server's \(answer) carries stoppedSince \(clock(reply.stoppedSince)); only a lock error does (S2)")
            }
            return
        }
        judgeStoppedSince(d, key: key, reply: reply, expected: expected, bound: bound)
    }

    /// S2's `stoppedSince` of a lock error, against the checkers' own start of the stop.
    @inline(never)
    mutating func judgeStoppedSince(_ d: DeviceIndex, key: KeyID, reply: ServerReply, expected: Answer, bound: SimTime) {
        let answer = reply.answer
        // Judged only where the truth is this request's: the install still carries the key
        // it sent, and the checkers expected a lock error too (else the answer was wrong,
        // reported above).
        let dev = devices[Int(d)]
        guard expected == answer, dev.key == key, dev.stopStart != LocalData.never else { return }
        let truth = dev.stopStart
        if reply.stoppedSince > now {
            violate(.serverEnforcesAccess, d, "the server's \(answer) says access stopped at \(clock(reply.stoppedSince)), after the verdict at \(clock(now)) (S2)")
        } else if bound < truth {
            // A build that sent nothing carried a key of another app, and access broke while
            // it did: no server can know (S2 dates through unseen builds with the app's keys).
            return
        } else if reply.stoppedSince < truth {
            violate(.serverEnforcesAccess, d, "the server's \(answer) says access has been stopped since \(clock(reply.stoppedSince)), but it stopped without a break only at \(clock(truth)) (S2: stoppedSince must be sound)")
        } else if reply.stoppedSince > bound, lastRestartAt != LocalData.never, bound < lastRestartAt, reply.stoppedSince >= lastRestartAt {
            violate(.serverRestartLosesNothing, d, "the server's \(answer) says access has been stopped since \(clock(reply.stoppedSince)), but its own history before its restart at \(clock(lastRestartAt)) shows every key this install could have carried refused without a break since \(clock(bound)) (S10: a restart loses no stop behind stoppedSince)")
        } else if reply.stoppedSince > bound {
            violate(.serverEnforcesAccess, d, "the server's \(answer) says access has been stopped since \(clock(reply.stoppedSince)), but its own history shows every key this install could have carried refused without a break since \(clock(bound)) (S2: stoppedSince must be tight)")
        }
    }
}
