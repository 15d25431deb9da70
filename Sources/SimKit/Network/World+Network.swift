/// The network and the server side of a request: latency, partitions, and the stages at
/// which the injected faults of SPEC §1.4 act on it (`Faults/Faults.swift`), around the
/// server core's `handle`.
extension SimWorld {
    /// D9, S9 and §1.4: puts a request on the wire from `device`. Always inlined into
    /// `apply`, its one caller, which saves a call per request.
    @inline(__always)
    @inlinable mutating func sendRequest(device d: DeviceIndex, id: UInt32, kind: RequestKind, credential: Credential) {
        let dev = _devices[Int(d)]
        let request = Request(kind: kind, key: dev.key, credential: credential, device: d,
                              attestedApp: dev.genuine ? dev.app : nil, build: dev.build)
        trace(d, .requestSent(id: id, kind: kind, key: dev.key, credential: credential))
        var slot = RequestPool.Slot(request: request, sentAt: now, id: id, epoch: dev.processEpoch)
        if fates.active { slot.fate = fates.next(device: d) }
        // A device whose link is down (`offline`, `Faults/Offline.swift`) sends nothing.
        if now < dev.offlineUntil || slot.fate == RequestFate.offline.rawValue {
            // A request offline anyway draws nothing, pinned or not; one pinned `offline`
            // on a device that is online makes the two draws (sent, judged) it would have
            // made, so that the device's later draws do not move.
            if now >= dev.offlineUntil { _ = draw(d); _ = draw(d) }
            slot.reply = ServerReply(.offline)
            let s = requests.add(slot)
            schedule(.responseArrives(device: d, slot: s), at: now)
            return
        }
        var r = draw(d)
        let roundTrip = r.int(in: groupLinks == nil ? networkLink : link(of: d))
        faultsOnTheWayOut(&slot, &r)
        let s = requests.add(slot)
        schedule(.requestArrives(device: d, slot: s), at: now.saturatingAdd(roundTrip / 2))
    }

    /// The request reaches the server: a fault window may answer in its place without
    /// touching server state (S9); otherwise the server judges it (S1, S2). Then a window
    /// may lose the answer or slow it down.
    @inlinable mutating func requestArrives(slot s: UInt32) {
        let slot = requests[s]
        if slot.fate != 0 { return pinnedArrives(slot: s) }
        let d = slot.request.device
        var r = draw(d)
        let reply = faultAnswer(device: d, &r) ?? server.handle(slot.request, now: now)
        requests.setReply(reply, of: s)
        traceServed(slot, reply: reply)
        switch faultsOnTheWayBack(device: d, &r) {
        case .usual: break
        case .lost:   // S9: the server acted, the answer never arrives
            requests.release(s)
            if SDK.hearsLostAnswers { tellAnswerLost(slot) }
            return
        case .delayed(let delay): return answerSlowed(slot: s, by: delay, r)
        }
        schedule(.responseArrives(device: d, slot: s), at: answerTime(slot, &r))
    }

    /// Traces the server's verdict on `slot`'s request, with the generation of the device's
    /// record after it, and after a registration or reset answered 200 the earlier records
    /// the server still holds (`holds`, before it). A function of its own, as the other busy trace sites are
    /// (`traceStepEnd`): inlined into `requestArrives`, `trace` had outgrown that function's
    /// inlining budget and was left a call that switched on the record's case at run time.
    @inlinable @inline(never)
    mutating func traceServed(_ slot: RequestPool.Slot, reply: ServerReply) {
        let d = slot.request.device
        let recordAfter = server.deviceRecord(d)?.generation ?? 0
        if reply.answer == .ok, slot.request.kind == .register || slot.request.kind == .reset { traceHeld(d) }
        trace(d, .served(id: slot.id, kind: slot.request.kind, key: slot.request.key,
                         credential: slot.request.credential, reply: reply, recordAfter: recordAfter))
    }

