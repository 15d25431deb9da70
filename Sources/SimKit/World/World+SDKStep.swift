/// Running the SDK on one input and applying what it returns.
extension SimWorld {
    /// Hands `input` to the device's SDK and applies its effects in order; the step ends
    /// with a `stepEnd` record so checkers can judge a whole handling at once.
    /// A call of its own, for the person's actions and launches.
    @inlinable mutating func step(_ d: DeviceIndex, _ input: SDKInput) { stepInline(d, input) }

    /// `step`, inlined into its two busiest callers, an answer's arrival and a timer's
    /// firing (most steps), where the input's case is known.
    @inline(__always)
    @inlinable mutating func stepInline(_ d: DeviceIndex, _ input: SDKInput) {
        let i = Int(d)
        // One `trace` call, not one a case: each inlined copy of it (with the observer's
        // checks) counts against the optimiser's budget for this function.
        let traced: LifecycleInput?
        switch input {
        case .launch(let bg): traced = bg ? .launchInBackground : .launch
        case .becameActive: traced = .becameActive
        case .wentToBackground: traced = .wentToBackground
        case .backgroundRun: traced = .backgroundRun
        case .backgroundExpiring: traced = .backgroundExpiring
        case .call(let call): traced = call == .search ? .search : call == .query ? .query : .profile
        case .reset: traced = .reset
        case .response, .timer: traced = nil   // traced as `delivered` / `timerFired` by the caller
        }
        if let traced { traceInput(d, traced) }
        // In a world where no fault has touched a phone's steps (no clock moved, no disk
        // filled or locked, no kill armed: one flag) a step is the plain one, as before the
        // phone faults; the rest, out of line, so that the copies of this function inlined
        // in the busiest handlers stay as small as they were. Equal by construction:
        // `faultsOnTheStep` returns the plain context behind the same flag, and a kill
        // armed raises it too (asserted below), so the writes are applied in full.
        if faults.onTheStep { stepOnAFaultyPhone(d, input); return }
        assert(!faultsOnTheWrites, "a kill armed without raising faults.onTheStep")
        assert(faultsOnTheWallClock(of: i) == 0 && !faultsOnTheDisk(of: i) && !faultsOnProtectedData(of: i),
               "a fault changes what a step is told without raising faults.onTheStep")
        assert(handlesAloneAsHandleWould(d, input), "the SDK handled \(input) alone, but not as its handle does")
        if _sdks[i].handledAlone(input) { traceStepEnd(d); return }
        // Fields are read straight from the device, not from a copy of it: copying the whole
        // state to the stack and then again into the SDK's step stalled on store forwarding.
        let context = SDKContext(device: d, photoCount: _devices[i].photoCount, photosAllowed: _devices[i].photosAllowed)
        // Steps never nest, so nothing else reads the buffer.
        effects.removeAll()
        // The stored properties, not their accessors: disjoint accesses, which the
        // exclusivity check can see.
        _sdks[i].handle(input, now: _now, context: context, config: setup.sdk, disk: _devices[i].disk, effects: &effects)
        if !effects.isEmpty { applyEffects(device: d) }
        traceStepEnd(d)
    }

    /// `stepInline` once a fault has touched some phone's steps: what the faults tell the
    /// step (`faultsOnTheStep`), and writes that a full or locked disk refuses or a kill
    /// cuts short.
    @inline(never)
    @inlinable mutating func stepOnAFaultyPhone(_ d: DeviceIndex, _ input: SDKInput) {
        let i = Int(d)
        let context = faultsOnTheStep(d)
        effects.removeAll()
        _sdks[i].handle(input, now: _now, context: context, config: setup.sdk, disk: _devices[i].disk, effects: &effects)
        if !effects.isEmpty {
            // P3, P4: a faulty disk refuses writes; P1: a kill at one of the step's writes
            // ends the step there, with no `stepEnd`.
            if context.diskFull || context.dataLocked {
                if applyEffectsOnAFaultyDisk(device: d, locked: context.dataLocked) { return }
            } else if faultsOnTheWrites { if applyEffectsUntilKill(device: d) { return } } else { applyEffects(device: d) }
        }
        traceStepEnd(d)
    }

