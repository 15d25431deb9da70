import Foundation
import Synchronization
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch
import SimKitTesting
import ServerWire

/// `simkit conformance --server S`: a server's S rules, checked in seconds. It runs
/// SimKit's hand-written scenarios (rule by rule: each names its rules) and a short fuzz
/// campaign against the server, and names each S rule broken, with where and how to
/// replay it: what a long campaign would teach, in a fraction of its time.
enum ConformanceCommand {
    static let help = """
    usage: simkit conformance --server process:CMD|http://HOST:PORT[/PATH] [options]

    Checks a server against the S rules (docs/server-protocol.md) with the reference SDK:
    every scenario file of SimKit's scenarios/ folder but the mutant-* ones, each with its
    server line replaced (each names the rules it checks in its '# Rules:' line), then a
    short fuzz campaign. It prints the rules one a line, kept or BROKEN, then for each rule
    broken the invariant that caught it, the first place (a file or a seed) with its
    violation, and the command that replays it. A server that leaves the protocol (a reply
    out of it, no reply in time, a process that exits) is reported with its evidence:
    the message, what came back, the server's last error on standard error and a file of
    the messages that led there, to pipe into the server again.

    options:
      --server S         the server: process:CMD, http://HOST:PORT[/PATH], custom:NAME (a
                         server core the tool registers) or reference
      --seeds N          fuzz seeds of the campaign (default 200; 0: the scenarios only)
      --devices N        at most N devices per group in the campaign (default 40)
      --duration D       at most this long a campaign's scenario (default 90d)
      --scenarios DIR    the scenario files (default: SimKit's own scenarios/ folder)
      --jobs J           parallel runs, each on a server process (or HTTP connection) of its own
                         (default: all cores)
      --out DIR          where a failing server's messages are written (default simkit-out)

    exit codes: 0 every rule kept and everything judged, 1 a rule broken or the server left
    the protocol, 2 bad input, 3 nothing broken but a run did not finish

    """

    /// The S rules as a server must apply them, one line each (SPEC §1.1).
    static let sRules: [(name: String, text: String)] = [
        ("S1", "the key is checked on every request, with no caching"),
        ("S2", "the first rule that applies (key, app, pending, device, app of the device); servedAt; a sound and tight stoppedSince"),
        ("S3", "a rotated-out key works until its own grace deadline and not a millisecond after, or stops when stopped"),
        ("S4", "a disabled app is refused with every key; enabling restores it unless Rollup revoked or rejected it"),
        ("S5", "only Rollup lifts what Rollup did; a restore returns to the state before the revocation"),
        ("S6", "App Attest: a clone is refused attestation_failed and never served; a device belongs to the app that registered it"),
        ("S7", "query, profile, place data and model downloads are served only when S2 serves the request"),
        ("S8", "a reset deletes the record its credential names, whatever the key's state, and is answered 200"),
        ("S9", "faults never change the server's state; a request whose answer was lost did"),
        ("S10", "a restart loses nothing acknowledged: dashboard and Rollup actions, registrations and resets answered 200, the start of every stop"),
    ]

