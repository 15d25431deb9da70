import SimKit

/// What the caller knows, to check names that the language itself cannot.
public struct ValidationContext: Equatable, Sendable {
    /// Invariant names allowed in `expect violation NAME`; empty means "do not check".
    public var knownInvariants: [String]
    /// Mutant names allowed in `sdk mutant NAME`; empty means "do not check".
    public var knownMutants: [String]
    /// A context; the default checks neither list.
    public init(knownInvariants: [String] = [], knownMutants: [String] = []) {
        self.knownInvariants = knownInvariants
        self.knownMutants = knownMutants
    }
}

/// The outcome of parsing and validating one file.
public struct ParseResult: Equatable, Sendable {
    /// The scenario, or nil when there is at least one error.
    public var scenario: ScenarioFile?
    /// Errors and warnings, in line order.
    public var diagnostics: [Diagnostic]
    /// True when some diagnostic is an error.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
    /// Every diagnostic in compiler style (see `Diagnostic.rendered`).
    public var rendered: String { Diagnostic.render(diagnostics) }
}

/// The entry point of the scenario language: text or bytes in, a checked `ScenarioFile` out.
///
/// The language is SPEC §4; the choices SPEC leaves open are these:
/// - One statement a line; lines end in `\n` (a `\r` before it is dropped). `#` starts a
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
/// - Limits are in `ScenarioLimits`; breaking one is an error, never a trap.
/// - Syntax errors are reported line by line (recovery at the next line); meaning is
///   checked only when the whole file parsed.
public enum ScenarioParser {
    /// Parses and validates `source`; `file` names it in diagnostics.
    /// - Complexity: O(n) in the size of the file, plus sorting the timeline once.
    public static func parse(_ source: String, file: String, context: ValidationContext = .init()) -> ParseResult {
        parse(bytes: Array(source.utf8), file: file, context: context)
    }

    /// Parses and validates raw bytes; invalid UTF-8 gives an error, never a crash.
    public static func parse(bytes: [UInt8], file: String, context: ValidationContext = .init()) -> ParseResult {
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

/// A syntax error on one line; the parser reports it and goes on at the next line.
struct ParseError: Error, Sendable {
    /// Byte offset in the file.
    var offset: Int
    /// Lowercase message with quoted tokens.
    var message: String
    /// Optional fix to try.
    var hint: String? = nil
    /// Optional context.
    var note: String? = nil
}

/// Keywords, for did-you-mean hints.
enum Keywords {
    /// Words that can start a statement.
    static let statements = ["scenario", "seed", "duration", "sdk", "account", "app", "devices", "clones",
                             "network", "at", "every", "expect"]
    /// Words that can start an action.
    static let actions = PersonAction.allCases.map(\.rawValue) + [
        "update", "add-photos", "offline", "server", "timeouts", "lost-responses", "rotate", "stop-old-key",
        "disable", "enable", "rollup", "forget-device",
    ]
    /// Group names that would make selectors ambiguous.
    static let reservedGroups = ["all", "device", "none"]
    /// How a selector may look.
    static let selectorHint = "selectors are: all, GROUP, N of GROUP, N% of GROUP, device GROUP#I"
    /// How a duration may look.
    static let durationHint = "durations look like 250ms, 10s, 15m, 6h, 30d or 1d12h"
}

/// The tokens of one statement and a position in them.
struct Cursor {
    let tokens: [Token]
    /// Byte offset just past the last byte of the line (where "expected …" at the end points).
    let endOffset: Int
    var pos = 0

    var atEnd: Bool { pos >= tokens.count }
    func peek(_ ahead: Int = 0) -> Token? { pos + ahead < tokens.count ? tokens[pos + ahead] : nil }
    /// The text of the last token taken, for "expected X after 'Y'".
    var previous: String { pos > 0 ? tokens[pos - 1].quoted : "the start" }
    func isWord(_ w: String) -> Bool { peek().map { $0.kind == .word && $0.text == w } ?? false }

    /// An error "expected WHAT after 'PREV'", at the next token or at the end of the line.
    func expected(_ what: String, hint: String? = nil) -> ParseError {
        if let t = peek() {
            return ParseError(offset: t.offset, message: "expected \(what) after \(previous), found \(t.quoted)", hint: hint)
        }
        return ParseError(offset: endOffset, message: "expected \(what) after \(previous)", hint: hint)
    }

    mutating func take() -> Token { pos += 1; return tokens[pos - 1] }

    mutating func keyword(_ w: String) throws(ParseError) {
        guard isWord(w) else { throw expected("'\(w)'") }
        pos += 1
    }

    mutating func word(_ what: String, hint: String? = nil) throws(ParseError) -> Token {
        guard let t = peek(), t.kind == .word else { throw expected(what, hint: hint) }
        pos += 1
        return t
    }

    static func isName(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard let first = b.first, first >= 0x61, first <= 0x7A else { return false }
        return b.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || Lexer.isDigit($0) || $0 == 0x5F || $0 == 0x2D }
    }

    mutating func name(_ what: String) throws(ParseError) -> String {
        let t = try word(what)
        guard Cursor.isName(t.text) else {
            throw ParseError(offset: t.offset, message: "invalid \(what) \(t.quoted)",
                             hint: "names start with a lowercase letter, then lowercase letters, digits, '_' or '-'")
        }
        return t.text
    }

    mutating func key() throws(ParseError) -> String {
        let t = try word("key")
        let b = Array(t.text.utf8), prefix = Array("rk_live_".utf8)
        guard b.count > prefix.count, Array(b.prefix(prefix.count)) == prefix,
              b.dropFirst(prefix.count).allSatisfy({ Lexer.isLetter($0) || Lexer.isDigit($0) || $0 == 0x5F }) else {
            throw ParseError(offset: t.offset, message: "invalid key \(t.quoted)", hint: "keys look like 'rk_live_' followed by letters, digits or '_'")
        }
        return t.text
    }

    mutating func number(_ what: String) throws(ParseError) -> UInt64 {
        guard let t = peek(), t.kind == .number else { throw expected(what) }
        pos += 1
        var value: UInt64 = 0
        for b in t.text.utf8 {
            guard Lexer.isDigit(b) else { throw ParseError(offset: t.offset, message: "invalid number \(t.quoted)") }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(b - 0x30))
            if o1 || o2 { throw ParseError(offset: t.offset, message: "number \(t.quoted) is too large") }
            value = a
        }
        return value
    }

