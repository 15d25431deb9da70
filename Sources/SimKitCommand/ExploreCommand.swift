import Foundation
import SimKit
import ScenarioLanguage
import Scenarios
import ScenarioSearch
import Invariants

/// `simkit explore`: every path of a few actions on a small world, searched exhaustively
/// (with repeated states pruned), instead of sampled like `fuzz`.
enum ExploreCommand {
    static let help = """
    usage: simkit explore [--devices 1..3] [--actions N] [--sdk reference|mutant:NAME|custom:NAME]
                          [--bfs] [--no-fork] [--each-once] [--no-faults] [--faults LIST] [--no-dashboard] [--dashboard LIST]
                          [--persons LIST] [--with LIST]
                          [--race N] [--boundaries N] [--boundary-moments LIST] [--fates N [--fate-kinds LIST]]
                          [--state-budget BYTES] [--max-runs N] [--jobs J]
                          [--time-limit SECONDS] [--shard I/N] [--out FILE] [--json FILE]

    Searches every sequence of at most N actions on one app with 1 to 3 devices (all
    launched at 0 s), each a scenario, and reports the shortest one found that breaks
    an invariant (SPEC §3), or that none does. Actions: each device's person actions
    (launch, open, close, background, query, reset) and update (a build with the
    current key), the dashboard and Rollup (disable, enable, rotate with stop-old now
    or keep-old 30d, rollup revoke and restore), and
    fault windows of 2 minutes (one device offline, server errors 100% status 503,
    timeouts 100%, lost responses 100%) and one device's slow responses (the answers
    the server sends it within 1 s come back 10 s later, so a newer answer overtakes
    them). Moments: 'soon' (1 minute after the last
    action), just before and just after the pending events before that (a request
    reaching the server, its answer arriving), and 1 s before and after the nearest
    boundaries (24 h after a device's last answered check, 30 days after its lock or
    the start of its stop in the checkers' truth, a rotated key's grace deadline, 30
    days after a disable or revocation; there only launch, open and background), or at
    the exact moments --boundary-moments names. Latency is pinned at 20ms..20ms: a
    request reaches the server 10 ms after it is sent.

    With --fates N the network's choices are searched too: for every path, each request
    a device sent meets each fate in turn (late: its answer comes 1 ms before its
    timeout, so newer answers overtake it; after-timeout: 1 ms after it; error: 503 unjudged;
    lost: judged, the answer never comes; offline: it fails at once), and up to N
    requests of a run that way. A counterexample pins them with 'pin' lines.

    Each path is run from the start as a scenario; a path that reaches a world state
    already searched (devices, SDKs, server, requests in flight, timers, the checkers'
    truth) with as few actions goes no further. The order is fixed: the same options
    give the same runs and the same counterexample.

    Prints runs (paths tried), distinct states, pruned paths, the deepest path and the
    time; on a violation the path, the invariants it breaks, its first violation and
    that violation told as a story (what the device did, what the server answered).

    options:
      --devices N       devices of the app, 1 to 3 (default 2)
      --actions N       the most actions on a path, 0 to 20 (default 4)
      --sdk CORE        'reference' (default), 'mutant:NAME' or 'custom:NAME'
      --bfs             breadth first: the first violation found has the fewest
                        actions (depth first also ends with the shortest it found: after
                        each violation it searches only shorter paths)
      --no-fork         run every path from the start instead of forking its parent's
                        world (slower; the same runs, states and counterexample)
      --each-once       each dashboard, Rollup and fault action at most once on a path
                        (person actions are not bounded): fewer paths, so a small
                        alphabet reaches more actions
      --no-faults       leave the fault windows out of the alphabet
      --faults LIST     the fault windows, comma-separated (default
                        \(ExploreFault.defaultCases.map(\.rawValue).joined(separator: ",")); also
                        \(ExploreFault.allCases.filter { !ExploreFault.defaultCases.contains($0) }.map(\.rawValue).joined(separator: ",")): a phone's clock set back 2d or forward 31d)
      --no-dashboard    leave dashboard and Rollup actions out of the alphabet
      --dashboard LIST  the dashboard and Rollup actions, comma-separated (default
                        update,disable,enable,rotate-now,rotate-keep,revoke,restore;
                        also revoke-account, restore-account: Rollup revokes or
                        restores the app's account)
      --persons LIST    the person actions, comma-separated (default
                        launch,open,close,background,query,reset)
      --with LIST       more of the world, comma-separated: 'pending' (the app waits for
                        Rollup, which may approve or reject it), 'other-app' (a second app;
                        a device may install a build with its key), 'clone' (a clone that
                        copies the devices' credentials; it launches, opens, queries),
                        'forget-device' (the server may lose a device's record)
      --race N          the most moments tried between pending events (default 2)
      --boundaries N    the most boundaries tried after 'soon' (default 2)
      --boundary-moments LIST
                        the moments tried at each boundary B, comma-separated, among
                        before (B - 1 s), judged-at (B - 10 ms: a request sent then is
                        judged by the server exactly at B), after-1ms (B + 1 ms: an
                        activation just past B on the device) and after (B + 1 s)
                        (default before,after; the exact two find '>' written for '>=')
      --fates N         the most requests on a path whose fate is chosen, 0 to 3 (default
                        0: the network's choices are the seed's); each pin is a run from
                        the start, about (requests x fates) more runs a path, so take a
                        small alphabet
      --fate-kinds LIST the fates tried, comma-separated (default
                        late,after-timeout,error,lost,offline; also overtaken)
      --state-budget B  bytes for the state store (32 a state) and the breadth-first
                        frontier, or with a unit: 512M, 2G (default 512M); when full the
                        search stops, INCOMPLETE
      --max-runs N      stop after N runs, INCOMPLETE (default 50000000)
      --jobs J          threads that run the leaves (the paths at the last level,
                        nearly all the runs) side by side (default: all cores); the
                        runs, states and counterexample are the same for any J
      --time-limit S    stop after S seconds of wall clock, INCOMPLETE
      --shard I/N       search only the first actions I, I+N, I+2N… (counting from 1) and
                        what follows them: N processes together search the whole space
                        (shards share no state store; each reports its own figures)
      --out FILE        write the counterexample there as a .scenario file ('simkit run
                        FILE' fails it the same way)
      --json FILE       write the figures and the counterexample as JSON ('-' for
                        standard output)

    exit codes: 0 the space was exhausted with no violation, 1 a violation was found,
    2 bad input, 3 a budget or a signal stopped the search first (INCOMPLETE)

    """

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        if argv.contains(where: { $0 == "--server" || $0.hasPrefix("--server=") }) {
            throw UsageError("explore takes no --server: it forks worlds mid-run, and a server on the wire is a process "
                             + "(or a service) whose state cannot be copied; it explores the reference server only "
                             + "(fuzz a server on the wire with simkit fuzz --server process:'CMD')")
        }
        let a = try Arguments(argv, switches: ["bfs", "each-once", "no-faults", "no-dashboard", "no-fork"],
                              options: ["devices", "actions", "sdk", "persons", "faults", "dashboard", "with", "shard", "race", "boundaries", "boundary-moments", "state-budget", "fates", "fate-kinds",
                                        "max-runs", "jobs", "time-limit", "out", "json"])
        if a.has("help") { print(helpText(help, cores: cores), terminator: ""); return 0 }
        if let p = a.positionals.first { throw UsageError("explore takes no files or arguments, got '\(p)'") }
        let options = try exploreOptions(a, cores: cores)
        let timeLimit = try a.string("time-limit").map { text -> Double in
            guard let v = Double(text), v > 0, v.isFinite else { throw UsageError("'--time-limit' expects seconds above 0, got '\(text)'") }
            return v
        }
        if let out = a.string("out") { try checkWritableFile(out) }
        if let json = a.string("json"), json != "-" { try checkWritableFile(json) }

