import Invariants
import SimKit
import ScenarioLanguage

/// Runs a scenario with every invariant checked and draws its timeline, in one pass:
/// the checker and the timeline observe the same stream, and no trace is kept.
package enum Timeline {
    /// A finished run's picture and what it broke.
    package struct Result: Sendable {
        /// The self-contained XHTML page.
        package var html: String
        package var violations: [Violation]
        package var broken: [InvariantID]
        package var facts: WorldFacts
        package var eventsHandled: UInt64
        package var fingerprint: String
        /// Why the run stopped before its end; nil when it reached its duration.
        package var stop: StopReason?
    }

    /// Runs `scenario` (its own `sdk` and `server` lines, or `sdk` and `server` when given) and renders it.
    /// `title` defaults to the scenario's name; `lanes` chooses the drawn devices.
    /// - Complexity: one simulation, O(devices × bounds) memory besides the world.
    /// `progress`, if given, is told the virtual time reached at each hundredth of the run
    /// (for a progress line; the run is the same without it).
    package static func run(_ scenario: ScenarioFile, sdk: SDKChoice? = nil, server: ServerChoice? = nil,
                           cores: SDKCores = SDKCores(), title: String? = nil,
                           lanesMax: Int = 200, lanes: [DeviceIndex]? = nil, columns: Int = 1_100,
                           progress: ((_ reachedMs: SimTime, _ durationMs: SimTime) -> Void)? = nil) throws(CompileError) -> Result {
        var scenario = scenario
        if let server { scenario.server = server }
        let resolved = try cores.resolve(sdk: sdk ?? scenario.sdk, server: scenario.server)
        if resolved.isReference {
            return try run(ReferenceSDK.self, ServerModel.self, scenario, sdk: sdk, title: title, lanesMax: lanesMax, lanes: lanes,
                           columns: columns, progress: progress)
        }
        return try run(resolved.sdk, resolved.server, scenario, sdk: sdk, title: title, lanesMax: lanesMax, lanes: lanes,
                       columns: columns, progress: progress)
    }

    /// `run` on the core types `core` and `serverCore`.
    static func run<SDK: SDKCore, Server: ServerCore>(_ core: SDK.Type, _ serverCore: Server.Type, _ scenario: ScenarioFile,
                                  sdk: SDKChoice?, title: String?,
                                  lanesMax: Int, lanes: [DeviceIndex]?, columns: Int,
                                  progress: ((_ reachedMs: SimTime, _ durationMs: SimTime) -> Void)?) throws(CompileError) -> Result {
        var compiled = try ScenarioCompiler.compile(scenario, sdk: sdk)
        compiled.setup.ringDepth = 0   // the checker keeps its own rings
        typealias Pair = ObserverPair<InvariantChecker, TimelineObserver>
        typealias Watched = ObserverPair<Pair, ProgressObserver>
        let durationMs = compiled.setup.durationMs
        // Keep as many violations of each invariant as there are lanes, so every lane
        // that can be drawn as violating is (the checker keeps the first ten by default).
        let pair = Pair(InvariantChecker(maxPerInvariant: lanesMax), TimelineObserver(columns: columns))
        let tell = progress ?? { _, _ in }
        var world = SimWorld<SDK, Server, Watched>(setup: compiled.setup, observer: Watched(pair, ProgressObserver(durationMs: durationMs) { tell($0, durationMs) }))
        world.run()
        let checker = world.observer.first.first
        let sdkName = Fuzz.sdkName(sdk ?? scenario.sdk)
        let broken = checker.broken.map(\.rawValue)
        var subtitle = "seed \(compiled.setup.seed) · sdk \(sdkName) · "
        if case .custom = scenario.server { subtitle += "server \(ServerCores.name(scenario.server)) · " }
        subtitle += "\(world.facts.deviceCount) devices · "
        subtitle += "\(DurationText.format(compiled.setup.durationMs)) · \(world.eventsHandled) events · fingerprint \(world.fingerprint)"
        subtitle += broken.isEmpty ? " · no invariant broken" : " · broken: " + broken.joined(separator: ", ")
        if let stop = world.stop { subtitle += " · incomplete: stopped early (\(stop.name)) at \(DurationText.clock(stop.atMs))" }
        let options = TimelineOptions(title: title ?? (scenario.name.isEmpty ? "scenario" : scenario.name),
                                      subtitle: subtitle, lanesMax: lanesMax, only: lanes)
        let html = TimelineHTML.render(world.observer.first.second, violations: checker.violations, options: options)
        return Result(html: html, violations: checker.violations, broken: checker.broken, facts: world.facts,
                      eventsHandled: world.eventsHandled, fingerprint: "\(world.fingerprint)", stop: world.stop)
    }
}
