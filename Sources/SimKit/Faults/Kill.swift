/// `kill SEL at-write N` and `kill SEL` (SPEC §1.5, P1): the OS ends the selected phones'
/// app processes (memory pressure, the person swiping the app away, a crash elsewhere in
/// the app). With `at-write N`, each selected device's running process ends at its Nth
/// write to its disk from now (an SDK step's `.store` effect): writes 1…N-1 are applied,
/// the Nth and every later effect of that step are not, so the disk holds exactly the
/// writes made before the kill. Without it, the process ends at once, between two steps.
///
/// A pending kill belongs to the process that was running when it was injected: a device
/// with no process takes none, and one whose process ends first (a kill, an update, a
/// revoked permission, a cold launch) drops it. A later `kill … at-write` on the same
/// process replaces it.
public struct Kill: Sendable, Equatable {
    /// The phones whose processes end.
    package var devices: DeviceSelector
    /// At which write from now the process ends (1…`maxWrite`); nil: at once.
    package var atWrite: UInt64?
    /// `kill SEL [at-write N]`.
    package init(devices: DeviceSelector, atWrite: UInt64?) { self.devices = devices; self.atWrite = atWrite }

    /// The farthest write a kill may wait for.
    package static let maxWrite: UInt64 = 64

    /// The fault as the world injects it: the devices by index, the write (0: at once).
    public struct Injection: Sendable, Equatable {
        public var devices: DeviceSelection
        public var atWrite: UInt8
        public init(devices: DeviceSelection, atWrite: UInt8) { self.devices = devices; self.atWrite = atWrite }
    }

    /// The kills pending in a world (`FaultWindows.kill`): empty until one is injected, and
    /// `armed` false, so a world without the fault tests one flag a step with effects.
    @usableFromInline struct Pending: Sendable, Equatable {
        /// Raised by the first `kill … at-write` and never lowered: the gate of `applyEffects`.
        @usableFromInline var armed = false
        /// Per device, the writes left before the kill (the kill lands on the last), 0: none.
        @usableFromInline var writesLeft: [UInt8] = []
        /// Per device, the process the kill belongs to (`DeviceState.processEpoch`).
        @usableFromInline var epoch: [UInt16] = []
        /// Per device, the write the kill was set for (its statement's N), for its record.
        @usableFromInline var atWrite: [UInt8] = []
        @inlinable init() {}
    }

    /// The code of its end events (`FaultEnd`): it has none, the code is its own anyway.
    @inlinable package static var endCode: UInt8 { 30 }
}

// MARK: - The statement

