import SimKit

/// Prints a scenario as canonical text that the parser reads back to an equal value.
///
/// Layout: the header (`scenario`, `seed`, `duration`, `sdk`; `server`, `schedule` and
/// `storage` when not the default), a blank line, the
/// declarations (accounts, apps, groups, network), a blank line, the timeline in order,
/// and the `expect violation` lines. Defaults are printed explicitly (`keep-old 30d`,
/// the network line), so the output is stable: `print(parse(print(x))) == print(x)`.
public enum ScenarioPrinter {
    /// The canonical text of `scenario`, ending with a newline.
    /// - Complexity: O(n) in the number of statements.
    public static func print(_ scenario: ScenarioFile) -> String {
        var out: [String] = []
        out.append("scenario \(quote(scenario.name))")
        out.append("seed \(scenario.seed)")
        out.append("duration \(DurationText.format(scenario.duration))")
        switch scenario.sdk {
        case .reference: out.append("sdk reference")
        case let .mutant(m): out.append("sdk mutant \(m)")
        case let .custom(c): out.append("sdk custom \(c)")
        }
        // The reference server is the default and is not printed, so files that never
        // name a server print as they always did.
        switch scenario.server {
        case .reference: break
        case let .custom(c): out.append("server custom \(c)")
        case let .process(c): out.append("server process \(quote(c))")
        case let .http(u): out.append("server http \(quote(u))")
        }
        // FIFO is the default and is not printed, as for the server.
        if scenario.schedule != 0 { out.append("schedule seed \(scenario.schedule)") }
        if scenario.storageLatency != 0 { out.append("storage latency \(DurationText.format(scenario.storageLatency))") }
        out.append("")
        for a in scenario.accounts { out.append("account \(a.name)" + (a.approved ? "" : " unapproved")) }
        for a in scenario.apps { out.append("app \(a.name) account \(a.account) key \(a.key)" + (a.pending ? " pending" : "")) }
        for g in scenario.groups {
            var line = "\(g.kind == .devices ? "devices" : "clones") \(g.count) app \(g.app)"
            if g.name != DeviceGroupDecl.defaultName(kind: g.kind, app: g.app) { line += " as \(g.name)" }
            if let source = g.copying { line += " copying \(source)" }
            if let l = g.latency { line += " latency \(dur(l.lowerBound))..\(dur(l.upperBound))" }
            out.append(line)
        }
        let n = scenario.network
        out.append("network latency \(dur(n.latencyMin))..\(dur(n.latencyMax)) timeout \(dur(n.timeout))")
        for p in scenario.pins { out.append("pin device \(p.group)#\(p.index) request \(p.request) \(p.fate)") }
        out.append("")
        for st in scenario.timeline { out.append(statement(st)) }
        if !scenario.expectedViolations.isEmpty {
            out.append("")
            for v in scenario.expectedViolations { out.append("expect violation \(v.invariant)") }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// One timed statement on one line, without a newline.
    package static func statement(_ st: TimedStatement) -> String {
        var head: String
        switch st.schedule {
        case let .at(t): head = "at \(dur(t))"
        case let .every(r):
            head = "every \(dur(r.period))"
            if let j = r.jitter { head += " jitter \(dur(j))" }
            if let f = r.from { head += " from \(dur(f))" }
            if let u = r.until { head += " until \(dur(u))" }
        }
        switch st.body {
        case let .action(a): return head + " " + action(a)
        case let .expect(e): return head + " expect " + quantifier(e.quantifier) + " \(e.group) \(e.state.rawValue)"
        }
    }

    /// The text of an action.
    package static func action(_ a: Action) -> String {
        switch a {
        case let .person(p, sel): return "\(p.rawValue) \(selector(sel))"
        case let .update(sel, key): return "update \(selector(sel))" + (key.map { " key \($0)" } ?? "")
        case let .addPhotos(n, sel): return "add-photos \(n) \(selector(sel))"
        case let .fault(f): return f.base.text
        case let .rotate(app, key, old):
            switch old {
            case .stopNow: return "rotate \(app) key \(key) stop-old now"
            case let .keep(g): return "rotate \(app) key \(key) keep-old \(dur(g))"
            }
        case let .stopOldKey(app, key): return "stop-old-key \(app) \(key)"
        case let .disable(app): return "disable \(app)"
        case let .enable(app): return "enable \(app)"
        case let .rollupApp(v, app): return "rollup \(v.rawValue) \(app)"
        case let .rollupAccount(v, acc): return "rollup \(v.rawValue) \(acc)"
        case let .forgetDevice(sel): return "forget-device \(selector(sel))"
        }
    }

    /// The text of a selector.
    package static func selector(_ s: DeviceSelector) -> String { s.text }

    /// The text of a quantifier.
    package static func quantifier(_ q: Quantifier) -> String {
        switch q {
        case .all: return "all"
        case .none: return "none"
        case let .compare(cmp, qty):
            let prefix = cmp == .exactly ? "" : cmp == .atLeast ? ">=" : "<="
            switch qty {
            case let .count(n): return prefix + "\(n)"
            case let .share(s): return prefix + "\(s.text)%"
            }
        }
    }

    static func dur(_ t: SimTime) -> String { DurationText.format(t) }

    /// A double-quoted string with `"` and `\` escaped.
    static func quote(_ s: String) -> String {
        var out = "\""
        for ch in s.unicodeScalars {
            if ch == "\"" || ch == "\\" { out.append("\\") }
            out.unicodeScalars.append(ch)
        }
        return out + "\""
    }
}
