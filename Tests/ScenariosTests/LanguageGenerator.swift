import SimKit
@testable import ScenarioLanguage

/// Makes random scenarios that the validator accepts, from a seed (`SimRandom`).
struct LanguageASTGenerator {
    var rng: SimRandom

    init(seed: UInt64) { rng = SimRandom(seed: seed) }

    mutating func int(_ r: ClosedRange<UInt64>) -> UInt64 { rng.int(in: r) }
    mutating func coin(_ num: UInt64 = 1, of den: UInt64 = 2) -> Bool { rng.chance(num, outOf: den) }
    mutating func pick<T>(_ items: [T]) -> T { items[Int(rng.below(UInt64(items.count)))] }

    /// A random time in `0...max`, often round, sometimes any millisecond.
    mutating func time(_ max: SimTime) -> SimTime {
        switch int(0...3) {
        case 0: return int(0...max)
        case 1: return int(0...(max / Ms.day)) * Ms.day
        case 2: return int(0...(max / Ms.hour)) * Ms.hour
        default: return int(0...(max / Ms.second)) * Ms.second
        }
    }

    mutating func positive(_ max: SimTime) -> SimTime { Swift.max(1, time(max)) }

    mutating func name(_ prefix: String) -> String {
        let tails = ["", "-x", "_2", "-early", "9"]
        return prefix + String(int(0...99)) + pick(tails)
    }

    mutating func share() -> Share { Share(basisPoints: UInt32(pick([int(0...10_000), int(0...100) * 100, int(0...10) * 10]))) }

    mutating func make() -> ScenarioFile {
        var s = ScenarioFile()
        let titleParts = ["Leaked key", "\"quoted\"", "back\\slash", "# not a comment", "é ü 日本", "", "x"]
        s.name = (0..<int(0...3)).map { _ in pick(titleParts) }.joined(separator: " ")
        s.seed = coin() ? rng.next() : int(0...1000)
        s.duration = coin() ? int(1...60) * Ms.day : positive(ScenarioLimits.maxDuration)
        switch int(0...2) {
        case 0: s.sdk = .reference
        case 1: s.sdk = .mutant(name("mutant"))
        default: s.sdk = .custom(name("core"))
        }
        for i in 0..<int(1...3) { s.accounts.append(AccountDecl(name: "acc\(i)", approved: coin(3, of: 4))) }
        var keyCounter = 0
        for i in 0..<int(1...3) {
            keyCounter += 1
            s.apps.append(AppDecl(name: "app\(i)" + pick(["", "-b"]), account: pick(s.accounts).name,
                                  key: "rk_live_K\(keyCounter)", pending: coin(1, of: 4)))
        }
        var used: [String] = []
        for i in 0..<int(1...4) {
            let kind: DeviceGroupDecl.Kind = coin(3, of: 4) ? .devices : .clones
            let app = pick(s.apps).name
            let def = DeviceGroupDecl.defaultName(kind: kind, app: app)
            let groupName = used.contains(def) || coin() ? "g\(i)" : def
            used.append(groupName)
            s.groups.append(DeviceGroupDecl(kind: kind, count: int(1...5_000), app: app, name: groupName))
        }
        if coin() {
            let a = time(2 * Ms.second), b = a + time(5 * Ms.second)
            s.network = NetworkDecl(latencyMin: a, latencyMax: b, timeout: positive(Ms.minute))
        }
        var rotations: [(app: String, key: String, time: SimTime)] = []
        let end = s.duration
        for _ in 0..<int(0...15) {
            var schedule = Schedule.at(time(end))
            if coin(1, of: 3) {
                var r = Repeat(period: positive(end))
                if coin() { r.jitter = time(Ms.day) }
                if coin() { r.from = time(end) }
                if coin(), r.firstFiring <= end { r.until = r.firstFiring + time(end - r.firstFiring) }
                schedule = .every(r)
            }
            let isAt: Bool = { if case .at = schedule { return true } else { return false } }()
            if isAt, coin(1, of: 5) {
                s.timeline.append(TimedStatement(schedule: schedule, body: .expect(expectation(s))))
                continue
            }
            var action = randomAction(s)
            if isAt, case let .at(t) = schedule, coin(1, of: 6) {
                keyCounter += 1
                let app = pick(s.apps).name
                let key = "rk_live_R\(keyCounter)"
                action = .rotate(app: app, key: key, old: coin() ? .stopNow : (coin() ? .default : .keep(time(60 * Ms.day))))
                rotations.append((app, key, t))
            } else if isAt, case let .at(t) = schedule, let rot = rotations.first, coin(1, of: 4) {
                // The app's first key is a previous key from the first rotation on.
                let first = s.apps.first { $0.name == rot.app }!.key
                let when = max(t, rot.time)
                s.timeline.append(TimedStatement(schedule: .at(when), body: .action(.stopOldKey(app: rot.app, key: first))))
                continue
            }
            s.timeline.append(TimedStatement(schedule: schedule, body: .action(action)))
        }
        for i in 0..<int(0...2) { s.expectedViolations.append(ExpectedViolation(invariant: "inv-\(i)" + pick(["a", "b"]))) }
        // Pins (issue 22): each a distinct request of one device.
        if coin(1, of: 4) {
            for i in 0..<int(1...3) {
                let g = pick(s.groups)
                s.pins.append(PinDecl(group: g.name, index: int(1...g.count), request: (i + 1) * 7,
                                      fate: pick(RequestFate.allCases)))
            }
        }
        // The async schedule (`schedule seed N`), a third of the time.
        if coin(1, of: 3) { s.schedule = UInt32(int(1...UInt64(UInt32.max))) }
        if coin(1, of: 3) { s.storageLatency = int(1...UInt64(UInt16.max)) }
        return s
    }