extension Kill: FaultKind {
    package static var keyword: [String] { ["kill"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> Kill {
        let devices = try c.selector()
        guard c.isWord("at-write") else { return Kill(devices: devices, atWrite: nil) }
        _ = c.take()
        return Kill(devices: devices, atWrite: try c.number("the write at which the process ends, 1 to \(maxWrite)"))
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.devices(devices)
        if let n = atWrite, !(1...Kill.maxWrite).contains(n) {
            c.error(at: "\(n)", after: "at-write", "'kill' at-write '\(n)' is not between 1 and \(Kill.maxWrite) (a kill at once is 'kill SEL')")
        }
    }

    package var text: String { atWrite.map { "kill \(devices.text) at-write \($0)" } ?? "kill \(devices.text)" }
    package var selectedDevices: DeviceSelector? { devices }
    package func selecting(_ devices: DeviceSelector) -> Kill { Kill(devices: devices, atWrite: atWrite) }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .kill(Injection(devices: try resolve(devices), atWrite: UInt8(min(atWrite ?? 0, Kill.maxWrite))))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `kill SEL [at-write N]`, as the world runs it: `atWrite` 0 ends the processes at once.
    public static func kill(_ devices: DeviceSelection, atWrite: UInt8) -> WorldAction {
        .fault(.kill(.init(devices: devices, atWrite: atWrite)))
    }
}

extension SimWorld {
    /// Each selected device's running process ends: at once, or at its `atWrite`th write.
    @inlinable mutating func inject(_ f: Kill.Injection, statement index: Int, firing: UInt32) {
        forEachSelected(f.devices, statement: index, firing: firing) { world, d in
            world.killArmed(device: d, atWrite: f.atWrite)
        }
    }

    /// Device `d`'s process ends now (`atWrite` 0) or at its `atWrite`th write from now;
    /// with no process, nothing happens.
    @inlinable mutating func killArmed(device d: DeviceIndex, atWrite: UInt8) {
        let i = Int(d)
        guard _devices[i].hasProcess else { return }
        if atWrite == 0 {
            trace(d, .fault(.killed(atWrite: 0)))
            killProcess(d)
            return
        }
        if faults.kill.writesLeft.isEmpty {
            faults.kill.writesLeft = Array(repeating: 0, count: _devices.count)
            faults.kill.epoch = Array(repeating: 0, count: _devices.count)
            faults.kill.atWrite = Array(repeating: 0, count: _devices.count)
        }
        faults.kill.atWrite[i] = atWrite
        faults.kill.armed = true
        faults.onTheStep = true   // steps now take the path that counts their writes
        faults.kill.writesLeft[i] = atWrite
        faults.kill.epoch[i] = _devices[i].processEpoch
        trace(d, .fault(.killPending(atWrite: atWrite)))
    }

    /// The kill pending on device `i`'s running process, if any: the writes left before it.
    @inlinable func killWritesLeft(_ i: Int) -> UInt8 {
        guard faults.kill.armed, faults.kill.writesLeft[i] != 0, faults.kill.epoch[i] == _devices[i].processEpoch else { return 0 }
        return faults.kill.writesLeft[i]
    }

    @inlinable static func isStore(_ e: Effect) -> Bool { if case .store = e { return true }; return false }

    /// `applyEffects` under a pending kill: the step's effects in order, each write counting
    /// down; at the last write the process ends, that write and every later effect of the
    /// step unapplied. Returns whether the process was killed.
    @inline(never)
    @inlinable mutating func applyEffectsUntilKill(device d: DeviceIndex) -> Bool {
        let i = Int(d)
        var left = killWritesLeft(i)
        guard left != 0 else { applyEffects(device: d); return false }
        var k = 0
        while k < effects.count {
            if killLands(at: k, device: d, left: &left) { return true }
            apply(effects[k], device: d)
            k += 1
        }
        faults.kill.writesLeft[i] = left
        return false
    }

    /// Whether the kill pending on device `d`'s process lands at the step's effect `k`,
    /// with `left` writes left before it (0: none pending; counted down here, and stored
    /// back by the caller at the step's end). A write counts whether or not the disk takes
    /// it (`applyEffectsOnAFaultyDisk`): the kill lands between the SDK's writes. When it
    /// lands, the process ends there.
    @inline(__always)
    @inlinable mutating func killLands(at k: Int, device d: DeviceIndex, left: inout UInt8) -> Bool {
        // A core whose one write shows as several operations in a row counts each run
        // of `.store` effects as one write (`SDKCore.storeOpsAreWrites`).
        guard left != 0, case .store = effects[k], SDK.storeOpsAreWrites || k == 0 || !Self.isStore(effects[k - 1]) else { return false }
        left -= 1
        guard left == 0 else { return false }
        let i = Int(d)
        faults.kill.writesLeft[i] = 0
        trace(d, .fault(.killed(atWrite: faults.kill.atWrite[i])))
        _sdks[i].killed(atEffect: k)
        killProcess(d)
        return true
    }
}

// MARK: - The search tools

extension Kill {
    /// One seed in five, from the seed's fork "kill" (`drawnAlone`). A kill pending on some
    /// devices' processes, then what writes several times in one step: a reset (its
    /// deletions and its pending mark), or access stopped and the app talking to the server
    /// (a call meets the lock error: its date, the lock, the background task cancelled; the
    /// kill at the lock's second write half the time), or an indexing run
    /// (chunks, the run's report queued); then the app opened again twice, a day apart, and
    /// access back for a stopped one. A fifth of them kill at once, mid-run.
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let devices = g.someDevices()
        let n = 1 + g.below(4)
        switch g.below(5) {
        case 0, 1:
            g.everyone(.launch, at: t - Ms.hour)
            g.add(Kill(devices: devices, atWrite: n), at: t)
            g.everyone(.reset, at: t + Ms.minute)
            g.everyone(.open, at: t + Ms.hour)
            g.everyone(.open, at: t + Ms.day + Ms.hour)
        case 2, 3:
            g.everyone(.launch, at: t - Ms.hour)
            g.mainAppAccess(stopped: true, at: t - Ms.minute)
            // A call that reaches the server, so that its lock error's writes come while
            // the kill is pending (a launch would end the process and drop the kill, and an
            // open an hour after the launch checks nothing): one draw, as `poke` took.
            let call: PersonAction = g.below(3) == 0 ? .profile : .query
            let accessBack = g.chance(1, outOf: 2)
            // Half the time at the second write: between the lock's two records (the lock
            // and its date), where an SDK that writes them in an unsafe order loses the
            // lock. Drawn last, so the draws above are as they were.
            g.add(Kill(devices: devices, atWrite: g.chance(1, outOf: 2) ? 2 : n), at: t)
            g.everyone(call, at: t + Ms.minute)
            g.everyone(.open, at: t + Ms.hour)
            if accessBack { g.mainAppAccess(stopped: false, at: t + 2 * Ms.hour) }
            g.everyone(.open, at: t + Ms.day)
        default:
            g.everyone(.launch, at: t - Ms.minute)
            g.add(Kill(devices: devices, atWrite: g.chance(1, outOf: 2) ? nil : n), at: t)
            g.everyone(.open, at: t + Ms.hour)
        }
    }

    /// Fork "kill" of the seed: its first kills came after every other draw of the
    /// generator, so the other seeds kept their scripts.
    package static var drawnAlone: FaultDrawnAlone? { FaultDrawnAlone(oneIn: 5, stream: 0x6B69_6C6C) }

    /// Another write (1…8, or at once one time in five); half the time, other devices.
    package func mutated<M: FaultMutations>(_ m: inout M) -> Kill {
        let n: UInt64? = m.chance(1, outOf: 5) ? nil : 1 + m.below(8)
        return Kill(devices: m.chance(1, outOf: 2) ? m.someDevices() : devices, atWrite: n)
    }

    /// One phone at a time, killed at its first, second or third write from now, with
    /// `--faults kill`.
    package static var exploreName: String? { "kill" }
    /// Asked for by name (`--faults kill`), so that the default alphabet, and what explore
    /// finds with it, stay as they were.
    package static var exploredByDefault: Bool { false }
    package static func explored(_ a: FaultAlphabet) -> [Kill] {
        a.devices.flatMap { d in (1...3).map { Kill(devices: d, atWrite: UInt64($0)) } }
    }
}

// MARK: - Trace records

extension Kill {
    /// Its trace records (`TraceEvent.fault`), as checkers and tools read them.
    public enum Record: Sendable, Equatable {
        /// The process ends now, before this write (`atWrite` counted from the kill's
        /// statement; 0: at once, between two steps). A `processKilled` follows.
        case killed(atWrite: UInt8)
        /// A kill waits for the running process's `atWrite`th write from now.
        case pending(atWrite: UInt8)

