import Invariants
import SimKit
import ScenarioLanguage

/// A violation told as a short story before the raw events: what the device did, what
/// the server answered, what the SDK did, and which rule that breaks, in 2–5 sentences.
///
/// `device photos#17 locked at 3d02h after a 5xx from the server (D6: …)`. Built only from
/// the violation itself (its message and the device's last records), so it works for
/// any violation the checkers keep, with or without the world's facts.
package struct FailureStory: Sendable, Equatable {
    /// The sentences, in order; the first is the headline.
    package var sentences: [String]

    /// The story of `violation`.
    /// - Complexity: O(records in `violation.lastEvents`).
    package init(_ violation: Violation) {
        let v = violation
        let events = v.lastEvents.filter { $0.time <= v.time }
        let who = v.device == Event.world ? "the server" : "device \(v.deviceName)"
        let rule = "\(v.invariant.rules): \(v.invariant.summary)"

        // The answer that the step ending at the violation handled, and the request it answered.
        let answer = events.last { if case .delivered = $0.event { true } else { false } }
        let stateChange = events.last { r in
            if case .state = r.event { return r.time == v.time } else { return false }
        }
        var first = who
        if Self.aboutState.contains(v.invariant), let s = stateChange, case .state(let state) = s.event {
            first += " " + Self.verb(state)
        } else {
            first += " broke \(v.invariant.rawValue)"
        }
        first += " at \(Self.time(v.time))"
        if let a = answer, case .delivered(_, let kind, let ans, let viaTimer, _, _, _) = a.event, v.time - a.time <= Ms.minute {
            first += " after " + Self.cause(kind: kind, answer: ans, viaTimer: viaTimer)
        }
        first += " (\(v.invariant.rules): \(Self.shortRule(v.invariant)))."
        var out = [Self.capitalised(first)]

        // What the person or the OS did last, and what the device asked.
        var did: [String] = []
        if let p = events.last(where: { if case .person = $0.event { true } else { false } }), case .person(let action, _) = p.event {
            did.append("\(Self.phrase(action)) at \(Self.time(p.time))")
        } else if let i = events.last(where: { if case .input = $0.event { true } else { false } }), case .input(let input) = i.event {
            did.append("the SDK handled \(input) at \(Self.time(i.time))")
        }
        if let a = answer, case .delivered(let id, let kind, _, _, _, _, _) = a.event,
           let sent = events.last(where: { if case .requestSent(id, _, _, _) = $0.event { true } else { false } }) {
            did.append("the SDK sent a \(kind) request (#\(id)) at \(Self.time(sent.time))")
        }
        if !did.isEmpty { out.append("Before that: " + did.joined(separator: ", then ") + ".") }

        // What the server answered, and what reached the device.
        if let a = answer, case .delivered(let id, let kind, let ans, let viaTimer, _, _, _) = a.event {
            let served = events.last { if case .served(id, _, _, _, _, _) = $0.event { true } else { false } }
            var s: String
            if case .served(_, _, _, _, let reply, _)? = served?.event {
                s = "The server answered the \(kind) with \(Self.spoken(reply.answer))"
                s += reply.answer == ans && !viaTimer ? ", and that reached the device."
                    : "; the device saw \(viaTimer ? "its own timeout" : Self.spoken(ans)) at \(Self.time(a.time))."
            } else if events.contains(where: { if case .requestSent(id, _, _, _) = $0.event { true } else { false } }) {
                s = "The \(kind) never reached the server: the device saw \(viaTimer ? "its own timeout" : Self.spoken(ans)) at \(Self.time(a.time))."
            } else {
                s = "The device saw \(viaTimer ? "its own timeout" : Self.spoken(ans)) for its \(kind) at \(Self.time(a.time))."
            }
            out.append(s)
        }
        out.append("The checker: \(v.message).")
        // The headline names the rule; spell the whole promise out when little else was said.
        if out.count < 3 { out.append("Rule \(rule).") }
        sentences = Array(out.prefix(5))
        assert(sentences.count >= 2, "a story has at least a headline and the rule")
    }

    /// The sentences joined by spaces.
    package var text: String { sentences.joined(separator: " ") }

    /// The story wrapped to lines of at most `width` characters, each prefixed by `indent`.
    package func wrapped(width: Int = 88, indent: String = "") -> String {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width - indent.count {
                lines.append(line); line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.map { indent + $0 + "\n" }.joined()
    }

    /// `3d02h` or `3d02h15m`: virtual time to the minute, as people read it.
    package static func time(_ ms: SimTime) -> String {
        let d = ms / Ms.day, h = (ms % Ms.day) / Ms.hour, m = (ms % Ms.hour) / Ms.minute
        let hh = h < 10 ? "0\(h)" : "\(h)", mm = m < 10 ? "0\(m)" : "\(m)"
        return m == 0 ? "\(d)d\(hh)h" : "\(d)d\(hh)h\(mm)m"
    }

    /// Invariants whose breaking is the state change itself: the headline names it.
    static let aboutState: [InvariantID] = [
        .neverLockOnTransient, .lockOnRevocation, .lockedChecksOnActivation,
        .purgeOnlyAfter30ContinuousDays, .purgeWhenDue, .resetDeletesEverything,
    ]

    static func verb(_ s: SDKState) -> String {
        switch s {
        case .unconfigured: "became unconfigured"
        case .indexing: "started indexing"
        case .idle: "went idle"
        case .locked: "locked"
        case .purged: "purged its data"
        }
    }

    static func phrase(_ a: SimKit.PersonAction) -> String {
        switch a {
        case .launch: "the app was launched"
        case .open: "the app was opened"
        case .close: "the app was closed"
        case .background: "the OS ran a background task"
        case .search, .query, .profile: "the app called \(a)"
        case .update: "the app was updated"
        case .reset: "the app called reset()"
        case .revokePhotos: "Photos access was revoked"
        case .grantPhotos: "Photos access was granted"
        case .addPhotos: "photos were added"
        }
    }

    static func cause(kind: RequestKind, answer: Answer, viaTimer: Bool) -> String {
        if viaTimer { return "its \(kind) request timed out" }
        switch answer {
        case .serverError: return "a 5xx from the server"
        case .notRollup: return "an answer to its \(kind) request that was not Rollup's (a portal or proxy answered)"
        case .timedOut: return "its \(kind) request timed out"
        case .offline: return "its \(kind) request failed offline"
        case .ok: return "a 200 to its \(kind) request"
        default: return "\(answer) from the server"
        }
    }

    static func spoken(_ a: Answer) -> String {
        switch a {
        case .ok: "200"
        case .serverError: "a 5xx"
        case .notRollup: "an answer that was not Rollup's"
        case .timedOut: "a timeout"
        case .offline: "no network"
        default: "\(a.httpStatus) \(a)"
        }
    }

    /// A few words for the headline's parenthesis; the full promise follows in the last sentence.
    static func shortRule(_ id: InvariantID) -> String {
        switch id {
        case .neverLockOnTransient: "a server error, timeout, offline or app_pending never locks"
        case .lockOnRevocation: "a revoked key locks at once"
        case .lockedIsInert: "a locked SDK does nothing"
        case .lockedChecksOnActivation: "a locked SDK checks at each launch and activation"
        case .unlockResumesUnchanged: "unlocking resumes the index unchanged"
        case .purgeOnlyAfter30ContinuousDays: "data goes only after access stopped 30 days in a row"
        case .purgeWhenDue: "a lock error dated 30 days into the stop purges"
        case .keyCheckSchedule: "the key is checked on schedule"
        case .serverEnforcesAccess: "the server answers by the S2 rules"
        case .rotationGrace: "an old key works until its grace deadline"
        case .disableStopsEveryKey: "a disabled app is refused with every key"
        case .onlyRollupRestores: "only Rollup lifts what Rollup did"
        case .deviceBelongsToApp: "a device is served only with its app's key"
        case .clonesNeverServed: "clones are never served"
        case .resetDeletesEverything: "reset deletes everything"
        case .photosRevokedDeletesIndex: "revoked Photos access deletes the index"
        case .staleResponsesIgnored: "stale answers change nothing"
        case .reportsNotLost: "run reports are not lost"
        case .newestVerdictWins: "an older verdict never locks or unlocks"
        case .registersAgainWhenUnknown: "a forgotten device registers again"
        case .serverRestartLosesNothing: "a server restart loses nothing acknowledged"
        case .notRollupIsNoVerdict: "an answer that is not Rollup's is no verdict"
        case .clockChangesNothing: "the phone's clock changes nothing"
        case .backgroundExpiryKeepsProgress: "a background run whose time runs out keeps what it wrote"
        case .failedWriteLosesNothing: "a failed write loses nothing"
        case .unreadableIsNotAbsent: "unreadable data is not absent"
        case .killKeepsWhatWasWritten: "a kill keeps what was written"
        }
    }

    static func capitalised(_ s: String) -> String { s.prefix(1).uppercased() + s.dropFirst() }
}
