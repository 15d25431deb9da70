/// The scripted schedule: statements fire at their times, pick their devices and act.
extension SimWorld {
    /// Fires every statement due now, in file order, then queues the next schedule time.
    @inlinable mutating func fireDueStatements() {
        let bits = Self.statementBits
        while let key = statementsDue.min, key >> bits == now {
            _ = statementsDue.pop()
            fireStatement(Int(key & (1 << bits - 1)))
        }
        if let next = statementsDue.min {
            schedule(.statement, at: next >> bits)
        }
    }

    /// Fires statement `index` now and schedules its next firing.
    @inlinable mutating func fireStatement(_ index: Int) {
        let statement = setup.schedule[index]
        let firing = firings[index]
        firings[index] &+= 1
        if statement.periodMs > 0 {
            let next = now.saturatingAdd(statement.periodMs)
            if next <= statement.untilMs, next <= setup.durationMs {
                statementsDue.push(next << Self.statementBits | UInt64(index))
            }
        }
        switch statement.action {
        case .person(let action, let selection, let arg):
            // One key per firing; each device's delay is a keyed draw from it and the device.
            let jitterKey = random.fork(Stream.jitter, UInt64(index) << 32 | UInt64(firing)).seed
            guard statement.jitterMs > 0 else {
                forEachSelected(selection, statement: index, firing: firing) { world, d in
                    world.personAct(action, device: d, arg: arg)
                }
                return
            }
            let jitterMs = statement.jitterMs
            guard jitterMs < 1 << 32 else {   // beyond a run's 32-bit offsets (49 days)
                forEachSelected(selection, statement: index, firing: firing) { world, d in
                    var r = KeyedRandom(key: jitterKey ^ UInt64(d))
                    world.schedulePersonAction(statement: index, device: d, after: r.int(in: 0...jitterMs))
                }
                return
            }
            // Each device's moment, as `delay << 32 | device`, in device order: queued as one
            // sorted run (see `EventQueue.pushRun`), or one by one when the queue refuses it.
            // A device is selected at most once, so the buffer needs one slot a device.
            if runEntries.count < _devices.count || !isKnownUniquelyReferenced(&runEntries) {
                runEntries = QueueBuffer(count: _devices.count)
            }
            let entries = runEntries.base
            var n = 0
            forEachSelected(selection, statement: index, firing: firing) { _, d in
                var r = KeyedRandom(key: jitterKey ^ UInt64(d))
                entries[n] = r.int(in: 0...jitterMs) << 32 | UInt64(d)
                n += 1
            }
            // The run's events differ only in their device (`target`): its kind and `arg` are
            // those of any one of them, packed.
            let packed = WorldEvent.personAction(device: 0, statement: UInt32(index)).packed(time: now)
            if !queue.pushRun(at: now, kind: packed.kind, arg: packed.arg, entries: entries, count: n,
                              maxOffset: jitterMs) {
                for v in UnsafeBufferPointer(start: entries, count: n) {
                    schedulePersonAction(statement: index, device: DeviceIndex(truncatingIfNeeded: v), after: v >> 32)
                }
            }
        case .fault(let fault):
            inject(fault, statement: index, firing: firing)
        case .dashboard(let action):
            let applied = applyDashboard(action)
            trace(Event.world, .dashboard(action, applied: applied))
        case .forgetDevice(let selection):
            forEachSelected(selection, statement: index, firing: firing) { world, d in
                if world.server.forgetDevice(d, now: world.now) { world.trace(d, .forgotDevice) }
            }
        case .probe(let arg):
            trace(Event.world, .probe(arg: arg))
        }
    }

    /// Queues statement `index`'s person action for device `d`, `delayMs` from now.
    @inlinable mutating func schedulePersonAction(statement index: Int, device d: DeviceIndex, after delayMs: SimTime) {
        schedule(.personAction(device: d, statement: UInt32(index)), at: now.saturatingAdd(delayMs))
    }

    /// A jittered person action reaches its device.
    @inlinable mutating func personActionFromStatement(device d: DeviceIndex, statement index: Int) {
        guard case .person(let action, _, let arg) = setup.schedule[index].action else { return }
        personAct(action, device: d, arg: arg)
    }

    /// Applies a dashboard or Rollup action to the server; false when it was refused.
    @inlinable mutating func applyDashboard(_ action: DashboardAction) -> Bool {
        switch action {
        case .rotate(let app, let key, let grace):
            let outcome = server.rotate(app: app, newKey: key, oldKey: grace.map { .keep(graceMs: $0) } ?? .stopNow, now: now)
            if outcome == .rotated { currentKey[Int(app)] = key; return true }
            return false
        case .stopOldKey(let app, let key): return server.stopOldKey(app: app, key: key, now: now)
        case .disable(let app): return server.disable(app: app, now: now)
        case .enable(let app): return server.enable(app: app, now: now)
        case .rollupApp(let a, let app): return server.rollup(a, app: app, now: now)
        case .rollupAccount(let a, let account): return server.rollup(a, account: account, now: now)
        }
    }

    /// Calls `body` for each selected device in index order. Shares and counts are drawn
    /// by selection sampling (Knuth's algorithm S) from a stream of the seed, the statement
    /// and the firing: exact counts, O(n), no allocation.
    @inlinable mutating func forEachSelected(_ selection: DeviceSelection, statement: Int, firing: UInt32,
                                  _ body: (inout SimWorld, DeviceIndex) -> Void) {
        let range = selection.group.map { devices(ofGroup: $0) } ?? 0..<_devices.count
        let n = range.count
        let wanted: Int
        switch selection.mode {
        case .every:
            for d in range { body(&self, DeviceIndex(d)) }
            return
        case .single(let index):
            if Int(index) < n { body(&self, DeviceIndex(range.lowerBound + Int(index))) }
            return
        case .count(let k): wanted = min(Int(k), n)
        case .shareBp(let bp): wanted = n * Int(min(bp, 10_000)) / 10_000
        }
        var r = random.fork(Stream.selection, UInt64(statement) << 32 | UInt64(firing))
        var needed = wanted
        var d = range.lowerBound
        while needed > 0, d < range.upperBound {
            let left = range.upperBound - d
            if r.below(UInt64(left)) < UInt64(needed) {
                body(&self, DeviceIndex(d))
                needed -= 1
            }
            d += 1
        }
    }
}