    /// Applies the step's effects in order. One call a step with `apply` inlined, not a
    /// call an effect, which would repeat its register saves and restores for every effect.
    @inline(never)
    @inlinable mutating func applyEffects(device d: DeviceIndex) {
        var k = 0
        while k < effects.count {
            apply(effects[k], device: d)
            k += 1
        }
    }

    @inline(__always)
    @inlinable mutating func apply(_ effect: Effect, device d: DeviceIndex) {
        let i = Int(d)
        switch effect {
        case .send(let id, let kind, let credential):
            sendRequest(device: d, id: id, kind: kind, credential: credential)
        case .setTimer(let kind, let at, let arg):
            let when = max(at, now)
            if kind == .requestTimeout {
                schedule(.timer(kind, device: d, arg: arg, stamp: _devices[i].processEpoch), at: when)
            } else {
                let generation = bumpTimer(kind, device: i)
                schedule(.timer(kind, device: d, arg: arg, stamp: _devices[i].processEpoch &+ generation &* 0x100), at: when)
            }
        case .cancelTimer(let kind):
            if kind != .requestTimeout { _ = bumpTimer(kind, device: i) }
        case .store(let op):
            _devices[i].disk.apply(op)
            traceStore(d, op)
        case .state(let s):
            _devices[i].reportedState = s
            traceState(d, s)
        case .callResult(let call, let outcome):
            traceCallResult(d, call, outcome)
        case .runStarted(let background):
            traceRunStarted(d, background: background)
        case .runEnded:
            traceRunEnded(d)
        case .unsettled:
            traceUnsettled(d)
        case .carries(let report):
            traceCarries(d, report: report)
        }
    }

    /// Makes earlier firings of a cancellable timer stale; returns the new generation.
    @inlinable mutating func bumpTimer(_ kind: TimerKind, device i: Int) -> UInt16 {
        switch kind {
        case .indexChunk: _devices[i].timerGeneration.0 &+= 1; return _devices[i].timerGeneration.0
        case .resetRetry: _devices[i].timerGeneration.1 &+= 1; return _devices[i].timerGeneration.1
        case .reportRetry: _devices[i].timerGeneration.2 &+= 1; return _devices[i].timerGeneration.2
        case .requestTimeout: return 0
        }
    }

    /// Debug builds: whether a copy of device `d`'s SDK, handed this timer firing, asks for
    /// nothing, as an SDK that says it ignores the firing must (`SDKCore.ignoresTimer`).
    @inlinable func handlesTimerWithoutEffects(_ d: DeviceIndex, _ kind: TimerKind, arg: UInt32) -> Bool {
        let i = Int(d)
        var copy = _sdks[i]
        var out = EffectBuffer()
        let context = faultsOnTheStep(d)
        copy.handle(.timer(kind, arg: arg), now: now, context: context, config: setup.sdk, disk: _devices[i].disk, effects: &out)
        return out.isEmpty
    }

    /// Debug builds: true unless a copy of device `d`'s SDK handles `input` alone
    /// (`SDKCore.handledAlone`) while another copy, handed it by `handle`, asks for
    /// something, or (for an SDK of plain values, whose bytes say its state) ends in
    /// another state.
    @inlinable func handlesAloneAsHandleWould(_ d: DeviceIndex, _ input: SDKInput) -> Bool {
        let i = Int(d)
        var alone = _sdks[i]
        guard alone.handledAlone(input) else { return true }
        var handled = _sdks[i]
        var out = EffectBuffer()
        handled.handle(input, now: now, context: faultsOnTheStep(d), config: setup.sdk, disk: _devices[i].disk, effects: &out)
        guard out.isEmpty else { return false }
        guard _isPOD(SDK.self) else { return true }
        return withUnsafeBytes(of: &alone) { a in withUnsafeBytes(of: &handled) { h in a.elementsEqual(h) } }
    }

