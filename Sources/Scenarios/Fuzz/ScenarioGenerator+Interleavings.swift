import SimKit
import ScenarioLanguage

/// Probes aimed at the trace: actions that land while a request is in flight.
///
/// Real bugs hide where an action meets a request between its sending and its answer: the
/// app goes to the background while the check that unlocks it is out, a locked device has
/// two checks out on either side of an enable, a device silent into a stop hears of it
/// first from a query, a clone resets with a live copy of a genuine credential. The clock
/// alone rarely builds these. So some probes run the script written so far (on the
/// reference, up to the probe's moment: `windows(of:untilMs:)`), read when each request
/// left, was judged and was answered, and place their action inside one such window.
/// Runs are deterministic, so the result is a plain script that replays and shrinks.
///
/// Drawn from their own stream (`weaveStream`) and appended after everything else, so the
/// seeds without one keep their scripts.
extension ScenarioGenerator {
    enum Interleaving: CaseIterable {
        /// D4: locked, access back, the app becomes active and goes to the background
        /// while the check that unlocks it is in flight.
        case backgroundDuringUnlock
        /// D4, D9: a locked device checks on either side of an enable; the older, refused
        /// check is answered late, after the newer 200 (read from the trace).
        case lockedRaceAcrossEnable
        /// D5: a device offline from before a stop until 30 days into it; its first
        /// answer is to a query or profile, not a key check.
        case stopHeardFirstByACall
        /// S6, S8: clones that copied live credentials do what a genuine install does,
        /// reset included, around what the genuine devices go through.
        case clonesDoEverything
        /// D10: the server forgets a device while its run-report upload is out (read from
        /// the trace), so the upload is answered `device_unknown` and delivered nothing.
        case forgetDuringUpload
        /// Each kind of request (check, register, query, profile, run report, download,
        /// reset) judged at a boundary ± a delta: 30 days into a stop (the device silent
        /// until then), a grace deadline, a stop-now rotation; or an activation or a
        /// background run 24 h ± a delta after the last answered check.
        case kindAtBoundary
        /// Two or three requests in flight across a dashboard, Rollup or update action, on
        /// a device that is unlocked, locked, purged or unregistered.
        case raceInEveryState
        /// Any action placed inside a request window read from the trace: just after it
        /// left, between its judging and its answer, just before its timeout.
        case actionInFlight
        /// S8, D7: a reset's 200 is lost (read from the trace), or, two times in three, the
        /// server answers it 503 without deleting anything, and the device registers again
        /// before the SDK retries it, so the retry must name the registration the reset named
        /// and spare the new one; half the time a second reset() follows the registration,
        /// and both deletes are owed.
        case resetRetriedAcrossRegistration
        /// S2.3, S2.5, D6: a registered device is updated to a build carrying the key of
        /// another app of its account, pending (its calls answered `app_pending`: no
        /// verdict on access, never thrown as `accessRevoked`) or approved (a mismatch).
        case siblingKeyOnRegisteredDevice
        /// D7: a device of an app of its own resets with run reports queued, while locked
        /// (the reports stay queued; nothing they carried may reach the server afterwards),
        /// or in an outage (the delete fails and must be retried once the server is back).
        case resetInTrouble
        /// D4, D9: a key check served 200 is answered late; access stops just after it was
        /// judged and a call is refused, locking the SDK before the stale 200 arrives.
        case staleOkAfterLock
        /// D4 (issue 46): the same race in the order the network keeps: the older, refused
        /// check is answered while the newer one, sent after the enable, is still out, and
        /// the newer 200 must still unlock (each check's answer is its own).
        case lockedChecksAnsweredInOrder
    }

    /// A third of the seeds get one interleaving probe; one in 24 of the others gets the
    /// resets across a registration (issue 46, part 4: its second-reset variant is the one
    /// place a record is left behind, and needs a 503, a registration and a reset in order).
    mutating func interleave() {
        guard weaveStream.chance(1, outOf: 3) else {
            if weaveStream.chance(1, outOf: 24) { weave(.resetRetriedAcrossRegistration) }
            return
        }
        let all = Interleaving.allCases
        weave(all[Int(weaveStream.below(UInt64(all.count)))])
    }

