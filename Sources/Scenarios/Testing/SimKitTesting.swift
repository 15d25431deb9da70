import Foundation
import Invariants
import SimKit
import ScenarioLanguage
import Scenarios
import ScenarioSearch

/// Running SimKit from a test: one fuzz seed or one scenario file, with its verdict, its
/// violations told as stories, and a reproducer. Works from Swift Testing or XCTest in any
/// package that depends on the `Scenarios` product:
///
/// ```swift
/// @Test(arguments: 0..<200 as Range<UInt64>)
/// func keepsEveryPromise(seed: UInt64) {
///     let run = SimKitTest.seed(seed)
///     #expect(run.passed, "\(run)")
/// }
/// ```
///
/// Every call is one deterministic simulation on the calling thread; tests may run in
/// parallel. Shrinking (for `reproducer`) happens only when asked for.
///
/// Your own SDK core runs the same way: `SimKitTest.seed(7, core: MySDK.self)`, or
/// registered by name for scenario files that say `sdk custom mine`:
/// `SimKitTest.scenario(file: …, cores: ["mine": MySDK.self])`.
public enum SimKitTest {
    /// Generates and runs fuzz seed `seed` exactly as `simkit fuzz --sdk … --devices … --duration …` does;
    /// `sdk: .custom(NAME)` runs the core `cores` registers as NAME.
    /// - Complexity: one simulation of at most `devices` devices per group for at most `duration`.
    /// With `checkDeterminism` the seed runs twice and the traces are compared record by
    /// record, as `simkit fuzz --check-determinism` does: a difference fails the run with
    /// the verdict NONDETERMINISTIC (`SeedRun.nondeterminism` says where and why).
    /// - Complexity: one simulation of at most `devices` devices per group for at most
    ///   `duration`; two when `checkDeterminism`.
    public static func seed(_ seed: UInt64, sdk: SDKChoice = .reference, server: ServerChoice = .reference, devices: UInt64 = 40,
                            duration: SimTime = 90 * Ms.day, cores: SDKCores = SDKCores(),
                            checkDeterminism: Bool = false) -> SeedRun {
        precondition(devices >= 1, "devices must be at least 1")
        if case .custom(let name) = sdk { precondition(cores.type(named: name) != nil, SDKCores.unknownMessage(name, known: cores.names)) }
        if case .custom(let name) = server {
            precondition(cores.servers.type(named: name) != nil, ServerCores.unknownMessage(name, known: cores.servers.names))
        }
        var options = GeneratorOptions(maxDevicesPerGroup: devices, maxDurationDays: max(2, duration / Ms.day), sdk: sdk)
        options.server = server
        let (result, scenario, violations) = checkDeterminism
            ? Fuzz.run(seed: seed, options: options, cores: cores, checkDeterminism: true)
            : Fuzz.run(seed: seed, options: options, cores: cores)
        return SeedRun(seed: seed, sdk: sdk, result: result, scenario: scenario, violations: violations, cores: cores)
    }

    /// Generates and runs fuzz seed `seed` on your core `core`, registered as `name`
    /// (default: the type's name in kebab case, `MySDK` → `my-sdk`), which the replay
    /// command and the reproducer name (`--sdk custom:my-sdk`, `sdk custom my-sdk`). With
    /// `checkDeterminism`, the seed runs again and the traces are compared: the way to
    /// catch a core whose steps depend on more than their input and state.
    ///
    /// ```swift
    /// @Test(arguments: 0..<200 as Range<UInt64>)
    /// func myCoreIsDeterministic(seed: UInt64) {
    ///     let run = SimKitTest.seed(seed, core: MySDK.self, checkDeterminism: true)
    ///     #expect(run.passed, "\(run)")
    /// }
    /// ```
    public static func seed<SDK: SDKCore>(_ seed: UInt64, core: SDK.Type, name: String? = nil, devices: UInt64 = 40,
                                          duration: SimTime = 90 * Ms.day, checkDeterminism: Bool = false) -> SeedRun {
        let name = name ?? SDKCores.defaultName(for: core)
        return Self.seed(seed, sdk: .custom(name), devices: devices, duration: duration, cores: SDKCores([name: core]),
                         checkDeterminism: checkDeterminism)
    }

