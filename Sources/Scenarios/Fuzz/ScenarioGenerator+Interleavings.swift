import SimKit

/// Probes aimed at the trace (issue 38): actions that land while a request is in flight.
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
        /// Any action placed inside a request window read from the trace: just after it
        /// left, between its judging and its answer, just before its timeout.
        case actionInFlight
    }

    /// A fifth of the seeds get one interleaving probe.
    mutating func interleave() {
        guard weaveStream.chance(1, outOf: 5) else { return }
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
        case .actionInFlight: actionInFlight()
        }
    }

    /// A time in the run at least an hour in, with `room` before its end, from this stream.
    mutating func weaveTime(room: SimTime) -> SimTime? {
        guard durationMs > room + 2 * Ms.hour else { return nil }
        return Ms.hour + weaveStream.below(durationMs - room - 2 * Ms.hour)
    }

    /// An app of its own (`vault`, of account `initech`, one to three devices) that no
    /// other statement of the script names, so no other stop or lift of the script
    /// spoils the probe's (person actions on `all`, offline windows and server faults
    /// still reach its devices). Returns the group's name.
    mutating func quietApp() -> String {
        s.accounts.append(AccountDecl(name: "initech"))
        s.apps.append(AppDecl(name: "vault", account: "initech", key: "rk_live_v0"))
        s.groups.append(DeviceGroupDecl(kind: .devices, count: 1 + weaveStream.below(3), app: "vault"))
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

    mutating func lockedRaceAcrossEnable() {
        guard let t = weaveTime(room: 2 * Ms.day) else { return }
        let group = quietApp()
        let lift = stopAccess(at: t)
        let race = t + Ms.hour + weaveStream.below(Ms.day)
        let who = DeviceSelector.device(group: group, index: 1)
        guard let device = firstDevice(of: group) else { return }
        // Check A leaves now; the trace says when the server judges it.
        let slowBy = max(Ms.second, s.network.timeout / 2)
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
            s.timeline.insert(TimedStatement(schedule: .at(race), body: .action(.slowResponses(who, by: slowBy, for: judged - race + 1))), at: slowAt)
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
        at(t - Ms.minute, .offline(who, for: heard - t + Ms.minute))
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
        let call: PersonAction = [.query, .profile][Int(weaveStream.below(2))]
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

    /// Clones with live copies of the genuine devices' credentials: they launch once the
    /// genuine devices have registered, then open, close, run in the background, call,
    /// reset, update, and add photos, some of it while the genuine devices are locked,
    /// resetting or forgotten.
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
        // What the genuine devices go through meanwhile, half the time.
        switch weaveStream.below(4) {
        case 0: at(t + Ms.minute, .disable(app: "photos")); at(t + 2 * Ms.minute, .person(.launch, .group("photos"))); at(t + 3 * Ms.hour, .enable(app: "photos"))
        case 1: at(t + 2 * Ms.minute, .person(.reset, .group("photos")))
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
        let pokes: [PersonAction] = [.launch, .open, .query, .profile, .background]
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
                              .rollupApp(.restore, app: "photos"), .offline(who, for: Ms.minute), .forgetDevice(who),
                              .slowResponses(who, by: 2 * answerMax, for: Ms.minute)]
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
}