    /// Builds the situation `kind` names onto the script so far.
    mutating func weave(_ kind: Interleaving) {
        switch kind {
        case .backgroundDuringUnlock: backgroundDuringUnlock()
        case .lockedRaceAcrossEnable: lockedRaceAcrossEnable()
        case .stopHeardFirstByACall: stopHeardFirstByACall()
        case .clonesDoEverything: clonesDoEverything()
        case .forgetDuringUpload: forgetDuringUpload()
        case .kindAtBoundary: kindAtBoundary()
        case .raceInEveryState: raceInEveryState()
        case .actionInFlight: actionInFlight()
        case .resetRetriedAcrossRegistration: resetRetriedAcrossRegistration()
        case .siblingKeyOnRegisteredDevice: siblingKeyOnRegisteredDevice()
        case .resetInTrouble: resetInTrouble()
        case .staleOkAfterLock: staleOkAfterLock()
        case .lockedChecksAnsweredInOrder: lockedRaceAcrossEnable(overtaken: false)
        }
    }

    /// A time in the run at least an hour in, with `room` before its end, from this stream.
    mutating func weaveTime(room: SimTime) -> SimTime? {
        guard durationMs > room + 2 * Ms.hour else { return nil }
        return Ms.hour + weaveStream.below(durationMs - room - 2 * Ms.hour)
    }

    /// An app of its own (`vault`, of account `initech`, one to three devices, no more than
    /// `--devices`) that no other statement of the script names, so no other stop or lift
    /// of the script spoils the probe's (person actions on `all`, offline windows and
    /// server faults still reach its devices). Returns the group's name.
    mutating func quietApp() -> String {
        s.accounts.append(AccountDecl(name: "initech"))
        s.apps.append(AppDecl(name: "vault", account: "initech", key: "rk_live_v0"))
        s.groups.append(DeviceGroupDecl(kind: .devices, count: 1 + weaveStream.below(min(3, max(1, options.maxDevicesPerGroup))), app: "vault"))
        return "vault"
    }

    /// Access to `vault` stops at `t` and its devices hear of it: a disable (half the
    /// time), or Rollup's revoke of the app or its account. Returns what lifts it.
    mutating func stopAccess(at t: SimTime) -> Action {
        let lift: Action
        switch weaveStream.below(4) {
        case 0: at(t, .rollupApp(.revoke, app: "vault")); lift = .rollupApp(.restore, app: "vault")
        case 1: at(t, .rollupAccount(.revoke, account: "initech")); lift = .rollupAccount(.restore, account: "initech")
        default: at(t, .disable(app: "vault")); lift = .enable(app: "vault")
        }
        at(t + Ms.minute, .person(.launch, .group("vault")))
        return lift
    }

    mutating func backgroundDuringUnlock() {
        guard let t = weaveTime(room: 2 * Ms.day) else { return }
        let group = quietApp()
        let lift = stopAccess(at: t)
        let back = t + Ms.hour + weaveStream.below(Ms.day)
        at(back, lift)
        // Same-time statements run in file order: the check leaves in the open's step and
        // the close comes before any answer can (a round trip takes at least 1 ms). The
        // open comes with the lift or soon after, before the script's own opens unlock.
        let open = back + (weaveStream.chance(1, outOf: 2) ? 0 : weaveStream.below(Ms.minute))
        let who: DeviceSelector = weaveStream.chance(1, outOf: 2) ? .group(group) : .device(group: group, index: 1)
        at(open, .person(.close, who))
        at(open, .person(.open, who))
        at(open, .person(weaveStream.chance(3, outOf: 4) ? .close : .background, who))
        if weaveStream.chance(1, outOf: 2) { at(open + Ms.hour, .person(.open, .all)) }
    }

