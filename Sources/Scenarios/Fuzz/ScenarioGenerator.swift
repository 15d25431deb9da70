import SimKit
import ScenarioLanguage

/// Limits on what the generator makes; `simkit fuzz --devices/--duration` set them.
public struct GeneratorOptions: Sendable, Equatable {
    /// Genuine devices per group at most (clones come on top, at most 3).
    public var maxDevicesPerGroup: UInt64 = 40
    /// The longest scenario, in days (the shortest is 2 days).
    public var maxDurationDays: UInt64 = 90
    /// The SDK every generated scenario runs.
    public var sdk: SDKChoice = .reference
    /// The server core every generated scenario runs (`--server`); the reference by default.
    public var server: ServerChoice = .reference
    public init(maxDevicesPerGroup: UInt64 = 40, maxDurationDays: UInt64 = 90, sdk: SDKChoice = .reference) {
        self.maxDevicesPerGroup = maxDevicesPerGroup; self.maxDurationDays = maxDurationDays; self.sdk = sdk
    }
}

/// Makes a whole random scenario from one 64-bit seed, as an AST of the scenario language,
/// so every generated run can be printed as a `.scenario` file and run again.
///
/// Swarm testing: each seed switches on a random subset of features (fault kinds,
/// dashboard and Rollup actions, person actions) with random rates, sizes and durations,
/// so rare combinations are reached. Timings aim at the edges where bugs live: just
/// before and after the 24 h check interval, a key's grace deadline, the 30-day purge
/// boundary, a dashboard change (for caches), and responses racing their timeout.
public struct ScenarioGenerator {
    /// Features a seed may switch on.
    enum Feature: Int, CaseIterable {
        case offline, serverErrors, serverDown, timeouts, lostResponses
        case rotate, stopOldKey, disable, longLock, relock, rollupApp, rollupAccount
        case pendingApp, unapprovedAccount, forget, clones, update, wrongKey, secondApp
        case reset, photos, calls, addPhotos, background, rareOpens, cacheProbe
        /// Two verdicts on either side of a dashboard change, delivered out of order (D4, D9).
        case verdictRace
        /// Dashboard and Rollup actions on the second app and its account: they must change
        /// nothing for the first (S2, S4, S5).
        case otherAppActions
        /// Older keys: stopping a key that is not the newest previous one or has expired,
        /// and updates that ship an old key of the same app again (S1, S3).
        case oldKeys
        /// A partition that starts while requests are in flight, cutting their answers off.
        case cutInFlight
        /// Per-device links (SPEC §1.4): the main group gets a link of its own, pinned or
        /// narrow half the time (exact boundaries), and sometimes a second, named group of
        /// the same app sits on a slow link, so answers to different devices reorder.
        case links
        /// The rest of the language's surface: `every … until`, `N of GROUP` selectors, and
        /// stopping the second app's old key.
        case surface
    }

    let options: GeneratorOptions
    var swarm: SimRandom
    var r: SimRandom
    /// The stream of the aimed probes (`aim`), apart so that they add to a seed's script.
    var aimStream: SimRandom
    /// The stream of the interleaving probes (`interleave`), apart for the same reason.
    var weaveStream: SimRandom
    /// The stream of the pinned fates (`aimAnswers`), apart for the same reason.
    var fateStream: SimRandom
    /// The stream of the async schedule (`drawSchedule`), apart for the same reason.
    var scheduleStream: SimRandom
    var on: [Bool] = []
    var durationMs: SimTime = 0
    var s = ScenarioFile()
    /// Keys of the main app in the order they were issued; the next one to issue.
    var keys: [String] = ["rk_live_p0"]
    var otherKeys: [String] = []
    /// Rotations are issued in time order, so each `stop-old-key` names a previous key.
    var lastRotationAt: SimTime?

    /// Deltas around an edge: before, at and after it.
    static let edgeDeltas: [Int64] = [-Int64(Ms.hour), -Int64(Ms.minute), -1, 0, 1, Int64(Ms.minute), Int64(Ms.hour)]

    public static func generate(seed: UInt64, options: GeneratorOptions = .init()) -> ScenarioFile {
        var g = ScenarioGenerator(seed: seed, options: options)
        return g.make(seed: seed)
    }

