import SimKit

/// Checks the meaning of a parsed scenario: names, times, sizes, keys and limits.
///
/// Runs only when the file parsed without syntax errors. Diagnostics point at the
/// offending token: the validator re-reads the statement's line to find it.
struct Validator {
    let scenario: ScenarioFile
    let lines: SourceLines?
    let file: String
    let context: ValidationContext
    var diagnostics: [Diagnostic] = []
    /// Devices in the scenario, clones included (capped just above the limit); the size of `all`.
    var allDevices: UInt64 = 0

    init(scenario: ScenarioFile, lines: SourceLines?, file: String, context: ValidationContext) {
        self.scenario = scenario
        self.lines = lines
        self.file = file
        self.context = context
    }

    // MARK: Reporting

    /// Tokens of the line at `mark`, or empty for a synthetic mark.
    func tokens(_ mark: SourceMark) -> [Token] {
        guard let lines, mark.line >= 1 else { return [] }
        if case let .success(t) = Lexer.lex(lines.bytes, lines.range(ofLine: mark.line - 1)) { return t }
        return []
    }

    /// Where to point: the first token spelled `text` (after the first `after` word, if given).
    func locate(_ mark: SourceMark, _ text: String? = nil, after: String? = nil) -> Int {
        let ts = tokens(mark)
        var start = 1
        if let after {
            guard let i = ts.firstIndex(where: { $0.kind == .word && $0.text == after }) else { return mark.offset }
            start = i + 1
            if text == nil { return start < ts.count ? ts[start].offset : mark.offset }
        }
        if let text, start < ts.count, let t = ts[start...].first(where: { $0.text == text }) { return t.offset }
        return mark.offset
    }

    /// The token after the word `after` on the line at `mark`, as written; `value` printed
    /// canonically when there is no source (a scenario built in code).
    func spelled(_ mark: SourceMark, after: String, _ value: SimTime) -> String {
        let ts = tokens(mark)
        if let i = ts.firstIndex(where: { $0.kind == .word && $0.text == after }), i + 1 < ts.count { return ts[i + 1].text }
        return DurationText.format(value)
    }

    mutating func error(_ mark: SourceMark, _ text: String? = nil, after: String? = nil, _ message: String,
                        hint: String? = nil, note: String? = nil, severity: Diagnostic.Severity = .error) {
        guard diagnostics.count < ScenarioLimits.maxDiagnostics else { return }
        let offset = locate(mark, text, after: after)
        var location = SourceLocation(file: file, line: mark.line, column: mark.column)
        var sourceLine = ""
        if let lines, mark.line >= 1 {
            let lc = lines.lineColumn(of: offset)
            location = SourceLocation(file: file, line: lc.line, column: lc.column)
            sourceLine = lines.text(ofLineAt: offset)
        }
        diagnostics.append(Diagnostic(severity: severity, location: location, message: message, hint: hint, note: note,
                                      sourceLine: sourceLine))
    }

    /// A warning: the file is accepted, but part of it probably does not do what was meant.
    mutating func warning(_ mark: SourceMark, _ text: String? = nil, after: String? = nil, _ message: String,
                          hint: String? = nil, note: String? = nil) {
        error(mark, text, after: after, message, hint: hint, note: note, severity: .warning)
    }

    /// A warning about the whole file, at line 1, column 1 (or unlocated when built in code).
    mutating func fileWarning(_ message: String, hint: String? = nil) {
        let mark = lines == nil ? SourceMark.synthetic : SourceMark(offset: lines!.lineStarts[0], line: 1, column: 1)
        warning(mark, nil, message, hint: hint)
    }

    /// "unknown group 'x'; groups are: a, b" with a did-you-mean hint.
    mutating func unknown(_ what: String, _ plural: String, _ name: String, _ known: [String], _ mark: SourceMark) {
        guard diagnostics.count < ScenarioLimits.maxDiagnostics else { return }
        let shown = known.prefix(20).joined(separator: ", ") + (known.count > 20 ? ", and \(known.count - 20) more" : "")
        let list = known.isEmpty ? "no \(plural) are declared" : "\(plural) are: " + shown
        error(mark, name, "unknown \(what) '\(name)'; \(list)", hint: Suggest.hint(name, in: known))
    }