    /// One invariant (or one file's expectations) broken, and everywhere it was.
    struct Finding {
        var name: String
        /// The S rules it is about (an SDK rule the reference SDK broke on the server's answers is S2's).
        var sRules: [String]
        /// The SPEC rules of the invariant or the file, as written.
        var rules: String
        var places: [(place: String, detail: String, replay: String)] = []
    }

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        let a = try Arguments(argv, switches: [], options: ["server", "seeds", "devices", "duration", "scenarios", "jobs", "out"])
        if a.has("help") { print(helpText(help, cores: cores), terminator: ""); return 0 }
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument '\(a.positionals[0])'") }
        guard a.string("server") != nil else {
            throw UsageError("--server is required: process:CMD, http://HOST:PORT, custom:NAME or reference")
        }
        let options = try a.generatorOptions(cores: cores)
        let server = options.server
        let (devices, durationDays) = (options.maxDevicesPerGroup, options.maxDurationDays)
        let seeds = try a.uint("seeds", default: 200, range: 0...1_000_000)
        let jobs = Int(try a.uint("jobs", default: UInt64(ProcessInfo.processInfo.activeProcessorCount), range: 1...256))
        let out = a.string("out") ?? "simkit-out"
        try checkWritableDirectory(out)
        WireSession.messagesDirectory = out
        let folder = a.string("scenarios") ?? SimKitTest.bundledScenarios
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw UsageError("cannot read the scenario folder '\(folder)' (--scenarios DIR)")
        }
        let files = names.filter { $0.hasSuffix(".scenario") && !$0.hasPrefix("mutant-") }.sorted()
            .map { (folder as NSString).appendingPathComponent($0) }
        guard !files.isEmpty || seeds > 0 else { throw UsageError("no scenario file in '\(folder)' and no seed to run") }
        let runner = ScenarioRunner(server: server, cores: cores)
        guard let scenarios = RunCommand.readAll(files, context: runner.context, strict: false) else { return 2 }

        let label = ServerCores.name(server)
        print("conformance of server \(label): \(plural(scenarios.count, "scenario file")) rule by rule, then \(plural(Int(seeds), "fuzz seed"))"
              + " (at most \(devices) devices, \(durationDays) days)")
        fflush(nil)   // the headline before the progress line
        let started = monotonicSeconds()
        let outcomes = Mutex<[ScenarioOutcome?]>(Array(repeating: nil, count: scenarios.count))
        var progress = ProgressLine(label: "conformance", noun: "run", total: scenarios.count + Int(seeds), quiet: false)
        let done = Mutex((count: 0, progress: progress))
        let results = Mutex<[(SeedResult, [Violation])?]>(Array(repeating: nil, count: Int(seeds)))
        // One pool, the files first: while one job runs a big file, the others take seeds.
        parallelForEach(count: scenarios.count + Int(seeds), jobs: jobs) { k in
            if k < scenarios.count {
                let outcome = runner.run(scenario: scenarios[k].scenario, file: scenarios[k].file)
                outcomes.withLock { $0[k] = outcome }
            } else {
                let i = k - scenarios.count
                let (result, _, violations) = Fuzz.run(seed: UInt64(i), options: options, cores: cores)
                results.withLock { $0[i] = (result, violations) }
            }
            done.withLock { $0.count += 1; $0.progress.update(done: $0.count, failures: 0, started: started) }
        }
        progress = done.withLock { $0.progress }
        progress.clear()

        let cwd = FileManager.default.currentDirectoryPath + "/"
        let replayFile = { (file: String) in
            "simkit run\(ServerCores.flag(server)) \(ServerCores.shellQuoted(file.hasPrefix(cwd) ? String(file.dropFirst(cwd.count)) : file))"
        }
        let replaySeed = { (seed: UInt64) in
            "simkit replay \(seed)\(ServerCores.flag(server))" + (devices != 40 ? " --devices \(devices)" : "")
                + (durationDays != 90 ? " --duration \(durationDays)d" : "")
        }
        var findings: [Finding] = []
        func note(_ name: String, rules: String, sRules: [String], place: String, detail: String, replay: String) {
            if let i = findings.firstIndex(where: { $0.name == name && $0.sRules == sRules }) {
                findings[i].places.append((place, detail, replay))
            } else {
                findings.append(Finding(name: name, sRules: sRules, rules: rules, places: [(place, detail, replay)]))
            }
        }
        var serverFailures: [(place: String, text: String)] = []
        var notJudged: [String] = []
        var rulesOfFile: [String: [String]] = [:]
        for (i, outcome) in outcomes.withLock({ $0 }).enumerated() {
            guard let o = outcome else { continue }
            let file = scenarios[i].file
            let place = (file as NSString).lastPathComponent
            rulesOfFile[file] = Self.sRules(ofFile: file)
            if let f = o.coreFailure { serverFailures.append((place, f.text)); continue }
            for v in o.unexpected {
                let first = o.unexpectedViolations.first { $0.invariant == v }
                note(v.rawValue, rules: v.rules, sRules: Self.sRules(of: v, message: first?.message ?? ""), place: place,
                     detail: first?.headline ?? v.summary, replay: replayFile(file))
            }
            // A file's expectations name its rules only where no invariant said which one broke.
            for e in o.failedExpectations where o.unexpected.isEmpty {
                note("the expectations of \(place)", rules: rulesOfFile[file]!.joined(separator: ", "), sRules: rulesOfFile[file]!,
                     place: place, detail: e.message, replay: replayFile(file))
            }
            for missing in o.missingViolations { notJudged.append("\(place): the expected violation \(missing) did not happen") }
            for text in o.unjudgedExpectations { notJudged.append("\(place): \(text)") }
            if o.verdict == .incomplete { notJudged.append("\(place): INCOMPLETE: \(o.stopReason ?? "stopped early")") }
        }
        let seedRuns = results.withLock { $0.compactMap { $0 } }
        let seedResults = seedRuns.map(\.0)
        for (r, violations) in seedRuns {
            if let kind = r.broken.first, Fuzz.isCoreFailure(kind) {
                serverFailures.append(("seed \(r.seed)", r.firstViolation ?? kind))
                continue
            }
            for name in r.broken {
                guard let v = InvariantID(rawValue: name) else { continue }
                let first = violations.first { $0.invariant == v }
                note(name, rules: v.rules, sRules: Self.sRules(of: v, message: first?.message ?? ""), place: "seed \(r.seed)",
                     detail: first?.headline ?? v.summary, replay: replaySeed(r.seed))
            }
            if r.broken.isEmpty, let reason = r.stopReason { notJudged.append("seed \(r.seed): INCOMPLETE: \(reason)") }
        }
        let seconds = monotonicSeconds() - started

        // The rules one a line: files naming each, and whether anything broke it.
        let failedSeeds = Set(seedResults.filter { !$0.passed }.map(\.seed))
        for rule in sRules {
            let naming = rulesOfFile.values.filter { $0.contains(rule.name) }.count
            let broken = findings.filter { $0.sRules.contains(rule.name) }
            let status = broken.isEmpty ? (serverFailures.isEmpty ? "kept  " : "?     ") : "BROKEN"
            print("  \(rule.name.padding(toLength: 4, withPad: " ", startingAt: 0))\(status)  "
                  + "\(plural(naming, "file").padding(toLength: 9, withPad: " ", startingAt: 0)) \(rule.text)")
        }
        print("  campaign: \(plural(seedResults.count, "seed")), \(failedSeeds.isEmpty ? "none failed" : "\(failedSeeds.count) failed")")
        for f in findings {
            let files = f.places.filter { !$0.place.hasPrefix("seed ") }.count
            let seedCount = f.places.count - files
            let rules = f.sRules.isEmpty ? f.rules : f.sRules.map { r in "\(r): \(sRules.first { $0.name == r }?.text ?? "")" }.joined(separator: "; ")
            print("BROKEN \(rules)")
            print("  caught by \(f.name) (\(f.rules)) in \(plural(files, "scenario file")) and \(seedCount) of \(plural(seedResults.count, "seed"))")
            if f.sRules == ["S2"], !f.rules.contains("S") {
                print("  (an SDK rule the reference SDK broke on this server's answers: it reads only their status, servedAt and stoppedSince)")
            }
            let first = f.places[0]
            print("  first: \(first.place): \(first.detail.split(separator: "\n").first.map(String.init) ?? "")")
            print("  replay: \(first.replay)")
            if f.places.count > 1 {
                let more = f.places.dropFirst().prefix(6).map(\.place).joined(separator: ", ")
                print("  also: \(more)\(f.places.count > 7 ? ", and \(f.places.count - 7) more" : "")")
            }
        }
        if let first = serverFailures.first {
            print("SERVER LEFT THE PROTOCOL in \(plural(serverFailures.count, "run")) (nothing judged there); the first, \(first.place):")
            print(first.text.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            if serverFailures.count > 1 {
                print("  also: " + serverFailures.dropFirst().prefix(8).map(\.place).joined(separator: ", ")
                      + (serverFailures.count > 9 ? ", and \(serverFailures.count - 9) more" : ""))
            }
        }
        for n in notJudged.prefix(20) { print("NOT JUDGED \(n)") }
        let time = String(format: "%.1f", seconds)
        if findings.isEmpty, serverFailures.isEmpty, notJudged.isEmpty {
            print("PASS: every S rule kept (\(plural(scenarios.count, "scenario file")), \(plural(seedResults.count, "seed")), \(time) s)")
            return 0
        }
        let broken = Set(findings.flatMap(\.sRules)).sorted { Int($0.dropFirst()) ?? 0 < Int($1.dropFirst()) ?? 0 }
        if findings.isEmpty, serverFailures.isEmpty {
            print("INCOMPLETE: nothing broken, \(plural(notJudged.count, "run")) not judged (\(time) s)")
            return exitIncomplete
        }
        print("FAIL: " + (broken.isEmpty ? "" : "\(broken.joined(separator: ", ")) broken") + (broken.isEmpty || serverFailures.isEmpty ? "" : "; ")
              + (serverFailures.isEmpty ? "" : "the server left the protocol in \(plural(serverFailures.count, "run"))") + " (\(time) s)")
        return 1
    }

    /// The S rules a violation of `invariant` with `message` breaks: the invariant's (of
    /// several, those its message names); an SDK rule (the reference SDK misled by the
    /// server's answers) is S2's, whose status, servedAt and stoppedSince are all the SDK reads.
    static func sRules(of invariant: InvariantID, message: String) -> [String] {
        let s = ruleNames(invariant.rules).filter { $0.hasPrefix("S") }
        guard !s.isEmpty else { return ["S2"] }
        let named = ruleNames(message).filter(s.contains)
        return s.count > 1 && !named.isEmpty ? named : s
    }

    /// The S rules a scenario file names in its `# Rules:` comment (and the comment lines after it).
    static func sRules(ofFile path: String) -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var block = "", inRules = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("#") else { if inRules { break } else { continue } }
            if line.hasPrefix("# Rules:") { inRules = true }
            if inRules { block += line + " " }
        }
        return ruleNames(block).filter { $0.hasPrefix("S") }
    }

    /// `S2`, `D5`, … named in `text` (`S2.2` is S2), each once, in order.
    static func ruleNames(_ text: String) -> [String] {
        var out: [String] = []
        let chars = Array(text)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == "S" || c == "D", i == 0 || !(chars[i - 1].isLetter || chars[i - 1].isNumber), i + 1 < chars.count, chars[i + 1].isNumber {
                var j = i + 1
                while j < chars.count, chars[j].isNumber { j += 1 }
                let name = String(chars[i..<j])
                if !out.contains(name) { out.append(name) }
                i = j
                continue
            }
            i += 1
        }
        return out
    }
}