    init(seed: UInt64, options: GeneratorOptions) {
        self.options = options
        let root = SimRandom(seed: seed)
        swarm = root.fork(1)
        r = root.fork(2)
        aimStream = root.fork(3)
        weaveStream = root.fork(4)
        fateStream = root.fork(5)
        scheduleStream = root.fork(0x7363_6865_64)   // "sched": no other stream of a seed uses it
    }

    func has(_ f: Feature) -> Bool { on[f.rawValue] }

    /// The script of `seed`; `aimed: false` leaves out the aimed probes, the faults drawn
    /// alone (the race of slow answers), the interleavings and the pinned fates,
    /// `answers: false` the pinned fates alone and `schedules: false` the async schedule
    /// (for tests).
    mutating func make(seed: UInt64, aimed: Bool = true, answers: Bool = true, schedules: Bool = true) -> ScenarioFile {
        // Swarm: about a third of the features on, each with its own coin.
        on = Feature.allCases.map { _ in swarm.chance(1, outOf: 3) }
        s.name = "fuzz seed \(seed)"
        s.seed = seed
        s.sdk = options.sdk
        s.server = options.server
        let maxDays = max(2, options.maxDurationDays)
        let wantsLong = has(.longLock) || has(.relock)
        let days: UInt64 = wantsLong ? min(maxDays, 31 + r.below(60)) : 2 + r.below(maxDays - 1)
        durationMs = days * Ms.day
        s.duration = durationMs

        s.accounts = [AccountDecl(name: "acme", approved: !has(.unapprovedAccount))]
        s.apps = [AppDecl(name: "photos", account: "acme", key: "rk_live_p0", pending: has(.pendingApp))]
        let smallOrBig = r.chance(4, outOf: 5) ? min(5, options.maxDevicesPerGroup) : options.maxDevicesPerGroup
        let n = 1 + r.below(max(1, smallOrBig))
        s.groups = [DeviceGroupDecl(kind: .devices, count: n, app: "photos")]
        if has(.links) {
            let ranges: [ClosedRange<SimTime>] = [1...1, 20...20, 1...5, 200...3_000]
            s.groups[0].latency = ranges[Int(r.below(UInt64(ranges.count)))]
            if r.chance(1, outOf: 2) {
                var far = DeviceGroupDecl(kind: .devices, count: 1 + r.below(3), app: "photos", name: "photos-far")
                far.latency = r.chance(1, outOf: 2) ? 2 * Ms.second...2 * Ms.second : Ms.second...4 * Ms.second
                s.groups.append(far)
            }
        }
        if has(.secondApp) || has(.wrongKey) || has(.otherAppActions) || has(.surface) {
            s.accounts.append(AccountDecl(name: "globex"))
            s.apps.append(AppDecl(name: "notes", account: "globex", key: "rk_live_n0"))
            s.groups.append(DeviceGroupDecl(kind: .devices, count: 1 + r.below(3), app: "notes"))
            otherKeys = ["rk_live_n0"]
        }
        if has(.clones) {
            // Half the time the clones copy genuine devices' credentials and keys (S6).
            s.groups.append(DeviceGroupDecl(kind: .clones, count: 1 + r.below(3), app: "photos",
                                            copying: r.chance(1, outOf: 2) ? "photos" : nil))
        }
        let latencyMin = [1, 20, 100][Int(r.below(3))] as SimTime
        let timeout = [30 * Ms.second, 30 * Ms.second, 10 * Ms.second, 5 * Ms.second][Int(r.below(4))]
        s.network = NetworkDecl(latencyMin: latencyMin, latencyMax: latencyMin + r.below(2_000), timeout: timeout)

        people()
        for _ in 0..<(2 + r.below(7)) { event() }
        if aimed {
            aim()
            faultsDrawnAlone(seed: seed)
            interleave()
            if answers { aimAnswers() }
        }
        if schedules { drawSchedule() }
        return s
    }

    // MARK: - The people: launches, opens, background runs

