import Foundation
import ServerWire
import SimKit

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

    /// One statement line: dispatches on its first word; each kind of line has its own function.
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
            try sdkHeader(&c)
        case "server":
            try header(first)
            try serverHeader(&c)
        case "schedule":
            try header(first)
            try scheduleHeader(&c)
        case "storage":
            try header(first)
            try storageHeader(&c, at: first.offset)
        case "account": try accountDecl(&c, mark: mark)
        case "app": try appDecl(&c, mark: mark)
        case "devices", "clones": try deviceGroupDecl(&c, clones: first.text == "clones", mark: mark)
        case "network":
            try header(first)
            try networkDecl(&c, mark: mark)
        case "at": try atStatement(&c, mark: mark)
        case "every": try everyStatement(&c, mark: mark)
        case "pin": try pinDecl(&c, mark: mark)
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

    /// `sdk reference`, `sdk mutant NAME` or `sdk custom NAME`, after the word `sdk`.
    mutating func sdkHeader(_ c: inout Cursor) throws(ParseError) {
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
    }

    /// `schedule fifo` or `schedule seed N` (1 ≤ N < 2³²), after the word `schedule`.
    mutating func scheduleHeader(_ c: inout Cursor) throws(ParseError) {
        let w = try c.word("'fifo' or 'seed N'")
        switch w.text {
        case "fifo": scenario.schedule = 0
        case "seed":
            let at = c.peek()?.offset ?? w.offset
            let n = try c.number("schedule seed")
            guard n >= 1, n <= UInt64(UInt32.max) else {
                throw ParseError(offset: at, message: "schedule seed \(n) is out of range",
                                 hint: "use 1 to \(UInt32.max), or 'schedule fifo' for the order jobs became ready")
            }
            scenario.schedule = UInt32(n)
        default:
            throw ParseError(offset: w.offset, message: "unknown schedule \(w.quoted)",
                             hint: Suggest.hint(w.text, in: ["fifo", "seed"]),
                             note: "use 'schedule fifo' or 'schedule seed N'")
        }
    }

    /// `storage latency D` (1 ms ≤ D ≤ 65535 ms), after the word `storage`.
    mutating func storageHeader(_ c: inout Cursor, at lineStart: Int) throws(ParseError) {
        guard c.isWord("latency") else { throw c.expected("'latency'", hint: "storage latency 20ms") }
        c.pos += 1
        let at = c.peek()?.offset ?? lineStart
        let d = try c.duration("storage latency")
        guard d > 0 else {
            throw ParseError(offset: at, message: "storage latency must be more than 0",
                             hint: "leave the line out for writes that take no time")
        }
        guard d <= SimTime(UInt16.max) else {
            throw ParseError(offset: at, message: "storage latency '\(DurationText.format(d))' is too long",
                             hint: "at most \(DurationText.format(SimTime(UInt16.max))): a write that takes longer is a failing disk, not a slow one")
        }
        scenario.storageLatency = d
    }

    /// `server reference`, `server custom NAME`, `server process "CMD"` or `server http "URL"`,
    /// after the word `server`.
    mutating func serverHeader(_ c: inout Cursor) throws(ParseError) {
        let w = try c.word("'reference', 'custom NAME', 'process \"CMD\"' or 'http \"URL\"'")
        switch w.text {
        case "reference": scenario.server = .reference
        case "custom": scenario.server = .custom(try c.name("server core name"))
        case "process":
            guard let t = c.peek(), t.kind == .string else { throw c.expected("quoted command", hint: "server process \"python3 server.py\"") }
            guard !t.text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ParseError(offset: t.offset, message: "empty server command", hint: "server process \"python3 server.py\"")
            }
            c.pos += 1
            scenario.server = .process(t.text)
        case "http":
            guard let t = c.peek(), t.kind == .string else { throw c.expected("quoted URL", hint: "server http \"http://127.0.0.1:8035\"") }
            guard HTTPTransport.parse(t.text) != nil else {
                throw ParseError(offset: t.offset, message: "invalid server URL \(WireJSON.quote(t.text))",
                                 hint: "use http://HOST:PORT or http://HOST:PORT/PATH, e.g. \"http://127.0.0.1:8035\"")
            }
            c.pos += 1
            scenario.server = .http(t.text)
        default:
            throw ParseError(offset: w.offset, message: "unknown server \(w.quoted)",
                             hint: Suggest.hint(w.text, in: ["reference", "custom", "process", "http"]),
                             note: "use 'server reference', 'server custom NAME', 'server process \"CMD\"' or 'server http \"URL\"' (server faults go in the timeline: 'at 1d server down for 1h')")
        }
    }

    /// `account NAME [unapproved]`, after the word `account`.
    mutating func accountDecl(_ c: inout Cursor, mark: SourceMark) throws(ParseError) {
        let name = try c.name("account name")
        var approved = true
        if c.isWord("unapproved") { c.pos += 1; approved = false }
        try c.end()
        scenario.accounts.append(AccountDecl(name: name, approved: approved, mark: mark))
    }

    /// `app NAME account ACCOUNT key KEY [pending]`, after the word `app`.
    mutating func appDecl(_ c: inout Cursor, mark: SourceMark) throws(ParseError) {
        let name = try c.name("app name")
        try c.keyword("account")
        let account = try c.name("account name")
        try c.keyword("key")
        let key = try c.key()
        var pending = false
        if c.isWord("pending") { c.pos += 1; pending = true }
        try c.end()
        scenario.apps.append(AppDecl(name: name, account: account, key: key, pending: pending, mark: mark))
    }

    /// `devices N app APP [as GROUP] [latency A..B]` or the same for `clones`, which may also
    /// say `copying GROUP`; after the first word.
    mutating func deviceGroupDecl(_ c: inout Cursor, clones: Bool, mark: SourceMark) throws(ParseError) {
        let count = try c.number("number of devices")
        try c.keyword("app")
        let app = try c.name("app name")
        var group: String? = nil
        if c.isWord("as") { c.pos += 1; group = try c.name("group name") }
        var copying: String? = nil
        if clones, c.isWord("copying") { c.pos += 1; copying = try c.name("group name") }
        // Either order reads naturally: `as fakes copying photos`, `copying photos as fakes`.
        if group == nil, copying != nil, c.isWord("as") { c.pos += 1; group = try c.name("group name") }
        var latency: ClosedRange<SimTime>? = nil
        if c.isWord("latency") {
            c.pos += 1
            latency = try groupLatency(&c)
        }
        try c.end()
        var decl = DeviceGroupDecl(kind: clones ? .clones : .devices,
                                   count: count, app: app, name: group, copying: copying, mark: mark)
        decl.latency = latency
        scenario.groups.append(decl)
    }

    /// A group's `A..B` latency range, after the word `latency`: not empty, within the limit.
    func groupLatency(_ c: inout Cursor) throws(ParseError) -> ClosedRange<SimTime> {
        let lowToken = c.peek()
        let low = try c.duration("latency")
        guard c.peek()?.kind == .dotDot else { throw c.expected("'..'") }
        c.pos += 1
        let highToken = c.peek()
        let high = try c.duration("latency")
        guard low <= high else {
            throw ParseError(offset: lowToken?.offset ?? 0, message: "latency range '\(lowToken?.text ?? "")..\(highToken?.text ?? "")' is empty")
        }
        guard high <= ScenarioLimits.maxLatencyMs else {
            throw ParseError(offset: highToken?.offset ?? 0,
                             message: "latency '\(highToken?.text ?? "")' is longer than the limit of \(DurationText.format(ScenarioLimits.maxLatencyMs))")
        }
        return low...high
    }

    /// `network [latency A..B] [timeout T]`, after the word `network`.
    mutating func networkDecl(_ c: inout Cursor, mark: SourceMark) throws(ParseError) {
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
    }

    /// `at T ACTION` or `at T expect …`, after the word `at`.
    mutating func atStatement(_ c: inout Cursor, mark: SourceMark) throws(ParseError) {
        let time = try c.duration("time")
        if c.isWord("expect") {
            c.pos += 1
            let e = try expectation(&c)
            scenario.timeline.append(TimedStatement(schedule: .at(time), body: .expect(e), mark: mark))
        } else {
            let a = try action(&c)
            scenario.timeline.append(TimedStatement(schedule: .at(time), body: .action(a), mark: mark))
        }
    }

    /// `every P [jitter J] [from T] [until T] ACTION`, after the word `every`; each option once.
    mutating func everyStatement(_ c: inout Cursor, mark: SourceMark) throws(ParseError) {
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
    }

    /// `pin device GROUP#I request N FATE`, after the word `pin`.
    mutating func pinDecl(_ c: inout Cursor, mark: SourceMark) throws(ParseError) {
        try c.keyword("device")
        let group = try c.name("group name")
        guard c.peek()?.kind == .hash else { throw c.expected("'#'", hint: "a pin names one device: 'pin device GROUP#I request N FATE'") }
        c.pos += 1
        let index = try c.number("device number")
        try c.keyword("request")
        let request = try c.number("request number")
        let w = try c.word("a fate: " + RequestFate.allCases.map(\.description).joined(separator: ", "))
        guard let fate = RequestFate(name: w.text) else {
            throw ParseError(offset: w.offset, message: "unknown fate \(w.quoted)",
                             hint: Suggest.hint(w.text, in: RequestFate.allCases.map(\.description)),
                             note: "fates are: " + RequestFate.allCases.map(\.description).joined(separator: ", "))
        }
        scenario.pins.append(PinDecl(group: group, index: index, request: request, fate: fate, mark: mark))
    }

    /// An action, the rest of an `at` or `every` line; the longer forms have their own functions.
    func action(_ c: inout Cursor) throws(ParseError) -> Action {
        let w = try c.word("action")
        if let p = PersonAction(rawValue: w.text) { return .person(p, try c.selector()) }
        switch w.text {
        case "update":
            let sel = try c.selector()
            var key: String? = nil
            if c.isWord("key") { c.pos += 1; key = try c.key() }
            return .update(sel, key: key)
        case "add-photos":
            let n = try c.number("number of photos")
            return .addPhotos(n, try c.selector())
        case "rotate": return try rotateAction(&c)
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
            return .forgetDevice(try c.selector())
        default:
            if let fault = try faultStatement(after: w, &c) { return .fault(fault) }
            throw ParseError(offset: w.offset, message: "unknown action \(w.quoted)", hint: Suggest.hint(w.text, in: Keywords.actions))
        }
    }

    /// The fault statement that starts with the word `first`, or nil when no fault kind's
    /// keyword does. When several kinds start with it (`server errors`, `server down`), the
    /// next word says which; each kind parses the rest of its statement itself.
    func faultStatement(after first: Token, _ c: inout Cursor) throws(ParseError) -> AnyFaultStatement? {
        let kinds = Faults.kinds.filter { $0.keyword[0] == first.text }
        guard let only = kinds.first else { return nil }
        if kinds.count == 1, only.keyword.count == 1 { return AnyFaultStatement(try only.parse(&c)) }
        let words = kinds.map { $0.keyword[1] }
        let choices = words.dropLast().map { "'\($0)'" }.joined(separator: ", ") + " or '\(words.last!)'"
        let v = try c.word(choices)
        guard let kind = kinds.first(where: { $0.keyword[1] == v.text }) else {
            throw ParseError(offset: v.offset, message: "expected \(choices) after \(first.quoted), found \(v.quoted)",
                             hint: Suggest.hint(v.text, in: words))
        }
        return AnyFaultStatement(try kind.parse(&c))
    }

    /// `rotate APP key KEY [stop-old now | keep-old D]`, after the word `rotate`.
    func rotateAction(_ c: inout Cursor) throws(ParseError) -> Action {
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
        // `expect 3 of photos locked` reads well but is not the grammar (a group may be
        // named `of`, so only three words after the quantifier mean this).
        if c.isWord("of"), let of = c.peek(), let g = c.peek(1), let st = c.peek(2), g.kind == .word, st.kind == .word {
            throw ParseError(offset: of.offset, message: "unexpected 'of' after the quantifier",
                             hint: "the group follows the quantifier: '\(g.text) \(st.text)'")
        }
        // `expect all device photos#1 idle`: a device selector is not the grammar either.
        // (A group may be named `device`: only `device GROUP#` means this.)
        if c.isWord("device"), let dev = c.peek(), let g = c.peek(1), let h = c.peek(2), g.kind == .word, h.kind == .hash {
            throw ParseError(offset: dev.offset, message: "'expect' takes a group, not a device",
                             hint: "write a group after the quantifier, as in 'expect all \(g.text) idle'; to watch one device, give it a group of its own ('devices 1 app APP as NAME')")
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