    /// `overtaken`: check A is slowed past B; else by 1 ms only, so it is still on its way
    /// when B leaves (even on a 1 ms link) and arrives first, while B is out.
    mutating func lockedRaceAcrossEnable(overtaken: Bool = true) {
        guard let t = weaveTime(room: 2 * Ms.day) else { return }
        let group = quietApp()
        let lift = stopAccess(at: t)
        let race = t + Ms.hour + weaveStream.below(Ms.day)
        let who = DeviceSelector.device(group: group, index: 1)
        guard let device = firstDevice(of: group) else { return }
        // Check A leaves now; the trace says when the server judges it.
        let slowBy = overtaken ? max(Ms.second, s.network.timeout / 2) : 1
        let slowAt = s.timeline.count   // the slow window goes before the open, once known
        at(race, .person(.close, who))
        at(race, .person(.open, who))
        guard let windows = ScenarioGenerator.windows(of: s, untilMs: race + s.network.timeout + answerMax),
              let a = windows.last(where: { $0.device == device && $0.sentAt == race && ($0.kind == .check || $0.kind == .register) }),
              let judged = a.servedAt else {
            at(race + Ms.hour, lift)
            return
        }
        // A's answer is slowed; access comes back just after A was judged; check B leaves
        // then, judged after the slow window, and its 200 overtakes A's refusal.
        if slowAt <= s.timeline.count {
            s.timeline.insert(TimedStatement(schedule: .at(race), body: .action(.fault(SlowResponses(devices: who, byMs: slowBy, forMs: judged - race + 1)))), at: slowAt)
        }
        at(judged + 1, lift)
        at(judged + 1, .person(.close, who))
        at(judged + 1, .person(.open, who))
        if weaveStream.chance(1, outOf: 2) { at(judged + 1 + slowBy + s.network.timeout, .person(.query, who)) }
    }

    /// The stop is of an app of its own (`vault`, of account `initech`, one or two
    /// devices), which no other statement of the script names: nothing lifts it early.
    mutating func stopHeardFirstByACall() {
        let thirty = 30 * Ms.day
        guard let t = weaveTime(room: thirty + 2 * Ms.day) else { return }
        let who = DeviceSelector.device(group: quietApp(), index: 1)
        // Offline from before the stop to just past its 30th day (or its 29th, or much
        // later): the first answer the device gets says how long access has been stopped.
        let heard = t + [thirty, thirty + Ms.minute, thirty + Ms.hour, 29 * Ms.day, thirty + Ms.day][Int(weaveStream.below(5))]
        at(t - Ms.minute, .fault(Offline(devices: who, forMs: heard - t + Ms.minute)))
        switch weaveStream.below(3) {
        case 0: at(t, .rollupApp(.revoke, app: "vault"))
        case 1: at(t, .rollupAccount(.revoke, account: "initech"))
        default: at(t, .disable(app: "vault"))
        }
        at(t + Ms.minute, .person(.launch, .group("vault")))
        // The app comes to the foreground a second before the network is back (its check
        // fails offline), so the call just after is no activation and sends no check: the
        // call's answer is the first verdict the device hears.
        at(heard - Ms.second, .person(.close, who))
        at(heard - Ms.second, .person(.open, who))
        let call: ScenarioLanguage.PersonAction = [.query, .profile][Int(weaveStream.below(2))]
        at(heard + 1, .person(call, who))
        at(heard + Ms.minute, .person(call == .query ? .profile : .query, who))
        at(heard + Ms.hour, .person(.open, .all))
    }

    /// New photos and a launch at `t`, so runs start and end with uploads; the trace says
    /// when an upload left, and the server forgets that device a millisecond later.
    mutating func forgetDuringUpload() {
        guard let t = weaveTime(room: Ms.hour) else { return }
        at(t - Ms.minute, .addPhotos(20 + weaveStream.below(200), .all))
        at(t, .person(.launch, .all))
        guard let windows = ScenarioGenerator.windows(of: s, untilMs: t + 30 * Ms.minute) else { return }
        let uploads = windows.filter { w in w.kind == .runReport && w.sentAt >= t && w.servedAt.map { w.sentAt + 1 < $0 } == true }
        guard !uploads.isEmpty else { return }
        let w = uploads[Int(weaveStream.below(UInt64(min(uploads.count, 8))))]
        guard let place = place(of: w.device) else { return }
        let who = DeviceSelector.device(group: place.group, index: place.index)
        at(w.sentAt + 1, .forgetDevice(who))
        at(w.sentAt + Ms.hour, .person(.open, who))
    }