    mutating func people() {
        at(0, .person(.launch, .all))
        let openPeriods: [SimTime] = has(.rareOpens) ? [25 * Ms.hour, 30 * Ms.hour, 47 * Ms.hour, 49 * Ms.hour, 3 * Ms.day]
                                                     : [2 * Ms.hour, 8 * Ms.hour, Ms.day]
        let period = openPeriods[Int(r.below(UInt64(openPeriods.count)))]
        let jitter: SimTime? = r.chance(1, outOf: 2) ? nil : r.below(period / 2) + 1
        every(period, jitter: jitter, .person(.open, r.chance(1, outOf: 2) ? .group("photos") : .share(share(), of: "photos")))
        every(period, jitter: jitter, from: period + Ms.hour, .person(.close, .all))
        if has(.background) { every(Ms.day, jitter: r.below(6 * Ms.hour) + 1, .person(.background, .all)) }
        if has(.addPhotos) {
            every([6 * Ms.hour, Ms.day, 3 * Ms.day][Int(r.below(3))], .addPhotos(1 + r.below(500), .share(share(), of: "photos")))
        }
        if has(.calls) {
            let call: ScenarioLanguage.PersonAction = [.query, .profile, .search][Int(r.below(3))]
            every([Ms.hour, 6 * Ms.hour, Ms.day][Int(r.below(3))], jitter: Ms.hour, .person(call, .share(share(), of: "photos")))
        }
    }

    // MARK: - Events

    /// One event of an enabled feature, at a random time; the longer ones have their own
    /// functions below. Every draw keeps its place: the scripts depend on their order.
    mutating func event() {
        let enabled = Feature.allCases.filter { has($0) }
        guard !enabled.isEmpty else { return }
        let f = enabled[Int(r.below(UInt64(enabled.count)))]
        let t = someTime()
        switch f {
        // Five fault kinds are features of their own; each kind's file says how it is drawn.
        case .offline: Offline.draw(at: t, &self)
        case .serverErrors: ServerErrors.draw(at: t, &self)
        case .serverDown: ServerDown.draw(at: t, &self)
        case .timeouts: Timeouts.draw(at: t, &self)
        case .lostResponses: LostResponses.draw(at: t, &self)
        case .rotate, .update: rotation(at: t)
        case .stopOldKey: rotation(at: t, stopEarly: true)
        case .disable: disableEvent(at: t)
        case .longLock: window(at: r.below(max(1, durationMs / 4)), length: [29 * Ms.day + 12 * Ms.hour, 30 * Ms.day, 31 * Ms.day, 60 * Ms.day][Int(r.below(4))])
        case .relock: relockEvent()
        case .rollupApp: rollupAppEvent(at: t)
        case .rollupAccount: rollupAccountEvent(at: t)
        case .pendingApp: warm(t); at(t, .rollupApp(.approve, app: "photos")); poke(t + Ms.minute)
        case .unapprovedAccount: warm(t); at(t, .rollupAccount(.approve, account: "acme")); poke(t + Ms.minute)
        case .forget: at(t, .forgetDevice(selector())); poke(t + Ms.hour)
        case .clones:
            // Clones launch (and copy credentials, if they do) after the genuine devices
            // registered, then call the server-backed API.
            at(t, .person(.launch, .group("photos-clones")))
            at(t + Ms.minute, .person([.query, .profile][Int(r.below(2))], .group("photos-clones")))
        case .wrongKey, .secondApp:
            let key = otherKeys.isEmpty || r.chance(1, outOf: 4) ? "rk_live_zz" : otherKeys[0]
            at(t, .update(selector(), key: key))
            at(t + Ms.minute, .person(.launch, .all))
        case .reset: resetEvent(at: t)
        case .photos:
            at(t, .person(.revokePhotos, selector()))
            at(t + r.below(Ms.day) + 1, .person(.open, .all))
            if r.chance(1, outOf: 2) { at(t + 2 * Ms.day, .person(.grantPhotos, .all)) }
        case .calls: at(t, .person([.query, .profile, .search][Int(r.below(3))], selector()))
        case .addPhotos: at(t, .addPhotos(1 + r.below(2_000), selector()))
        case .background: at(t, .person(.background, .all))
        case .rareOpens:
            // Around the 24 h check interval: open just before and after it.
            at(t, .person(.open, .all))
            at(t + Ms.hour, .person(.close, .all))
            at(shifted(t + Ms.day, delta()), .person(.open, .all))
        case .verdictRace: verdictRaceEvent(at: t)
        case .otherAppActions: otherAppEvent(at: t)
        case .oldKeys: oldKeysEvent(at: t)
        case .cutInFlight: cutInFlightEvent(at: t)
        case .links:
            // Everyone talks at once over links of different speeds.
            poke(t)
        case .surface: surfaceEvent(at: t)
        case .cacheProbe:
            at(t, .person(.query, .all))
            at(t + Ms.minute, .disable(app: "photos"))
            at(t + 2 * Ms.minute + r.below(3 * Ms.minute), .person(.query, .all))
            at(t + Ms.hour, .enable(app: "photos"))
            at(t + Ms.hour + 2 * Ms.minute, .person(.query, .all))
        }
    }