    /// Names in declaration order, with O(1) membership (the dictionary is never iterated).
    struct NameTable {
        /// The names in the order they were added.
        private(set) var names: [String] = []
        private var index: [String: Int] = [:]
        func contains(_ name: String) -> Bool { index[name] != nil }
        func firstIndex(of name: String) -> Int? { index[name] }
        mutating func append(_ name: String) {
            if index[name] == nil { index[name] = names.count }
            names.append(name)
        }
    }

    // MARK: Checks

    /// All checks, in the order their diagnostics are reported: headers, network, the
    /// declarations in file order, expected violations, pins, then the timeline.
    mutating func run() {
        checkHeaders()
        checkNetwork()
        let accounts = checkAccounts()
        let (apps, declaredKeys) = checkApps(accounts: accounts)
        var keysUsed = declaredKeys
        let (groups, sizes) = checkGroups(apps: apps)
        checkExpectedViolations()
        checkPins(groups: groups, sizes: sizes)
        checkTimeline(groups: groups, sizes: sizes, apps: apps, accounts: accounts, keysUsed: &keysUsed)
        checkKeyHistory()
        checkTestsSomething()
    }

    /// The duration's bounds, and that a named mutant or custom core is one this tool knows.
    mutating func checkHeaders() {
        let s = scenario
        let d = DurationText.format
        if s.duration == 0 { error(headerMark("duration"), after: "duration", "duration must be longer than 0s") }
        if s.duration > ScenarioLimits.maxDuration {
            error(headerMark("duration"), after: "duration", "duration '\(d(s.duration))' is longer than the limit of 3650d")
        }
        if case let .mutant(m) = s.sdk, !context.knownMutants.isEmpty, !context.knownMutants.contains(m) {
            error(headerMark("sdk"), m, "unknown mutant '\(m)'", hint: Suggest.hint(m, in: context.knownMutants),
                  note: "mutants are: " + context.knownMutants.joined(separator: ", "))
        }
        if case let .custom(c) = s.sdk, let cores = context.knownCores, !cores.contains(c) {
            error(headerMark("sdk"), c, "unknown sdk core '\(c)'", hint: Suggest.hint(c, in: cores),
                  note: cores.isEmpty ? "this tool knows no custom core; a package registers its own with SimKitCommand.main(sdks: [\"\(c)\": MySDK.self])"
                                      : "custom cores are: " + cores.joined(separator: ", "))
        }
        if case let .custom(c) = s.server, let servers = context.knownServers, !servers.contains(c) {
            error(headerMark("server"), c, "unknown server core '\(c)'", hint: Suggest.hint(c, in: servers),
                  note: servers.isEmpty ? "this tool knows no custom server core; a package registers its own with SimKitCommand.main(servers: [\"\(c)\": MyServer.self])"
                                        : "custom server cores are: " + servers.joined(separator: ", "))
        }
    }

    /// The network line: a latency range that is not empty, and timeout and latency within limits.
    mutating func checkNetwork() {
        let d = DurationText.format
        let net = scenario.network
        if net.latencyMin > net.latencyMax {
            error(net.mark, after: "latency", "latency range '\(d(net.latencyMin))..\(d(net.latencyMax))' is empty")
        }
        if net.timeout == 0 { error(net.mark, after: "timeout", "timeout must be longer than 0s") }
        if net.timeout > ScenarioLimits.maxTimeoutMs {
            error(net.mark, after: "timeout", "timeout '\(spelled(net.mark, after: "timeout", net.timeout))' is longer than the limit of \(d(ScenarioLimits.maxTimeoutMs))")
        }
        if net.latencyMax > ScenarioLimits.maxLatencyMs {
            // The largest latency is the token after '..'.
            let ts = tokens(net.mark)
            let spelledMax = ts.firstIndex { $0.kind == .dotDot }.flatMap { $0 + 1 < ts.count ? ts[$0 + 1].text : nil } ?? d(net.latencyMax)
            error(net.mark, spelledMax, "latency '\(spelledMax)' is longer than the limit of \(d(ScenarioLimits.maxLatencyMs))")
        }
    }