    /// Traces the earlier records the server holds for `d` (`holds`), oldest first.
    @inlinable @inline(never)
    mutating func traceHeld(_ d: DeviceIndex) {
        var held: [UInt32] = []   // no allocation while there is none
        server.forEachEarlierRecord(of: d) { held.append($0.generation) }
        for g in held { trace(d, .holds(generation: g)) }
    }

    /// `requestArrives` for a request with a pinned fate (`RequestFate`): the same draws;
    /// the fate replaces the fault windows' decisions (an outage, 5xx, lost or slow
    /// answers) and, for `late` and `after-timeout`, the link's return leg.
    @inlinable @inline(never)
    mutating func pinnedArrives(slot s: UInt32) {
        let slot = requests[s]
        let d = slot.request.device
        var r = draw(d)
        let fate = RequestFate(rawValue: slot.fate)
        let reply = fate == .serverError ? ServerReply(.serverError) : server.handle(slot.request, now: now)
        requests.setReply(reply, of: s)
        traceServed(slot, reply: reply)
        let timeout = setup.sdk.requestTimeoutMs
        var at = answerTime(slot, &r)
        switch fate {
        case .lost?:
            requests.release(s)
            if SDK.hearsLostAnswers { tellAnswerLost(slot) }
            return
        case .late?: at = max(now, slot.sentAt.saturatingAdd(timeout) - min(timeout, 1))
        case .afterTimeout?: at = max(now, slot.sentAt.saturatingAdd(timeout).saturatingAdd(1))
        case .overtaken?:
            // Held, not scheduled: `letHeldAnswerGo` sends it after the device's next verdict.
            // One held a device: one held before it is lost.
            let older = fates.held[Int(d)]
            fates.held[Int(d)] = s &+ 1
            if older != 0 { loseHeldAnswer(slot: older &- 1) }
            return
        default: break
        }
        schedule(.responseArrives(device: d, slot: s), at: Self.offTheDeadline(at, sentAt: slot.sentAt, timeoutMs: timeout))
    }

    /// A verdict of device `d`'s (not the held one) has just been delivered: the answer held
    /// for `d` (`RequestFate.overtaken`), if any, arrives in this millisecond, after it.
    @inlinable @inline(never)
    mutating func letHeldAnswerGo(device d: DeviceIndex) {
        let h = fates.held[Int(d)]
        guard h != 0 else { return }
        fates.held[Int(d)] = 0
        // Never in the millisecond of its own timeout, as every answer (`offTheDeadline`).
        schedule(.responseArrives(device: d, slot: h &- 1),
                 at: Self.offTheDeadline(now, sentAt: requests[h &- 1].sentAt, timeoutMs: setup.sdk.requestTimeoutMs))
    }

    /// An answer held for its device's next verdict that will never be let go: lost (S9).
    @inlinable @inline(never)
    mutating func loseHeldAnswer(slot s: UInt32) {
        let slot = requests[s]
        requests.release(s)
        if SDK.hearsLostAnswers { tellAnswerLost(slot) }
    }

    /// Tells the SDK of `slot`'s process that its answer was lost (`SDKCore.answerLost`),
    /// unless that process has ended: a new one numbers its requests afresh.
    @inlinable @inline(never)
    mutating func tellAnswerLost(_ slot: RequestPool.Slot) {
        let i = Int(slot.request.device)
        guard _devices[i].hasProcess, _devices[i].processEpoch == slot.epoch else { return }
        _sdks[i].answerLost(id: slot.id)
    }

