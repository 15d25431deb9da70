import SimKit
import ScenarioLanguage

/// Changes a scenario a little, for coverage-guided fuzzing: moves a statement onto a
/// boundary counted from another (24 h, 29 and 30 days, a key's grace deadline, ± 1 ms,
/// 1 s, 1 min or 1 h), nudges a time, duplicates or drops a statement, changes a
/// selector, a fault's length or share, an old key's grace, pins the network's latency or a
/// request's fate (an answer held past the next verdict, `overtaken`),
/// or splices in statements of a second scenario. One to three changes a call. The result
/// may not compile (a splice that names a group the first does not declare): the caller
/// checks and falls back to a fresh scenario.
package struct ScenarioMutator {
    var r: SimRandom

    package init(random: SimRandom) { r = random }

    static let deltas: [Int64] = [-Int64(Ms.hour), -Int64(Ms.minute), -Int64(Ms.second), -1, 0, 1,
                                  Int64(Ms.second), Int64(Ms.minute), Int64(Ms.hour)]
    static let nudges: [Int64] = [-Int64(Ms.day), -Int64(Ms.hour), -Int64(Ms.minute), -Int64(Ms.second), -1,
                                  1, Int64(Ms.second), Int64(Ms.minute), Int64(Ms.hour), Int64(Ms.day)]
    /// Boundaries counted from an anchor statement: at it, 24 h (D1), 29 and 30 days (D5).
    static let spans: [SimTime] = [0, 0, Ms.day, 29 * Ms.day, 30 * Ms.day, 30 * Ms.day]

    package mutating func mutate(_ input: ScenarioFile, donor: ScenarioFile?) -> ScenarioFile {
        var s = input
        for _ in 0..<(1 + r.below(3)) { step(&s, donor: donor) }
        for i in s.timeline.indices {
            if case .at(let t) = s.timeline[i].schedule, t > s.duration { s.timeline[i].schedule = .at(s.duration) }
        }
        return s
    }

    /// Another order for an async step's ready jobs (`schedule seed N`), or back to FIFO
    /// one time in four; or, one time in three, another storage latency (or none).
    mutating func reschedule(_ s: inout ScenarioFile) {
        if r.chance(1, outOf: 3) {
            let choices = [0] + ScenarioGenerator.storageLatencies
            s.storageLatency = choices[Int(r.below(UInt64(choices.count)))]
        } else {
            s.schedule = r.chance(1, outOf: 4) ? 0 : UInt32(1 + r.below(UInt64(UInt32.max)))
        }
    }

    mutating func step(_ s: inout ScenarioFile, donor: ScenarioFile?) {
        let ats = s.timeline.indices.filter { if case .at = s.timeline[$0].schedule { true } else { false } }
        switch r.below(10) {
        case 0, 1:
            // Aim: onto a boundary counted from another statement (or a grace deadline).
            guard let i = pick(ats), let j = pick(ats) else { return }
            let anchor = time(of: s.timeline[j]) ?? 0
            var base = anchor + Self.spans[Int(r.below(UInt64(Self.spans.count)))]
            if case .action(.rotate(_, _, .keep(let grace))) = s.timeline[j].body, r.chance(1, outOf: 2) { base = anchor + grace }
            s.timeline[i].schedule = .at(shifted(base, Self.deltas[Int(r.below(UInt64(Self.deltas.count)))]))
        case 2:
            guard let i = pick(ats), let t = time(of: s.timeline[i]) else { return }
            s.timeline[i].schedule = .at(shifted(t, Self.nudges[Int(r.below(UInt64(Self.nudges.count)))]))
        case 3:
            guard let i = pick(Array(s.timeline.indices)) else { return }
            var copy = s.timeline[i]
            if let t = time(of: copy) { copy.schedule = .at(shifted(t, Self.deltas[Int(r.below(UInt64(Self.deltas.count)))])) }
            s.timeline.insert(copy, at: i + 1)
        case 4:
            guard s.timeline.count > 1, let i = pick(Array(s.timeline.indices)) else { return }
            s.timeline.remove(at: i)
        case 5:
            guard let i = pick(Array(s.timeline.indices)), case .action(let a) = s.timeline[i].body else { return }
            s.timeline[i].body = .action(changed(a, in: s))
        case 6:
            switch r.below(3) {
            case 0: s.network.latencyMax = s.network.latencyMin
            case 1: s.network.timeout = [Ms.second, 5 * Ms.second, 30 * Ms.second][Int(r.below(3))]
            default:
                // An answer aimed, or another order of an async step's ready jobs.
                if r.chance(3, outOf: 4) { aimAnswer(&s) } else { reschedule(&s) }
            }
        case 7, 8:
            // Splice: this scenario's statements before a moment, the donor's after it.
            guard let donor, !donor.timeline.isEmpty else { return }
            let cut = r.below(max(1, s.duration))
            let mine = s.timeline.filter { (time(of: $0) ?? 0) < cut }
            let theirs = donor.timeline.filter { (time(of: $0) ?? 0) >= cut && (time(of: $0) ?? 0) <= s.duration }
            s.timeline = mine + theirs
        default:
            // Insert one of the donor's statements.
            guard let donor, let j = pick(Array(donor.timeline.indices)) else { return }
            s.timeline.insert(donor.timeline[j], at: Int(r.below(UInt64(s.timeline.count + 1))))
        }
    }

    /// An answer aimed (`ScenarioGenerator.aimAnswers`): a new pin on one of the first
    /// devices of a genuine group, most often holding an answer past the device's next
    /// verdict (`overtaken`), or another fate for a pin already there.
    mutating func aimAnswer(_ s: inout ScenarioFile) {
        if !s.pins.isEmpty, r.chance(1, outOf: 2), let i = pick(Array(s.pins.indices)) {
            s.pins[i].fate = RequestFate.allCases[Int(r.below(UInt64(RequestFate.allCases.count)))]
            return
        }
        guard let group = s.groups.first(where: { $0.kind == .devices && $0.count > 0 }) else { return }
        let index = 1 + r.below(min(group.count, 3))
        let request = 1 + r.below(40)
        s.pins.removeAll { $0.group == group.name && $0.index == index && $0.request == request }
        let fate = ScenarioGenerator.aimedFates[Int(r.below(UInt64(ScenarioGenerator.aimedFates.count)))]
        s.pins.append(PinDecl(group: group.name, index: index, request: request, fate: fate))
    }

    /// The action with one of its parameters changed: a selector, a fault's length or share,
    /// a status code, an old key's grace.
    mutating func changed(_ a: Action, in s: ScenarioFile) -> Action {
        let lengths: [SimTime] = [Ms.second, Ms.minute, Ms.hour, Ms.day, 30 * Ms.day]
        let length = lengths[Int(r.below(UInt64(lengths.count)))]
        let share = Share(percent: [1, 10, 50, 100][Int(r.below(4))])
        switch a {
        case .person(let p, _): return .person(p, selector(s))
        case .update(_, let key): return .update(selector(s), key: key)
        case .addPhotos(let n, _): return .addPhotos(n, selector(s))
        case .fault(let f):
            // Each kind says which of its parameters change (`FaultKind.mutated`).
            var change = FaultChange(r: r, scenario: s, lengthMs: length, share: share)
            let changed = f.base.mutated(&change)
            r = change.r
            return .fault(AnyFaultStatement(changed))
        case .rotate(let app, let key, _):
            let graces: [SimTime] = [Ms.second, Ms.hour, Ms.day, 30 * Ms.day]
            return .rotate(app: app, key: key, old: r.chance(1, outOf: 4) ? .stopNow : .keep(graces[Int(r.below(UInt64(graces.count)))]))
        case .forgetDevice: return .forgetDevice(selector(s))
        default: return a
        }
    }

    mutating func selector(_ s: ScenarioFile) -> DeviceSelector { Self.selector(in: s, &r) }

    /// Some devices of `s`'s first group of genuine devices, drawn from `r`.
    static func selector(in s: ScenarioFile, _ r: inout SimRandom) -> DeviceSelector {
        guard let group = s.groups.first(where: { $0.kind == .devices }) else { return .all }
        switch r.below(4) {
        case 0: return .all
        case 1: return .group(group.name)
        case 2: return .share(Share(percent: [10, 50, 90][Int(r.below(3))]), of: group.name)
        default: return .device(group: group.name, index: 1 + r.below(max(1, group.count)))
        }
    }

    mutating func pick(_ indices: [Int]) -> Int? {
        indices.isEmpty ? nil : indices[Int(r.below(UInt64(indices.count)))]
    }

    func time(of statement: TimedStatement) -> SimTime? {
        if case .at(let t) = statement.schedule { return t }
        return nil
    }

    func shifted(_ t: SimTime, _ d: Int64) -> SimTime { d < 0 ? t - min(t, SimTime(-d)) : t.saturatingAdd(SimTime(d)) }
}

/// What a fault statement's change draws from (`FaultKind.mutated`): the mutator's stream,
/// and the length and share it drew for this change.
struct FaultChange: FaultMutations {
    var r: SimRandom
    let scenario: ScenarioFile
    let lengthMs: SimTime
    let share: Share
    mutating func below(_ n: UInt64) -> UInt64 { r.below(n) }
    mutating func chance(_ k: UInt64, outOf n: UInt64) -> Bool { r.chance(k, outOf: n) }
    mutating func someDevices() -> DeviceSelector { ScenarioMutator.selector(in: scenario, &r) }
}