    /// Duplicate accounts; returns the accounts declared.
    mutating func checkAccounts() -> NameTable {
        var accounts = NameTable()
        for a in scenario.accounts {
            if accounts.contains(a.name) { error(a.mark, a.name, "duplicate account '\(a.name)'") } else { accounts.append(a.name) }
        }
        return accounts
    }

    /// Duplicate apps and keys, and apps of unknown accounts; returns the apps and keys declared.
    mutating func checkApps(accounts: NameTable) -> (apps: NameTable, keysUsed: NameTable) {
        var apps = NameTable()
        var keysUsed = NameTable()
        for a in scenario.apps {
            if apps.contains(a.name) { error(a.mark, a.name, "duplicate app '\(a.name)'") } else { apps.append(a.name) }
            if !accounts.contains(a.account) { unknown("account", "accounts", a.account, accounts.names, a.mark) }
            if keysUsed.contains(a.key) { error(a.mark, a.key, "key '\(a.key)' is already used") } else { keysUsed.append(a.key) }
        }
        return (apps, keysUsed)
    }

    /// Device groups: names, apps, what clones copy and the total device limit; sets
    /// `allDevices` and returns the groups declared with their sizes.
    mutating func checkGroups(apps: NameTable) -> (groups: NameTable, sizes: [UInt64]) {
        let s = scenario
        var groups = NameTable()
        var sizes: [UInt64] = []
        var total: UInt64 = 0
        for g in s.groups {
            if Keywords.reservedGroups.contains(g.name) {
                error(g.mark, g.name, "group name '\(g.name)' is reserved", hint: "give the group another name with 'as GROUP'")
            } else if groups.contains(g.name) {
                error(g.mark, g.name, "duplicate group '\(g.name)'", hint: "give the group another name with 'as GROUP'")
            } else { groups.append(g.name); sizes.append(g.count) }
            if !apps.contains(g.app) { unknown("app", "apps", g.app, apps.names, g.mark) }
            if let source = g.copying {
                if let k = s.groups.firstIndex(where: { $0.name == source }), s.groups[k].kind == .devices {
                    if s.groups[k].app != g.app {
                        error(g.mark, source, "clones of '\(g.app)' cannot copy credentials of '\(source)', devices of '\(s.groups[k].app)'")
                    }
                } else {
                    error(g.mark, source, "'copying' names no group of genuine devices: '\(source)'",
                          hint: "declare the devices first: devices N app \(g.app)")
                }
            }
            let before = total
            total = min(total + min(g.count, ScenarioLimits.maxDevices + 1), ScenarioLimits.maxDevices + 1)
            if total > ScenarioLimits.maxDevices, before <= ScenarioLimits.maxDevices {
                error(g.mark, "\(g.count)", "more than \(ScenarioLimits.maxDevices) devices in total")
            }
        }
        allDevices = total
        return (groups, sizes)
    }

    /// Expected violations: no duplicates, and invariants this tool knows.
    mutating func checkExpectedViolations() {
        var violations: [String] = []
        for v in scenario.expectedViolations {
            if violations.contains(v.invariant) { error(v.mark, v.invariant, "duplicate expected violation '\(v.invariant)'") }
            violations.append(v.invariant)
            if !context.knownInvariants.isEmpty, !context.knownInvariants.contains(v.invariant) {
                error(v.mark, v.invariant, "unknown invariant '\(v.invariant)'", hint: Suggest.hint(v.invariant, in: context.knownInvariants))
            }
        }
    }

