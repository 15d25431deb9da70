/// `slow-responses SEL by D for W`, a fault of the scenario language's extension:
/// every answer the server sends a selected device during the window [T, T + W) takes D
/// longer on its way back, on top of the link's latency (and after the `timeouts` rule,
/// for a request that fault picked). A request judged just after the window ends comes
/// back at the usual speed, so its answer can overtake an older one still on its way:
/// a 200 served before a lock arriving after the lock error (D4, D9).
///
/// The delay is not bounded by the timeout: an answer that comes back after its request's
/// timeout is simply late, and the SDK treats it as any late answer (D9: the timeout has
/// already been handed to it; the answer is stale and ignored). Requests judged before the
/// window opened keep their arrival time; an answer that is lost (`lost-responses`) stays lost.
///
/// A device's windows: a new one sets its delay and ends at the later of the two ends.
@usableFromInline struct SlowAnswers: Sendable {
    /// Per device, the end of its window (0: none); empty until a window opens.
    @usableFromInline var until: [SimTime] = []
    /// Per device, the delay of its window.
    @usableFromInline var byMs: [SimTime] = []
    @inlinable init() {}
}

extension SimWorld {
    /// Opens (or extends) device `d`'s window of slow answers until `until`.
    @inlinable mutating func slowResponsesStart(device d: DeviceIndex, byMs: SimTime, until: SimTime) {
        if slowAnswers.until.isEmpty {
            slowAnswers.until = Array(repeating: 0, count: _devices.count)
            slowAnswers.byMs = Array(repeating: 0, count: _devices.count)
        }
        precondition(d <= FaultEnd.maxSlowDevice, "device index too large for a slow-responses window")
        let i = Int(d)
        slowAnswers.byMs[i] = byMs
        if slowAnswers.until[i] < until {
            slowAnswers.until[i] = until
            schedule(.serverFaultEnds(.slowResponses(d)), at: until)
        }
        trace(d, .fault(.slowResponses(byMs: byMs, until: slowAnswers.until[i])))
        faults.answersFaultedUntil = max(faults.answersFaultedUntil, slowAnswers.until[i])
    }

    /// A device's window of slow answers ends (unless a later one extended it).
    @inlinable mutating func slowResponsesEnd(device d: DeviceIndex) {
        if slowAnswers.until[Int(d)] == now { trace(d, .fault(.slowResponsesEnded)) }
    }

    /// The extra delay of an answer the server sends `d` now, or nil outside its window.
    @inlinable func slowDelay(of d: DeviceIndex) -> SimTime? {
        let i = Int(d)
        guard i < slowAnswers.until.count, now < slowAnswers.until[i] else { return nil }
        return slowAnswers.byMs[i]
    }
}
