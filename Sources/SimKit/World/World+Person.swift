/// The person and the OS: launches, activations, API calls, updates, Photos access.
extension World {
    /// Carries out `action` on one device, as SPEC §4 defines the person's actions.
    mutating func personAct(_ action: PersonAction, device d: DeviceIndex, arg: UInt32) {
        let i = Int(d)
        trace(d, .person(action, arg: arg))
        switch action {
        case .launch:
            startProcess(d, inBackground: false)
        case .open:
            // The person opens the app: a cold start if it is not running, otherwise it
            // becomes active, even if it was last seen in the foreground (the person had
            // switched away and back). Every `open` is an activation (D1, D4).
            if !devices[i].hasProcess {
                startProcess(d, inBackground: false)
            } else {
                devices[i].foreground = true
                step(d, .becameActive)
            }
        case .close:
            if devices[i].hasProcess, devices[i].foreground {
                devices[i].foreground = false
                step(d, .wentToBackground)
            }
        case .background:
            // The OS fires only a background task the SDK has registered (D3 cancels it).
            if !devices[i].disk.backgroundScheduled {
                trace(d, .backgroundRunSkipped)
            } else if !devices[i].hasProcess {
                startProcess(d, inBackground: true)
            } else {
                step(d, .backgroundRun)
            }
        case .search, .query, .profile:
            ensureForeground(d)
            let call: APICall = action == .search ? .search : action == .query ? .query : .profile
            step(d, .call(call))
        case .reset:
            ensureForeground(d)
            step(d, .reset)
        case .update:
            killProcess(d)
            let app = Int(devices[i].app)
            devices[i].key = arg == 0 ? currentKey[app] : KeyID(arg - 1)
            if devices[i].build < UInt16.max { devices[i].build += 1 }
        case .revokePhotos:
            // iOS ends an app's process when a privacy permission is revoked.
            devices[i].photosAllowed = false
            killProcess(d)
        case .grantPhotos:
            devices[i].photosAllowed = true
        case .addPhotos:
            let (sum, overflow) = devices[i].photoCount.addingReportingOverflow(arg)
            devices[i].photoCount = overflow ? .max : sum
        }
    }

    /// The app is used from the foreground: start it, or bring it forward, first.
    mutating func ensureForeground(_ d: DeviceIndex) {
        let i = Int(d)
        if !devices[i].hasProcess {
            startProcess(d, inBackground: false)
        } else if !devices[i].foreground {
            devices[i].foreground = true
            step(d, .becameActive)
        }
    }

    /// A cold start: any running process dies first; the new one calls `configure`.
    mutating func startProcess(_ d: DeviceIndex, inBackground: Bool) {
        killProcess(d)
        let i = Int(d)
        devices[i].hasProcess = true
        devices[i].foreground = !inBackground
        devices[i].processEpoch &+= 1
        sdks[i] = SDK()
        if !devices[i].genuine { copyCredential(toClone: d) }
        trace(d, .processStarted(inBackground: inBackground))
        step(d, .launch(inBackground: inBackground))
    }

    /// S6: a clone of a group that copies credentials takes, at each launch, the key and
    /// the credential that its genuine device (the same position in the copied group, round
    /// robin) holds now. A new key is traced as an update that ships it (the clone now
    /// carries another key), the copy as a write to the clone's disk.
    mutating func copyCredential(toClone d: DeviceIndex) {
        let i = Int(d)
        let g = Int(facts.deviceGroup[i])
        guard let source = setup.groups[g].copiesCredentialsOf, source < setup.groups.count else { return }
        let own = devices(ofGroup: g), from = devices(ofGroup: source)
        guard !from.isEmpty else { return }
        let s = from.lowerBound + (i - own.lowerBound) % from.count
        let credential = devices[s].disk.credential
        guard !credential.isNone, credential != devices[i].disk.credential || devices[s].key != devices[i].key else { return }
        if devices[s].key != devices[i].key {
            trace(d, .person(.update, arg: UInt32(devices[s].key) + 1))
            devices[i].key = devices[s].key
            if devices[i].build < UInt16.max { devices[i].build += 1 }
        }
        devices[i].disk.apply(.setCredential(credential))
        trace(d, .store(.setCredential(credential)))
    }

    /// Ends the app process: its memory, timers and requests in flight die with it.
    mutating func killProcess(_ d: DeviceIndex) {
        let i = Int(d)
        guard devices[i].hasProcess else { return }
        devices[i].hasProcess = false
        devices[i].foreground = false
        devices[i].processEpoch &+= 1
        trace(d, .processKilled)
    }
}
