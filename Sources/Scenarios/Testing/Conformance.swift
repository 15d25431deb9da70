import Foundation
import Invariants
import SimKit
import ScenarioLanguage
import Scenarios

extension SimKitTest {
    /// SimKit's own scenario files, found from where this source file was compiled: the
    /// `scenarios` folder at the root of the SimKit package (a path dependency, or the
    /// checkout SwiftPM keeps under `.build/checkouts`).
    public static var bundledScenarios: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }   // Testing, Scenarios, Sources, the package
        return url.appendingPathComponent("scenarios").path
    }

    /// The conformance kit: runs your core on every hand-written scenario under `scenarios`
    /// that states SDK behaviour (every `*.scenario` file but the `mutant-*` ones, which
    /// expect a named mutant's failures), each with its `sdk` line replaced by your core,
    /// and on fuzz seeds `seeds` as `simkit fuzz --sdk custom:NAME` runs them; then says
    /// which rules the core breaks, one line each (`report.lines`).
    ///
    /// ```swift
    /// @Test func keepsEveryRule() {
    ///     let report = SimKitTest.conformance(MySDK.self)
    ///     #expect(report.passed, "\(report)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: what reproducers and replay commands call it (default: the type's name in kebab case).
    ///   - scenarios: a folder of `.scenario` files (default `bundledScenarios`, SimKit's own).
    /// - Complexity: one simulation per file and per seed; no shrinking.
    public static func conformance<SDK: SDKCore>(_ core: SDK.Type, name: String? = nil, scenarios: String = bundledScenarios,
                                                 seeds: Range<UInt64> = 0..<200, devices: UInt64 = 40,
                                                 duration: SimTime = 90 * Ms.day) -> ConformanceReport {
        let name = name ?? SDKCores.defaultName(for: core)
        return conformance(sdk: .custom(name), server: .reference, cores: SDKCores([name: core]), scenarios: scenarios,
                           seeds: seeds, devices: devices, duration: duration)
    }

    /// The conformance kit for a server core: runs the reference SDK against your server
    /// on every hand-written scenario under `scenarios` that states behaviour (every
    /// `*.scenario` file but the `mutant-*` ones), each with its `server` line replaced by
    /// your core, and on fuzz seeds `seeds` as `simkit fuzz --server custom:NAME` runs them;
    /// then says which rules the server breaks, one line each (`report.lines`). The checkers
    /// judge the server from the trace alone (what it answered, and its records after each
    /// request), so a server that skips an S rule is named by that rule's invariant.
    ///
    /// ```swift
    /// @Test func ourServerKeepsEveryRule() {
    ///     let report = SimKitTest.conformance(server: MyServer.self)
    ///     #expect(report.passed, "\(report)")   // e.g. BROKEN disable-stops-every-key (S4): seed 12, …
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: what reproducers and replay commands call it (default: the type's name in
    ///     kebab case, `MyServer` → `my-server`); the report's `core` is `server custom:NAME`.
    ///   - scenarios: a folder of `.scenario` files (default `bundledScenarios`, SimKit's own).
    /// - Complexity: one simulation per file and per seed; no shrinking.
    public static func conformance<Server: ServerCore>(server: Server.Type, name: String? = nil, scenarios: String = bundledScenarios,
                                                       seeds: Range<UInt64> = 0..<200, devices: UInt64 = 40,
                                                       duration: SimTime = 90 * Ms.day) -> ConformanceReport {
        let name = name ?? ServerCores.defaultName(for: server)
        return conformance(sdk: .reference, server: .custom(name), cores: SDKCores([:], servers: ServerCores([name: server])),
                           scenarios: scenarios, seeds: seeds, devices: devices, duration: duration)
    }

    /// The conformance kit for any pair of cores: every scenario file under `scenarios` but
    /// the `mutant-*` ones, with its `sdk` and `server` lines replaced by `sdk` and `server`,
    /// and fuzz seeds `seeds` run as `simkit fuzz --sdk … --server …` runs them; one finding
    /// per rule broken. Both kits above are this call; use it to check your SDK against
    /// your server, registered in `cores`:
    ///
    /// ```swift
    /// let cores = SDKCores(["mine": MySDK.self], servers: ["backend": MyServer.self])
    /// let report = SimKitTest.conformance(sdk: .custom("mine"), server: .custom("backend"), cores: cores)
    /// ```
    ///
    /// A custom name `cores` does not register is reported as not judged (`problems`),
    /// never a trap. The report's `core` names what ran: `custom:NAME` for an SDK core,
    /// `server custom:NAME` for a server core, both joined by `, ` when both are custom.
    /// - Complexity: one simulation per file and per seed; no shrinking.
    public static func conformance(sdk: SDKChoice, server: ServerChoice, cores: SDKCores, scenarios: String = bundledScenarios,
                                   seeds: Range<UInt64> = 0..<200, devices: UInt64 = 40,
                                   duration: SimTime = 90 * Ms.day) -> ConformanceReport {
        var report = ConformanceReport(core: ConformanceReport.label(sdk: sdk, server: server))
        do { _ = try cores.resolve(sdk: sdk, server: server) } catch {
            report.problems.append("\(error)")
            return report
        }
        var broken: [String: ConformanceReport.Finding] = [:]   // looked up by key; listed sorted, never iterated
        func note(_ key: String, rules: String, place: String, detail: String) {
            if broken[key] == nil { broken[key] = .init(rule: key, rules: rules, places: [], first: detail) }
            if broken[key]!.places.last != place { broken[key]!.places.append(place) }
        }

        let files = (try? FileManager.default.contentsOfDirectory(atPath: scenarios)) ?? []
        let chosen = files.filter { $0.hasSuffix(".scenario") && !$0.hasPrefix("mutant-") }.sorted()
        if chosen.isEmpty { report.problems.append("no scenario files in '\(scenarios)' (pass scenarios: the folder of SimKit's scenarios/)") }
        for file in chosen {
            let path = (scenarios as NSString).appendingPathComponent(file)
            let run: ScenarioRun
            do { run = try SimKitTest.scenario(file: path, sdk: sdk, server: server, cores: cores) } catch {
                report.problems.append("\(file): cannot be run: \("\(error)".split(separator: "\n").first ?? "")")
                continue
            }
            report.scenarioFiles += 1
            let o = run.outcome
            if let f = o.coreFailure {   // a core's own verdict (the server left the protocol, the SDK escaped): nothing was judged
                report.problems.append("\(file): \(f.headline)")
                continue
            }
            for v in o.unexpected {
                let first = o.unexpectedViolations.first { $0.invariant == v }?.headline ?? v.rawValue
                note(v.rawValue, rules: v.rules, place: file, detail: first)
            }
            for e in o.failedExpectations {
                note("expectations of \(file)", rules: ConformanceReport.rules(ofFile: path), place: file, detail: e.message)
            }
            for text in o.unjudgedExpectations { report.problems.append("\(file): \(text)") }
            for missing in o.missingViolations { report.problems.append("\(file): expected violation \(missing) did not happen") }
            if o.verdict == .incomplete { report.problems.append("\(file): INCOMPLETE: \(o.stopReason ?? "stopped early")") }
        }
        for seed in seeds {
            let run = SimKitTest.seed(seed, sdk: sdk, server: server, devices: devices, duration: duration, cores: cores)
            report.seeds += 1
            if let kind = run.result.broken.first, InvariantID(rawValue: kind) == nil {   // a core's own verdict, no invariant's
                report.problems.append("seed \(seed): " + (run.result.firstViolation?.split(separator: "\n").first.map(String.init) ?? kind))
                continue
            }
            for b in run.broken {
                let first = run.violations.first { $0.invariant == b }?.headline ?? b.rawValue
                note(b.rawValue, rules: b.rules, place: "seed \(seed)", detail: first)
            }
            if run.broken.isEmpty, let reason = run.result.stopReason { report.problems.append("seed \(seed): INCOMPLETE: \(reason)") }
        }
        report.findings = broken.keys.sorted().map { broken[$0]! }
        return report
    }
}

