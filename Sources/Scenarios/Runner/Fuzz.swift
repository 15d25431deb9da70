import SimKit
import Invariants
import ScenarioLanguage

/// Running scenarios for the fuzzer: one seed, or one scenario, with every invariant checked.
/// The namespace and the core names are here, with the runner, which names cores too
/// (`SDKCores.parse`, the timeline); ScenarioSearch adds the runs (Fuzz/FuzzSeed.swift).
package enum Fuzz {
    /// The name used in results and commands: `reference`, `mutant:NAME` or `custom:NAME`.
    package static func sdkName(_ sdk: SDKChoice) -> String {
        switch sdk {
        case .reference: "reference"
        case .mutant(let n): "mutant:\(n)"
        case .custom(let n): "custom:\(n)"
        }
    }

    /// Parses `reference` or `mutant:NAME`; nil when it names no known SDK (custom cores:
    /// `SDKCores.parse`, which knows their names).
    package static func parseSDK(_ text: String) -> SDKChoice? {
        if text == "reference" { return .reference }
        if text.hasPrefix("mutant:"), Mutants.named(String(text.dropFirst(7))) != nil { return .mutant(String(text.dropFirst(7))) }
        return nil
    }

    /// The server's name in results: nil for the reference, `custom:NAME` otherwise.
    package static func serverName(_ server: ServerChoice) -> String? {
        if case .reference = server { return nil }
        return ServerCores.name(server)
    }
}