    /// Pins: one device each, a request number from 1, at most one pin a request.
    mutating func checkPins(groups: NameTable, sizes: [UInt64]) {
        var pinned: Set<String> = []   // determinism: a membership test, never iterated
        for p in scenario.pins {
            checkSelector(.device(group: p.group, index: p.index), p.mark, groups: groups, sizes: sizes)
            if p.request < 1 || p.request > UInt64(UInt32.max) {
                error(p.mark, "\(p.request)", after: "request", "request number \(p.request) is out of range; requests count from 1 to \(UInt32.max)")
            }
            if !pinned.insert("\(p.group)#\(p.index) \(p.request)").inserted {
                error(p.mark, "\(p.request)", after: "request", "request \(p.request) of device '\(p.group)#\(p.index)' is pinned twice")
            }
        }
    }

    /// The timeline, statement by statement: its schedule, then its expectation or action.
    mutating func checkTimeline(groups: NameTable, sizes: [UInt64], apps: NameTable, accounts: NameTable,
                                keysUsed: inout NameTable) {
        let d = DurationText.format
        let end = scenario.duration
        for st in scenario.timeline {
            let m = st.mark
            switch st.schedule {
            case let .at(t):
                if t > end { error(m, after: "at", "time '\(d(t))' is past the scenario's duration '\(d(end))'") }
            case let .every(r):
                checkEvery(r, st)
            }
            switch st.body {
            case let .expect(e):
                if case .every = st.schedule { error(m, "expect", "'expect' needs 'at', not 'every'") }
                let size = e.group == "all" ? allDevices : groups.firstIndex(of: e.group).map { sizes[$0] }
                if size == nil { unknown("group", "groups", e.group, groups.names, m) }
                if case let .compare(_, .share(sh)) = e.quantifier { checkShare(sh, m) }
                if case let .compare(_, .count(n)) = e.quantifier, let size, n > size {
                    error(m, "\(n)", "expected count \(n) is larger than group '\(e.group)' (\(size) devices)")
                }
            case let .action(a):
                checkAction(a, m, groups: groups, sizes: sizes, apps: apps, accounts: accounts, keysUsed: &keysUsed)
            }
        }
    }

    /// An `every` statement's repeat: period, jitter, from and until within limits and the
    /// duration, and an action that may repeat.
    mutating func checkEvery(_ r: Repeat, _ st: TimedStatement) {
        let d = DurationText.format
        let end = scenario.duration
        let m = st.mark
        if r.period == 0 { error(m, after: "every", "'every' needs a period longer than 0s") }
        if r.period > ScenarioLimits.maxDuration {
            error(m, after: "every", "period '\(spelled(m, after: "every", r.period))' is longer than the limit of \(d(ScenarioLimits.maxDuration))")
        }
        if let j = r.jitter, j > ScenarioLimits.maxDuration {
            error(m, after: "jitter", "jitter '\(spelled(m, after: "jitter", j))' is longer than the limit of \(d(ScenarioLimits.maxDuration))")
        } else if let j = r.jitter, j > end {
            warning(m, after: "jitter", "jitter '\(d(j))' is longer than the scenario's duration '\(d(end))'; most firings would fall past the end",
                    hint: "a jitter shorter than the period spreads the firings without losing them")
        }
        if r.from == nil, r.period <= ScenarioLimits.maxDuration, r.period > end {
            warning(m, after: "every", "this statement never fires: its first firing at '\(d(r.period))' is past the scenario's duration '\(d(end))'",
                    hint: "add 'from 0s' or a shorter period")
        }
        if let f = r.from, f > end { error(m, after: "from", "time '\(d(f))' is past the scenario's duration '\(d(end))'") }
        if let u = r.until, u > end { error(m, after: "until", "time '\(d(u))' is past the scenario's duration '\(d(end))'") }
        if let u = r.until, u < r.firstFiring {
            let what = r.from == nil ? "the first firing at '\(d(r.firstFiring))'" : "'from' '\(d(r.firstFiring))'"
            error(m, after: "until", "'until' '\(d(u))' is before \(what)")
        }
        if case .action(.rotate) = st.body { error(m, after: "every", "'rotate' can only be used with 'at'", hint: "each rotation needs a new key") }
        if case .action(.stopOldKey) = st.body { error(m, after: "every", "'stop-old-key' can only be used with 'at'") }
    }