        /// The record as the trace carries it (tags 30 and 31; the write above the tag).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .killed(let n): FaultRecord(a: 30 | UInt64(n) << 8, b: 0)
            case .pending(let n): FaultRecord(a: 31 | UInt64(n) << 8, b: 0)
            }
        }

        /// `r` read as this record, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            switch r.tag {
            case 30: self = .killed(atWrite: UInt8(truncatingIfNeeded: r.a >> 8))
            case 31: self = .pending(atWrite: UInt8(truncatingIfNeeded: r.a >> 8))
            default: return nil
            }
        }
    }
}

extension FaultRecord {
    /// The process is killed now (before its `atWrite`th write; 0: at once).
    @inlinable public static func killed(atWrite: UInt8) -> FaultRecord { Kill.Record.killed(atWrite: atWrite).fault }
    /// A kill waits for the process's `atWrite`th write from now.
    @inlinable public static func killPending(atWrite: UInt8) -> FaultRecord { Kill.Record.pending(atWrite: atWrite).fault }
}

extension Kill: FaultRecords {
    package static var recordTags: [UInt8] { [30, 31] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// A mark on the timeline where the kill lands: `device 3 killed at write 2`.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        guard case .killed(let n)? = Record(r) else { return nil }
        return FaultWindowRecord(until: nil, mark: .deviceMoment(label: n == 0 ? "killed" : "killed at write \(n)"))
    }
}