    /// The generation in `g` of a cancellable timer (request timeouts have none: 0).
    /// Static, over the device's tuple: as a method of the world, each call from a
    /// mutating one would copy the whole world to the stack first.
    @inline(__always)
    @inlinable static func generation(_ kind: TimerKind, in g: (UInt16, UInt16, UInt16)) -> UInt16 {
        switch kind {
        case .indexChunk: g.0
        case .resetRetry: g.1
        case .reportRetry: g.2
        case .requestTimeout: 0
        }
    }

    /// A timer fires, unless its process died, it was set again or cancelled since, or the
    /// SDK says it would ignore it (`SDKCore.ignoresTimer`).
    /// `stamp` is the process epoch, plus the timer's generation times 256.
    @inlinable mutating func timerFires(_ kind: TimerKind, device d: DeviceIndex, arg: UInt32, stamp: UInt16) {
        let i = Int(d)
        guard _devices[i].hasProcess else { return }
        let expected = kind == .requestTimeout
            ? _devices[i].processEpoch
            : _devices[i].processEpoch &+ Self.generation(kind, in: _devices[i].timerGeneration) &* 0x100
        guard stamp == expected else { return }
        if _sdks[i].ignoresTimer(kind, arg: arg) {
            assert(handlesTimerWithoutEffects(d, kind, arg: arg), "the SDK said it ignores a \(kind) timer but handling it has effects")
            return
        }
        if kind == .requestTimeout {
            guard let timeout = RequestTimeout(arg: arg) else { return }
            trace(d, .delivered(id: timeout.id, kind: timeout.kind, answer: .timedOut, viaTimer: true, sentAt: 0,
                                servedAt: ServerReply.none, stoppedSince: ServerReply.none))
        } else {
            trace(d, .timerFired(kind, arg: arg))
        }
        stepInline(d, .timer(kind, arg: arg))
    }

    // The busiest `trace` sites, each a function of its own. `trace` is inlined where the
    // record's case is known, so the fingerprint's and the observer's `switch`es fold to
    // the one case; but inlined into a handler that has already inlined much, it counts
    // against that handler's inlining budget, and the optimiser left `trace` a call that
    // switched on the case at run time. LLVM's `-inline-threshold` would inline it anyway,
    // but that is an unsafe flag, which a versioned dependency may not carry; a function of
    // its own per busy site has a budget of its own and inlines `trace` with its case known.
    @inlinable @inline(never)
    mutating func traceInput(_ d: DeviceIndex, _ input: LifecycleInput) { trace(d, .input(input)) }
    @inlinable @inline(never)
    mutating func traceStepEnd(_ d: DeviceIndex) { trace(d, .stepEnd) }
    @inlinable @inline(never)
    mutating func traceStore(_ d: DeviceIndex, _ op: StoreOp) { trace(d, .store(op)) }
    @inlinable @inline(never)
    mutating func traceCallResult(_ d: DeviceIndex, _ call: APICall, _ outcome: CallOutcome) { trace(d, .callResult(call, outcome)) }
    // The three below also show the effect to the faults that follow runs (P5's limit): out
    // of line with the tracing, so that `apply`, inlined in every step, stays as it was.
    @inlinable @inline(never)
    mutating func traceRunStarted(_ d: DeviceIndex, background: Bool) {
        trace(d, .runStarted(background: background))
        faultsOnRunStarted(device: d)
    }
    @inlinable @inline(never)
    mutating func traceRunEnded(_ d: DeviceIndex) {
        trace(d, .runEnded)
        faultsOnRunEnded(device: d)
    }
    // D10's rare effects, out of line too: each `trace` inlined in `apply` made every step's
    // loop over its effects larger (more registers saved, more spilled).
    @inlinable @inline(never)
    mutating func traceUnsettled(_ d: DeviceIndex) { trace(d, .unsettled) }
    @inlinable @inline(never)
    mutating func traceCarries(_ d: DeviceIndex, report: UInt64) { trace(d, .carries(report: report)) }
    @inlinable @inline(never)
    mutating func traceState(_ d: DeviceIndex, _ state: SDKState) {
        trace(d, .state(state))
        faultsOnState(device: d, state)
    }
}
