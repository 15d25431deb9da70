import Foundation
import SimKit
import ScenarioLanguage
import Scenarios
import ScenarioSearch

func parseDuration(_ s: String) -> UInt64? { DurationText.parse(s) }
func formatDuration(_ ms: UInt64) -> String { DurationText.format(ms) }

/// Seconds since an arbitrary point, for measuring the tool itself (never inside a simulation).
func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// Writes to standard error.
func printError(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }

extension Arguments {
    /// The generator settings every seed-taking command shares: `--sdk`, `--devices`,
    /// `--duration`. A seed must be replayed with the options it was fuzzed with.
    /// `--sdk custom:NAME` names a core of `cores`.
    func generatorOptions(cores: SDKCores = SDKCores()) throws -> GeneratorOptions {
        var options = GeneratorOptions(sdk: try FuzzCommand.sdkChoice(string("sdk"), cores: cores))
        options.server = try serverChoice(string("server"), cores: cores) ?? .reference
        if let refusal = ServerCores.wireMutantRefusal(sdk: options.sdk, server: options.server) { throw UsageError(refusal) }
        options.maxDevicesPerGroup = try uint("devices", default: 40, range: 1...100_000)
        options.maxDurationDays = try duration("duration", default: 90 * Ms.day) / Ms.day
        guard options.maxDurationDays >= 2 else { throw UsageError("--duration must be at least 2d") }
        return options
    }
}

/// Reads and parses one scenario file; prints its diagnostics and returns nil when it has
/// errors or cannot be read (the caller exits 2). `sdk custom NAME` must name a core of `cores`.
func loadScenario(_ file: String, cores: SDKCores = SDKCores()) throws -> ScenarioFile? {
    let bytes: [UInt8]
    switch ScenarioFiles.read(file) {
    case .success(let b): bytes = b
    case .failure(let e): printError(e.message); return nil
    }
    let parsed = ScenarioParser.parse(bytes: bytes, file: file, context: ScenarioRunner.standardContext(cores: cores))
    if !parsed.diagnostics.isEmpty { FileHandle.standardError.write(Data(parsed.rendered.utf8)) }
    guard let scenario = parsed.scenario, !parsed.hasErrors else { return nil }
    return scenario
}

/// A command's help, and when the tool registers custom cores, a line naming them (the
/// reference `simkit` prints its help unchanged).
func helpText(_ help: String, cores: SDKCores) -> String {
    var text = help
    if !cores.entries.isEmpty { text += "custom SDK cores of this tool (--sdk custom:NAME): " + cores.names.joined(separator: ", ") + "\n" }
    if !cores.servers.entries.isEmpty {
        text += "custom server cores of this tool (--server custom:NAME): " + cores.servers.names.joined(separator: ", ") + "\n"
    }
    return text
}

/// `--server`: `reference` or `custom:NAME` (a server core of `cores.servers`); nil when
/// the flag is absent. A wrong value is bad input (exit 2) that lists the known names.
func serverChoice(_ text: String?, cores: SDKCores) throws -> ServerChoice? {
    guard let text else { return nil }
    if let choice = cores.servers.parse(text) { return choice }
    if text.hasPrefix("custom:") {
        let name = String(text.dropFirst("custom:".count))
        let hint = nearest(name, in: cores.servers.names).map { "; did you mean 'custom:\($0)'?" } ?? ""
        throw UsageError(ServerCores.unknownMessage(name, known: cores.servers.names) + hint)
    }
    if text.hasPrefix("process:") { throw UsageError("--server process:CMD needs a command, e.g. --server process:'python3 server.py'") }
    if text.hasPrefix("http") { throw UsageError("--server expects a base URL http://HOST:PORT[/PATH], got '\(text)'") }
    throw UsageError("--server expects reference, custom:NAME, process:CMD or http://HOST:PORT, got '\(text)'")
}

/// The flags that select `options`' cores, for printed commands: `--sdk X`, and
/// `--server custom:NAME` when a custom server core runs.
func coreFlags(_ options: GeneratorOptions) -> String {
    "--sdk \(Fuzz.sdkName(options.sdk))" + ServerCores.flag(options.server)
}

/// Why the cores of `sdk` and `server` cannot run again in another process (`what`
/// says who asks), or nil when they can. The other process is this program, started
/// again: it knows the same custom cores when it is a simkit command line
/// (`SimKitCommand.main`, `SimKitAsyncHost.main`), not when a command runs embedded in
/// another program (`SimKitCommand.run`). A server on the wire is never started twice.
func crossProcessRefusal(sdk: SDKChoice, server: ServerChoice, what: String) -> String? {
    if case .process = server {
        return "\(what), which would start the server on the wire \(ServerCores.name(server)) again (check it with --check-determinism alone, in this process)"
    }
    if case .http = server {
        return "\(what), which would send the same server on the wire \(ServerCores.name(server)) a second run (check it with --check-determinism alone, in this process)"
    }
    guard !CrossProcess.isCommandLine else { return nil }
    if case .custom(let name) = sdk {
        return "\(what) by starting this program again, which is not a simkit command line (SimKitCommand.run inside another program) and may not know '\(name)'; run it from an executable built with SimKitCommand.main(sdks:), or check it with --check-determinism alone, in this process"
    }
    if case .custom(let name) = server {
        return "\(what) by starting this program again, which is not a simkit command line (SimKitCommand.run inside another program) and may not know the server core '\(name)'; run it from an executable built with SimKitCommand.main(servers:), or check it with --check-determinism alone, in this process"
    }
    return nil
}