    /// A device of an app of its own resets at `t`; every answer is lost around the
    /// millisecond its reset is judged in (read from the trace), so the SDK meets its
    /// timeout and retries later; it is opened meanwhile, registers again, and the retry
    /// reaches the server after the new registration. Half the time it resets again
    /// before that retry, with the first delete still owed.
    mutating func resetRetriedAcrossRegistration() {
        guard let t = weaveTime(room: Ms.day) else { return }
        let group = quietApp()
        guard let device = firstDevice(of: group) else { return }
        let who = DeviceSelector.device(group: group, index: 1)
        at(t - Ms.hour, .person(.launch, .group(group)))
        at(t, .person(.reset, who))
        guard let windows = ScenarioGenerator.windows(of: s, untilMs: t + s.network.timeout + answerMax),
              let reset = windows.first(where: { $0.device == device && $0.kind == .reset && $0.sentAt >= t }),
              let judged = reset.servedAt else { return }
        // Half the time reset() again once the new registration is answered, with the
        // first delete still owed (a 503): both records must go (D7), each named by its
        // own delete.
        let twice = weaveStream.chance(1, outOf: 2)
        // From a millisecond before: a statement at `judged` itself would come after the
        // answer that the server sends in that millisecond. A 503 deletes nothing: the
        // record the reset named stays until the retry deletes it.
        if twice || weaveStream.chance(2, outOf: 3) {
            at(judged - 1, .fault(ServerErrors(share: Share(percent: 100), status: 503, forMs: 2)))
        } else {
            at(judged - 1, .fault(LostResponses(share: Share(percent: 100), forMs: 2)))
        }
        // Opened after the answer would have come, before the SDK's timeout and retry.
        let opened = judged + answerMax + weaveStream.below(max(1, s.network.timeout / 2))
        at(opened, .person(.open, who))
        if twice {
            at(opened + 2 * answerMax + weaveStream.below(5 * Ms.second), .person(.reset, who))
        }
        at(t + 6 * Ms.hour + weaveStream.below(Ms.day / 2), .person(.open, who))
    }

    /// A device of `vault` registers and indexes, then resets with reports queued: a third
    /// of the time while access is stopped (its launch refused, the SDK locked, the run's
    /// report kept), else in an outage (the device or its app's devices offline, the
    /// server down or answering 5xx) from a second before the reset for a minute to a day,
    /// so the delete fails; the run goes on at least a day after, past any back-off SPEC
    /// allows (D7). (A timeout would not do: the server judges the delete all the same.)
    mutating func resetInTrouble() {
        // Three hours of room before the reset too: photos, a launch, photos again.
        guard let t0 = weaveTime(room: 2 * Ms.day + 3 * Ms.hour) else { return }
        let t = t0 + 3 * Ms.hour
        let group = quietApp()
        let who = DeviceSelector.device(group: group, index: 1)
        at(t - 3 * Ms.hour, .addPhotos(20 + weaveStream.below(200), .group(group)))
        at(t - 2 * Ms.hour, .person(.launch, .group(group)))
        at(t - Ms.hour, .addPhotos(20 + weaveStream.below(200), .group(group)))
        if weaveStream.chance(1, outOf: 3) {
            let lift = stopAccess(at: t - 2 * Ms.minute)
            at(t, .person(.reset, who))
            at(t + Ms.hour, lift)
            at(t + Ms.hour + Ms.minute, .person(.open, .group(group)))
        } else {
            let outage = [Ms.minute, Ms.hour, 6 * Ms.hour, Ms.day][Int(weaveStream.below(4))]
            let from = t - Ms.second
            switch weaveStream.below(4) {
            case 0: at(from, .fault(Offline(devices: who, forMs: outage)))
            case 1: at(from, .fault(ServerDown(forMs: outage)))
            case 2: at(from, .fault(ServerErrors(share: Share(percent: 100), status: 503, forMs: outage)))
            default: at(from, .fault(Offline(devices: .group(group), forMs: outage)))
            }
            // Nothing opens the app after: the process the reset ran in goes on, and D7's
            // time counts while it runs (a launch would register the device again).
            at(t, .person(.reset, who))
        }
    }