    mutating func duration(_ what: String = "duration") throws(ParseError) -> SimTime {
        guard let t = peek(), t.kind == .number else { throw expected(what, hint: Keywords.durationHint) }
        pos += 1
        if let d = DurationText.parse(t.text) { return d }
        if Cursor.looksLikeDuration(t.text) {
            throw ParseError(offset: t.offset, message: "\(what) \(t.quoted) is too large")
        }
        throw ParseError(offset: t.offset, message: "invalid \(what) \(t.quoted)", hint: Keywords.durationHint)
    }

    /// True when `s` is digits-and-unit parts, whatever their size.
    static func looksLikeDuration(_ s: String) -> Bool {
        let b = Array(s.utf8)
        var i = 0
        guard !b.isEmpty else { return false }
        while i < b.count {
            let start = i
            while i < b.count, Lexer.isDigit(b[i]) { i += 1 }
            guard i > start, i < b.count else { return false }
            switch b[i] {
            case UInt8(ascii: "d"), UInt8(ascii: "h"), UInt8(ascii: "s"): i += 1
            case UInt8(ascii: "m"): i += (i + 1 < b.count && b[i + 1] == UInt8(ascii: "s")) ? 2 : 1
            default: return false
            }
        }
        return true
    }

    /// `N%` or `N.D%` or `N.DD%`, as basis points.
    mutating func share() throws(ParseError) -> Share {
        guard let t = peek(), t.kind == .number else { throw expected("share such as '10%'") }
        pos += 1
        guard isPercent() else { throw expected("'%'") }
        pos += 1
        let parts = t.text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(Lexer.isDigit) }) else {
            throw ParseError(offset: t.offset, message: "invalid share '\(t.text)%'")
        }
        if parts.count == 2, parts[1].utf8.count > 2 {
            throw ParseError(offset: t.offset, message: "share '\(t.text)%' has more than two decimals")
        }
        var whole: UInt64 = 0
        for b in parts[0].utf8 {
            whole = whole &* 10 &+ UInt64(b - 0x30)
            if whole > 10_000_000 { throw ParseError(offset: t.offset, message: "share '\(t.text)%' is too large") }
        }
        var frac: UInt64 = 0
        if parts.count == 2 {
            for b in parts[1].utf8 { frac = frac * 10 + UInt64(b - 0x30) }
            if parts[1].utf8.count == 1 { frac *= 10 }
        }
        return Share(basisPoints: UInt32(whole * 100 + frac))
    }

    func isPercent() -> Bool { peek()?.kind == .percent }

    mutating func end() throws(ParseError) {
        if let t = peek() {
            throw ParseError(offset: t.offset, message: "unexpected \(t.quoted) at the end of the statement")
        }
    }
}