    /// When the answer to `slot`, judged now, reaches its device: half the link's range
    /// back, or, for a request the `timeouts` fault picked, after its timeout (SPEC §1.4,
    /// "requests timing out at a rate": every one picked times out, so `timeouts 100%`
    /// leaves no answer in time). Always inlined: `requestArrives` runs it for every answer.
    @inline(__always)
    @inlinable mutating func answerTime(_ slot: RequestPool.Slot, _ r: inout KeyedRandom) -> SimTime {
        let range = groupLinks == nil ? networkLink : link(of: slot.request.device)
        let back = r.int(in: range.lowerBound / 2...range.upperBound / 2 + 1)
        var at = now + back   // in range: latency is at most 1h (ScenarioLimits.maxLatencyMs)
        if slot.late {
            // Times out: the answer comes back from 1 ms to one more timeout after the
            // request's timeout (the server did act; the SDK has given up on it, D9).
            let timeout = max(setup.sdk.requestTimeoutMs, 1)
            let deadline = slot.sentAt.saturatingAdd(timeout)
            at = max(at, r.int(in: deadline.saturatingAdd(1)...deadline.saturatingAdd(timeout)))
        }
        return Self.offTheDeadline(at, sentAt: slot.sentAt, timeoutMs: setup.sdk.requestTimeoutMs)
    }

    /// An answer never lands in the very millisecond of its request's timeout: there it would
    /// race the SDK's own timer, and which comes first would depend on the order the two
    /// were queued, not on D9 ("after its timeout" is ignored). It comes 1 ms later.
    @inline(__always)
    @inlinable static func offTheDeadline(_ at: SimTime, sentAt: SimTime, timeoutMs: SimTime) -> SimTime {
        at == sentAt &+ timeoutMs ? at &+ 1 : at
    }

    /// The answer to `slot` comes back `delay` later than `answerTime` (`AnswerWay.delayed`).
    /// `r` is the request's stream, taken by value (its draws go on here; an `inout`
    /// parameter made `requestArrives` keep it in memory, an instruction a request more).
    @inlinable @inline(never)
    mutating func answerSlowed(slot s: UInt32, by delay: SimTime, _ r: KeyedRandom) {
        var r = r
        let slot = requests[s]
        let at = answerTime(slot, &r).saturatingAdd(delay)
        schedule(.responseArrives(device: slot.request.device, slot: s),
                 at: Self.offTheDeadline(at, sentAt: slot.sentAt, timeoutMs: setup.sdk.requestTimeoutMs))
    }

    /// The round-trip range of `d`'s link: its group's (SPEC §1.4, per-device links), or the
    /// network's when no group has one of its own. The callers test `groupLinks == nil`
    /// first and read `networkLink` themselves: a call of this non-mutating method from
    /// a mutating one copied the whole world (a memcpy a request).
    @usableFromInline func link(of d: DeviceIndex) -> ClosedRange<SimTime> {
        guard let links = groupLinks else { return networkLink }
        var g = 0
        while g + 1 < links.count, UInt32(d) >= groupStart[g + 1] { g += 1 }   // bounded by the group count
        return links[g]
    }

    /// The answer reaches the device; a dead process never hears it.
    @inlinable mutating func responseArrives(slot s: UInt32) {
        let slot = requests[s]
        requests.release(s)
        let d = slot.request.device
        let dev = _devices[Int(d)]
        guard dev.hasProcess, dev.processEpoch == slot.epoch else {
            trace(d, .droppedForDeadProcess(id: slot.id))
            return
        }
        answerDelivered(slot)
        stepInline(d, .response(id: slot.id, kind: slot.request.kind, reply: slot.reply))
    }

    /// An answer arrives: traced, and an answer held for the device's next verdict
    /// (`RequestFate.overtaken`) let go after it. A function of its own (see `traceInput`),
    /// which keeps the pins' gate out of `responseArrives`.
    @inlinable @inline(never)
    mutating func answerDelivered(_ slot: RequestPool.Slot) {
        trace(slot.request.device, .delivered(id: slot.id, kind: slot.request.kind, answer: slot.reply.answer, viaTimer: false,
                                              sentAt: slot.sentAt, servedAt: slot.reply.servedAt, stoppedSince: slot.reply.stoppedSince))
        if fates.holds, slot.reply.answer.isVerdict { letHeldAnswerGo(device: slot.request.device) }
    }
}