    /// A device of `vault`, registered a day before, sends a key check (an activation or a
    /// background run) whose answer is slowed by half the timeout; access stops a millisecond after
    /// the server judged it (read from the trace) and a call then is refused: the SDK locks
    /// while the older 200 is still on its way, and must stay locked when it arrives.
    mutating func staleOkAfterLock() {
        guard let t0 = weaveTime(room: 3 * Ms.day) else { return }
        let group = quietApp()
        guard let device = firstDevice(of: group) else { return }
        let who = DeviceSelector.device(group: group, index: 1)
        // The launch's check is a day old (and a minute or an hour) when the next run
        // starts, so that run checks again (D1).
        at(t0, .person(.launch, .group(group)))
        let t = t0 + Ms.day + (weaveStream.chance(1, outOf: 2) ? Ms.minute : Ms.hour)
        let slowBy = max(Ms.second, s.network.timeout / 2)
        let slowAt = s.timeline.count   // the slow window goes before the check, once known
        if weaveStream.chance(1, outOf: 2) {
            at(t, .person(.background, who))
        } else {
            at(t, .person(.close, who))
            at(t, .person(.open, who))
        }
        guard let windows = ScenarioGenerator.windows(of: s, untilMs: t + s.network.timeout + answerMax),
              let check = windows.first(where: { $0.device == device && $0.sentAt == t && $0.kind == .check }),
              let judged = check.servedAt else { return }
        if slowAt <= s.timeline.count {
            s.timeline.insert(TimedStatement(schedule: .at(t), body: .action(.fault(SlowResponses(devices: who, byMs: slowBy, forMs: judged - t + 1)))), at: slowAt)
        }
        let lift: Action
        switch weaveStream.below(3) {
        case 0: at(judged + 1, .rollupApp(.revoke, app: "vault")); lift = .rollupApp(.restore, app: "vault")
        case 1: at(judged + 1, .rollupAccount(.revoke, account: "initech")); lift = .rollupAccount(.restore, account: "initech")
        default: at(judged + 1, .disable(app: "vault")); lift = .enable(app: "vault")
        }
        at(judged + 1, .person(weaveStream.chance(1, outOf: 2) ? .query : .profile, who))
        at(judged + 1 + slowBy + s.network.timeout, .person(.query, who))
        at(t + Ms.hour, lift)
        at(t + Ms.hour + Ms.minute, .person(.open, who))
    }

    /// A second app of `vault`'s account, `beta`, pending; the first device of `vault` (an
    /// app no other statement names, so nothing else locks it), registered since its
    /// launch, is updated to a build carrying `beta`'s key and then calls, opens and calls
    /// again. Then, half the time, it is updated back to a build with its own app's key;
    /// else to one with the key of `gamma`, a third app of the account, approved (a
    /// mismatch: a lock error, D2).
    mutating func siblingKeyOnRegisteredDevice() {
        guard let t = weaveTime(room: Ms.day) else { return }
        let group = quietApp()
        s.apps.append(AppDecl(name: "beta", account: "initech", key: "rk_live_b0", pending: true))
        let who = DeviceSelector.device(group: group, index: 1)
        at(t - Ms.hour, .person(.launch, who))
        at(t, .update(who, key: "rk_live_b0"))
        at(t + Ms.minute, .person(.query, who))
        at(t + 2 * Ms.minute, .person(.profile, who))
        at(t + Ms.hour, .person(.open, who))
        at(t + Ms.hour + Ms.minute, .person(.query, who))
        if weaveStream.chance(1, outOf: 2) {
            at(t + Ms.day / 2, .update(who, key: nil))
        } else {
            s.apps.append(AppDecl(name: "gamma", account: "initech", key: "rk_live_g0"))
            at(t + Ms.day / 2, .update(who, key: "rk_live_g0"))
        }
        at(t + Ms.day / 2 + Ms.minute, .person(.open, who))
        at(t + Ms.day / 2 + 2 * Ms.minute, .person(.query, who))
    }

    /// Clones with live copies of the genuine devices' credentials: they launch once the
    /// genuine devices have registered, then open, close, run in the background (and
    /// upload its report), call, reset, update, and add photos, some of it while the
    /// genuine devices are locked, resetting or forgotten.
    mutating func clonesDoEverything() {
        let clones: String
        if let g = s.groups.first(where: { $0.kind == .clones && $0.copying != nil }) {
            clones = g.name
        } else {
            let g = DeviceGroupDecl(kind: .clones, count: 1 + weaveStream.below(3), app: "photos", name: "photos-copies", copying: "photos")
            s.groups.append(g)
            clones = g.name
        }
        guard let t = weaveTime(room: Ms.day) else { return }
        let sel = DeviceSelector.group(clones)
        // The genuine devices hold live credentials when the clones copy them: approved
        // if the script declared them waiting, and launched (registered again if a reset
        // or a forget took their records).
        if has(.unapprovedAccount) { at(t - Ms.hour, .rollupAccount(.approve, account: "acme")) }
        if has(.pendingApp) { at(t - Ms.hour, .rollupApp(.approve, app: "photos")) }
        at(t - 10 * Ms.minute, .person(.launch, .group("photos")))
        at(t, .person(.launch, sel))
        // What the genuine devices go through meanwhile, three times in four: a lock, a
        // reset, the server forgetting them.
        switch weaveStream.below(4) {
        case 0: at(t + Ms.minute, .disable(app: "photos")); at(t + 2 * Ms.minute, .person(.launch, .group("photos"))); at(t + 3 * Ms.hour, .enable(app: "photos"))
        case 1: at(t + 2 * Ms.minute, .person(.reset, .group("photos")))
        case 2: at(t + 3 * Ms.minute, .forgetDevice(.group("photos")))
        default: break
        }
        let menu: [Action] = [.person(.reset, sel), .person(.open, sel), .person(.close, sel), .person(.background, sel),
                              .person(.query, sel), .person(.profile, sel), .person(.search, sel), .update(sel, key: nil),
                              .addPhotos(100, sel), .person(.launch, sel)]
        var when = t + 2 * Ms.minute + 1
        // The reset first on most seeds, while the copied credentials are live.
        if weaveStream.chance(3, outOf: 4) { at(when, .person(.reset, sel)) }
        for _ in 0..<(2 + weaveStream.below(5)) {
            when += 1 + weaveStream.below(2 * Ms.hour)
            let action = menu[Int(weaveStream.below(UInt64(menu.count)))]
            if case .person(.open, _) = action { at(when, .person(.close, sel)) }
            at(when, action)
        }
        at(when + Ms.minute, .person(.launch, .group("photos")))
    }

