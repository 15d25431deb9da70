import SimKit
import ScenarioLanguage
import Scenarios

/// Grammar-aware hostile scenario files: every statement form of the language, with each
/// numeric field set to 0, 1, its bound − 1, its bound, its bound + 1 or `UInt64.max`.
/// Each file must give a located error or a run that ends: no input traps.
///
/// File `index` is a pure function of the index. The first `HostileInputs.slots.count × 6`
/// files change one field of a small valid file at a time; later files give one to four
/// fields, drawn from the index, special values and keep each statement with
/// probability one half. Used by `ScenariosTests` and by `scripts/hostile-inputs.sh`
/// (through the hidden `simkit hostile-inputs`).
@usableFromInline package enum HostileInputs {
    /// What a numeric field holds, which decides its bound.
    enum Field: CaseIterable {
        case seed, duration, latency, timeout, devices, clones, time, period, jitter, forMs, keepOld
        case photos, count, share, status, index, scheduleSeed, storageLatency
    }

    /// One numeric place in the template: its field and the small value it has by default.
    struct Slot {
        var field: Field
        var normal: UInt64
    }

    /// The template, a line each; `{k}` is slot k (in `slots`). Durations are written in
    /// milliseconds so every value can be spelled.
    static let template: [(line: String, slots: [Slot])] = {
        let t = Slot(field: .time, normal: Ms.hour)
        let f = Slot(field: .forMs, normal: 2 * Ms.hour)
        return [
            ("scenario \"hostile\"", []),
            ("seed {}", [Slot(field: .seed, normal: 7)]),
            ("duration {}ms", [Slot(field: .duration, normal: 2 * Ms.day)]),
            ("network latency {}ms..{}ms timeout {}ms",
             [Slot(field: .latency, normal: 20), Slot(field: .latency, normal: 800), Slot(field: .timeout, normal: 30 * Ms.second)]),
            ("account acme", []),
            ("app photos account acme key rk_live_A", []),
            ("devices {} app photos", [Slot(field: .devices, normal: 4)]),
            ("clones {} app photos", [Slot(field: .clones, normal: 1)]),
            ("at {}ms launch all", [Slot(field: .time, normal: 0)]),
            ("every {}ms jitter {}ms from {}ms until {}ms open 50% of photos",
             [Slot(field: .period, normal: 6 * Ms.hour), Slot(field: .jitter, normal: Ms.hour), t, Slot(field: .time, normal: 2 * Ms.day)]),
            ("every {}ms close all", [Slot(field: .period, normal: 7 * Ms.hour)]),
            ("every {}ms jitter {}ms background all", [Slot(field: .period, normal: Ms.day), Slot(field: .jitter, normal: 3 * Ms.hour)]),
            ("at {}ms add-photos {} all", [t, Slot(field: .photos, normal: 50)]),
            ("at {}ms offline {} of photos for {}ms", [t, Slot(field: .count, normal: 2), f]),
            ("at {}ms server errors {}% status {} for {}ms", [t, Slot(field: .share, normal: 50), Slot(field: .status, normal: 503), f]),
            ("at {}ms server down for {}ms", [t, f]),
            ("at {}ms timeouts {}% for {}ms", [t, Slot(field: .share, normal: 30), f]),
            ("at {}ms lost-responses {}% for {}ms", [t, Slot(field: .share, normal: 30), f]),
            ("at {}ms slow-responses device photos#{} by {}ms for {}ms",
             [t, Slot(field: .index, normal: 2), Slot(field: .latency, normal: 10 * Ms.second), f]),
            ("at {}ms portal device photos#{} answers 403 for {}ms", [t, Slot(field: .index, normal: 3), f]),
            ("at {}ms clock device photos#{} back {}ms", [t, Slot(field: .index, normal: 1), f]),
            ("at {}ms background-limit device photos#{} {}ms for {}ms", [t, Slot(field: .index, normal: 1), Slot(field: .latency, normal: 30 * Ms.second), f]),
            ("at {}ms disk-full device photos#{} for {}ms", [t, Slot(field: .index, normal: 2), f]),
            ("at {}ms reboot device photos#{} unlock-after {}ms", [t, Slot(field: .index, normal: 3), f]),
            ("at {}ms kill device photos#{} at-write {}", [t, Slot(field: .index, normal: 1), Slot(field: .count, normal: 2)]),
            ("at {}ms search device photos#{}", [t, Slot(field: .index, normal: 1)]),
            ("at {}ms query {} of all", [t, Slot(field: .count, normal: 1)]),
            ("at {}ms profile photos-clones", [t]),
            ("at {}ms rotate photos key rk_live_B keep-old {}ms", [Slot(field: .time, normal: 3 * Ms.hour), Slot(field: .keepOld, normal: Ms.day)]),
            ("at {}ms stop-old-key photos rk_live_A", [Slot(field: .time, normal: 4 * Ms.hour)]),
            ("at {}ms update {}% of photos", [t, Slot(field: .share, normal: 50)]),
            ("at {}ms update device photos#{} key rk_live_C", [t, Slot(field: .index, normal: 2)]),
            ("at {}ms disable photos", [Slot(field: .time, normal: 5 * Ms.hour)]),
            ("at {}ms enable photos", [Slot(field: .time, normal: 6 * Ms.hour)]),
            ("at {}ms rollup revoke photos", [Slot(field: .time, normal: 7 * Ms.hour)]),
            ("at {}ms rollup restore photos", [Slot(field: .time, normal: 8 * Ms.hour)]),
            ("at {}ms rollup revoke-account acme", [Slot(field: .time, normal: 9 * Ms.hour)]),
            ("at {}ms rollup restore-account acme", [Slot(field: .time, normal: 10 * Ms.hour)]),
            ("at {}ms revoke-photos {} of photos", [t, Slot(field: .count, normal: 1)]),
            ("at {}ms grant-photos all", [Slot(field: .time, normal: 11 * Ms.hour)]),
            ("at {}ms reset device photos#{}", [t, Slot(field: .index, normal: 3)]),
            ("at {}ms forget-device {}% of all", [t, Slot(field: .share, normal: 10)]),
            ("at {}ms expect {} photos idle", [Slot(field: .time, normal: Ms.day), Slot(field: .count, normal: 4)]),
            ("at {}ms expect >={}% all idle", [Slot(field: .time, normal: Ms.day), Slot(field: .share, normal: 0)]),
            ("pin device photos#{} request {} late", [Slot(field: .index, normal: 1), Slot(field: .count, normal: 3)]),
            ("expect violation never-lock-on-transient", []),
            ("sdk reference", []),
            ("server reference", []),
            ("schedule seed {}", [Slot(field: .scheduleSeed, normal: 3)]),
            ("storage latency {}ms", [Slot(field: .storageLatency, normal: 20)]),
        ]
    }()

    /// Every numeric place, in template order: (line, place in the line).
    static let slots: [(line: Int, place: Int)] = template.indices.flatMap { l in template[l].slots.indices.map { (l, $0) } }

    /// The bound of a field, given the file's duration and device count.
    static func bound(_ field: Field, duration: UInt64, devices: UInt64) -> UInt64 {
        switch field {
        case .seed: return .max
        case .duration, .period, .jitter, .forMs, .keepOld: return ScenarioLimits.maxDuration
        case .latency: return ScenarioLimits.maxLatencyMs
        case .timeout: return ScenarioLimits.maxTimeoutMs
        case .devices, .clones: return ScenarioLimits.maxDevices
        case .time: return min(duration, ScenarioLimits.maxDuration)
        case .photos: return ScenarioLimits.maxPhotosPerAdd
        case .count, .index: return devices
        case .share: return 100
        case .status: return 599
        case .scheduleSeed: return UInt64(UInt32.max)
        case .storageLatency: return UInt64(UInt16.max)
        }
    }

    /// The six special values of a field with bound `b`, as source text (b + 1 may exceed `UInt64.max`).
    static func special(_ k: Int, bound b: UInt64) -> String {
        switch k {
        case 0: return "0"
        case 1: return "1"
        case 2: return String(b == 0 ? 0 : b - 1)
        case 3: return String(b)
        case 4: return b == .max ? "18446744073709551616" : String(b + 1)
        default: return String(UInt64.max)
        }
    }

    /// How many files change one field at a time; later indexes are random mixes.
    @usableFromInline package static var singleFieldFiles: Int { slots.count * 6 }

    /// The text of file `index`.
    @usableFromInline package static func file(_ index: UInt64) -> String {
        var values: [[String]] = template.map { $0.slots.map { String($0.normal) } }
        var keep = [Bool](repeating: true, count: template.count)
        let normalDuration = template[2].slots[0].normal
        if index < UInt64(singleFieldFiles) {
            let (slot, k) = (Int(index) / 6, Int(index) % 6)
            let (l, p) = slots[slot]
            values[l][p] = special(k, bound: bound(template[l].slots[p].field, duration: normalDuration, devices: 4))
        } else {
            var r = SimRandom(seed: 0x4057_11E5).fork(index)
            for l in template.indices where l >= 8 { keep[l] = r.chance(1, outOf: 2) }
            // Durations and device counts first: the other bounds depend on them.
            let order = slots.indices.sorted { rank(slots[$0]) < rank(slots[$1]) }
            var duration = normalDuration, devices: UInt64 = 5
            // One to four fields get special values: with more, nearly every file is an error.
            var chosen = [Bool](repeating: false, count: slots.count)
            for _ in 0..<r.int(in: 1...4) { chosen[Int(r.below(UInt64(slots.count)))] = true }
            for s in order {
                let (l, p) = slots[s]
                let field = template[l].slots[p].field
                guard chosen[s] else { continue }
                let text = special(Int(r.below(6)), bound: bound(field, duration: duration, devices: devices))
                values[l][p] = text
                if field == .duration { duration = UInt64(text) ?? .max }
                if field == .devices || field == .clones {
                    let devicesText = field == .devices ? text : values[6][0], clonesText = field == .clones ? text : values[7][0]
                    let (sum, o) = (UInt64(devicesText) ?? .max).addingReportingOverflow(UInt64(clonesText) ?? .max)
                    devices = o ? .max : sum
                }
            }
        }
        var out = ""
        for l in template.indices where keep[l] {
            var line = template[l].line
            for v in values[l] {
                guard let r = line.range(of: "{}") else { break }
                line.replaceSubrange(r, with: v)
            }
            out += line + "\n"
        }
        return out
    }

    /// Durations, then device counts, then the rest, so bounds are drawn from final values.
    static func rank(_ s: (line: Int, place: Int)) -> Int {
        switch template[s.line].slots[s.place].field {
        case .duration: 0
        case .devices, .clones: 1
        default: 2
        }
    }

    /// What one file came to.
    @usableFromInline package enum Outcome: String, Sendable, CaseIterable {
        /// A located error (`FILE:LINE:COL: error: …`): nothing ran.
        case error
        /// An error without a usable location: a bug in the front end.
        case unlocatedError
        /// The run passed, failed or stopped early: it ended either way.
        case passed, failed, incomplete
        /// Valid, but with more devices than `runDevicesMax`: compiled, not run.
        case tooLargeToRun
    }

    /// Parses file `text` and, when valid with at most `runDevicesMax` devices, runs it
    /// with an event budget of `eventBudget` (so no run can hang).
    @usableFromInline package static func check(_ text: String, file: String = "hostile.scenario", eventBudget: UInt64 = 20_000,
                             runDevicesMax: UInt64 = 10_000) -> Outcome {
        var runner = ScenarioRunner()
        runner.eventBudget = eventBudget
        let parsed = ScenarioParser.parse(text, file: file, context: runner.context)
        guard let scenario = parsed.scenario, !parsed.hasErrors else {
            let located = parsed.diagnostics.contains { $0.severity == .error && $0.location.line >= 1 && $0.location.column >= 1 }
            return located && parsed.rendered.contains("\(file):") ? .error : .unlocatedError
        }
        if scenario.groups.reduce(0, { $0 + $1.count }) > runDevicesMax {
            return (try? ScenarioCompiler.compile(scenario)) == nil ? .unlocatedError : .tooLargeToRun
        }
        switch runner.run(scenario: scenario, file: file).verdict {
        case .passed: return .passed
        case .failed: return .failed
        case .incomplete: return .incomplete
        case .badInput: return .unlocatedError
        }
    }
}