    /// Access stops: a third of the time early, racing the first launch; otherwise a
    /// window of an hour to five days from `t`.
    mutating func disableEvent(at t: SimTime) {
        if r.chance(1, outOf: 3) {
            // Race the first launch's downloads (lock from a model or place-data request)
            // or its indexing (a run cut short, to be resumed after the unlock, D4).
            let offset = r.chance(1, outOf: 2) ? 50 + r.below(3 * Ms.second) : 10 * Ms.second + r.below(80 * Ms.second)
            at(offset, .disable(app: "photos"))
            at(offset + Ms.hour, .enable(app: "photos"))
        } else {
            window(at: t, length: [Ms.hour, 2 * Ms.day, 5 * Ms.day][Int(r.below(3))])
        }
    }

    /// Access stops, comes back, stops again. Half the time nobody hears that it came
    /// back (every device offline in between): the SDK stays locked through the break,
    /// yet the 30 days count from the second stop only (D5).
    mutating func relockEvent() {
        let first = r.below(max(1, durationMs / 8))
        let firstLength = Ms.day + r.below(5 * Ms.day)
        let second = first + 10 * Ms.day + r.below(5 * Ms.day)
        window(at: first, length: firstLength, pokeAfterEnable: r.chance(1, outOf: 2))
        if r.chance(1, outOf: 2) { at(first + firstLength, .fault(Offline(devices: .all, forMs: second - first - firstLength))) }
        window(at: second, length: 25 * Ms.day, edgesFrom: first)
        for days in [30, 31] as [SimTime] { poke(shifted(second + days * Ms.day, delta())) }
    }

    /// The dashboard revokes, rejects or approves the app; access comes back two hours
    /// later, and half the time the verdict is undone after three days.
    mutating func rollupAppEvent(at t: SimTime) {
        warm(t)
        let verb: RollupAppVerb = [.revoke, .reject, .revoke, .approve][Int(r.below(4))]
        at(t, .rollupApp(verb, app: "photos"))
        if r.chance(1, outOf: 2) { at(t + Ms.hour, .disable(app: "photos")) }
        at(t + 2 * Ms.hour, .enable(app: "photos"))
        poke(t + 2 * Ms.hour + Ms.minute)
        if r.chance(1, outOf: 2) { at(t + 3 * Ms.day, .rollupApp(verb == .reject ? .approve : .restore, app: "photos")) }
    }

    /// An unapproved account is approved, or revoked (and maybe restored: still not
    /// approved, S5), half the seeds each.
    mutating func rollupAccountEvent(at t: SimTime) {
        warm(t)
        at(t, .rollupAccount(has(.unapprovedAccount) && r.chance(1, outOf: 2) ? .approve : .revoke, account: "acme"))
        poke(t + Ms.minute)
        if r.chance(1, outOf: 2) { at(t + 2 * Ms.day, .rollupAccount(.restore, account: "acme")) }
    }

    /// A person resets the app; half the time while access is stopped: the record goes
    /// all the same (S8).
    mutating func resetEvent(at t: SimTime) {
        let stopped = r.chance(1, outOf: 2)
        if stopped { at(t, .disable(app: "photos")); poke(t + Ms.second) }
        at(t + Ms.minute, .person(.reset, selector()))
        if r.chance(1, outOf: 2) { at(t + 2 * Ms.minute, .person(.open, .all)) }
        if stopped { at(t + Ms.hour, .enable(app: "photos")) }
    }