    /// A poke at `t`, then an action placed inside one of the windows of the requests it
    /// made, as the trace of the script so far shows them.
    mutating func actionInFlight() {
        guard let t = weaveTime(room: Ms.hour) else { return }
        let pokes: [ScenarioLanguage.PersonAction] = [.launch, .open, .query, .profile, .background]
        let poke = pokes[Int(weaveStream.below(UInt64(pokes.count)))]
        if poke == .open { at(t, .person(.close, .all)) }
        at(t, .person(poke, .all))
        // Ten minutes of requests after the poke: its checks, the runs' downloads and
        // uploads, calls. A kind first (each as likely), then a request of that kind.
        let horizon = t + 10 * Ms.minute + s.network.timeout + answerMax
        guard let windows = ScenarioGenerator.windows(of: s, untilMs: horizon) else { return }
        let near = windows.filter { $0.sentAt >= t && $0.sentAt <= t + 10 * Ms.minute }
        let kinds = RequestKind.allCases.filter { k in near.contains { $0.kind == k } }
        guard !kinds.isEmpty else { return }
        let kind = kinds[Int(weaveStream.below(UInt64(kinds.count)))]
        let ofKind = near.filter { $0.kind == kind }
        let w = ofKind[Int(weaveStream.below(UInt64(ofKind.count)))]
        // Moments strictly inside the window, where none of its own events happen.
        var moments: [SimTime] = []
        let end = w.deliveredAt ?? (w.sentAt + s.network.timeout)
        if w.sentAt + 1 < (w.servedAt ?? end) { moments.append(w.sentAt + 1) }
        if let j = w.servedAt, j + 1 < end { moments.append(j + 1) }
        if end > w.sentAt + 2 { moments.append(end - 1) }
        moments.append(end + 1)   // right after the answer
        // The server forgets a device while its upload is out (before judging it) a quarter
        // of the time: the upload is answered device_unknown, which delivers nothing (D10).
        let forgetsUpload = w.kind == .runReport && w.sentAt + 1 < (w.servedAt ?? end) && weaveStream.chance(1, outOf: 4)
        let m = forgetsUpload ? w.sentAt + 1 : moments[Int(weaveStream.below(UInt64(moments.count)))]
        let who: DeviceSelector = place(of: w.device).map { .device(group: $0.group, index: $0.index) } ?? .all
        let menu: [Action] = [.person(.close, who), .person(.background, who), .person(.reset, who), .person(.query, who),
                              .person(.launch, who), .update(who, key: nil), .person(.revokePhotos, who),
                              .disable(app: "photos"), .enable(app: "photos"), .rollupApp(.revoke, app: "photos"),
                              .rollupApp(.restore, app: "photos"), .fault(Offline(devices: who, forMs: Ms.minute)), .forgetDevice(who),
                              .fault(SlowResponses(devices: who, byMs: 2 * answerMax, forMs: Ms.minute))]
        let action = forgetsUpload ? .forgetDevice(who) : menu[Int(weaveStream.below(UInt64(menu.count)))]
        at(m, action)
        switch action {
        case .disable, .rollupApp(.revoke, _): at(m + Ms.hour, action == .disable(app: "photos") ? .enable(app: "photos") : .rollupApp(.restore, app: "photos"))
        case .person(.revokePhotos, _): at(m + Ms.hour, .person(.grantPhotos, who))
        default: break
        }
        at(m + Ms.hour + Ms.minute, .person(.close, .all))
        at(m + Ms.hour + Ms.minute, .person(.open, .all))
    }

