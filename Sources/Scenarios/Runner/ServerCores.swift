import Foundation
import Invariants
import ServerWire
import SimKit
import ScenarioLanguage

/// The server cores a tool knows by name, besides the reference `ServerModel`: a core
/// registered as `backend` judges the requests of a scenario that says `server custom
/// backend` and of a command run with `--server custom:backend`, and every reproducer or
/// replay command of a failure it caused names it so.
///
/// A tool's registries travel together: `SDKCores.servers` holds these, so everything
/// that takes `cores: SDKCores` knows both kinds.
///
/// ```swift
/// let cores = SDKCores([:], servers: ["backend": MyServer.self])
/// let run = try SimKitTest.scenario(file: "backend.scenario", cores: cores)   // `server custom backend`
/// ```
///
/// Entries are kept sorted by name (nothing that lists them depends on a dictionary's
/// order). A name is a scenario name, `[a-z][a-z0-9_-]*`, not `reference`.
public struct ServerCores: Sendable, ExpressibleByDictionaryLiteral {
    /// One registered server core.
    package struct Entry: Sendable {
        /// The name it runs under: `server custom NAME`, `--server custom:NAME`.
        package let name: String
        /// The core's type; a world builds one value of it from the scenario's setup.
        package let type: any ServerCore.Type
    }

    /// Every registered core, sorted by name.
    package let entries: [Entry]

    /// No custom server core: only the reference.
    public init() { entries = [] }

    /// The cores of `cores`, sorted by name. Every name must be valid
    /// (`ServerCores.problem(withName:)` is nil): a wrong name is a programming error in
    /// the caller's package, not bad input.
    public init(_ cores: [String: any ServerCore.Type]) {
        var list: [Entry] = []
        for name in cores.keys.sorted() {
            if let problem = ServerCores.problem(withName: name) { preconditionFailure(problem) }
            list.append(Entry(name: name, type: cores[name]!))
        }
        entries = list
    }

    /// `["backend": MyServer.self]`; a name given twice keeps the last.
    public init(dictionaryLiteral elements: (String, any ServerCore.Type)...) {
        var cores: [String: any ServerCore.Type] = [:]
        for (name, type) in elements { cores[name] = type }
        self.init(cores)
    }

    /// A name for `type` when none is given: its Swift name in kebab case (`MyServer` →
    /// `my-server`).
    package static func defaultName<Server: ServerCore>(for type: Server.Type) -> String {
        SDKCores.kebabName(of: type, prefix: "server-")
    }

    /// The registered names, sorted.
    package var names: [String] { entries.map(\.name) }

    /// The core registered as `name`, or nil.
    /// - Complexity: O(cores).
    package func type(named name: String) -> (any ServerCore.Type)? {
        entries.first { $0.name == name }?.type
    }

    /// Why `name` cannot name a server core, or nil when it can: a scenario name
    /// (`[a-z][a-z0-9_-]*`, at most 64 bytes), not `reference`.
    package static func problem(withName name: String) -> String? {
        if name == "reference" { return "server core name 'reference' is taken by the reference server" }
        guard SDKCores.problem(withName: name) == nil else {
            return "server core name '\(name)' is not a scenario name: [a-z][a-z0-9_-]*, at most 64 characters"
        }
        return nil
    }

    /// What a choice runs: the reference server, or a registered core.
    package enum Core {
        case reference
        case custom(name: String, type: any ServerCore.Type)

        /// The core's type: `ServerModel` for the reference.
        package var type: any ServerCore.Type {
            switch self {
            case .reference: ServerModel.self
            case .custom(_, let type): type
            }
        }
    }

    /// The core `choice` runs; a custom name that is not registered is an error that lists
    /// the known names. A server on the wire (`process`, `http`) runs as `WireServer`, and
    /// its endpoint becomes this thread's (`WireEndpoint.use`): the worlds built next on
    /// this thread talk to it.
    package func core(for choice: ServerChoice) throws(CompileError) -> Core {
        switch choice {
        case .reference: return .reference
        case .process(let command):
            WireEndpoint.use(.process(command))
            return .custom(name: ServerCores.name(choice), type: WireServer.self)
        case .http(let url):
            WireEndpoint.use(.http(url))
            return .custom(name: ServerCores.name(choice), type: WireServer.self)
        case .custom(let name):
            guard let type = type(named: name) else { throw CompileError(ServerCores.unknownMessage(name, known: names)) }
            return .custom(name: name, type: type)
        }
    }

