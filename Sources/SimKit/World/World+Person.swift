/// The person and the OS: launches, activations, API calls, updates, Photos access.
extension SimWorld {
    /// Carries out `action` on one device, as SPEC §4 defines the person's actions.
    @inlinable mutating func personAct(_ action: PersonAction, device d: DeviceIndex, arg: UInt32) {
        let i = Int(d)
        trace(d, .person(action, arg: arg))
        switch action {
        case .launch:
            startProcess(d, inBackground: false)
        case .open:
            // The person opens the app: a cold start if it is not running, otherwise it
            // becomes active, even if it was last seen in the foreground (the person had
            // switched away and back). Every `open` is an activation (D1, D4).
            if !_devices[i].hasProcess {
                startProcess(d, inBackground: false)
            } else {
                _devices[i].foreground = true
                step(d, .becameActive)
            }
        case .close:
            if _devices[i].hasProcess, _devices[i].foreground {
                _devices[i].foreground = false
                step(d, .wentToBackground)
            }
        case .background:
            // The OS fires only a background task the SDK has registered (D3 cancels it).
            if !_devices[i].disk.backgroundScheduled {
                trace(d, .backgroundRunSkipped)
            } else if !_devices[i].hasProcess {
                startProcess(d, inBackground: true)
                faultsOnBackgroundRun(device: d)
            } else {
                step(d, .backgroundRun)
                faultsOnBackgroundRun(device: d)
            }
        case .search, .query, .profile:
            ensureForeground(d)
            guard _devices[i].hasProcess else { return }   // killed at a write of its launch (P1)
            let call: APICall = action == .search ? .search : action == .query ? .query : .profile
            step(d, .call(call))
        case .reset:
            ensureForeground(d)
            guard _devices[i].hasProcess else { return }
            step(d, .reset)
        case .update:
            killProcess(d)
            let app = Int(_devices[i].app)
            _devices[i].key = arg == 0 ? currentKey[app] : KeyID(arg - 1)
            if _devices[i].build < UInt16.max { _devices[i].build += 1 }
        case .revokePhotos:
            // iOS ends an app's process when a privacy permission is revoked.
            _devices[i].photosAllowed = false
            killProcess(d)
        case .grantPhotos:
            _devices[i].photosAllowed = true
        case .addPhotos:
            let (sum, overflow) = _devices[i].photoCount.addingReportingOverflow(arg)
            _devices[i].photoCount = overflow ? .max : sum
        }
    }

    /// The app is used from the foreground: start it, or bring it forward, first.
    @inlinable mutating func ensureForeground(_ d: DeviceIndex) {
        let i = Int(d)
        if !_devices[i].hasProcess {
            startProcess(d, inBackground: false)
        } else if !_devices[i].foreground {
            _devices[i].foreground = true
            step(d, .becameActive)
        }
    }

    /// A cold start: any running process dies first; the new one calls `configure`.
    @inlinable mutating func startProcess(_ d: DeviceIndex, inBackground: Bool) {
        killProcess(d)
        let i = Int(d)
        _devices[i].hasProcess = true
        _devices[i].foreground = !inBackground
        _devices[i].processEpoch &+= 1
        _sdks[i] = Self.freshProcess(flaws: _setup.sdkFlaws)
        if !_devices[i].genuine { copyCredential(toClone: d) }
        trace(d, .processStarted(inBackground: inBackground))
        step(d, .launch(inBackground: inBackground))
    }

    /// S6: a clone of a group that copies credentials takes, at each launch, the key and
    /// the credential that its genuine device (the same position in the copied group, round
    /// robin) holds now. A new key is traced as an update that ships it (the clone now
    /// carries another key), the copy as a write to the clone's disk; a core that keeps its
    /// own storage shape gets the key alone (`SDKCore.takesCopiedCredentials`).
    @inlinable mutating func copyCredential(toClone d: DeviceIndex) {
        let i = Int(d)
        let g = Int(facts.deviceGroup[i])
        guard let source = setup.groups[g].copiesCredentialsOf, source < setup.groups.count else { return }
        let own = devices(ofGroup: g), from = devices(ofGroup: source)
        guard !from.isEmpty else { return }
        let s = from.lowerBound + (i - own.lowerBound) % from.count
        let credential = _devices[s].disk.credential
        guard !credential.isNone, credential != _devices[i].disk.credential || _devices[s].key != _devices[i].key else { return }
        if _devices[s].key != _devices[i].key {
            trace(d, .person(.update, arg: UInt32(_devices[s].key) + 1))
            _devices[i].key = _devices[s].key
            if _devices[i].build < UInt16.max { _devices[i].build += 1 }
        }
        guard SDK.takesCopiedCredentials else { return }
        _devices[i].disk.apply(.setCredential(credential))
        trace(d, .store(.setCredential(credential)))
    }

    /// Ends the app process: its memory, timers and requests in flight die with it.
    @inlinable mutating func killProcess(_ d: DeviceIndex) {
        let i = Int(d)
        guard _devices[i].hasProcess else { return }
        _devices[i].hasProcess = false
        _devices[i].foreground = false
        _devices[i].processEpoch &+= 1
        trace(d, .processKilled)
    }
}
