import SimKit

/// Two runs of the same seed (or scenario) that should have written the same trace and
/// did not: where they first differ, the records that agreed before it, and what that
/// says about the cause. The verdict `NONDETERMINISTIC`: a failure of its own, not an
/// invariant violation (the trace that the checkers judged is not reproducible).
public struct Nondeterminism: Sendable, Codable, Equatable, CustomStringConvertible {
    /// Where the difference lies, and so what caused it.
    public enum Cause: String, Sendable, Codable, Equatable {
        /// Inside an SDK step whose input record agreed: the core's step gave other effects.
        case coreStep
        /// A timer fired at another time or not at all: timers are set in SDK steps and
        /// leave no record there, so an earlier step set or cancelled one differently.
        case timer
        /// The world's own records (person, network, server, schedule) differ first.
        case world
        /// The traces agree but the runs handled a different number of events: an effect
        /// that leaves no record (a timer set or cancelled) differed.
        case untraced
        /// The fingerprints differ but the place could not be shown (past the records
        /// kept, or in a field the text form of a trace does not show).
        case unlocated
        /// A core ended the runs with verdicts of its own (`CoreFailure`: an async SDK's
        /// escape) that differ, in name or in the step they name.
        case coreVerdict
    }

    /// The 1-based number of the first differing record (line `record + 1` of a trace
    /// file, after its header); 0 when not located.
    public var record: UInt64
    /// The virtual time and device of that record, as the trace text writes them.
    public var time: String
    public var device: String
    /// What the two runs are: `run 1` and `run 2`, `this process` and `another process`,
    /// or two file names.
    public var firstName: String
    public var secondName: String
    /// Each run's record at that place, as trace text; nil where that run had ended.
    public var first: String?
    public var second: String?
    /// The last records that agreed before it, of the same device (else of any), oldest
    /// first, each as `#N  line`.
    public var agreed: [String]
    public var cause: Cause
    /// The cause in sentences.
    public var explanation: String
    /// The SDK core's type name (and its mutant, if any), or nil when unknown (`simkit diff`).
    public var core: String?
    /// More facts: fingerprints, record and event counts.
    public var detail: String?

    /// One line: `NONDETERMINISTIC at trace record #1,234 (3d04h05m06.789s, photos#3): …`.
    public var headline: String {
        let place = record == 0 ? "" : " at trace record #\(Nondeterminism.grouped(record)) (\(time), \(device))"
        let what: String
        switch cause {
        case .coreStep: what = "the core's step for this input was not a function of its input and state" + (core.map { " (core: \($0))" } ?? "")
        case .timer: what = "a timer fired differently; an earlier step of the core set it differently" + (core.map { " (core: \($0))" } ?? "")
        case .world: what = "the world's own records differ first"
        case .untraced: what = "the traces agree but an untraced effect (a timer) differed" + (core.map { " (core: \($0))" } ?? "")
        case .unlocated: what = "the fingerprints differ"
        case .coreVerdict: what = "the core ended the runs with different verdicts of its own" + (core.map { " (core: \($0))" } ?? "")
        }
        return "NONDETERMINISTIC\(place): \(what)"
    }

    /// The whole report, each line after the first indented by `indent`. `verdict` false
    /// leaves out the word NONDETERMINISTIC and "of the same run" (`simkit diff` compares
    /// any two traces).
    public func text(indent: String = "  ", verdict: Bool = true) -> String {
        var s = verdict ? "NONDETERMINISTIC: \(firstName) and \(secondName) of the same run" : "\(firstName) and \(secondName)"
        s += record == 0 ? " differ\n" : " first differ at trace record #\(Nondeterminism.grouped(record)) (\(time), \(device))\n"
        if record != 0 {
            let width = max(firstName.count, secondName.count) + 1
            s += indent + (firstName + ":").padding(toLength: width, withPad: " ", startingAt: 0) + " " + (first ?? "(its trace had ended)") + "\n"
            s += indent + (secondName + ":").padding(toLength: width, withPad: " ", startingAt: 0) + " " + (second ?? "(its trace had ended)") + "\n"
            if !agreed.isEmpty {
                s += indent + "the last records that agreed:\n"
                for line in agreed { s += indent + "  " + line + "\n" }
            }
        }
        s += Nondeterminism.wrap("cause: " + explanation, indent: indent)
        if let detail { s += Nondeterminism.wrap(detail, indent: indent) }
        return s
    }

    public var description: String { text() }

    /// Words wrapped at 100 columns, every line indented.
    static func wrap(_ text: String, indent: String) -> String {
        var out = "", line = indent
        for word in text.split(separator: " ") {
            if line.count > indent.count, line.count + 1 + word.count > 100 { out += line + "\n"; line = indent }
            line += (line.count > indent.count ? " " : "") + word
        }
        return out + line + "\n"
    }

    static func grouped(_ n: UInt64) -> String {
        let digits = String(n)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }
}

