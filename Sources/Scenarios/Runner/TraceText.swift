import SimKit

/// Trace records as one readable line each, for failure reports:
/// `3d02h15m07.250s photos#17  delivered check #4: app_disabled`.
@usableFromInline package enum TraceText {
    /// One record on one line; `facts` names the device.
    @usableFromInline package static func line(_ r: TraceRecord, facts: WorldFacts?) -> String {
        let who = facts?.deviceName(r.device) ?? (r.device == Event.world ? "world" : "device \(r.device)")
        return "\(DurationText.clock(r.time)) \(who)  \(event(r.event))"
    }

    /// The event alone, in a few words.
    /// `, stopped since 1d00h…` for a lock error's `stoppedSince` (S2), or nothing.
    static func stopped(_ since: SimTime) -> String {
        since == ServerReply.none ? "" : ", stopped since \(DurationText.clock(since))"
    }

    @usableFromInline package static func event(_ e: TraceEvent) -> String {
        switch e {
        case .person(let a, let arg):
            switch a {
            case .addPhotos: return "person: add-photos \(arg)"
            case .update: return "person: update" + (arg == 0 ? " (current key)" : " (key #\(arg - 1))")
            default: return "person: \(a)"
            }
        case .processStarted(let bg): return bg ? "process started in background" : "process started"
        case .processKilled: return "process killed"
        case .requestSent(let id, let kind, let key, let cred): return "sent \(kind) #\(id) key #\(key) credential \(cred)"
        case .served(let id, let kind, _, _, let reply, _):
            return "server answered \(kind) #\(id): \(reply.answer)" + (reply.notRollup.map { " (\($0), \($0.status))" } ?? "") + stopped(reply.stoppedSince)
        case .input(let i): return "input: \(i)"
        case .delivered(let id, let kind, let answer, let viaTimer, _, let servedAt, let stoppedSince):
            return "delivered \(kind) #\(id): \(answer)" + (viaTimer ? " (timeout)" : "")
                + (servedAt == ServerReply.none ? "" : " served at \(DurationText.clock(servedAt))") + stopped(stoppedSince)
        case .droppedForDeadProcess(let id): return "answer #\(id) dropped: process dead"
        case .timerFired(let kind, let arg): return "timer \(kind) (\(arg))"
        case .state(let s): return "state → \(s)"
        case .store(let op): return "store: \(op)"
        case .callResult(let call, let outcome): return "\(call) \(outcome)"
        case .runStarted(let bg): return bg ? "background run started" : "indexing run started"
        case .runEnded: return "run ended"
        case .backgroundRunSkipped: return "background run skipped (none scheduled)"
        case .fault(let f): return "fault: \(f)"
        case .dashboard(let a, let applied): return "dashboard: \(a)" + (applied ? "" : " (refused)")
        case .forgotDevice: return "server forgot the device"
        case .probe(let arg): return "probe \(arg)"
        case .unsettled: return "work still in progress"
        case .carries(let report): return "it carries report \(report)"
        case .holds(let generation): return "the server still holds the device's registration \(generation)"
        case .stepEnd: return "step end"
        }
    }
}
