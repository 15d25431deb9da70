import SimKit
import ScenarioLanguage

/// Minimises a failing scenario while it still fails the same way, as Hypothesis does:
/// drop statements (delta debugging), fewer devices, drop unused groups, apps and
/// accounts, a shorter duration, simpler schedules and selectors. Every candidate is
/// validated before it is run; the whole search is deterministic and bounded.
///
/// A race (two answers delivered out of order, an answer cut off by a partition) depends
/// on the latencies drawn, and those depend on the seed and on how many devices draw: with
/// one device fewer the same seed rarely draws the race again. So when the plain passes
/// leave a reproducer larger than 12 statements or 3 devices, they run again trying a few
/// neighbouring seeds (`reseeds`) where a removal fails, and from each of those seeds,
/// keeping the smallest. The
/// reproducer's `seed` line says which one it ended with.
package struct Shrinker {
    /// The most candidates run in one shrink.
    package var maxAttempts: Int
    package private(set) var attempts = 0
    let stillFails: (ScenarioFile) -> Bool

    /// Neighbouring seeds tried where a removal fails, and from which a large reproducer
    /// is shrunk again, once the plain passes leave it larger than small.
    package var reseeds: UInt64 = 24
    /// The passes try neighbouring seeds (after a first round without).
    var reseeding = false
    /// A reproducer larger than this (statements or devices) is shrunk again from
    /// neighbouring seeds; at most this size, the shrinker stops there.
    static let smallStatements = 12, smallDevices: UInt64 = 3

    package init(maxAttempts: Int = 1_500, stillFails: @escaping (ScenarioFile) -> Bool) {
        precondition(maxAttempts > 0, "maxAttempts must be positive")
        self.maxAttempts = maxAttempts
        self.stillFails = stillFails
    }

    /// The smallest variant of `scenario` found that still fails.
    package mutating func shrink(_ scenario: ScenarioFile) -> ScenarioFile {
        var best = scenario
        best.expectedViolations = []
        shrinkInPlace(&best)
        // Still large: the race may need that many devices only under this seed. Shrink
        // again, trying neighbouring seeds where a removal fails, and from each of them.
        guard !Shrinker.isSmall(best) else { return best }
        reseeding = true
        shrinkInPlace(&best)
        var k: UInt64 = 1
        while k <= reseeds, attempts < maxAttempts, !Shrinker.isSmall(best) {
            var candidate = best
            candidate.seed = scenario.seed &+ k
            k += 1
            guard attempts < maxAttempts, ScenarioValidator.validate(candidate, context: .init()).isEmpty else { continue }
            attempts += 1
            guard stillFails(candidate) else { continue }
            shrinkInPlace(&candidate)
            if Shrinker.smaller(candidate, than: best) { best = candidate }
        }
        return best
    }

    /// At most 12 statements and 3 devices: small enough to read at a glance.
    package static func isSmall(_ s: ScenarioFile) -> Bool {
        s.statementCount <= smallStatements && s.deviceCount <= smallDevices
    }

    /// Fewer devices first, then fewer statements.
    package static func smaller(_ a: ScenarioFile, than b: ScenarioFile) -> Bool {
        (a.deviceCount, a.statementCount) < (b.deviceCount, b.statementCount)
    }

    /// The passes, repeated until none makes progress (or the attempts run out).
    mutating func shrinkInPlace(_ best: inout ScenarioFile) {
        var progress = true
        while progress, attempts < maxAttempts {
            progress = false
            progress = dropStatements(&best) || progress
            progress = fewerDevices(&best) || progress
            progress = dropDeclarations(&best) || progress
            progress = shorterDuration(&best) || progress
            progress = simplerStatements(&best) || progress
            progress = simplerNetwork(&best) || progress
            progress = simplerSchedule(&best) || progress
            progress = simplerDeclarations(&best) || progress
        }
    }

    /// Accepts `candidate` if it is valid and still fails.
    mutating func accept(_ candidate: ScenarioFile, into best: inout ScenarioFile) -> Bool {
        guard attempts < maxAttempts, candidate != best else { return false }
        guard ScenarioValidator.validate(candidate, context: .init()).isEmpty else { return false }
        attempts += 1
        guard stillFails(candidate) else { return false }
        best = candidate
        return true
    }

    /// Accepts `candidate` as it is or, while the reproducer is not yet small, under one of
    /// the `reseeds` seeds after its own: a statement or device removed shifts the draws
    /// of those after it, and a race it needs is then drawn elsewhere.
    mutating func acceptReseeding(_ candidate: ScenarioFile, into best: inout ScenarioFile) -> Bool {
        if accept(candidate, into: &best) { return true }
        guard reseeding, !Shrinker.isSmall(best) else { return false }
        // Neighbouring seeds may use at most three quarters of the budget, so the other
        // passes (fewer devices, simpler statements) still get their turn.
        let reseedBudget = maxAttempts - maxAttempts / 4
        var k: UInt64 = 1
        while k <= reseeds, attempts < reseedBudget {
            var c = candidate
            c.seed = candidate.seed &+ k
            k += 1
            if accept(c, into: &best) { return true }
        }
        return false
    }

    /// Delta debugging over the timeline: remove chunks, halving their size.
    mutating func dropStatements(_ best: inout ScenarioFile) -> Bool {
        var changed = false
        var chunk = max(1, best.timeline.count / 2)
        while chunk >= 1, attempts < maxAttempts {
            var start = 0
            var removedAny = false
            while start < best.timeline.count, attempts < maxAttempts {
                var candidate = best
                candidate.timeline.removeSubrange(start..<min(start + chunk, candidate.timeline.count))
                if acceptReseeding(candidate, into: &best) { changed = true; removedAny = true } else { start += chunk }
            }
            if !removedAny { chunk /= 2 }
        }
        return changed
    }

    mutating func fewerDevices(_ best: inout ScenarioFile) -> Bool {
        var changed = false
        for g in best.groups.indices where best.groups[g].count > 1 {
            let count = best.groups[g].count
            var targets: [UInt64] = []
            for t in [1, 2, 3, count / 2, count - 1] as [UInt64] where t >= 1 && t < count && !targets.contains(t) { targets.append(t) }
            for target in targets {
                var candidate = best
                candidate.groups[g].count = target
                candidate.timeline = candidate.timeline.map { Shrinker.clampSelectors($0, group: candidate.groups[g]) }
                let shrunk = candidate.groups[g]
                candidate.pins.removeAll { $0.group == shrunk.name && $0.index > shrunk.count }   // their devices are gone
                if acceptReseeding(candidate, into: &best) { changed = true; break }
                // A share of a group that shrank may pick none of its devices: try the
                // fewer devices with that group's shares made the whole group.
                let name = best.groups[g].name
                let whole = candidate.timeline.map { st -> TimedStatement in
                    guard case .action(let a) = st.body else { return st }
                    var v = st
                    v.body = .action(a.mapSelector { sel in if case .share(_, of: name) = sel { return .group(name) } else { return sel } })
                    return v
                }
                guard whole != candidate.timeline else { continue }
                candidate.timeline = whole
                if acceptReseeding(candidate, into: &best) { changed = true; break }
            }
        }
        return changed
    }

    /// Keeps `N of G` and `device G#I` inside a group that shrank.
    static func clampSelectors(_ st: TimedStatement, group: DeviceGroupDecl) -> TimedStatement {
        func clamp(_ sel: DeviceSelector) -> DeviceSelector {
            switch sel {
            case .count(let n, let g) where g == group.name && n > group.count: return .count(group.count, of: g)
            case .device(let g, let i) where g == group.name && i > group.count: return .device(group: g, index: group.count)
            default: return sel
            }
        }
        var s = st
        if case .action(let a) = st.body { s.body = .action(a.mapSelector(clamp)) }
        return s
    }

    /// Drops pins (all may go), then groups, apps and accounts, last first, keeping at
    /// least one of each of those.
    mutating func dropDeclarations(_ best: inout ScenarioFile) -> Bool {
        var pins = false
        var i = best.pins.count - 1
        while i >= 0, attempts < maxAttempts {
            var candidate = best
            candidate.pins.remove(at: i)
            if accept(candidate, into: &best) { pins = true }
            i -= 1
        }
        // A group removed shifts the draws of the devices after it, as a removed device
        // does in `fewerDevices`: try neighbouring seeds there too.
        let groups = dropEach(\.groups, tryingSeeds: true, &best)
        let apps = dropEach(\.apps, &best)
        let accounts = dropEach(\.accounts, &best)
        return pins || groups || apps || accounts
    }

    /// Tries removing each element of one declaration list, last first; with `tryingSeeds`,
    /// under neighbouring seeds too (see `acceptReseeding`).
    mutating func dropEach<T>(_ list: WritableKeyPath<ScenarioFile, [T]>, tryingSeeds: Bool = false, _ best: inout ScenarioFile) -> Bool {
        var changed = false
        var i = best[keyPath: list].count - 1
        while i >= 0, best[keyPath: list].count > 1, attempts < maxAttempts {
            var candidate = best
            candidate[keyPath: list].remove(at: i)
            if tryingSeeds ? acceptReseeding(candidate, into: &best) : accept(candidate, into: &best) { changed = true }
            i -= 1
        }
        return changed
    }

    mutating func shorterDuration(_ best: inout ScenarioFile) -> Bool {
        let latest = best.timeline.map { st -> SimTime in
            switch st.schedule {
            case .at(let t): return t
            case .every(let r): return max(r.firstFiring, r.until ?? 0)
            }
        }.max() ?? 0
        var changed = false
        for target in [latest + Ms.hour, latest + Ms.day, (best.duration + latest) / 2] where target < best.duration {
            var candidate = best
            candidate.duration = max(target, Ms.hour)
            if accept(candidate, into: &best) { changed = true; break }
        }
        return changed
    }

    /// `every` → `at` its first firing; no jitter; shares → the whole group or one device.
    mutating func simplerStatements(_ best: inout ScenarioFile) -> Bool {
        var changed = false
        var i = 0
        while i < best.timeline.count, attempts < maxAttempts {
            let st = best.timeline[i]
            var variants: [TimedStatement] = []
            if case .every(let r) = st.schedule {
                variants.append(TimedStatement(schedule: .at(r.firstFiring), body: st.body))
                if r.jitter != nil { var v = st; v.schedule = .every(Repeat(period: r.period, from: r.from, until: r.until)); variants.append(v) }
            }
            if case .action(let a) = st.body {
                for simpler in a.simplerSelectors() { var v = st; v.body = .action(simpler); variants.append(v) }
            }
            for v in variants {
                var candidate = best
                candidate.timeline[i] = v
                if accept(candidate, into: &best) { changed = true; break }
            }
            i += 1
        }
        return changed
    }

    /// An unapproved account approved, a pending app approved: the statements that only
    /// approve them can then go too.
    mutating func simplerDeclarations(_ best: inout ScenarioFile) -> Bool {
        var changed = false
        for i in best.accounts.indices where !best.accounts[i].approved {
            var candidate = best
            candidate.accounts[i].approved = true
            changed = accept(candidate, into: &best) || changed
        }
        for i in best.apps.indices where best.apps[i].pending {
            var candidate = best
            candidate.apps[i].pending = false
            changed = accept(candidate, into: &best) || changed
        }
        // A group's own link gone: the network's range for it too.
        for g in best.groups.indices where best.groups[g].latency != nil {
            var candidate = best
            candidate.groups[g].latency = nil
            changed = accept(candidate, into: &best) || changed
        }
        return changed
    }

    /// FIFO when the failure does not need the drawn order of an async step's jobs, and
    /// writes that take no time when it does not need slow storage.
    mutating func simplerSchedule(_ best: inout ScenarioFile) -> Bool {
        var changed = false
        if best.schedule != 0 {
            var candidate = best
            candidate.schedule = 0
            changed = accept(candidate, into: &best)
        }
        if best.storageLatency != 0 {
            var candidate = best
            candidate.storageLatency = 0
            changed = accept(candidate, into: &best) || changed
        }
        return changed
    }

    mutating func simplerNetwork(_ best: inout ScenarioFile) -> Bool {
        guard best.network != NetworkDecl() else { return false }
        var candidate = best
        candidate.network = NetworkDecl()
        return accept(candidate, into: &best)
    }
}

