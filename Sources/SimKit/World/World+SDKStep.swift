/// Running the SDK on one input and applying what it returns.
extension World {
    /// Hands `input` to the device's SDK and applies its effects in order; the step ends
    /// with a `stepEnd` record so checkers can judge a whole handling at once.
    mutating func step(_ d: DeviceIndex, _ input: SDKInput) {
        let i = Int(d)
        switch input {
        case .launch(let bg): trace(d, .input(bg ? .launchInBackground : .launch))
        case .becameActive: trace(d, .input(.becameActive))
        case .wentToBackground: trace(d, .input(.wentToBackground))
        case .backgroundRun: trace(d, .input(.backgroundRun))
        case .call(let call): trace(d, .input(call == .search ? .search : call == .query ? .query : .profile))
        case .reset: trace(d, .input(.reset))
        case .response, .timer: break   // traced as `delivered` / `timerFired` by the caller
        }
        // Fields are read straight from the device, not from a copy of it: copying the whole
        // state to the stack and then again into the SDK's step stalled on store forwarding.
        let context = SDKContext(device: d, photoCount: devices[i].photoCount, photosAllowed: devices[i].photosAllowed)
        // Steps never nest, so nothing else reads the buffer.
        effects.removeAll()
        sdks[i].handle(input, now: now, context: context, config: setup.sdk, disk: devices[i].disk, effects: &effects)
        if !effects.isEmpty { applyEffects(device: d) }
        trace(d, .stepEnd)
    }

    /// Applies the step's effects in order. One call a step with `apply` inlined, not a
    /// call an effect, whose register saves and restores were repeated for each of 1.8 M
    /// effects in 1.1 M steps (callgrind, checked, 10k devices × 10 days: 1,214.6 M ->
    /// 1,181.0 M instructions; the time did not change measurably).
    @inline(never)
    mutating func applyEffects(device d: DeviceIndex) {
        var k = 0
        while k < effects.count {
            apply(effects[k], device: d)
            k += 1
        }
    }

    @inline(__always)
    mutating func apply(_ effect: Effect, device d: DeviceIndex) {
        let i = Int(d)
        switch effect {
        case .send(let id, let kind, let credential):
            sendRequest(device: d, id: id, kind: kind, credential: credential)
        case .setTimer(let kind, let at, let arg):
            let when = max(at, now)
            if kind == .requestTimeout {
                schedule(Event(time: when, target: d, kind: EventKind.timer, arg: arg, sub: kind.rawValue, aux: devices[i].processEpoch))
            } else {
                let generation = bumpTimer(kind, device: i)
                schedule(Event(time: when, target: d, kind: EventKind.timer, arg: arg, sub: kind.rawValue,
                                 aux: devices[i].processEpoch &+ generation &* 0x100))
            }
        case .cancelTimer(let kind):
            if kind != .requestTimeout { _ = bumpTimer(kind, device: i) }
        case .store(let op):
            devices[i].disk.apply(op)
            trace(d, .store(op))
        case .state(let s):
            devices[i].reportedState = s
            trace(d, .state(s))
        case .callResult(let call, let outcome):
            trace(d, .callResult(call, outcome))
        case .runStarted(let background):
            trace(d, .runStarted(background: background))
        case .runEnded:
            trace(d, .runEnded)
        }
    }

    /// Makes earlier firings of a cancellable timer stale; returns the new generation.
    mutating func bumpTimer(_ kind: TimerKind, device i: Int) -> UInt16 {
        switch kind {
        case .indexChunk: devices[i].timerGeneration.0 &+= 1; return devices[i].timerGeneration.0
        case .resetRetry: devices[i].timerGeneration.1 &+= 1; return devices[i].timerGeneration.1
        case .reportRetry: devices[i].timerGeneration.2 &+= 1; return devices[i].timerGeneration.2
        case .requestTimeout: return 0
        }
    }

    /// Debug builds: whether a copy of device `d`'s SDK, handed this timer firing, asks for
    /// nothing, as an SDK that says it ignores the firing must (`SDKCore.ignoresTimer`).
    func handlesTimerWithoutEffects(_ d: DeviceIndex, _ kind: TimerKind, arg: UInt32) -> Bool {
        let i = Int(d)
        var copy = sdks[i]
        var out = EffectBuffer()
        let context = SDKContext(device: d, photoCount: devices[i].photoCount, photosAllowed: devices[i].photosAllowed)
        copy.handle(.timer(kind, arg: arg), now: now, context: context, config: setup.sdk, disk: devices[i].disk, effects: &out)
        return out.isEmpty
    }

    /// The generation in `g` of a cancellable timer (request timeouts have none: 0).
    /// Static, over the device's tuple: as a method of the world, each call from a
    /// mutating one copied the whole world (1.4 KB) to the stack first, 21 M of 1,616 M
    /// instructions at 10k devices × 10 days.
    @inline(__always)
    static func generation(_ kind: TimerKind, in g: (UInt16, UInt16, UInt16)) -> UInt16 {
        switch kind {
        case .indexChunk: g.0
        case .resetRetry: g.1
        case .reportRetry: g.2
        case .requestTimeout: 0
        }
    }

    /// A timer fires, unless its process died, it was set again or cancelled since, or the
    /// SDK says it would ignore it (`SDKCore.ignoresTimer`).
    /// `aux` carries the process epoch, plus the timer's generation times 256.
    mutating func timerFires(_ e: Event) {
        let d = e.target, i = Int(d)
        guard let kind = TimerKind(rawValue: e.sub), devices[i].hasProcess else { return }
        let expected = kind == .requestTimeout
            ? devices[i].processEpoch
            : devices[i].processEpoch &+ World.generation(kind, in: devices[i].timerGeneration) &* 0x100
        guard e.aux == expected else { return }
        if sdks[i].ignoresTimer(kind, arg: e.arg) {
            assert(handlesTimerWithoutEffects(d, kind, arg: e.arg), "the SDK said it ignores a \(kind) timer but handling it has effects")
            return
        }
        if kind == .requestTimeout {
            guard let requestKind = RequestKind(rawValue: UInt8(e.arg & 7)) else { return }
            trace(d, .delivered(id: e.arg >> 3, kind: requestKind, answer: .timedOut, viaTimer: true, sentAt: 0,
                                servedAt: ServerReply.none, stoppedSince: ServerReply.none))
        } else {
            trace(d, .timerFired(kind, arg: e.arg))
        }
        step(d, .timer(kind, arg: e.arg))
    }
}