    /// Generates and runs fuzz seed `seed` on the reference SDK and your server core
    /// `server`, registered as `name` (default: the type's name in kebab case, `MyServer`
    /// → `my-server`), which the replay command and the reproducer name (`--server
    /// custom:my-server`, `server custom my-server`). The checkers judge the server from
    /// the trace alone, so a core that breaks an S rule fails here as a wrong SDK does.
    /// `sdk` is the reference or a mutant (for your own SDK core too, register both:
    /// `seed(_:sdk:server:cores:)` with `SDKCores(["mine": MySDK.self], servers: […])`).
    ///
    /// ```swift
    /// @Test(arguments: 0..<300 as Range<UInt64>)
    /// func myServerKeepsEveryRule(seed: UInt64) {
    ///     let run = SimKitTest.seed(seed, server: MyServer.self)
    ///     #expect(run.passed, "\(run)")
    /// }
    /// ```
    public static func seed<Server: ServerCore>(_ seed: UInt64, server: Server.Type, name: String? = nil, sdk: SDKChoice = .reference,
                                                devices: UInt64 = 40, duration: SimTime = 90 * Ms.day,
                                                checkDeterminism: Bool = false) -> SeedRun {
        let name = name ?? ServerCores.defaultName(for: server)
        return Self.seed(seed, sdk: sdk, server: .custom(name), devices: devices, duration: duration,
                         cores: SDKCores([:], servers: ServerCores([name: server])), checkDeterminism: checkDeterminism)
    }

    /// Reads and runs the scenario file at `file` (relative paths from the current directory).
    /// Throws `ScenarioRunError` when it cannot be read (or is larger than
    /// `ScenarioLimits.maxFileBytes`, checked before reading), parsed or compiled.
    /// `cores` are the custom cores `sdk custom NAME` (or `sdk:`) may name; with
    /// `checkDeterminism` the scenario runs twice more and the traces are compared.
    public static func scenario(file: String, sdk: SDKChoice? = nil, server: ServerChoice? = nil, seed: UInt64? = nil,
                                cores: SDKCores = SDKCores(), checkDeterminism: Bool = false) throws -> ScenarioRun {
        if let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber,
           size.uint64Value > UInt64(ScenarioLimits.maxFileBytes) {
            throw ScenarioRunError(file: file, message: "\(file): error: file is larger than \(ScenarioLimits.maxFileBytes) bytes")
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ScenarioRunError(file: file, message: "cannot read '\(file)'")
        }
        return try scenario(source: String(decoding: data, as: UTF8.self), file: file, sdk: sdk, server: server, seed: seed, cores: cores,
                            checkDeterminism: checkDeterminism)
    }

    /// Runs scenario text (named `file` in diagnostics). Throws `ScenarioRunError` for
    /// any text that cannot be run (never traps); a run that stops early is returned,
    /// with `passed` false and `incomplete` true.
    /// With `checkDeterminism` the scenario runs twice more and the traces are compared, as
    /// `simkit run --check-determinism` does (`ScenarioRun.outcome.nondeterminism`).
    public static func scenario(source: String, file: String = "inline.scenario", sdk: SDKChoice? = nil, server: ServerChoice? = nil,
                                seed: UInt64? = nil, cores: SDKCores = SDKCores(), checkDeterminism: Bool = false) throws -> ScenarioRun {
        if case .custom(let name)? = sdk, cores.type(named: name) == nil {
            throw ScenarioRunError(file: file, message: "\(file): error: \(SDKCores.unknownMessage(name, known: cores.names))")
        }
        if case .custom(let name)? = server, cores.servers.type(named: name) == nil {
            throw ScenarioRunError(file: file, message: "\(file): error: \(ServerCores.unknownMessage(name, known: cores.servers.names))")
        }
        var runner = ScenarioRunner(sdk: sdk, server: server, seed: seed, cores: cores)
        runner.checkDeterminism = checkDeterminism
        let parsed = ScenarioParser.parse(source, file: file, context: runner.context)
        guard let scenario = parsed.scenario, !parsed.hasErrors else { throw ScenarioRunError(file: file, message: parsed.rendered) }
        let outcome = runner.run(scenario: scenario, file: file)
        guard outcome.verdict != .badInput else { throw ScenarioRunError(file: file, message: outcome.errors) }
        return ScenarioRun(outcome: outcome, scenario: scenario, sdk: sdk, server: server, cores: cores)
    }
}

/// A scenario file that could not be run: its diagnostics, rendered.
public struct ScenarioRunError: Error, Sendable, CustomStringConvertible {
    public var file: String
    /// `FILE:LINE:COL: error: …` lines with the source line and a caret, or a compile error.
    public var message: String
    public var description: String { message }
}

/// One fuzz seed's run.
public struct SeedRun: Sendable, CustomStringConvertible {
    public let seed: UInt64
    public let sdk: SDKChoice
    /// The verdict as `simkit fuzz` records it (fingerprint, events, coverage).
    public let result: SeedResult
    /// The generated scenario (print it with `ScenarioPrinter.print`).
    public let scenario: ScenarioFile
    /// The kept violations, in the order found.
    public let violations: [Violation]
    /// The custom cores the run knew (to shrink on the same core).
    let cores: SDKCores