/// One trace record as its text line, `CLOCK WHO  EVENT`, split into its parts: the
/// determinism guard reads where a step starts and ends from the event words, the same
/// way for records compared in memory and for lines of trace files (`simkit diff`).
struct TraceLine: Sendable {
    /// The 1-based record number.
    var number: UInt64
    var text: String
    var clock: Substring
    var who: Substring
    var event: Substring

    init(number: UInt64, text: String) {
        self.number = number
        self.text = text
        let space = text.firstIndex(of: " ") ?? text.endIndex
        clock = text[..<space]
        let rest = space < text.endIndex ? text[text.index(after: space)...] : text[text.endIndex...]
        if let gap = rest.range(of: "  ") {
            who = rest[..<gap.lowerBound]
            event = rest[gap.upperBound...]
        } else {
            who = rest
            event = rest[rest.endIndex...]
        }
    }

    /// The first record of an SDK step: a lifecycle input, an answer, a timer firing.
    var startsStep: Bool { event.hasPrefix("input: ") || event.hasPrefix("delivered ") || event.hasPrefix("timer ") }
    /// The end of an SDK step.
    var endsStep: Bool { event == "step end" }
    /// A timer firing, or a request's timeout delivered by its timer.
    var isTimer: Bool { event.hasPrefix("timer ") || (event.hasPrefix("delivered ") && event.contains(" (timeout)")) }
}

extension Nondeterminism {
    /// How many records of the same device the report shows before the difference.
    static let agreedShown = 6

    /// The report for a difference at record `number` (1-based): `before` are the records
    /// that agreed, up to it (oldest first; a window is enough: a step's records are
    /// contiguous), `first` and `second` the two runs' records there (nil: ended).
    static func located(number: UInt64, before: [TraceLine], first: String?, second: String?,
                        names: (String, String), core: String?, detail: String?) -> Nondeterminism {
        let a = first.map { TraceLine(number: number, text: $0) }
        let b = second.map { TraceLine(number: number, text: $0) }
        let here = a ?? b
        let who = here.map { String($0.who) } ?? ""
        // The open step at this place, if any: steps never interleave, so walking back to
        // the nearest step start or step end says whether the difference is inside one.
        var input: TraceLine?
        for line in before.reversed() {
            if line.endsStep { break }
            if line.startsStep { input = line; break }
        }
        var shown = before.reversed().filter { $0.who == here?.who }.prefix(agreedShown).reversed().map { $0 }
        if shown.isEmpty { shown = Array(before.suffix(3)) }
        let coreName = core ?? "the SDK core"
        let cause: Cause
        let explanation: String
        if let input {
            cause = .coreStep
            explanation = "the difference is inside \(input.who)'s step for '\(input.event)' (record #\(grouped(input.number)), "
                + "the same in both runs): the core's step for this input was not a function of its input and state "
                + "(core: \(coreName)). Every record before it agreed, so the core was handed the same inputs at the same "
                + "virtual times since its process started; a deterministic core gives the same effects. Look in \(coreName) "
                + "for a Set or Dictionary iterated in hash order, a clock (Date()), the system random generator, or a "
                + "global or static variable that outlives a run."
        } else if a?.isTimer == true || b?.isTimer == true {
            cause = .timer
            explanation = "a timer of \(who) fired in one run and not at this place in the other. The SDK sets and cancels "
                + "its timers in its steps, and those effects leave no trace record, so an earlier step of \(who) set or "
                + "cancelled a timer differently: a step of the core that was not a function of its input and state "
                + "(core: \(coreName)). Look for a Set or Dictionary iterated in hash order, a clock, the system random "
                + "generator, or a global variable."
        } else if coreName.contains("on server WireServer"),
                  (a?.event.hasPrefix("server answered") ?? false) || (b?.event.hasPrefix("server answered") ?? false) {
            cause = .world
            explanation = "the server on the wire answered the same message differently: every record before it agreed, "
                + "so both runs sent it the same messages in the same order since its reset. A server on the wire must "
                + "answer as a function of its messages alone (docs/server-protocol.md): look in it for a clock, "
                + "randomness, or state that outlives a reset."
        } else {
            cause = .world
            explanation = "the first difference is not inside an SDK step: it is one of the world's own records (the "
                + "person and the OS, the network, the server, the scenario's schedule). A core can still cause it "
                + "through an effect that leaves no record (a timer); otherwise it is a bug in SimKit: please report it "
                + "with the seed."
        }
        return Nondeterminism(record: number, time: here.map { String($0.clock) } ?? "", device: who,
                              firstName: names.0, secondName: names.1, first: first, second: second,
                              agreed: shown.map { "#\(grouped($0.number))  \($0.text)" }, cause: cause,
                              explanation: explanation, core: core, detail: detail)
    }

    /// The report for two runs whose traces could not be told apart record by record.
    package static func unlocated(_ cause: Cause, explanation: String, names: (String, String), core: String?, detail: String?) -> Nondeterminism {
        Nondeterminism(record: 0, time: "", device: "", firstName: names.0, secondName: names.1, first: nil, second: nil,
                       agreed: [], cause: cause, explanation: explanation, core: core, detail: detail)
    }
}