    /// Warnings for a file that would pass while testing nothing: no device, no action,
    /// or nothing judged (no `at T expect …` and no `expect violation`).
    mutating func checkTestsSomething() {
        let s = scenario
        if allDevices == 0 {
            fileWarning("the scenario has no devices", hint: "declare some with 'devices N app APP'")
        }
        let hasAction = s.timeline.contains { if case .action = $0.body { return true } else { return false } }
        if !hasAction {
            fileWarning("the scenario has no actions", hint: "add one such as 'at 0s launch all'")
        }
        let hasExpectation = s.timeline.contains { if case .expect = $0.body { return true } else { return false } }
        if !hasExpectation, s.expectedViolations.isEmpty {
            fileWarning("the scenario expects nothing: no 'expect' line and no 'expect violation'",
                        hint: "add one such as 'at 1d expect all GROUP idle'")
        }
    }

    func headerMark(_ word: String) -> SourceMark {
        guard let lines else { return .synthetic }
        for i in 0..<lines.count {
            let r = lines.range(ofLine: i)
            if case let .success(t) = Lexer.lex(lines.bytes, r), let f = t.first, f.kind == .word, f.text == word {
                return lines.mark(f.offset)
            }
        }
        return .synthetic
    }

    mutating func checkShare(_ share: Share, _ m: SourceMark) {
        if share.basisPoints > 10_000 { error(m, share.text, "share '\(share.text)%' is over 100%") }
    }

    mutating func checkDuration(_ t: SimTime, _ m: SourceMark, _ what: String) {
        if t == 0 { error(m, after: "for", "\(what) must last longer than 0s") }
        if t > ScenarioLimits.maxDuration {
            error(m, after: "for", "\(what) for '\(spelled(m, after: "for", t))' is longer than the limit of \(DurationText.format(ScenarioLimits.maxDuration))")
        }
    }

    mutating func checkSelector(_ sel: DeviceSelector, _ m: SourceMark, groups: NameTable, sizes: [UInt64]) {
        let all = allDevices
        func size(_ g: String) -> UInt64? { g == "all" ? all : groups.firstIndex(of: g).map { sizes[$0] } }
        switch sel {
        case .all: return
        case let .group(g):
            if size(g) == nil { unknown("group", "groups", g, groups.names, m) }
        case let .count(n, of: g):
            guard let sz = size(g) else { return unknown("group", "groups", g, groups.names, m) }
            if n > sz { error(m, "\(n)", "cannot select \(n) of group '\(g)', which has \(sz) devices") }
        case let .share(sh, of: g):
            if size(g) == nil { unknown("group", "groups", g, groups.names, m) }
            checkShare(sh, m)
        case let .device(group: g, index: i):
            guard let sz = size(g) else { return unknown("group", "groups", g, groups.names, m) }
            if i < 1 || i > sz {
                error(m, "\(i)", "device '\(g)#\(i)' is out of range; group '\(g)' has devices 1 to \(sz)")
            }
        }
    }

    mutating func checkAction(_ a: Action, _ m: SourceMark, groups: NameTable, sizes: [UInt64], apps: NameTable,
                              accounts: NameTable, keysUsed: inout NameTable) {
        func app(_ name: String) { if !apps.contains(name) { unknown("app", "apps", name, apps.names, m) } }
        switch a {
        case let .person(_, sel), let .update(sel, _), let .forgetDevice(sel):
            checkSelector(sel, m, groups: groups, sizes: sizes)
        case let .addPhotos(n, sel):
            checkSelector(sel, m, groups: groups, sizes: sizes)
            if n > ScenarioLimits.maxPhotosPerAdd {
                error(m, "\(n)", "'add-photos' of \(n) photos is more than the limit of \(ScenarioLimits.maxPhotosPerAdd)")
            }
        case let .fault(f):
            var checks = FaultStatementChecks(validator: self, mark: m, groups: groups, sizes: sizes)
            f.base.check(&checks)
            self = checks.validator
        case let .rotate(name, key, old):
            app(name)
            if case let .keep(grace) = old, grace > ScenarioLimits.maxDuration {
                error(m, after: "keep-old", "'keep-old' '\(spelled(m, after: "keep-old", grace))' is longer than the limit of \(DurationText.format(ScenarioLimits.maxDuration))")
            }
            if keysUsed.contains(key) { error(m, key, "key '\(key)' is already used", hint: "each rotation needs a new key") }
            keysUsed.append(key)
        case let .stopOldKey(name, _), let .disable(name), let .enable(name), let .rollupApp(_, name):
            app(name)
        case let .rollupAccount(_, acc):
            if !accounts.contains(acc) { unknown("account", "accounts", acc, accounts.names, m) }
        }
    }