/// The line-by-line recursive-descent parser; collects errors and recovers at the next line.
struct Parser {
    let lines: SourceLines
    let file: String
    var scenario = ScenarioFile()
    var diagnostics: [Diagnostic] = []
    var statementCount = 0
    /// Header lines already seen, to report duplicates.
    var seenHeaders: [String] = []

    init(lines: SourceLines, file: String) {
        self.lines = lines
        self.file = file
    }

    mutating func report(_ e: ParseError) {
        let (line, column) = lines.lineColumn(of: e.offset)
        diagnostics.append(Diagnostic(location: SourceLocation(file: file, line: line, column: column),
                                      message: e.message, hint: e.hint, note: e.note,
                                      sourceLine: lines.text(ofLineAt: e.offset)))
    }

    mutating func run() {
        for index in 0..<lines.count {
            if diagnostics.count >= ScenarioLimits.maxDiagnostics { return }
            let range = lines.range(ofLine: index)
            switch Lexer.lex(lines.bytes, range) {
            case let .failure(e):
                report(ParseError(offset: e.offset, message: e.message, hint: e.hint))
            case let .success(tokens):
                guard !tokens.isEmpty else { continue }
                statementCount += 1
                if statementCount > ScenarioLimits.maxStatements {
                    report(ParseError(offset: tokens[0].offset, message: "more than \(ScenarioLimits.maxStatements) statements"))
                    return
                }
                var cursor = Cursor(tokens: tokens, endOffset: range.upperBound)
                do throws(ParseError) {
                    try statement(&cursor)
                } catch {
                    report(error)
                }
            }
        }
    }

    mutating func header(_ t: Token) throws(ParseError) {
        if seenHeaders.contains(t.text) {
            throw ParseError(offset: t.offset, message: "duplicate '\(t.text)' line")
        }
        seenHeaders.append(t.text)
    }