extension Action {
    /// The same action with its device selector rewritten by `f`.
    func mapSelector(_ f: (DeviceSelector) -> DeviceSelector) -> Action {
        switch self {
        case .person(let p, let sel): return .person(p, f(sel))
        case .update(let sel, let key): return .update(f(sel), key: key)
        case .addPhotos(let n, let sel): return .addPhotos(n, f(sel))
        case .forgetDevice(let sel): return .forgetDevice(f(sel))
        case .fault(let fault):
            guard let sel = fault.base.selectedDevices else { return self }
            return .fault(AnyFaultStatement(fault.base.selecting(f(sel))))
        default: return self
        }
    }

    /// Simpler forms of this action's selector, simplest first.
    func simplerSelectors() -> [Action] {
        var out: [Action] = []
        func add(_ sel: DeviceSelector) { let a = mapSelector { _ in sel }; if a != self { out.append(a) } }
        switch selector {
        case .share(_, let g)?, .count(_, let g)?:
            add(.group(g)); add(.device(group: g, index: 1))
        case .group(let g)?: add(.device(group: g, index: 1))
        default: break
        }
        return out
    }

    var selector: DeviceSelector? {
        switch self {
        case .person(_, let s), .update(let s, _), .addPhotos(_, let s), .forgetDevice(let s): return s
        case .fault(let f): return f.base.selectedDevices
        default: return nil
        }
    }
}
