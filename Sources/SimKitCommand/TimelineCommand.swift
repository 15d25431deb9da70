import Foundation
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch

/// `simkit timeline`: a self-contained HTML picture of one run.
enum TimelineCommand {
    static let help = """
    usage: simkit timeline FILE -o OUT.html [--sdk S] [--server S] [--seed N] [--show SEL] [--lanes N]
           simkit timeline --seed SEED -o OUT.html [--sdk S] [--server S] [--devices N] [--duration D] [--show SEL] [--lanes N]

    Runs a scenario file, or fuzz seed SEED exactly as 'simkit fuzz' generates it, with
    every invariant checked, and writes one self-contained HTML file (inline SVG, CSS and
    a little JavaScript; no network): a lane per device coloured by SDK state over
    virtual time, requests as ticks coloured by answer, offline and server fault windows
    shaded, dashboard and Rollup actions as labelled lines across every lane, and each
    violation marked (hover for details), with a short story of each broken invariant
    under the picture.
    Violating devices come first; beyond --lanes devices the rest are sampled evenly,
    and the page says so. The file is the same byte for byte for the same run.

    options:
      -o, --out FILE   where to write the page (required)
      --sdk S          reference, mutant:NAME or custom:NAME, an SDK core the tool
                       registers (a FILE's own sdk line by default; reference for --seed)
      --server S       reference or custom:NAME, a server core the tool registers (a
                       FILE's own server line by default; reference for --seed)
      --seed N         with FILE: use seed N instead of the file's seed line
      --devices N      with --seed: the fuzz run's --devices (default 40)
      --duration D     with --seed: the fuzz run's --duration (default 90d)
      --show SEL       only these devices get lanes: comma-separated GROUP, GROUP#I
                       or 'device GROUP#I' (default: every device)
      --lanes N        the most device lanes drawn (default 200, at most 2000)
      --quiet          no progress line (on standard error, for runs longer than a few
                       seconds: the virtual day reached)

    Exit: 0 no invariant broken and the run reached its end, 1 an invariant broken
    (the page is written either way), 2 bad input, 3 nothing broken but the run
    stopped early (event budget, queue or memory bound): incomplete.

    """

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        let a = try Arguments(argv, switches: ["quiet"], options: ["o", "out", "sdk", "server", "seed", "devices", "duration", "show", "lanes"])
        if a.has("help") { print(helpText(help, cores: cores), terminator: ""); return 0 }
        guard let out = a.string("o") ?? a.string("out") else { throw UsageError("missing '-o OUT.html': where to write the page") }
        let lanesMax = Int(try a.uint("lanes", default: 200, range: 1...2_000))
        var scenario: ScenarioFile
        var sdk: SDKChoice?
        let title: String
        if a.positionals.isEmpty {
            guard a.string("seed") != nil else { throw UsageError("expected a scenario FILE or --seed SEED") }
            let seed = try a.uint("seed", default: 0)
            let options = try a.generatorOptions(cores: cores)
            scenario = ScenarioGenerator.generate(seed: seed, options: options)
            title = "fuzz seed \(seed) \(coreFlags(options))"
        } else {
            guard a.positionals.count == 1 else { throw UsageError("expected one scenario FILE, got \(a.positionals.count)") }
            for flag in ["devices", "duration"] where a.string(flag) != nil {
                throw UsageError("'--\(flag)' goes with --seed; a FILE says its own devices and duration")
            }
            let file = a.positionals[0]
            guard let s = try loadScenario(file, cores: cores) else { return 2 }
            scenario = s
            if a.string("seed") != nil { scenario.seed = try a.uint("seed", default: 0) }
            if let text = a.string("sdk") { sdk = try FuzzCommand.sdkChoice(text, cores: cores) }
            if let server = try serverChoice(a.string("server"), cores: cores) { scenario.server = server }
            title = s.name.isEmpty ? file : "\(s.name) (\(file))"
        }
        let lanes = try a.string("show").map { try selectDevices($0, in: scenario) }
        let result: Timeline.Result
        do {
            // Progress on standard error (virtual days reached), outside the simulation.
            var line = ProgressLine(label: "timeline", noun: "day", total: 0, quiet: a.has("quiet"))
            let started = monotonicSeconds()
            result = try Timeline.run(scenario, sdk: sdk, cores: cores, title: title, lanesMax: lanesMax, lanes: lanes) { reached, duration in
                line.update(virtualDays: Int(reached / Ms.day), of: Int(duration / Ms.day), started: started)
            }
            line.clear()
        } catch {
            throw UsageError(error.message)
        }
        try writeAtomically(result.html, to: out)
        let kb = (result.html.utf8.count + 1023) / 1024
        print("wrote \(out) (\(kb) KB): \(plural(Int(result.facts.deviceCount), "device")), \(plural(Int(result.eventsHandled), "event")), "
              + (result.broken.isEmpty ? "no invariant broken" : "broken: " + result.broken.map(\.rawValue).joined(separator: ", ")))
        for v in result.violations.prefix(3) { print(FailureStory(v).wrapped(indent: "  "), terminator: "") }
        if let stop = result.stop { print("INCOMPLETE: the run stopped early: \(stop)") }
        if !result.broken.isEmpty { return 1 }
        return result.stop == nil ? 0 : 3
    }

    /// `photos`, `photos#17`, `device photos#17`, comma-separated, as device indexes.
    static func selectDevices(_ text: String, in scenario: ScenarioFile) throws -> [DeviceIndex] {
        var start: [String: (from: UInt64, count: UInt64)] = [:]
        var next: UInt64 = 0
        for g in scenario.groups { start[g.name] = (next, g.count); next += g.count }
        var out: [DeviceIndex] = []
        for raw in text.split(separator: ",") {
            var item = raw.trimmingCharacters(in: .whitespaces)
            if item.hasPrefix("device ") { item = String(item.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
            let parts = item.split(separator: "#", omittingEmptySubsequences: false)
            let groups = scenario.groups.map(\.name)
            guard let g = start[String(parts[0])] else {
                let hint = nearest(String(parts[0]), in: groups).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError("--show: unknown group '\(parts[0])'\(hint) (groups: \(groups.joined(separator: ", ")))")
            }
            if parts.count == 1 {
                out += (g.from..<(g.from + g.count)).map { DeviceIndex($0) }
            } else if parts.count == 2, let i = UInt64(parts[1]), i >= 1, i <= g.count {
                out.append(DeviceIndex(g.from + i - 1))
            } else {
                throw UsageError("--show: expected GROUP or GROUP#I with I in 1...\(g.count), got '\(raw)'")
            }
        }
        return out
    }
}