    mutating func selector(_ s: ScenarioFile) -> DeviceSelector {
        let g = pick(s.groups)
        switch int(0...4) {
        case 0: return .all
        case 1: return .group(g.name)
        case 2: return .count(int(0...g.count), of: g.name)
        case 3: return .share(share(), of: g.name)
        default: return .device(group: g.name, index: int(1...g.count))
        }
    }

    mutating func expectation(_ s: ScenarioFile) -> Expectation {
        let g = coin(1, of: 5) ? "all" : pick(s.groups).name
        let size = g == "all" ? s.groups.reduce(0) { $0 + $1.count } : s.groups.first { $0.name == g }!.count
        let cmp = pick([Comparison.exactly, .atLeast, .atMost])
        let q: Quantifier
        switch int(0...3) {
        case 0: q = .all
        case 1: q = .none
        case 2: q = .compare(cmp, .count(int(0...size)))
        default: q = .compare(cmp, .share(share()))
        }
        return Expectation(quantifier: q, group: g, state: pick(DeviceStateName.allCases))
    }

    mutating func randomAction(_ s: ScenarioFile) -> Action {
        let app = pick(s.apps).name
        switch int(0...15) {
        case 0, 1: return .person(pick(PersonAction.allCases), selector(s))
        case 2: return .update(selector(s), key: coin() ? nil : "rk_live_Wrong\(int(0...9))")
        case 3: return .addPhotos(int(0...100_000), selector(s))
        case 4: return .fault(Offline(devices: selector(s), forMs: positive(Ms.day)))
        case 5: return .fault(ServerErrors(share: share(), status: UInt16(int(500...599)), forMs: positive(Ms.day)))
        case 6: return .fault(ServerDown(forMs: positive(Ms.day)))
        case 7: return .fault(Timeouts(share: share(), forMs: positive(Ms.day)))
        case 8: return .fault(LostResponses(share: share(), forMs: positive(Ms.day)))
        case 9: return .disable(app: app)
        case 10: return .enable(app: app)
        case 11: return .rollupApp(pick(RollupAppVerb.allCases), app: app)
        case 12: return .rollupAccount(pick(RollupAccountVerb.allCases), account: pick(s.accounts).name)
        case 14: return .fault(SlowResponses(devices: selector(s), byMs: positive(Ms.hour), forMs: positive(Ms.day)))
        default: return .forgetDevice(selector(s))
        }
    }
}