    /// Two requests on either side of a dashboard change, a few hundred milliseconds
    /// apart on a link whose round trips vary from 1 ms to seconds: the first is
    /// served before the change and the newer verdict often arrives first (D4, D9).
    /// Eight races, 20 minutes apart, so one race is likely under any seed (and a
    /// shrunk reproducer still draws one when a statement before it goes).
    mutating func verdictRaceEvent(at t: SimTime) {
        s.network.latencyMin = 1
        if s.network.latencyMax < 2 * Ms.second { s.network.latencyMax = 2 * Ms.second + r.below(2 * Ms.second) }
        let gap = 1 + r.below(max(1, s.network.latencyMax / 4))
        let lockFirst = r.chance(1, outOf: 2)
        for k: SimTime in 0..<8 {
            let at0 = t + k * 20 * Ms.minute
            if lockFirst {
                at(at0, .person(.launch, .all))                      // a check served 200 …
                at(at0 + gap, .disable(app: "photos"))               // … then access stops …
                at(at0 + gap + 1, .person(.query, .all))             // … and a query is refused
                at(at0 + 10 * Ms.minute, .enable(app: "photos"))
            } else {
                at(at0, .disable(app: "photos"))
                at(at0 + 1, .person(.query, .all))                   // refused …
                at(at0 + 1 + gap, .enable(app: "photos"))            // … access comes back …
                at(at0 + 2 + gap, .person(.background, .all))        // … a run's check is served 200
            }
        }
        poke(t + 4 * Ms.hour)
    }

    /// The second app or its account is disabled, rotated, revoked or restored.
    mutating func otherAppEvent(at t: SimTime) {
        guard s.apps.count > 1 else { return }   // declared whenever this feature is on
        warm(t)
        switch r.below(4) {
        case 0:
            at(t, .disable(app: "notes"))
            at(t + [Ms.hour, 2 * Ms.day][Int(r.below(2))], .enable(app: "notes"))
        case 1:
            let key = "rk_live_n\(otherKeys.count)"
            otherKeys.append(key)
            at(t, .rotate(app: "notes", key: key, old: r.chance(1, outOf: 2) ? .stopNow : .keep(Ms.hour)))
            at(t + Ms.minute, .update(.group("notes"), key: nil))
        case 2:
            at(t, .rollupApp(.revoke, app: "notes"))
            if r.chance(1, outOf: 2) { at(t + Ms.day, .rollupApp(.restore, app: "notes")) }
        default:
            at(t, .rollupAccount(.revoke, account: "globex"))
            if r.chance(1, outOf: 2) { at(t + Ms.day, .rollupAccount(.restore, account: "globex")) }
        }
        poke(t + Ms.minute)
    }

    /// Two rotations; then stop the oldest key (expired, or still in its grace, or not
    /// the newest previous one), or ship an old key again in an update.
    mutating func oldKeysEvent(at t: SimTime) {
        rotation(at: t)
        rotation(at: t + Ms.hour + r.below(Ms.day))
        guard keys.count >= 3, let last = lastRotationAt else { return }
        let oldest = keys[keys.count - 3], previous = keys[keys.count - 2]
        let when = last + [Ms.minute, 2 * Ms.hour, 8 * Ms.day][Int(r.below(3))]
        switch r.below(3) {
        case 0: at(when, .stopOldKey(app: "photos", key: oldest))
        case 1: at(when, .stopOldKey(app: "photos", key: previous))
        default: at(when, .update(selector(), key: r.chance(1, outOf: 2) ? oldest : previous))
        }
        poke(when + Ms.minute)
    }

    /// Requests go out at t; the link drops a few milliseconds later, before most
    /// answers are back, and comes back after a second to an hour.
    mutating func cutInFlightEvent(at t: SimTime) {
        poke(t)
        let cut = t + 1 + r.below(max(1, s.network.latencyMin + (s.network.latencyMax - s.network.latencyMin) / 2))
        at(cut, .fault(Offline(devices: r.chance(1, outOf: 2) ? .all : selector(), forMs: [Ms.second, Ms.minute, Ms.hour][Int(r.below(3))])))
        if r.chance(1, outOf: 2) { at(cut + 1, .disable(app: "photos")); at(cut + 2 * Ms.hour, .enable(app: "photos")) }
        poke(cut + 2 * Ms.hour + Ms.minute)
    }