    mutating func statement(_ c: inout Cursor) throws(ParseError) {
        let first = c.peek()!
        guard first.kind == .word else {
            throw ParseError(offset: first.offset, message: "expected a statement, found \(first.quoted)")
        }
        let mark = lines.mark(first.offset)
        c.pos += 1
        switch first.text {
        case "scenario":
            try header(first)
            guard let t = c.peek(), t.kind == .string else { throw c.expected("quoted name") }
            c.pos += 1
            scenario.name = t.text
        case "seed":
            try header(first)
            scenario.seed = try c.number("seed")
        case "duration":
            try header(first)
            scenario.duration = try c.duration()
        case "sdk":
            try header(first)
            let w = try c.word("'reference', 'mutant NAME' or 'custom NAME'")
            switch w.text {
            case "reference": scenario.sdk = .reference
            case "mutant": scenario.sdk = .mutant(try c.name("mutant name"))
            case "custom": scenario.sdk = .custom(try c.name("core name"))
            default:
                throw ParseError(offset: w.offset, message: "unknown sdk \(w.quoted)",
                                 hint: Suggest.hint(w.text, in: ["reference", "mutant", "custom"]),
                                 note: "use 'sdk reference', 'sdk mutant NAME' or 'sdk custom NAME'")
            }
        case "account":
            let name = try c.name("account name")
            var approved = true
            if c.isWord("unapproved") { c.pos += 1; approved = false }
            try c.end()
            scenario.accounts.append(AccountDecl(name: name, approved: approved, mark: mark))
        case "app":
            let name = try c.name("app name")
            try c.keyword("account")
            let account = try c.name("account name")
            try c.keyword("key")
            let key = try c.key()
            var pending = false
            if c.isWord("pending") { c.pos += 1; pending = true }
            try c.end()
            scenario.apps.append(AppDecl(name: name, account: account, key: key, pending: pending, mark: mark))
        case "devices", "clones":
            let count = try c.number("number of devices")
            try c.keyword("app")
            let app = try c.name("app name")
            var group: String? = nil
            if c.isWord("as") { c.pos += 1; group = try c.name("group name") }
            try c.end()
            scenario.groups.append(DeviceGroupDecl(kind: first.text == "devices" ? .devices : .clones,
                                                   count: count, app: app, name: group, mark: mark))
        case "network":
            try header(first)
            var net = NetworkDecl()
            net.mark = mark
            if c.isWord("latency") {
                c.pos += 1
                net.latencyMin = try c.duration("latency")
                guard c.peek()?.kind == .dotDot else { throw c.expected("'..'") }
                c.pos += 1
                net.latencyMax = try c.duration("latency")
            }
            if c.isWord("timeout") {
                c.pos += 1
                net.timeout = try c.duration("timeout")
            }
            scenario.network = net
        case "at":
            let time = try c.duration("time")
            if c.isWord("expect") {
                c.pos += 1
                let e = try expectation(&c)
                scenario.timeline.append(TimedStatement(schedule: .at(time), body: .expect(e), mark: mark))
            } else {
                let a = try action(&c)
                scenario.timeline.append(TimedStatement(schedule: .at(time), body: .action(a), mark: mark))
            }
        case "every":
            var r = Repeat(period: try c.duration("period"))
            var seen: [String] = []
            while let t = c.peek(), t.kind == .word, ["jitter", "from", "until"].contains(t.text) {
                if seen.contains(t.text) { throw ParseError(offset: t.offset, message: "duplicate \(t.quoted)") }
                seen.append(t.text)
                c.pos += 1
                switch t.text {
                case "jitter": r.jitter = try c.duration("jitter")
                case "from": r.from = try c.duration("time")
                default: r.until = try c.duration("time")
                }
            }
            if let t = c.peek(), t.kind == .word, t.text == "expect" {
                throw ParseError(offset: t.offset, message: "'expect' needs 'at', not 'every'",
                                 hint: "write 'at T expect QUANT GROUP STATE'")
            }
            let a = try action(&c)
            scenario.timeline.append(TimedStatement(schedule: .every(r), body: .action(a), mark: mark))
        case "expect":
            guard c.isWord("violation") else {
                throw c.expected("'violation'", hint: "a timed expectation starts with a time: 'at 11d expect all photos locked'")
            }
            c.pos += 1
            let name = try c.name("invariant name")
            scenario.expectedViolations.append(ExpectedViolation(invariant: name, mark: mark))
        default:
            if Keywords.actions.contains(first.text) {
                throw ParseError(offset: first.offset, message: "expected 'at' or 'every' before \(first.quoted)",
                                 hint: "actions need a time, as in 'at 1d \(first.text) …'")
            }
            throw ParseError(offset: first.offset, message: "unknown statement \(first.quoted)",
                             hint: Suggest.hint(first.text, in: Keywords.statements))
        }
        try c.end()
    }

    func selector(_ c: inout Cursor) throws(ParseError) -> DeviceSelector {
        guard let t = c.peek() else { throw c.expected("selector", hint: Keywords.selectorHint) }
        switch t.kind {
        case .word where t.text == "all":
            c.pos += 1
            return .all
        case .word where t.text == "device":
            c.pos += 1
            let group = try c.name("group name")
            guard c.peek()?.kind == .hash else { throw c.expected("'#'", hint: "a single device is written 'device GROUP#I'") }
            c.pos += 1
            let index = try c.number("device number")
            return .device(group: group, index: index)
        case .word:
            return .group(try c.name("group name"))
        case .number:
            if c.peek(1)?.kind == .percent {
                let s = try c.share()
                try c.keyword("of")
                return .share(s, of: try c.name("group name"))
            }
            let n = try c.number("number of devices")
            try c.keyword("of")
            return .count(n, of: try c.name("group name"))
        default:
            throw c.expected("selector", hint: Keywords.selectorHint)
        }
    }

    func forDuration(_ c: inout Cursor) throws(ParseError) -> SimTime {
        try c.keyword("for")
        return try c.duration()
    }

