/// The fault windows of SPEC §1.4 that act on the server side of every request. A new
/// window of a kind replaces the one in force if it ends later. A 5xx's status is traced
/// as the scenario gave it; the SDK treats every 5xx alike (D6), so no state keeps it.
@usableFromInline struct ServerFaults: Sendable {
    @usableFromInline var errorRateBp: UInt16 = 0, errorsUntil: SimTime = 0
    @usableFromInline var downUntil: SimTime = 0
    @usableFromInline var timeoutRateBp: UInt16 = 0, timeoutsUntil: SimTime = 0
    @usableFromInline var lostRateBp: UInt16 = 0, lostUntil: SimTime = 0
    /// The latest end of the windows that act on answers after the server judged them:
    /// lost responses, and any device's slow responses. Until then an answer takes the
    /// rare path in `requestArrives`; after it, one test a request.
    @usableFromInline var answersFaultedUntil: SimTime = 0
}

/// Which fault window a `serverFaultEnds` event ends. Packed into the event's `arg` only
/// at the queue (`WorldEvent`): the world's one event kind for all of them keeps its hot
/// switch short.
@usableFromInline enum FaultEnd: Sendable, Equatable {
    case errors, down, timeouts, lost
    /// Device `d`'s window of slow answers (`SlowAnswers`).
    case slowResponses(DeviceIndex)

    /// The largest device a slow-answers window can name.
    @usableFromInline static let maxSlowDevice = Event.world - 5
}

/// Starting and ending the injected faults (SPEC §1.4): partitions per device, the
/// server-wide 5xx, outage, timeout and lost-answer windows, and slow answers per device.
/// What each window does to a request is in `World+Network.swift`.
extension SimWorld {
    /// Opens the fault window of scheduled `action` (statement `index`, its `firing`-th firing).
    @inlinable mutating func startFault(_ action: WorldAction, statement index: Int, firing: UInt32) {
        switch action {
        case .offline(let selection, let forMs):
            let until = now.saturatingAdd(forMs)
            forEachSelected(selection, statement: index, firing: firing) { world, d in
                let i = Int(d)
                if world._devices[i].offlineUntil < until {
                    world._devices[i].offlineUntil = until
                    world.trace(d, .fault(.offline(until: until)))
                    world.schedule(.offlineEnds(device: d), at: until)
                }
            }
        case .serverErrors(let rate, let status, let forMs):
            faults.errorRateBp = rate
            faults.errorsUntil = max(faults.errorsUntil, now.saturatingAdd(forMs))
            trace(Event.world, .fault(.serverErrors(rateBp: rate, status: status, until: faults.errorsUntil)))
            schedule(.serverFaultEnds(.errors), at: faults.errorsUntil)
        case .serverDown(let forMs):
            faults.downUntil = max(faults.downUntil, now.saturatingAdd(forMs))
            trace(Event.world, .fault(.serverDown(until: faults.downUntil)))
            schedule(.serverFaultEnds(.down), at: faults.downUntil)
        case .timeouts(let rate, let forMs):
            faults.timeoutRateBp = rate
            faults.timeoutsUntil = max(faults.timeoutsUntil, now.saturatingAdd(forMs))
            trace(Event.world, .fault(.timeouts(rateBp: rate, until: faults.timeoutsUntil)))
            schedule(.serverFaultEnds(.timeouts), at: faults.timeoutsUntil)
        case .lostResponses(let rate, let forMs):
            faults.lostRateBp = rate
            faults.lostUntil = max(faults.lostUntil, now.saturatingAdd(forMs))
            trace(Event.world, .fault(.lostResponses(rateBp: rate, until: faults.lostUntil)))
            faults.answersFaultedUntil = max(faults.answersFaultedUntil, faults.lostUntil)
            schedule(.serverFaultEnds(.lost), at: faults.lostUntil)
        case .slowResponses(let selection, let byMs, let forMs):
            let until = now.saturatingAdd(forMs)
            forEachSelected(selection, statement: index, firing: firing) { world, d in
                world.slowResponsesStart(device: d, byMs: SimTime(byMs), until: until)
            }
        default:
            preconditionFailure("not a fault: \(action)")
        }
    }

    /// A device's partition ends (unless a later one extended it).
    @inlinable mutating func offlineEnds(device d: DeviceIndex) {
        if _devices[Int(d)].offlineUntil == now { trace(d, .fault(.offlineEnded)) }
    }

    /// A fault window ends (unless a later one of its kind extended it).
    @inlinable mutating func faultEnds(_ end: FaultEnd) {
        let ended: Bool
        switch end {
        case .errors: ended = faults.errorsUntil == now
        case .down: ended = faults.downUntil == now
        case .timeouts: ended = faults.timeoutsUntil == now
        case .lost: ended = faults.lostUntil == now
        case .slowResponses(let d): return slowResponsesEnd(device: d)
        }
        if ended { trace(Event.world, .fault(.serverFaultEnded)) }
    }
}
