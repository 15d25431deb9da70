import SimKit
import ScenarioLanguage

/// The SDK cores a tool knows by name, besides the reference and its mutants: a core
/// registered as `mine` runs for `sdk custom mine` in a scenario and `--sdk custom:mine`
/// on the command line, and every reproducer or replay command of a failure it caused
/// names it so.
///
/// ```swift
/// let cores: SDKCores = ["mine": MySDK.self]
/// let run = try SimKitTest.scenario(file: "mine.scenario", cores: cores)   // `sdk custom mine`
/// ```
///
/// Entries are kept sorted by name, so nothing that lists them (a usage text, an error's
/// list of known names) depends on a dictionary's order. A name is a scenario name,
/// `[a-z][a-z0-9_-]*`; `reference` and the mutants keep their own spelling.
public struct SDKCores: Sendable, ExpressibleByDictionaryLiteral {
    /// One registered core.
    package struct Entry: Sendable {
        /// The name it runs under: `sdk custom NAME`, `--sdk custom:NAME`.
        package let name: String
        /// The core's type; each device runs its own value of it.
        package let type: any SDKCore.Type
    }

    /// Every registered core, sorted by name.
    package let entries: [Entry]
    /// The custom server cores the tool knows (`server custom NAME`, `--server custom:NAME`);
    /// none by default. They travel with the SDK cores so that everything that takes
    /// `cores` knows both.
    public var servers: ServerCores

    /// No custom core: only the reference and its mutants, on the reference server.
    public init() { entries = []; servers = ServerCores() }

    /// The cores of `cores`, sorted by name, and the server cores `servers`. Every name
    /// must be valid (`SDKCores.problem(withName:)` is nil): a wrong name is a programming
    /// error in the caller's package, not bad input.
    public init(_ cores: [String: any SDKCore.Type], servers: ServerCores = ServerCores()) {
        var list: [Entry] = []
        for name in cores.keys.sorted() {
            if let problem = SDKCores.problem(withName: name) { preconditionFailure(problem) }
            list.append(Entry(name: name, type: cores[name]!))
        }
        entries = list
        self.servers = servers
    }

    /// `["mine": MySDK.self, "other": OtherSDK.self]`; a name given twice keeps the last.
    public init(dictionaryLiteral elements: (String, any SDKCore.Type)...) {
        var cores: [String: any SDKCore.Type] = [:]
        for (name, type) in elements { cores[name] = type }
        self.init(cores)
    }

    /// A name for `type` when none is given: its Swift name in kebab case (`MySDK` →
    /// `my-sdk`, `AppTeamCore` → `app-team-core`), letters and digits only.
    package static func defaultName<SDK: SDKCore>(for type: SDK.Type) -> String {
        kebabName(of: type, prefix: "core-")
    }

    /// `type`'s Swift name in kebab case, letters and digits only, at most 64 characters;
    /// `prefix` goes first when the name would not start with a letter.
    static func kebabName(of type: Any.Type, prefix: String) -> String {
        var out = ""
        var previous: Character?
        for c in String(describing: type) where c.isASCII && (c.isLetter || c.isNumber) {
            if c.isUppercase, let p = previous, p.isLowercase || p.isNumber { out.append("-") }
            out.append(Character(c.lowercased()))
            previous = c
        }
        if out.isEmpty || !(out.first!.isLetter) { out = prefix + out }
        return String(out.prefix(64))
    }

    /// The registered names, sorted.
    package var names: [String] { entries.map(\.name) }

    /// The core registered as `name`, or nil.
    /// - Complexity: O(cores).
    package func type(named name: String) -> (any SDKCore.Type)? {
        entries.first { $0.name == name }?.type
    }

    /// Why `name` cannot name a core, or nil when it can: a scenario name
    /// (`[a-z][a-z0-9_-]*`, at most 64 bytes), not `reference`.
    package static func problem(withName name: String) -> String? {
        let bytes = Array(name.utf8)
        func isLower(_ b: UInt8) -> Bool { b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z") }
        func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        guard let first = bytes.first, isLower(first), bytes.count <= 64,
              bytes.allSatisfy({ isLower($0) || isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
            return "sdk core name '\(name)' is not a scenario name: [a-z][a-z0-9_-]*, at most 64 characters"
        }
        if name == "reference" { return "sdk core name 'reference' is taken by the reference SDK" }
        return nil
    }

    /// What a choice runs: the reference SDK (also for a mutant, whose flaws reach the
    /// reference SDK and server through `WorldSetup.sdkFlaws` and `serverFlaws`), or a registered core.
    package enum Core {
        case reference
        case custom(name: String, type: any SDKCore.Type)
    }

    /// The core `choice` runs; a custom name that is not registered is an error that lists
    /// the known names (a mutant's name is checked when the scenario is compiled).
    package func core(for choice: SDKChoice) throws(CompileError) -> Core {
        switch choice {
        case .reference, .mutant: return .reference
        case .custom(let name):
            guard let type = type(named: name) else { throw CompileError(SDKCores.unknownMessage(name, known: names)) }
            return .custom(name: name, type: type)
        }
    }

    /// "unknown sdk core 'x'; …" with what is known, for every place that resolves a name.
    package static func unknownMessage(_ name: String, known: [String]) -> String {
        let list = known.isEmpty
            ? "this tool knows no custom core (a package registers its own: SimKitCommand.main(sdks: [\"\(name)\": MySDK.self]))"
            : "custom cores are: " + known.joined(separator: ", ")
        return "unknown sdk core '\(name)'; \(list)"
    }

    /// Parses a command line's `--sdk` value: `reference`, `mutant:NAME` (a known mutant) or
    /// `custom:NAME` (a registered core); nil when it names none of them.
    package func parse(_ text: String) -> SDKChoice? {
        if let choice = Fuzz.parseSDK(text) { return choice }
        if text.hasPrefix("custom:"), type(named: String(text.dropFirst(7))) != nil { return .custom(String(text.dropFirst(7))) }
        return nil
    }
}