/// What `SimKitTest.conformance` found: one finding per rule broken, with where.
public struct ConformanceReport: Sendable, CustomStringConvertible {
    /// One invariant broken (or one file's expectations failed) and every place it happened.
    public struct Finding: Sendable, Equatable {
        /// The invariant's name, or `expectations of FILE`.
        public var rule: String
        /// The SPEC rules it checks (for a file: its `Rules:` comment's rule names).
        public var rules: String
        /// Scenario files and `seed N`, in the order run.
        public var places: [String]
        /// The first violation's headline, or the first failed expectation.
        public var first: String
    }

    /// What ran: `custom:NAME` (an SDK core), `server custom:NAME` (a server core), or
    /// both joined by `, `; `reference` (or `mutant:NAME`) when neither is custom.
    public var core: String
    public var scenarioFiles = 0
    public var seeds = 0
    /// Sorted by rule.
    public var findings: [Finding] = []
    /// What could not be judged: files that did not run, runs that stopped early.
    public var problems: [String] = []

    init(core: String) { self.core = core }

    /// The `core` of a report on `sdk` and `server`.
    static func label(sdk: SDKChoice, server: ServerChoice) -> String {
        switch (sdk, server) {
        case (_, .reference): Fuzz.sdkName(sdk)
        case (.reference, .custom): "server " + ServerCores.name(server)
        default: Fuzz.sdkName(sdk) + ", server " + ServerCores.name(server)
        }
    }

    /// No rule broken and everything judged.
    public var passed: Bool { findings.isEmpty && problems.isEmpty }

    /// One line per rule broken, then one per problem.
    public var lines: [String] {
        findings.map { f in
            let shown = f.places.prefix(5).joined(separator: ", ") + (f.places.count > 5 ? ", and \(f.places.count - 5) more" : "")
            return "BROKEN \(f.rule) (\(f.rules)): \(shown); first: \(f.first)"
        } + problems.map { "NOT JUDGED \($0)" }
    }

    /// A headline and `lines`.
    public var description: String {
        let head = "conformance of \(core): \(scenarioFiles) scenario files, \(seeds) fuzz seeds: "
            + (passed ? "every rule kept" : "\(findings.count) rules broken, \(problems.count) not judged")
        return ([head] + lines).joined(separator: "\n")
    }

    /// The rule names (`S2`, `D4`, …) of a scenario file's `# Rules:` comment, or `see the file`.
    static func rules(ofFile path: String) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("# Rules:") }) else { return "see the file" }
        var names: [String] = []
        for word in line.split(whereSeparator: { !$0.isLetter && !$0.isNumber }) {
            let w = String(word)
            if w.count >= 2, let f = w.first, f == "S" || f == "D", Int(w.dropFirst()) != nil, !names.contains(w) { names.append(w) }
        }
        return names.isEmpty ? "see the file" : names.joined(separator: " ")
    }
}
