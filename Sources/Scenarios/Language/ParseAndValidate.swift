import SimKit

/// What the caller knows, to check names that the language itself cannot.
package struct ValidationContext: Equatable, Sendable {
    /// Invariant names allowed in `expect violation NAME`; empty means "do not check".
    package var knownInvariants: [String]
    /// Mutant names allowed in `sdk mutant NAME`; empty means "do not check".
    package var knownMutants: [String]
    /// Core names allowed in `sdk custom NAME` (`SDKCores.names`); nil means "do not
    /// check". Empty is a list: a tool that knows no custom core refuses every one.
    package var knownCores: [String]?
    /// Server core names allowed in `server custom NAME` (`ServerCores.names`); nil means
    /// "do not check", empty refuses every one.
    package var knownServers: [String]?
    /// A context; the default checks none of the lists.
    package init(knownInvariants: [String] = [], knownMutants: [String] = [], knownCores: [String]? = nil,
                knownServers: [String]? = nil) {
        self.knownInvariants = knownInvariants
        self.knownMutants = knownMutants
        self.knownCores = knownCores
        self.knownServers = knownServers
    }
}

/// The outcome of parsing and validating one file.
package struct ParseResult: Equatable, Sendable {
    /// The scenario, or nil when there is at least one error.
    package var scenario: ScenarioFile?
    /// Errors and warnings, in line order.
    package var diagnostics: [Diagnostic]
    /// True when some diagnostic is an error.
    package var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
    /// Every diagnostic in compiler style (see `Diagnostic.rendered`).
    package var rendered: String { Diagnostic.render(diagnostics) }

    /// The same result with every warning made an error (`--strict`): no scenario when there is one.
    package func strict() -> ParseResult {
        let all = diagnostics.map { d -> Diagnostic in var e = d; e.severity = .error; return e }
        return ParseResult(scenario: all.isEmpty ? scenario : nil, diagnostics: all)
    }
}

/// The entry point of the scenario language: text or bytes in, a checked `ScenarioFile` out.
///
/// The language is SPEC §4; the choices SPEC leaves open are these:
/// - One statement a line; lines end in LF, CRLF or a lone CR, and a UTF-8 byte order mark
///   at the start is skipped. `#` starts a
///   comment at the start of a line or after a space or tab; glued to a word it is the
///   device mark of `device GROUP#I`. Non-ASCII bytes are allowed only in strings and
///   comments, and must be valid UTF-8 everywhere.
/// - Header lines (`scenario "…"`, `seed`, `duration`, `sdk`, `network`) may appear once
///   each, anywhere; declarations and statements may come in any order (names are
///   resolved over the whole file). The printer puts headers first.
/// - `scenario "NAME"` takes a double-quoted string with `\"` and `\\` escapes; no
///   control characters. Absent: the empty name.
/// - `sdk reference | mutant NAME | custom NAME`. `network [latency A..B] [timeout T]`.
/// - `every D [jitter J] [from T] [until T] ACTION`: the options in any order, each once;
///   `until` is inclusive and must not be before the first firing. `expect` only with `at`.
/// - `rotate` and `stop-old-key` only with `at` (each rotation needs a fresh key).
///   `rotate` without a policy means `keep-old 30d`. `stop-old-key APP K` needs K to be a
///   previous key of APP at that moment, replaying rotations in time, then file, order.
/// - Shares: `N%` with up to two decimals, at most 100%, stored as basis points.
///   `N` and `N%` in expectations mean exactly (see `Quantifier`).
/// - Group names `all`, `device` and `none` are reserved; `all` in a selector or an
///   expectation means every device, clones included (`10% of all`, `expect none all purged`).
/// - `update SEL key K` accepts any well-formed key, known or not (a wrong build).
/// - Limits are in `ScenarioLimits`; breaking one is an error, never a trap. Every span
///   (`for`, a period, `jitter`, `keep-old`) is at most the longest duration, 3650d;
///   `timeout` and `latency` at most 1h; `add-photos` at most 1,000,000.
/// - Warnings (the file still runs; `--strict` makes them errors): a file with no
///   devices, no actions, or nothing expected; a `jitter` longer than the duration; an
///   `every` without `from` whose first firing is past the end (it never fires).
/// - Syntax errors are reported line by line (recovery at the next line); meaning is
///   checked only when the whole file parsed.
package enum ScenarioParser {
    /// Parses and validates `source`; `file` names it in diagnostics.
    /// - Complexity: O(n) in the size of the file, plus sorting the timeline once.
    package static func parse(_ source: String, file: String, context: ValidationContext = .init()) -> ParseResult {
        parse(bytes: Array(source.utf8), file: file, context: context)
    }

    /// Parses and validates raw bytes; invalid UTF-8 gives an error, never a crash.
    package static func parse(bytes: [UInt8], file: String, context: ValidationContext = .init()) -> ParseResult {
        if bytes.count > ScenarioLimits.maxFileBytes {
            let d = Diagnostic(location: SourceLocation(file: file, line: 1, column: 1),
                               message: "file is larger than \(ScenarioLimits.maxFileBytes) bytes")
            return ParseResult(scenario: nil, diagnostics: [d])
        }
        let lines = SourceLines(bytes)
        var parser = Parser(lines: lines, file: file)
        parser.run()
        var diagnostics = parser.diagnostics
        if diagnostics.isEmpty {
            var validator = Validator(scenario: parser.scenario, lines: lines, file: file, context: context)
            validator.run()
            diagnostics = validator.diagnostics
        }
        // Line order; the index keeps equal locations in the order found (sort is not promised stable).
        diagnostics = diagnostics.enumerated()
            .sorted { ($0.element.location.line, $0.element.location.column, $0.offset) < ($1.element.location.line, $1.element.location.column, $1.offset) }
            .map(\.element)
        if diagnostics.count > ScenarioLimits.maxDiagnostics { diagnostics.removeLast(diagnostics.count - ScenarioLimits.maxDiagnostics) }
        let failed = diagnostics.contains { $0.severity == .error }
        return ParseResult(scenario: failed ? nil : parser.scenario, diagnostics: diagnostics)
    }
}