        var explorer: Explorer
        do { explorer = try Explorer(options: options, cores: cores) } catch { throw UsageError(error.message) }
        let started = monotonicSeconds()
        explorer.shouldStop = {
            if stopRequested.load(ordering: .relaxed) { return true }
            if let timeLimit, monotonicSeconds() - started > timeLimit { return true }
            return false
        }
        let quietProgress = a.string("json") == "-"
        explorer.progressEvery = 20_000
        explorer.progress = { r in
            if !quietProgress {
                printError("explore: \(r.runs) runs, \(r.distinctStates) distinct states, depth \(r.maxDepth), \(String(format: "%.1f", monotonicSeconds() - started)) s")
            }
        }
        let result: ExploreResult
        do { result = try explorer.run() } catch { throw UsageError(error.message) }
        let seconds = monotonicSeconds() - started

        let sdkName = sdkText(options.sdk)
        let (lines, status) = try report(result, options: options, sdk: sdkName, seconds: seconds, out: a.string("out"))
        if !quietProgress { print(lines.joined(separator: "\n")) }
        if let json = a.string("json") {
            let text = jsonText(result, options: options, sdk: sdkName, seconds: seconds, status: status)
            if json == "-" { print(text, terminator: "") } else { try writeAtomically(text, to: json) }
        }
        return status
    }

    /// The search's options from the command line, checked in the order the options are
    /// documented; a wrong one is a usage error.
    static func exploreOptions(_ a: Arguments, cores: SDKCores) throws -> ExploreOptions {
        var options = ExploreOptions()
        options.devices = Int(try a.uint("devices", default: 2, range: 1...3))
        options.maxActions = Int(try a.uint("actions", default: 4, range: 0...20))
        options.sdk = try FuzzCommand.sdkChoice(a.string("sdk"), cores: cores)
        options.breadthFirst = a.has("bfs")
        options.forking = !a.has("no-fork")
        options.eachOnce = a.has("each-once")
        options.faults = !a.has("no-faults")
        options.dashboard = !a.has("no-dashboard")
        options.raceMoments = Int(try a.uint("race", default: 2, range: 0...16))
        options.boundaries = Int(try a.uint("boundaries", default: 2, range: 0...16))
        options.jobs = Int(try a.uint("jobs", default: UInt64(ProcessInfo.processInfo.activeProcessorCount), range: 1...256))
        options.maxRuns = try a.uint("max-runs", default: options.maxRuns, range: 1...UInt64.max)
        if let text = a.string("state-budget") { options.stateBudgetBytes = try RunCommand.parseBytes(text, option: "--state-budget") }
        if let list = a.string("persons") {
            let persons = try personActions(list)
            options.persons = persons
            options.boundaryPersons = options.boundaryPersons.filter { persons.contains($0) }
        }
        if let list = a.string("faults") {
            if a.has("no-faults") { throw UsageError("give --faults LIST or --no-faults, not both") }
            options.faultKinds = try kinds(ExploreFault.self, list, option: "faults", noun: "fault")
        }
        if let list = a.string("dashboard") {
            if a.has("no-dashboard") { throw UsageError("give --dashboard LIST or --no-dashboard, not both") }
            options.dashboardKinds = try kinds(ExploreDashboard.self, list, option: "dashboard", noun: "action")
        }
        if let list = a.string("boundary-moments") {
            options.boundaryMoments = try kinds(ExploreBoundaryMoment.self, list, option: "boundary-moments", noun: "moment")
        }
        if let list = a.string("with") {
            for word in list.split(separator: ",", omittingEmptySubsequences: false) {
                guard let e = ExploreExtra(rawValue: String(word)) else {
                    let hint = nearest(String(word), in: ExploreExtra.allCases.map(\.rawValue)).map { "; did you mean '\($0)'?" } ?? ""
                    throw UsageError("--with: unknown part '\(word)'\(hint); known: \(ExploreExtra.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if !options.extras.contains(e) { options.extras.append(e) }
            }
        }
        options.maxFates = Int(try a.uint("fates", default: 0, range: 0...3))
        if let list = a.string("fate-kinds") {
            if options.maxFates == 0 { throw UsageError("--fate-kinds needs --fates N (N at least 1)") }
            options.fateKinds = try kinds(list, option: "fate-kinds", noun: "fate", name: \RequestFate.description)
        }
        if let shard = try FuzzCommand.parseShard(a.string("shard")) { options.shard = shard }
        return options
    }

    /// The person actions a `--persons` list names, in its order, once each; an unknown
    /// word is a usage error with the nearest known one.
    static func personActions(_ list: String) throws -> [ScenarioLanguage.PersonAction] {
        var persons: [ScenarioLanguage.PersonAction] = []
        for word in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let p = ScenarioLanguage.PersonAction(rawValue: String(word)) else {
                let hint = nearest(String(word), in: ScenarioLanguage.PersonAction.allCases.map(\.rawValue)).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError("--persons: unknown action '\(word)'\(hint)")
            }
            if !persons.contains(p) { persons.append(p) }
        }
        return persons
    }

    /// The lines the search prints and its exit status: 1 with a counterexample (written
    /// to `out` when given), 3 when it stopped early, 0 when the space was exhausted.
    static func report(_ result: ExploreResult, options: ExploreOptions, sdk sdkName: String, seconds: Double,
                       out: String?) throws -> (lines: [String], status: Int32) {
        var lines: [String] = []
        lines.append("explore: \(options.devices) device\(options.devices == 1 ? "" : "s"), at most \(options.maxActions) action\(options.maxActions == 1 ? "" : "s"), sdk \(sdkName), \(options.breadthFirst ? "breadth" : "depth") first"
                     + (options.shard.count > 1 ? ", shard \(options.shard.index)/\(options.shard.count)" : ""))
        lines.append("runs \(result.runs), distinct states \(result.distinctStates), pruned \(result.pruned), max depth \(result.maxDepth), \(String(format: "%.2f", seconds)) s"
                     + (options.maxFates > 0 ? ", of the runs \(result.pinnedRuns) with pinned fates" : ""))
        let status: Int32
        if let c = result.counterexample {
            lines.append("VIOLATION \(c.broken.map(\.rawValue).joined(separator: ", ")) in \(c.path.count) action\(c.path.count == 1 ? "" : "s"):")
            for step in c.path { lines.append("  at \(DurationText.format(step.time)) \(ScenarioPrinter.action(step.action))") }
            for p in c.pins { lines.append("  pin device \(p.group)#\(p.index) request \(p.request) \(p.fate)") }
            lines.append("  " + c.headline)
            if !c.story.isEmpty { lines.append(String(c.story.dropLast(c.story.hasSuffix("\n") ? 1 : 0))) }
            if let out {
                try writeAtomically(counterexampleText(c), to: out)
                lines.append("written to \(out); replay: simkit run \(out)")
            }
            status = 1
        } else if let why = result.incomplete {
            lines.append("INCOMPLETE: \(why)")
            status = 3
        } else {
            lines.append("EXHAUSTED: no path of at most \(options.maxActions) action\(options.maxActions == 1 ? "" : "s") breaks an invariant")
            status = 0
        }
        if result.counterexample != nil, let why = result.incomplete { lines.append("(the search stopped early: \(why))") }
        return (lines, status)
    }

    /// The kinds a comma-separated `--OPTION` list names, in the type's own order, once
    /// each; an unknown word is a usage error with the nearest known one.
    static func kinds<K: CaseIterable & RawRepresentable & Equatable>(_: K.Type, _ list: String, option: String, noun: String) throws -> [K]
        where K.RawValue == String {
        try kinds(list, option: option, noun: noun, name: \K.rawValue)
    }

    /// The same, for kinds whose names on the command line are `name(k)`.
    static func kinds<K: CaseIterable & Equatable>(_ list: String, option: String, noun: String, name: (K) -> String) throws -> [K] {
        var named: [K] = []
        let known = K.allCases.map(name)
        for word in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let k = K.allCases.first(where: { name($0) == word }) else {
                let hint = nearest(String(word), in: known).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError("--\(option): unknown \(noun) '\(word)'\(hint); known: \(known.joined(separator: ", "))")
            }
            if !named.contains(k) { named.append(k) }
        }
        return K.allCases.filter { named.contains($0) }
    }

    static func sdkText(_ sdk: SDKChoice) -> String {
        switch sdk {
        case .reference: "reference"
        case .mutant(let m): "mutant:\(m)"
        case .custom(let c): "custom:\(c)"
        }
    }

    /// The counterexample as a scenario file, with comments that say what it breaks.
    static func counterexampleText(_ c: ExploreResult.Counterexample) -> String {
        "# found by simkit explore: breaks \(c.broken.map(\.rawValue).joined(separator: ", "))\n# \(c.headline)\n"
            + ScenarioPrinter.print(c.scenario)
    }

    struct JSONReport: Encodable {
        var simkit: String
        var sdk: String
        var devices: Int
        var maxActions: Int
        var breadthFirst: Bool
        var shard: String
        var with: [String]
        var runs: UInt64
        var distinctStates: UInt64
        var pruned: UInt64
        var pinnedRuns: UInt64
        var maxDepth: Int
        var seconds: Double
        var status: String
        var incomplete: String?
        var broken: [String]?
        var headline: String?
        var path: [String]?
        var pins: [String]?
        var story: String?
        var scenario: String?
    }

    static func jsonText(_ r: ExploreResult, options: ExploreOptions, sdk: String, seconds: Double, status: Int32) -> String {
        let c = r.counterexample
        let report = JSONReport(
            simkit: SimKitVersion.number, sdk: sdk, devices: options.devices, maxActions: options.maxActions,
            breadthFirst: options.breadthFirst, shard: "\(options.shard.index)/\(options.shard.count)",
            with: options.extras.map(\.rawValue), runs: r.runs, distinctStates: r.distinctStates, pruned: r.pruned, pinnedRuns: r.pinnedRuns,
            maxDepth: r.maxDepth, seconds: (seconds * 1000).rounded() / 1000,
            status: status == 1 ? "violation" : status == 3 ? "incomplete" : "exhausted", incomplete: r.incomplete,
            broken: c?.broken.map(\.rawValue), headline: c?.headline,
            path: c?.path.map { "at \(DurationText.format($0.time)) \(ScenarioPrinter.action($0.action))" },
            pins: c?.pins.map { "pin device \($0.group)#\($0.index) request \($0.request) \($0.fate)" },
            story: c.map { $0.story.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ") },
            scenario: c.map(counterexampleText))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return String(decoding: (try? encoder.encode(report)) ?? Data("{}".utf8), as: UTF8.self) + "\n"
    }
}
