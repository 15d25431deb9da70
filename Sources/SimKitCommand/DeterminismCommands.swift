import Foundation
import Synchronization
import SimKit
import ServerWire
import Invariants
import ScenarioLanguage
import Scenarios
import ScenarioSearch

/// Running this executable again, for the determinism guard across processes: each
/// process seeds Swift's hashing on its own, so an order that leaks from a `Set` or a
/// `Dictionary` shows there even when one process happens to repeat it.
package enum CrossProcess {
    /// Whether this process is a simkit command line (`SimKitCommand.main`,
    /// `SimKitAsyncHost.main`): this executable, started again, knows the same cores.
    package nonisolated(unsafe) static var isCommandLine = false

    /// The trace of `setup` as text, run on the cores `options` name (for the comparison
    /// with another process's).
    static func traceText(of setup: WorldSetup, sdk: SDKChoice, server: ServerChoice, cores: SDKCores) throws -> String {
        let resolved: ResolvedCores
        do { resolved = try cores.resolve(sdk: sdk, server: server) } catch { throw UsageError("\(error)") }
        if resolved.isReference { return TraceDiff.text(of: setup, sdk: ReferenceSDK.self) }
        return text(setup, resolved.sdk, resolved.server)
    }

    static func text<SDK: SDKCore, Server: ServerCore>(_ setup: WorldSetup, _ sdk: SDK.Type, _ server: Server.Type) -> String {
        TraceDiff.text(of: setup, sdk: sdk, server: server)
    }

    /// The core's name in a report, whichever core it is.
    static func coreName(sdk: SDKChoice, server: ServerChoice, cores: SDKCores) -> String {
        guard let resolved = try? cores.resolve(sdk: sdk, server: server), !resolved.isReference else {
            return DeterminismCheck.coreName(ReferenceSDK.self, choice: sdk)
        }
        return name(resolved.sdk, resolved.server, sdk)
    }

    static func name<SDK: SDKCore, Server: ServerCore>(_ sdk: SDK.Type, _ server: Server.Type, _ choice: SDKChoice) -> String {
        DeterminismCheck.coreName(sdk, server: server, choice: choice)
    }

    /// This executable, to start it again.
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Runs this executable with `arguments`: its exit status, standard output and error.
    static func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Standard error is read beside standard output, so neither pipe can fill and block the child.
        let errData = Mutex<Data>(Data())
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            let d = err.fileHandleForReading.readDataToEndOfFile()
            errData.withLock { $0 = d }
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData.withLock { $0 }, as: UTF8.self))
    }

    /// The trace another process writes when run with `arguments` and `--trace FILE`
    /// (`simkit replay` or `simkit run`), as text; the file is removed afterwards.
    static func trace(_ arguments: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("simkit-determinism-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).trace").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let child = try run(arguments + ["--trace", path])
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("the second process ('simkit \(arguments.joined(separator: " "))') wrote no trace (exit \(child.status)): \(child.err)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Compares the trace text of a run in this process with the trace that another process
    /// writes when run with `arguments`; nil when they are the same, line for line.
    static func compare(own: String, childArguments: [String], core: String) throws -> Nondeterminism? {
        let theirs = try trace(childArguments)
        do {
            return TraceDiff.compare(try TraceDiff.parse(own, name: "this process"), try TraceDiff.parse(theirs, name: "another process"),
                                     names: ("this process", "another process"), core: core)
        } catch {
            throw UsageError("\(error)")
        }
    }
}

/// `simkit diff A.trace B.trace`: where two written traces first differ.
enum DiffCommand {
    static let help = """
    usage: simkit diff A.trace B.trace

    Compares two traces written by 'simkit replay SEED --trace FILE' or 'simkit run FILE
    --trace OUT' (one record a line) and prints the first record in which they differ:
    its number, virtual time and device, the two records side by side, the last records
    of that device that agreed, and what the place says about the cause (inside an SDK
    step whose input agreed: the core's step was not a function of its input and state;
    a timer; or the world's own records). Two runs of the same seed must write the same
    trace: a difference means a nondeterministic core (or a bug in SimKit).

    The text of a record shows every field an SDK decides; a difference only in a field
    it leaves out is seen by fingerprints ('simkit replay SEED --twice'), not here.

    Exit: 0 the traces are the same, 1 they differ, 2 bad input (a file that cannot be
    read or is not a simkit trace).

    """

    static func run(_ argv: [String]) throws -> Int32 {
        let a = try Arguments(argv, switches: [], options: [])
        if a.has("help") { print(help, terminator: ""); return 0 }
        guard a.positionals.count == 2 else { throw UsageError("expected two trace files, got \(a.positionals.count) arguments") }
        var traces: [TraceDiff.Trace] = []
        for path in a.positionals {
            guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read '\(path)'") }
            do { traces.append(try TraceDiff.parse(String(decoding: data, as: UTF8.self), name: path)) } catch { throw UsageError("\(error)") }
        }
        guard let n = TraceDiff.compare(traces[0], traces[1], names: (a.positionals[0], a.positionals[1])) else {
            print("the same: \(plural(traces[0].records.count, "record"))")
            return 0
        }
        print(n.text(verdict: false), terminator: "")
        if n.record > 0 { print("  (record #\(grouped(Int(n.record))) is line \(grouped(Int(n.record) + 1)) of each file)") }
        return 1
    }
}

/// `simkit seed-fingerprints` (hidden): each seed's fingerprint and event count, for
/// `simkit fuzz --check-determinism --processes`, which runs it as its second process.
enum SeedFingerprintsCommand {
    static let help = """
    usage: simkit seed-fingerprints [--from SEED] [--seeds N] [--shard I/N] [--sdk S] [--server S] [--devices N] [--duration D] [--jobs J]

    Runs each fuzz seed (without the checkers, which do not change a trace) and prints
    'SEED FINGERPRINT EVENTS' a line, in seed order: what 'simkit fuzz --check-determinism
    --processes' compares with its own runs ('SEED - 0' for a seed that a core ended with
    a verdict of its own). The options mean what they mean for fuzz.

    """

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        let a = try Arguments(argv, switches: [], options: ["seeds", "from", "jobs", "shard", "sdk", "server", "devices", "duration"])
        if a.has("help") { print(help, terminator: ""); return 0 }
        let count = try a.uint("seeds", default: 160_000, range: 1...10_000_000)
        let from = try a.uint("from", default: 0)
        guard from <= UInt64.max - count else { throw UsageError("--from \(from) + --seeds \(count) overflows") }
        let jobs = Int(try a.uint("jobs", default: UInt64(ProcessInfo.processInfo.activeProcessorCount), range: 1...256))
        let shard = try FuzzCommand.parseShard(a.string("shard")) ?? (1, 1)
        let options = try a.generatorOptions(cores: cores)
        let resolved: ResolvedCores
        do { resolved = try cores.resolve(sdk: options.sdk, server: options.server) } catch { throw UsageError("\(error)") }
        let seeds = Array(stride(from: from + UInt64(shard.index - 1), to: from + count, by: shard.count))
        let lines = Mutex<[String?]>(Array(repeating: nil, count: seeds.count))
        parallelForEach(count: seeds.count, jobs: jobs) { i in
            let seed = seeds[i]
            var line = "\(seed) - 0"
            if let compiled = try? ScenarioCompiler.compile(ScenarioGenerator.generate(seed: seed, options: options)) {
                if resolved.isReference {
                    var world = World<ReferenceSDK, NoObserver>(setup: compiled.setup, observer: NoObserver())
                    world.run()
                    line = "\(seed) \(world.fingerprint) \(world.eventsHandled)"
                } else {
                    line = "\(seed) " + fingerprint(compiled.setup, resolved.sdk, resolved.server)
                }
            }
            lines.withLock { $0[i] = line }
        }
        print(lines.withLock { $0.compactMap { $0 } }.joined(separator: "\n"))
        return 0
    }

    /// `FINGERPRINT EVENTS` of `setup` on the cores `sdk` and `server`, or `- 0` when a core
    /// ended it with a verdict of its own (an async SDK's escape, a server that left the protocol).
    static func fingerprint<SDK: SDKCore, Server: ServerCore>(_ setup: WorldSetup, _ sdk: SDK.Type, _ server: Server.Type) -> String {
        let world = WireRun.run { SimWorld<SDK, Server, NoObserver>(setup: setup, observer: NoObserver()) }
        if CoreFailure.of(world) != nil { return "- 0" }
        return "\(world.fingerprint) \(world.eventsHandled)"
    }
}
