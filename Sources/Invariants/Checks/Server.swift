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
        server = truth
    }

    /// The server lost the device's record (`forget-device`). Out of line so that
    /// `dispatch` only jumps (see there).
    @usableFromInline @inline(never) mutating func forgotDevice(_ d: DeviceIndex) {
        if hasBegun { server.records[Int(d)] = .init() }
    }

    /// The server answered a request (`r` is its `served` record, passed whole: its fields
    /// are more than fit in registers, see `dispatch`).
    @usableFromInline @inline(never) mutating func served(_ d: DeviceIndex, _ r: TraceRecord) {
        guard case .served(let id, let kind, let key, let credential, let reply, let recordAfter) = r.event else { return }
        // The truth is read and changed in place: a copy of it (or of the facts) per
        // request would cost retains, and a copy-on-write of its device records.
        guard hasBegun else { return }
        guard reply.answer != .serverError else { return }   // injected: the server did nothing (S9)
        devices[Int(d)].lastServedID = id
        let genuine = deviceGenuine[Int(d)]
        let attested: AppID? = genuine ? deviceApp[Int(d)] : nil
        let (expected, cause) = server.expected(kind: kind, key: key, credential: credential, device: d, attestedApp: attested, now: now)
        let actual = reply.answer
        var keyName: String { Int(key) < keyNames.count ? keyNames[Int(key)] : "key \(key)" }

        if !genuine, actual == .ok {
            violate(.clonesNeverServed, d, "the server served a \(kind) request from a clone (a non-genuine install sending \(keyName))")
        } else if actual != expected {
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
            default:
                violate(.serverEnforcesAccess, d, said)
            }
        }
        switch cause {
        case .graceEnded where actual == expected: hit(.oldKeyGraceEnded)
        case .clone where actual == expected: hit(.cloneRefused)
        case .pending where actual == expected: hit(.pendingAnswered)
        default: break
        }
        if actual == .ok, case .previous = server.keys[Int(key)] { hit(.oldKeyServedInGrace) }

        // Follow what the server did to its device records, so one wrong answer is one violation.
        if kind == .register, actual == .ok, let app = server.app(of: key) {
            server.records[Int(d)] = .init(owner: app, generation: reply.credential.generation)
        }
        if kind == .reset, actual == .ok, cause == .served {
            server.records[Int(d)] = .init(owner: 0, generation: 0, deletedByReset: true)
            if recordAfter != 0 {
                violate(.resetDeletesEverything, d, "the server answered the reset 200 but kept the device's record")
            }
        }
    }
}