    /// Moves the statements from `index` on by `delta` milliseconds (never before 0).
    mutating func shift(from index: Int, by delta: Int64) {
        for i in index..<s.timeline.count {
            guard case .at(let t) = s.timeline[i].schedule else { continue }
            s.timeline[i].schedule = .at(shifted(t, delta))
        }
    }

    /// The statements that make `who` send a request of `kind` at `t` as the device's
    /// first (or, for a register or a download, after a reset or forget it brings about).
    mutating func request(_ kind: RequestKind, from who: DeviceSelector, at t: SimTime) {
        switch kind {
        case .check: at(t, .person(.launch, who))
        case .register: at(t, .forgetDevice(who)); at(t, .person(.launch, who))
        case .query, .profile: at(t, .person(kind == .query ? .query : .profile, who))
        case .runReport: at(t, .addPhotos(20, who)); at(t, .person(.background, who))
        case .modelDownload, .placeData: at(t, .person(.reset, who)); at(t + Ms.second, .person(.launch, who))
        case .reset: at(t, .person(.reset, who))
        }
    }

    mutating func kindAtBoundary() {
        guard let t0 = weaveTime(room: 31 * Ms.day) else { return }
        let group = quietApp()
        let who = DeviceSelector.device(group: group, index: 1)
        guard let device = firstDevice(of: group) else { return }
        let boundary: SimTime
        let kinds: [RequestKind]
        var silent = false
        switch weaveStream.below(4) {
        case 0:
            // Silent into the stop: offline from before it to 10 minutes before its 30th
            // day, in the foreground (its check fails offline), so a call needs no check.
            boundary = t0 + 30 * Ms.day
            at(t0 - Ms.minute, .fault(Offline(devices: who, forMs: 30 * Ms.day - 9 * Ms.minute)))
            at(t0, [.disable(app: "vault"), .rollupApp(.revoke, app: "vault"), .rollupAccount(.revoke, account: "initech")][Int(weaveStream.below(3))])
            at(boundary - 10 * Ms.minute - Ms.second, .person(.close, who))
            at(boundary - 10 * Ms.minute - Ms.second, .person(.open, who))
            kinds = [.check, .query, .profile, .reset]
            silent = true
        case 1:
            let grace = [Ms.hour, Ms.day, 7 * Ms.day][Int(weaveStream.below(3))]
            at(t0, .rotate(app: "vault", key: "rk_live_v1", old: .keep(grace)))
            boundary = t0 + grace
            kinds = RequestKind.allCases
        case 2:
            boundary = t0
            at(t0, .rotate(app: "vault", key: "rk_live_v1", old: .stopNow))
            kinds = RequestKind.allCases
        default:
            // D1: the activation or background run 24 h ± a delta after the check that the
            // trace says was answered last.
            at(t0, .person(.launch, who))
            guard let windows = ScenarioGenerator.windows(of: s, untilMs: t0 + s.network.timeout + answerMax),
                  let c = windows.last(where: { $0.device == device && $0.sentAt == t0 })?.deliveredAt else { return }
            let when = shifted(c + Ms.day, [1, 2, 998, 999, 1_000, -1, 0, Int64(Ms.minute)][Int(weaveStream.below(8))])
            at(when, .person(.close, who))
            at(when, .person(weaveStream.chance(1, outOf: 2) ? .open : .background, who))
            return
        }
        // Placed at an estimate, then moved so the trace says it is judged at the boundary
        // ± a delta: a device's latencies are drawn by its own count of requests, so the
        // same requests moved a little are judged as much later or earlier.
        let kind = kinds[Int(weaveStream.below(UInt64(kinds.count)))]
        if !silent, kind == .query || kind == .profile {
            // In the foreground a minute before (its check, if due, answered by then): the
            // call is then no activation and is the request that meets the boundary.
            at(boundary - Ms.minute, .person(.close, who))
            at(boundary - Ms.minute, .person(.open, who))
        }
        let first = s.timeline.count
        let estimate = boundary - min(boundary - t0, (s.network.latencyMin + s.network.latencyMax) / 4 + Ms.second)
        request(kind, from: who, at: estimate)
        guard let windows = ScenarioGenerator.windows(of: s, untilMs: estimate + 10 * Ms.minute),
              let w = windows.first(where: { $0.device == device && $0.kind == kind && $0.sentAt >= estimate && $0.servedAt != nil }),
              let judged = w.servedAt else { return }
        shift(from: first, by: Int64(boundary) - Int64(judged) + aimDeltaWeave())
    }