    /// Replays rotations in time order (file order for equal times) and checks that each
    /// `stop-old-key APP K` names a previous key of APP at that moment.
    mutating func checkKeyHistory() {
        var events: [(time: SimTime, index: Int)] = []
        for (i, st) in scenario.timeline.enumerated() {
            guard case let .at(t) = st.schedule, case let .action(a) = st.body else { continue }
            switch a {
            case .rotate, .stopOldKey: events.append((t, i))
            default: continue
            }
        }
        events.sort { ($0.time, $0.index) < ($1.time, $1.index) }
        var current: [String: String] = [:]
        var previous: [String: [String]] = [:]
        for a in scenario.apps where current[a.name] == nil { current[a.name] = a.key; previous[a.name] = [] }
        for (time, index) in events {
            let st = scenario.timeline[index]
            guard case let .action(a) = st.body else { continue }
            switch a {
            case let .rotate(app, key, _):
                guard let cur = current[app] else { continue }
                previous[app, default: []].append(cur)
                current[app] = key
            case let .stopOldKey(app, key):
                guard let cur = current[app] else { continue }
                if previous[app, default: []].contains(key) { continue }
                let prev = previous[app, default: []]
                let note = prev.isEmpty ? "app '\(app)' has no previous key at \(DurationText.format(time)); its key is '\(cur)'"
                    : "previous keys of '\(app)' at \(DurationText.format(time)): " + prev.map { "'\($0)'" }.joined(separator: ", ")
                let msg = key == cur ? "'\(key)' is the current key of app '\(app)' at \(DurationText.format(time)), not a previous one"
                    : "'\(key)' is not a previous key of app '\(app)' at \(DurationText.format(time))"
                error(st.mark, key, msg, note: note)
            default: continue
            }
        }
    }
}

/// A fault statement's checks (`FaultKind.check`), reported at its line.
struct FaultStatementChecks: FaultChecks {
    var validator: Validator
    let mark: SourceMark
    let groups: Validator.NameTable
    let sizes: [UInt64]

    mutating func devices(_ selector: DeviceSelector) { validator.checkSelector(selector, mark, groups: groups, sizes: sizes) }
    mutating func share(_ share: Share) { validator.checkShare(share, mark) }
    mutating func window(_ forMs: SimTime, of what: String) { validator.checkDuration(forMs, mark, what) }
    mutating func error(at text: String?, after word: String?, _ message: String) { validator.error(mark, text, after: word, message) }
    func spelled(after word: String, _ value: SimTime) -> String { validator.spelled(mark, after: word, value) }
}

/// Checking ASTs built in code (by the fuzzer or the shrinker), without source text.
package enum ScenarioValidator {
    /// The meaning errors of `scenario`; locations come from its marks (line 0 when built in code).
    /// Warnings are left out: code that builds scenarios asks only whether one can run.
    package static func validate(_ scenario: ScenarioFile, file: String = "<generated>",
                                context: ValidationContext = .init()) -> [Diagnostic] {
        var v = Validator(scenario: scenario, lines: nil, file: file, context: context)
        v.run()
        return v.diagnostics.filter { $0.severity == .error }
    }
}
