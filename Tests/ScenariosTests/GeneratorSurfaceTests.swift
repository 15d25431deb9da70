import Testing
import SimKit
import Invariants
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch

/// The statement forms of the scenario language (SPEC §4), as the generator must produce
/// them: every declaration, schedule, action, selector and app or account target. A form
/// the generator never writes is a part of the product fuzzing never tries.
enum LanguageForms {
    /// Every form, by name. Expectations (`expect …`, `expect violation`) are not world
    /// inputs: fuzzing judges runs by the invariants, and `simkit run` judges expectations.
    static let all: [String] = [
        "account", "account unapproved", "app", "app pending", "second app", "devices", "devices as NAME",
        "clones", "clones copying", "network latency", "network latency for GROUP", "network timeout 5s",
        "at", "every", "every jitter", "every from", "every until",
        "launch", "open", "close", "background", "search", "query", "profile", "reset",
        "revoke-photos", "grant-photos", "add-photos", "update", "update key",
        "offline", "server errors 500", "server errors 502", "server errors 503", "server errors 504",
        "server down", "timeouts", "lost-responses", "slow-responses", "server restart", "server restart for D",
        "portal", "portal answers",
        "server down", "timeouts", "lost-responses", "slow-responses", "server restart", "server restart for D", "clock", "background-limit", "disk-full", "reboot",
        "rotate stop-old now", "rotate keep-old", "stop-old-key", "disable", "enable",
        "rollup approve", "rollup reject", "rollup revoke", "rollup restore",
        "rollup approve-account", "rollup revoke-account", "rollup restore-account", "forget-device",
        "selector all", "selector GROUP", "selector N of GROUP", "selector N% of GROUP", "selector device GROUP#I",
        "rotate second app", "disable second app", "enable second app", "rollup second app", "rollup second account",
        "stop-old-key second app",
    ]

    /// The forms `s` uses.
    static func forms(of s: ScenarioFile) -> Set<String> {
        var f: Set<String> = []
        let firstApp = s.apps.first?.name, firstAccount = s.accounts.first?.name
        for a in s.accounts { f.insert(a.approved ? "account" : "account unapproved") }
        for a in s.apps { f.insert(a.pending ? "app pending" : "app") }
        if s.apps.count > 1 { f.insert("second app") }
        for g in s.groups {
            f.insert(g.kind == .devices ? "devices" : "clones")
            if g.name != DeviceGroupDecl.defaultName(kind: g.kind, app: g.app) { f.insert("devices as NAME") }
            if g.copying != nil { f.insert("clones copying") }
            if g.latency != nil { f.insert("network latency for GROUP") }
        }
        f.insert("network latency")
        if s.network.timeout == 5 * Ms.second { f.insert("network timeout 5s") }
        func selector(_ sel: DeviceSelector) {
            switch sel {
            case .all: f.insert("selector all")
            case .group: f.insert("selector GROUP")
            case .count: f.insert("selector N of GROUP")
            case .share: f.insert("selector N% of GROUP")
            case .device: f.insert("selector device GROUP#I")
            }
        }
        for st in s.timeline {
            switch st.schedule {
            case .at: f.insert("at")
            case .every(let r):
                f.insert("every")
                if r.jitter != nil { f.insert("every jitter") }
                if r.from != nil { f.insert("every from") }
                if r.until != nil { f.insert("every until") }
            }
            guard case .action(let a) = st.body else { continue }
            switch a {
            case .person(let p, let sel): f.insert(p.rawValue); selector(sel)
            case .update(let sel, let key): f.insert(key == nil ? "update" : "update key"); selector(sel)
            case .addPhotos(_, let sel): f.insert("add-photos"); selector(sel)
            case .fault(let fault):
                if let e = fault.base as? ServerErrors { f.insert("server errors \(e.status)") }
                else if let r = fault.base as? ServerRestart { f.insert(r.forMs == ServerRestart.defaultForMs ? "server restart" : "server restart for D") }
                else if let p = fault.base as? Portal { f.insert(p.answers == nil ? "portal" : "portal answers") }
                else { f.insert(type(of: fault.base).keyword.joined(separator: " ")) }
                if let sel = fault.base.selectedDevices { selector(sel) }
            case .rotate(let app, _, let old):
                f.insert(old == .stopNow ? "rotate stop-old now" : "rotate keep-old")
                if app != firstApp { f.insert("rotate second app") }
            case .stopOldKey(let app, _): f.insert("stop-old-key"); if app != firstApp { f.insert("stop-old-key second app") }
            case .disable(let app): f.insert("disable"); if app != firstApp { f.insert("disable second app") }
            case .enable(let app): f.insert("enable"); if app != firstApp { f.insert("enable second app") }
            case .rollupApp(let v, let app): f.insert("rollup \(v.rawValue)"); if app != firstApp { f.insert("rollup second app") }
            case .rollupAccount(let v, let acc): f.insert("rollup \(v.rawValue)"); if acc != firstAccount { f.insert("rollup second account") }
            case .forgetDevice(let sel): f.insert("forget-device"); selector(sel)
            }
        }
        return f
    }
}

@Suite("The generator covers the language")
struct GeneratorSurfaceTests {
    @Test("every statement form of the scenario language is produced within 5,000 seeds, and every one printed parses back")
    func everyFormIsGenerated() {
        var seen: Set<String> = []
        for seed in 0..<5_000 as Range<UInt64> {
            let s = ScenarioGenerator.generate(seed: seed, options: .init())
            let forms = LanguageForms.forms(of: s)
            #expect(forms.isSubset(of: Set(LanguageForms.all)), "seed \(seed): unknown forms \(forms.subtracting(LanguageForms.all))")
            if !forms.isSubset(of: seen) {
                #expect(GuidedFuzz.isValidFile(s, cores: SDKCores()), "seed \(seed) does not print as a valid file")
                seen.formUnion(forms)
            }
        }
        let missing = LanguageForms.all.filter { !seen.contains($0) }
        #expect(missing.isEmpty, "never generated in 5,000 seeds: \(missing.joined(separator: ", "))")
    }
}