    func action(_ c: inout Cursor) throws(ParseError) -> Action {
        let w = try c.word("action")
        if let p = PersonAction(rawValue: w.text) { return .person(p, try selector(&c)) }
        switch w.text {
        case "update":
            let sel = try selector(&c)
            var key: String? = nil
            if c.isWord("key") { c.pos += 1; key = try c.key() }
            return .update(sel, key: key)
        case "add-photos":
            let n = try c.number("number of photos")
            return .addPhotos(n, try selector(&c))
        case "offline":
            let sel = try selector(&c)
            return .offline(sel, for: try forDuration(&c))
        case "server":
            let v = try c.word("'errors' or 'down'")
            switch v.text {
            case "errors":
                let s = try c.share()
                try c.keyword("status")
                let statusToken = c.peek()
                let status = try c.number("status")
                guard status <= 999 else {
                    throw ParseError(offset: statusToken!.offset, message: "status \(statusToken!.quoted) is not between 500 and 599")
                }
                return .serverErrors(s, status: UInt16(status), for: try forDuration(&c))
            case "down":
                return .serverDown(for: try forDuration(&c))
            default:
                throw ParseError(offset: v.offset, message: "expected 'errors' or 'down' after 'server', found \(v.quoted)",
                                 hint: Suggest.hint(v.text, in: ["errors", "down"]))
            }
        case "timeouts":
            let s = try c.share()
            return .timeouts(s, for: try forDuration(&c))
        case "lost-responses":
            let s = try c.share()
            return .lostResponses(s, for: try forDuration(&c))
        case "rotate":
            let app = try c.name("app name")
            try c.keyword("key")
            let key = try c.key()
            var old = OldKeyPolicy.default
            if c.isWord("stop-old") {
                c.pos += 1
                try c.keyword("now")
                old = .stopNow
            } else if c.isWord("keep-old") {
                c.pos += 1
                old = .keep(try c.duration("grace"))
            }
            return .rotate(app: app, key: key, old: old)
        case "stop-old-key":
            let app = try c.name("app name")
            return .stopOldKey(app: app, key: try c.key())
        case "disable": return .disable(app: try c.name("app name"))
        case "enable": return .enable(app: try c.name("app name"))
        case "rollup":
            let v = try c.word("rollup verb")
            if let verb = RollupAppVerb(rawValue: v.text) { return .rollupApp(verb, app: try c.name("app name")) }
            if let verb = RollupAccountVerb(rawValue: v.text) { return .rollupAccount(verb, account: try c.name("account name")) }
            let verbs = RollupAppVerb.allCases.map(\.rawValue) + RollupAccountVerb.allCases.map(\.rawValue)
            throw ParseError(offset: v.offset, message: "unknown rollup verb \(v.quoted)", hint: Suggest.hint(v.text, in: verbs),
                             note: "rollup verbs are: " + verbs.joined(separator: ", "))
        case "forget-device":
            return .forgetDevice(try selector(&c))
        default:
            throw ParseError(offset: w.offset, message: "unknown action \(w.quoted)", hint: Suggest.hint(w.text, in: Keywords.actions))
        }
    }

    func expectation(_ c: inout Cursor) throws(ParseError) -> Expectation {
        guard let t = c.peek() else { throw c.expected("quantifier", hint: "quantifiers are: all, none, N, >=N, <=N, N%, >=N%, <=N%") }
        let q: Quantifier
        switch t.kind {
        case .word where t.text == "all": c.pos += 1; q = .all
        case .word where t.text == "none": c.pos += 1; q = .none
        case .atLeast, .atMost, .number:
            var cmp = Comparison.exactly
            if t.kind != .number { c.pos += 1; cmp = t.kind == .atLeast ? .atLeast : .atMost }
            if c.peek(1)?.kind == .percent { q = .compare(cmp, .share(try c.share())) }
            else { q = .compare(cmp, .count(try c.number("number of devices"))) }
        default:
            throw c.expected("quantifier", hint: "quantifiers are: all, none, N, >=N, <=N, N%, >=N%, <=N%")
        }
        let group = try c.name("group name")
        let s = try c.word("state")
        guard let state = DeviceStateName(rawValue: s.text) else {
            let names = DeviceStateName.allCases.map(\.rawValue)
            throw ParseError(offset: s.offset, message: "unknown state \(s.quoted); states are: " + names.joined(separator: ", "),
                             hint: Suggest.hint(s.text, in: names))
        }
        return Expectation(quantifier: q, group: group, state: state)
    }
}
