import Invariants
import SimKit
import ScenarioLanguage

/// A scenario turned into what the engine runs: the world, and what must hold during it.
public struct CompiledScenario: Sendable {
    /// The world to build and run.
    public var setup: WorldSetup
    /// The timed expectations; a `.probe(i)` in the schedule judges `expectations[i]`.
    package var expectations: [TimedExpectation]
    /// The invariants this run must break (`expect violation NAME`), in file order, without repeats.
    package var expectedViolations: [String]
}

/// One `at T expect QUANT GROUP STATE` line, resolved.
package struct TimedExpectation: Sendable, Equatable {
    /// What must hold.
    package var expectation: Expectation
    /// When it is judged.
    package var time: SimTime
    /// The group's index in `WorldSetup.groups`, or nil for `all` (every device).
    package var group: Int?
    /// The source line (0 when synthetic).
    package var line: Int
    /// A resolved expectation.
    package init(expectation: Expectation, time: SimTime, group: Int?, line: Int = 0) {
        self.expectation = expectation; self.time = time; self.group = group; self.line = line
    }
    /// `expect all photos locked at 11d`.
    package var text: String {
        let e = expectation
        return "expect \(ScenarioPrinter.quantifier(e.quantifier)) \(e.group) \(e.state.rawValue) at \(DurationText.format(time))"
    }
}

/// Why a valid scenario cannot be run.
public struct CompileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, in one lowercase line.
    public var message: String
    /// A compile error.
    package init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// Turns a validated `ScenarioFile` into a `WorldSetup` and its expectations.
///
/// Names become ids: accounts, apps and groups in file order; every key string that
/// appears anywhere (apps, `rotate`, `stop-old-key`, `update … key`) is interned into
/// `keyNames` in order of first appearance. The schedule keeps the timeline's file order,
/// so same-time statements run in file order (the engine breaks ties by insertion).
public enum ScenarioCompiler {
    /// Compiles `scenario`; `sdk` and `seed`, when given, override the file's lines.
    /// - Complexity: O(statements + names), with linear name look-ups over the (small) tables.
    public static func compile(_ scenario: ScenarioFile, sdk: SDKChoice? = nil, seed: UInt64? = nil) throws(CompileError) -> CompiledScenario {
        var names = NameTable(scenario)
        var config = SDKConfig()
        config.requestTimeoutMs = scenario.network.timeout
        config.jobPickSeed = scenario.schedule
        config.storageLatencyMaxMs = UInt16(clamping: scenario.storageLatency)
        var sdkFlaws: SDKFlaws = []
        var serverFlaws: ServerFlaws = []
        switch sdk ?? scenario.sdk {
        case .reference: break
        case .mutant(let name):
            guard let mutant = Mutants.named(name) else {
                throw CompileError("unknown mutant '\(name)'; known: \(Mutants.names.joined(separator: ", "))")
            }
            sdkFlaws = mutant.sdkFlaws
            serverFlaws = mutant.serverFlaws
        case .custom:
            // A registered core runs with the world's settings and no flaws; which type it
            // is, `SDKCores.core(for:)` says where the world is built.
            break
        }

        let accounts = scenario.accounts.map { AccountSpec(name: $0.name, approved: $0.approved) }
        var apps: [AppSpec] = []
        for app in scenario.apps {
            let account = try names.account(app.account)
            apps.append(AppSpec(name: app.name, account: account, initialKey: names.key(app.key), pending: app.pending))
        }
        var groups: [GroupSpec] = []
        for g in scenario.groups {
            guard g.count <= UInt64(UInt32.max) else { throw CompileError("group '\(g.name)' has too many devices") }
            var spec = GroupSpec(name: g.name, app: try names.app(g.app), count: UInt32(g.count), clones: g.kind == .clones)
            spec.copiesCredentialsOf = g.copying.flatMap { source in scenario.groups.firstIndex { $0.name == source } }
            spec.latencyMs = g.latency
            groups.append(spec)
        }

        let (schedule, expectations) = try timeline(scenario.timeline, names: &names)

        var expected: [String] = []
        for v in scenario.expectedViolations where !expected.contains(v.invariant) { expected.append(v.invariant) }

        let pinned = try pinnedFates(scenario.pins, names: names, groups: groups)

        var setup = WorldSetup(
            seed: seed ?? scenario.seed, durationMs: scenario.duration, keyNames: names.keys,
            accounts: accounts, apps: apps, groups: groups,
            network: NetworkSpec(latencyMinMs: scenario.network.latencyMin, latencyMaxMs: scenario.network.latencyMax),
            sdk: config, schedule: schedule)
        setup.sdkFlaws = sdkFlaws
        setup.serverFlaws = serverFlaws
        setup.pinnedFates = pinned
        return CompiledScenario(setup: setup, expectations: expectations, expectedViolations: expected)
    }

    /// The timeline in file order as the world's schedule; each `at T expect` becomes a
    /// probe action numbered in order, with its expectation. Interns keys as it goes.
    static func timeline(_ statements: [TimedStatement],
                         names: inout NameTable) throws(CompileError) -> (schedule: [ScheduledAction], expectations: [TimedExpectation]) {
        var schedule: [ScheduledAction] = []
        var expectations: [TimedExpectation] = []
        for statement in statements {
            let action: WorldAction
            switch statement.body {
            case .action(let a):
                action = try names.worldAction(a)
            case .expect(let e):
                guard case .at(let time) = statement.schedule else {
                    throw CompileError("line \(statement.mark.line): 'expect' needs 'at'")
                }
                let group: Int? = e.group == "all" ? nil : try names.group(e.group)
                action = .probe(UInt32(expectations.count))
                expectations.append(TimedExpectation(expectation: e, time: time, group: group, line: statement.mark.line))
            }
            schedule.append(scheduled(statement.schedule, action))
        }
        return (schedule, expectations)
    }

    /// The pins as fates of world devices: a group's devices are numbered after those of
    /// the groups before it.
    static func pinnedFates(_ pins: [PinDecl], names: NameTable, groups: [GroupSpec]) throws(CompileError) -> [PinnedFate] {
        var pinned: [PinnedFate] = []
        for p in pins {
            let g = try names.group(p.group)
            guard p.index >= 1, p.index <= UInt64(groups[g].count) else { throw CompileError("pin: device \(p.group)#\(p.index) is out of range") }
            guard p.request >= 1, p.request <= UInt64(UInt32.max) else { throw CompileError("pin: request \(p.request) is out of range") }
            let start = groups[..<g].reduce(0) { $0 + Int($1.count) }
            pinned.append(PinnedFate(device: DeviceIndex(start + Int(p.index) - 1), request: UInt32(p.request), fate: p.fate))
        }
        return pinned
    }

    /// `at T` fires once; `every D` first at `from` (default one period after the start).
    static func scheduled(_ schedule: Schedule, _ action: WorldAction) -> ScheduledAction {
        switch schedule {
        case .at(let time):
            return .at(time, action)
        case .every(let r):
            return ScheduledAction(firstAtMs: r.firstFiring, periodMs: r.period, untilMs: r.until ?? .max,
                                   jitterMs: r.jitter ?? 0, action: action)
        }
    }
}