    /// "unknown server core 'x'; …" with what is known, for every place that resolves a name.
    package static func unknownMessage(_ name: String, known: [String]) -> String {
        let list = known.isEmpty
            ? "this tool knows no custom server core (a package registers its own: SimKitCommand.main(servers: [\"\(name)\": MyServer.self]))"
            : "custom server cores are: " + known.joined(separator: ", ")
        return "unknown server core '\(name)'; \(list)"
    }

    /// Parses a command line's `--server` value: `reference`, `custom:NAME` (a
    /// registered core), `process:CMD` (a command) or `http://HOST:PORT[/PATH]`; nil when
    /// it names none of them.
    package func parse(_ text: String) -> ServerChoice? {
        if text == "reference" { return .reference }
        if text.hasPrefix("process:") {
            let command = String(text.dropFirst("process:".count))
            return command.allSatisfy({ $0 == " " }) ? nil : .process(command)
        }
        if text.hasPrefix("http://") { return HTTPTransport.parse(text) != nil ? .http(text) : nil }
        if text.hasPrefix("custom:"), type(named: String(text.dropFirst(7))) != nil { return .custom(String(text.dropFirst(7))) }
        return nil
    }

    /// The name used in results and commands: `reference`, `custom:NAME`, `process:CMD`
    /// or the URL.
    package static func name(_ choice: ServerChoice) -> String {
        switch choice {
        case .reference: "reference"
        case .custom(let n): "custom:\(n)"
        case .process(let c): "process:\(c)"
        case .http(let u): u
        }
    }

    /// `text` quoted for a POSIX shell when it needs it: `'process:python3 server.py'`.
    package static func shellQuoted(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { c in
            (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || "-_./:=,@%+".unicodeScalars.contains(c)
        }
        return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Why `sdk` cannot run with `server`, or nil: a server mutant (`mutant:NAME` whose
    /// planted bug is the reference server's) with a server on the wire, which replaces the
    /// reference server, so the bug would be nowhere and the run would test the wire server
    /// unchanged under the mutant's name.
    package static func wireMutantRefusal(sdk: SDKChoice, server: ServerChoice) -> String? {
        guard case .mutant(let name) = sdk, let mutant = Mutants.named(name), mutant.side == .server else { return nil }
        switch server {
        case .process, .http:
            return "mutant '\(name)' plants its bug in the reference server, which the server on the wire "
                + "(\(ServerCores.name(server))) replaces: a server mutant cannot reach a server on the wire. "
                + "Run it on the reference server (no --server, no server line), or plant the bug in your own server "
                + "(as Examples/PythonServer/server.py --bug NAME does)"
        case .reference, .custom: return nil
        }
    }

    /// The command-line flag that selects `choice`, with a leading space: empty for the
    /// reference (the default), ` --server custom:NAME` otherwise. Appended to every
    /// replay, shrink and timeline command a failure prints.
    package static func flag(_ choice: ServerChoice) -> String {
        switch choice {
        case .reference: return ""
        case .custom(let n): return " --server custom:\(n)"
        case .process, .http: return " --server " + shellQuoted(name(choice))
        }
    }
}

/// The SDK and server core types one run uses, resolved from their names.
package struct ResolvedCores: Sendable {
    /// The SDK core's type: `ReferenceSDK` for the reference and its mutants.
    package let sdk: any SDKCore.Type
    /// The server core's type: `ServerModel` for the reference.
    package let server: any ServerCore.Type
    /// Both are the reference: the caller runs its specialised path
    /// (`ReferenceSDK`, `ServerModel`), not the generic one through opened existentials.
    package let isReference: Bool
}

extension SDKCores {
    /// The cores `sdk` and `server` name; an unknown custom name of either is an error that
    /// lists the known ones.
    package func resolve(sdk: SDKChoice, server: ServerChoice) throws(CompileError) -> ResolvedCores {
        if let refusal = ServerCores.wireMutantRefusal(sdk: sdk, server: server) { throw CompileError(refusal) }
        let s = try core(for: sdk)
        let v = try servers.core(for: server)
        switch (s, v) {
        case (.reference, .reference):
            return ResolvedCores(sdk: ReferenceSDK.self, server: ServerModel.self, isReference: true)
        case (.reference, _):
            return ResolvedCores(sdk: ReferenceSDK.self, server: v.type, isReference: false)
        case (.custom(_, let type), _):
            return ResolvedCores(sdk: type, server: v.type, isReference: false)
        }
    }
}