    /// The boundary itself and ±1 ms half the time, else ±1 s or ±1 min.
    mutating func aimDeltaWeave() -> Int64 {
        weaveStream.chance(1, outOf: 2) ? [0, -1, 1][Int(weaveStream.below(3))]
            : [-Int64(Ms.second), Int64(Ms.second), -Int64(Ms.minute), Int64(Ms.minute)][Int(weaveStream.below(4))]
    }

    mutating func raceInEveryState() {
        guard let t0 = weaveTime(room: 32 * Ms.day) else { return }
        let group = quietApp()
        let who = DeviceSelector.device(group: group, index: 1)
        guard let device = firstDevice(of: group) else { return }
        // The state the device is in when the race starts, and the actions that may race.
        var race = t0 + Ms.hour + weaveStream.below(Ms.hour)
        var actions: [Action]
        var requests: [ScenarioLanguage.PersonAction] = [.open, .launch]
        switch weaveStream.below(4) {
        case 0:   // unlocked
            actions = [.disable(app: "vault"), .rollupApp(.revoke, app: "vault"), .rollupAccount(.revoke, account: "initech"),
                       .rotate(app: "vault", key: "rk_live_v1", old: .stopNow), .update(who, key: "rk_live_zz")]
            requests = [.launch, .query, .profile, .background]
        case 1:   // locked
            actions = stopAndLift(at: t0)
        case 2:   // purged: locked 30 days, then a check says so
            actions = stopAndLift(at: t0)
            at(t0 + 30 * Ms.day + Ms.hour, .person(.launch, who))
            race = t0 + 30 * Ms.day + 2 * Ms.hour
        default:  // unregistered: the server forgot it, the SDK has not heard
            at(race - Ms.minute, .forgetDevice(who))
            actions = [.disable(app: "vault"), .enable(app: "vault"), .rollupApp(.revoke, app: "vault"),
                       .rotate(app: "vault", key: "rk_live_v1", old: .stopNow)]
        }
        let action = actions[Int(weaveStream.below(UInt64(actions.count)))]
        let slowAt = s.timeline.count
        let req = requests[Int(weaveStream.below(UInt64(requests.count)))]
        if req == .open { at(race, .person(.close, who)) }
        at(race, .person(req, who))
        guard let windows = ScenarioGenerator.windows(of: s, untilMs: race + s.network.timeout + answerMax),
              let a = windows.first(where: { $0.device == device && $0.sentAt == race && $0.servedAt != nil }),
              let judged = a.servedAt else { return }
        // The first is slowed; the action lands just after it was judged; one or two more
        // requests follow and overtake it.
        let slowBy = max(Ms.second, s.network.timeout / 2)
        s.timeline.insert(TimedStatement(schedule: .at(race), body: .action(.fault(SlowResponses(devices: who, byMs: slowBy, forMs: judged - race + 1)))), at: slowAt)
        at(judged + 1, action)
        for k in 0..<(1 + weaveStream.below(2)) {
            let next = requests[Int(weaveStream.below(UInt64(requests.count)))]
            if next == .open { at(judged + 1 + k, .person(.close, who)) }
            at(judged + 1 + k, .person(next, who))
        }
    }

    /// Access to `vault` stops at `t` and the device locks; returns what may lift it.
    mutating func stopAndLift(at t: SimTime) -> [Action] {
        switch weaveStream.below(3) {
        case 0: at(t, .rollupApp(.revoke, app: "vault")); at(t + Ms.minute, .person(.launch, .group("vault")))
            return [.rollupApp(.restore, app: "vault"), .enable(app: "vault")]
        case 1: at(t, .rotate(app: "vault", key: "rk_live_v1", old: .stopNow)); at(t + Ms.minute, .person(.launch, .group("vault")))
            return [.update(.group("vault"), key: nil)]
        default: at(t, .disable(app: "vault")); at(t + Ms.minute, .person(.launch, .group("vault")))
            return [.enable(app: "vault"), .rollupApp(.revoke, app: "vault")]
        }
    }
}