    /// True when no invariant broke, the run reached its end, and (when checked) two runs
    /// wrote the same trace.
    public var passed: Bool { result.passed }
    /// Where two runs of the seed differed, when `checkDeterminism` found they did.
    public var nondeterminism: Nondeterminism? { result.nondeterminism }
    /// True when the run stopped early (`result.stopReason` says why).
    public var incomplete: Bool { result.incomplete }
    /// The invariants broken, sorted by name.
    public var broken: [InvariantID] { result.broken.compactMap(InvariantID.init(rawValue:)) }
    /// The first violation as a few plain sentences; empty when it passed.
    public var story: String { violations.first.map { FailureStory($0).text } ?? "" }

    /// A minimal `.scenario` text that breaks the first violation's invariant the same way,
    /// with a comment saying how it was found; the seed's whole script when it passed.
    /// - Complexity: shrinking: up to 1,500 runs of shrinking candidates. Compute it once.
    public var reproducer: String {
        guard let invariant = violations.first?.invariant.rawValue ?? result.broken.first else {
            return ScenarioPrinter.print(scenario)
        }
        let small = Fuzz.shrink(scenario, invariant: invariant, cores: cores).0
        return Fuzz.reproducerText(small, invariant: invariant, seed: seed, sdk: sdk, file: "\(invariant)-seed\(seed).scenario")
    }

    /// For a failed expectation: the headline, the story, and the command that replays it.
    /// The reproducer is not included (it shrinks); ask for it when you want the file.
    public var description: String {
        let twice = "replay: simkit replay \(seed) \(result.coreFlags) --twice\n"
        if let n = nondeterminism { return "seed \(seed) \(result.coreFlags): " + n.text() + twice + (violations.isEmpty ? "" : "and it broke \(result.broken.joined(separator: ", "))\n") }
        guard let v = violations.first else {
            if passed { return "seed \(seed) passed" }
            if result.broken.isEmpty, let reason = result.stopReason {
                return "seed \(seed) is incomplete, not a pass: the run stopped early: \(reason)"
            }
            return "seed \(seed): \(result.firstViolation ?? result.broken.joined(separator: ", "))"
        }
        return """
        seed \(seed) \(result.coreFlags) broke \(result.broken.joined(separator: ", "))
        \(v.headline)
        \(FailureStory(v).wrapped(indent: "  "))replay: simkit replay \(seed) \(result.coreFlags)
        """
    }
}

/// One scenario file's run.
public struct ScenarioRun: Sendable, CustomStringConvertible {
    /// Everything `simkit run` reports.
    public let outcome: ScenarioOutcome
    /// The parsed scenario.
    public let scenario: ScenarioFile
    let sdk: SDKChoice?
    let server: ServerChoice?
    /// The custom cores the run knew (to shrink on the same core).
    let cores: SDKCores

    /// True when the run reached its end, every `expect` was judged and held, and exactly
    /// the expected invariants broke. False for an incomplete run.
    public var passed: Bool { outcome.passed }
    /// True when the run stopped early without finding a failure (`outcome.stopReason` says why).
    public var incomplete: Bool { outcome.verdict == .incomplete }
    /// Every invariant broken (expected or not), sorted by name.
    public var broken: [InvariantID] { outcome.broken }
    /// Every kept violation, expected or not.
    public var violations: [Violation] { outcome.violations }
    /// The timed expectations' verdicts.
    public var expectations: [ExpectationResult] { outcome.expectations }
    /// The first unexpected violation (or, failing that, the first violation) as a story.
    public var story: String {
        (outcome.unexpectedViolations.first ?? violations.first).map { FailureStory($0).text } ?? ""
    }

    /// A minimal scenario text that breaks the first unexpected violation's invariant;
    /// the scenario as given when nothing unexpected broke.
    /// - Complexity: shrinking: up to 1,500 runs.
    public var reproducer: String {
        guard let invariant = outcome.unexpected.first?.rawValue else { return ScenarioPrinter.print(scenario) }
        var s = scenario
        if let sdk { s.sdk = sdk }
        if let server { s.server = server }
        s.seed = outcome.seed
        let small = Fuzz.shrink(s, invariant: invariant, cores: cores).0
        return Fuzz.reproducerText(small, invariant: invariant, seed: outcome.seed, sdk: small.sdk, file: outcome.file)
    }

    /// The `simkit run` report of this file (with stories), for a failed expectation: an
    /// incomplete run says `INCOMPLETE` and why it stopped.
    public var description: String { ScenarioReport.block(outcome) }
}