    /// Counted selectors, repeated opens and the second app's previous key: the language's
    /// less common forms.
    mutating func surfaceEvent(at t: SimTime) {
        let n = s.groups[0].count
        switch r.below(3) {
        case 0:
            let period = [Ms.hour, 6 * Ms.hour][Int(r.below(2))]
            s.timeline.append(TimedStatement(schedule: .every(Repeat(period: period, jitter: nil, from: t, until: min(durationMs, t + 2 * Ms.day))),
                                             body: .action(.person(.open, .count(1 + r.below(n), of: "photos")))))
        case 1:
            // The first key is a previous key once any rotation has happened, whatever
            // other rotations of the second app this script places earlier or later.
            guard s.apps.count > 1 else { return }
            let key = "rk_live_n\(otherKeys.count)"
            otherKeys.append(key)
            at(t, .rotate(app: "notes", key: key, old: .keep(Ms.day)))
            at(t + Ms.minute, .update(.share(share(), of: "notes"), key: nil))
            at(t + Ms.hour, .stopOldKey(app: "notes", key: "rk_live_n0"))
            poke(t + Ms.hour + Ms.minute)
        default:
            at(t, .person([.query, .profile, .search][Int(r.below(3))], .count(1 + r.below(n), of: "photos")))
        }
    }

    /// A disable and, unless it outlasts the run, the enable; with opens at the 29- and
    /// 30-day edges of the lock it starts (or of an earlier lock, `edgesFrom`).
    mutating func window(at start: SimTime, length: SimTime, edgesFrom: SimTime? = nil, pokeAfterEnable: Bool = true) {
        warm(start)
        at(start, .disable(app: "photos"))
        poke(start + Ms.minute)
        let anchor = edgesFrom ?? start
        // Around 30 days after the stop began (the disable itself: D5's true boundary), and
        // an hour later, and the day before.
        for days in [29, 30] as [SimTime] { poke(shifted(anchor + days * Ms.day + Ms.hour, delta())) }
        poke(shifted(anchor + 30 * Ms.day, delta()))
        if r.chance(1, outOf: 3) { at(anchor + 30 * Ms.day + Ms.hour + r.below(Ms.day), .fault(Offline(devices: .all, forMs: Ms.hour))); poke(anchor + 30 * Ms.day + Ms.hour + r.below(Ms.day)) }
        if start + length < durationMs {
            at(start + length, .enable(app: "photos"))
            if pokeAfterEnable { poke(start + length + Ms.minute) }
        }
    }

    /// A rotation, a staged update, and requests around the old key's deadline.
    mutating func rotation(at proposed: SimTime, stopEarly: Bool = false) {
        var t = proposed
        if let last = lastRotationAt, t <= last { t = last + Ms.hour + r.below(5 * Ms.day) }
        guard t <= durationMs else { return }
        lastRotationAt = t
        let newKey = "rk_live_p\(keys.count)"
        let old = keys.last!
        keys.append(newKey)
        let policy: ScenarioLanguage.OldKeyPolicy = r.chance(1, outOf: 4) ? .stopNow : .keep([Ms.hour, Ms.day, 7 * Ms.day, 30 * Ms.day][Int(r.below(4))])
        at(t, .rotate(app: "photos", key: newKey, old: policy))
        if has(.update) || r.chance(1, outOf: 2) { at(t + r.below(2 * Ms.day) + 1, .update(.share(share(), of: "photos"), key: nil)) }
        if case .keep(let grace) = policy {
            let edge = t + grace
            poke(max(t + 1, shifted(edge, delta())))
            poke(edge + Ms.hour)
            if stopEarly, grace > 2 * Ms.hour { at(t + Ms.hour, .stopOldKey(app: "photos", key: old)); poke(t + Ms.hour + Ms.minute) }
        } else {
            poke(t + Ms.minute)
        }
    }

    /// Something that makes every device talk to the server at `t`: a launch or an open.
    package mutating func poke(_ t: SimTime) {
        let action: ScenarioLanguage.PersonAction = [.launch, .open, .query][Int(r.below(3))]
        if action == .open { at(t, .person(.close, .all)) }
        at(t, .person(action, .all))
    }

    /// Traffic a minute before a dashboard change, so a server that caches verdicts is
    /// caught answering from the cache just after it.
    mutating func warm(_ t: SimTime) {
        if t >= Ms.minute, r.chance(1, outOf: 2) { at(t - Ms.minute, .person(.query, .all)) }
    }

    // MARK: - Small draws

    mutating func someTime() -> SimTime { Ms.hour + r.below(max(1, durationMs - Ms.hour)) }
    /// `t` moved by `d` milliseconds, never before the start.
    func shifted(_ t: SimTime, _ d: Int64) -> SimTime { d < 0 ? t - min(t, SimTime(-d)) : t + SimTime(d) }
    mutating func delta() -> Int64 { ScenarioGenerator.edgeDeltas[Int(r.below(UInt64(ScenarioGenerator.edgeDeltas.count)))] }
    package mutating func faultLength() -> SimTime { [Ms.minute, Ms.hour, 6 * Ms.hour, 2 * Ms.day, 40 * Ms.day][Int(r.below(5))] }
    mutating func share() -> Share { Share(percent: [10, 25, 50, 75, 100][Int(r.below(5))]) }

    mutating func selector() -> DeviceSelector {
        let n = s.groups[0].count
        switch r.below(4) {
        case 0: return .all
        case 1: return .group("photos")
        case 2: return .share(share(), of: "photos")
        default: return .device(group: "photos", index: 1 + r.below(n))
        }
    }

    mutating func at(_ t: SimTime, _ action: Action) {
        guard t <= durationMs else { return }
        s.timeline.append(TimedStatement(schedule: .at(t), body: .action(action)))
    }

    mutating func every(_ period: SimTime, jitter: SimTime? = nil, from: SimTime? = nil, _ action: Action) {
        guard (from ?? period) <= durationMs else { return }
        s.timeline.append(TimedStatement(schedule: .every(Repeat(period: period, jitter: jitter, from: from)), body: .action(action)))
    }
}

/// The fault kinds' draws (`FaultKind.draw`) write into the script through these.
extension ScenarioGenerator: FaultDraws {
    package mutating func below(_ n: UInt64) -> UInt64 { r.below(n) }
    package mutating func chance(_ k: UInt64, outOf n: UInt64) -> Bool { r.chance(k, outOf: n) }
    package mutating func someDevices() -> DeviceSelector { selector() }
    package mutating func someShare() -> Share { share() }
    package var mainGroup: (name: String, count: UInt64) { (s.groups[0].name, s.groups[0].count) }
    package mutating func add(_ statement: some FaultKind, at t: SimTime) { at(t, .fault(statement)) }
    package mutating func everyone(_ action: SimKit.PersonAction, at t: SimTime) {
        guard let person = ScenarioLanguage.PersonAction(rawValue: action.description) else {
            preconditionFailure("'\(action)' is not an action of every device alone")
        }
        at(t, .person(person, .all))
    }
    package mutating func mainAppAccess(stopped: Bool, at t: SimTime) {
        at(t, stopped ? .disable(app: s.apps[0].name) : .enable(app: s.apps[0].name))
    }
    package mutating func addPhotos(_ n: UInt64, at t: SimTime) { at(t, .addPhotos(n, .all)) }

    /// The kinds the generator draws on their own (`FaultKind.drawnAlone`): each in one seed
    /// in `oneIn`, at a time and with parameters from the seed's fork `stream`, which the
    /// kind's draw reads in place of the generator's stream.
    mutating func faultsDrawnAlone(seed: UInt64) {
        for kind in Faults.kinds {
            guard let alone = kind.drawnAlone else { continue }
            var own = SimRandom(seed: seed).fork(alone.stream)
            guard own.chance(1, outOf: alone.oneIn), durationMs > 3 * Ms.hour else { continue }
            let t = Ms.hour + own.below(durationMs - 2 * Ms.hour)
            swap(&r, &own)
            kind.draw(at: t, &self)
            swap(&r, &own)
        }
    }
}
