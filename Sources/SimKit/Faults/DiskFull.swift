/// `disk-full SEL for D` (SPEC §1.5, P3): the selected phones' disks are full for D. Every
/// write the SDK makes meanwhile that takes room fails, and the SDK is told; the old value
/// stays. The engine does not apply such a `.store` effect: it traces it as failed (a fault
/// record, `writeFailed`) in its place. The SDK knows it from its step's context
/// (`SDKContext.diskFull`): a step is one moment, so "this step's writes fail" is what an
/// app learns from each write's error, said before the step instead of after each write.
///
/// What takes room, as on iOS (`StoreOp.takesRoom`): the index growing, models and place
/// data saved, a run report queued. What does not, and still succeeds: deletions (they free
/// room), and the small records rewritten in place (the lock, its dates, the last check,
/// the credential and a pending reset in the keychain, the background task, which is the
/// OS's). A phone's window ends at the later of its windows' ends; it needs no end event:
/// each step compares its time with the device's end (`faultsOnTheDisk`).
public struct DiskFull: Sendable, Equatable {
    /// The phones whose disks are full.
    package var devices: DeviceSelector
    /// How long.
    package var forMs: SimTime
    /// `disk-full SEL for D`.
    package init(devices: DeviceSelector, forMs: SimTime) { self.devices = devices; self.forMs = forMs }

    /// The fault as the world injects it: the devices by index.
    public struct Injection: Sendable, Equatable {
        public var devices: DeviceSelection
        public var forMs: SimTime
        public init(devices: DeviceSelection, forMs: SimTime) { self.devices = devices; self.forMs = forMs }
    }

    /// The phones' disks in a world (`FaultWindows.diskFull`): empty until one fills, so a
    /// world without the fault reads no per-device value (`faultsOnTheDisk`).
    @usableFromInline struct Disks: Sendable, Equatable {
        /// Per device, the end of its full disk's window (0: never full).
        @usableFromInline var fullUntil: [SimTime] = []
        @inlinable init() {}
    }

    /// The code of its end events (`FaultEnd`): it has none, the code is its own anyway.
    @inlinable package static var endCode: UInt8 { 31 }
}

extension StoreOp {
    /// Whether a full disk refuses this write (P3, `DiskFull`): it adds data (the index
    /// growing, models or place data saved, a run report queued). Deletions free room, and
    /// the small records kept in place (lock, dates, credential, pending reset, background
    /// task) are rewritten where they are: those succeed.
    @inlinable public var takesRoom: Bool {
        switch self {
        case .indexPhotos, .saveModels, .savePlaceData, .queueReport, .reportQueued: true
        default: false
        }
    }
}

// MARK: - The statement

extension DiskFull: FaultKind {
    package static var keyword: [String] { ["disk-full"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> DiskFull {
        let devices = try c.selector()
        return DiskFull(devices: devices, forMs: try c.forDuration())
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.devices(devices)
        c.window(forMs, of: "'disk-full'")
    }

    package var text: String { "disk-full \(devices.text) for \(DurationText.format(forMs))" }
    package var selectedDevices: DeviceSelector? { devices }
    package func selecting(_ devices: DeviceSelector) -> DiskFull { DiskFull(devices: devices, forMs: forMs) }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .diskFull(Injection(devices: try resolve(devices), forMs: forMs))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `disk-full SEL for D`, as the world runs it.
    public static func diskFull(_ devices: DeviceSelection, forMs: SimTime) -> WorldAction {
        .fault(.diskFull(.init(devices: devices, forMs: forMs)))
    }
}

extension SimWorld {
    /// Each selected phone's disk is full until `forMs` from now, unless it already is until later.
    @inlinable mutating func inject(_ f: DiskFull.Injection, statement index: Int, firing: UInt32) {
        let until = now.saturatingAdd(f.forMs)
        forEachSelected(f.devices, statement: index, firing: firing) { world, d in
            if world.faults.diskFull.fullUntil.isEmpty { world.faults.diskFull.fullUntil = Array(repeating: 0, count: world._devices.count) }
            world.faults.onTheStep = true
            let i = Int(d)
            if world.faults.diskFull.fullUntil[i] < until {
                world.faults.diskFull.fullUntil[i] = until
                world.trace(d, .fault(.diskFull(until: until)))
            }
        }
    }

    /// Whether device `i`'s disk is full now: false, reading nothing per device, in a world
    /// where no disk filled.
    @inline(__always)
    @inlinable func diskIsFull(_ i: Int) -> Bool {
        !faults.diskFull.fullUntil.isEmpty && now < faults.diskFull.fullUntil[i]
    }

    /// The step's effects on a full disk: a write that takes room is not applied but traced
    /// as failed (P3); with its protected data `locked` (P4, `Reboot`), every write but the
    /// background task's is refused; the rest as usual (`applyEffects`). A kill pending on
    /// the process (P1) counts the step's writes, refused or not, and ends it at its write:
    /// returns whether it did.
    @inline(never)
    @inlinable mutating func applyEffectsOnAFaultyDisk(device d: DeviceIndex, locked: Bool) -> Bool {
        let i = Int(d)
        var left = faultsOnTheWrites ? killWritesLeft(i) : 0
        let pending = left != 0
        var k = 0
        while k < effects.count {
            if killLands(at: k, device: d, left: &left) { return true }
            let effect = effects[k]
            if case .store(let op) = effect, locked, op != .scheduleBackground, op != .cancelBackground {
                trace(d, .fault(Reboot.Record.writeRefused(code: op.lockedCode).fault))
            } else if case .store(let op) = effect, op.takesRoom {
                trace(d, .fault(.writeFailed(op)))
            } else {
                apply(effect, device: d)
            }
            k += 1
        }
        if pending { faults.kill.writesLeft[i] = left }
        return false
    }
}

// MARK: - The search tools

extension DiskFull {
    /// One seed in six, from the seed's fork "disk" (`drawnAlone`). Some phones' disks fill
    /// for hours or days while the person opens the app and the OS runs it in the background
    /// (runs end, their reports' writes fail, indexing and downloads fail), then the app is
    /// opened again in the same process once the disk has room, and later in the background:
    /// what failed must be written then (P3).
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let length = [Ms.hour, 6 * Ms.hour, Ms.day, 2 * Ms.day][Int(g.below(4))]
        let devices = g.someDevices()
        g.everyone(.launch, at: t - Ms.minute)
        g.add(DiskFull(devices: devices, forMs: length), at: t)
        g.everyone(.background, at: t + length / 4)
        g.everyone(.open, at: t + length / 2)
        g.everyone(.close, at: t + length / 2 + 10 * Ms.minute)
        g.everyone(.background, at: t + length + Ms.minute)
        g.everyone(.open, at: t + length + Ms.hour)
    }

    /// Fork "disk" of the seed: its first disks filled after every other draw of the
    /// generator, so the other seeds kept their scripts.
    package static var drawnAlone: FaultDrawnAlone? { FaultDrawnAlone(oneIn: 6, stream: 0x6469_736B) }

    /// A new length; half the time, other devices.
    package func mutated<M: FaultMutations>(_ m: inout M) -> DiskFull {
        DiskFull(devices: m.chance(1, outOf: 2) ? m.someDevices() : devices, forMs: m.lengthMs)
    }

    /// One phone at a time, its disk full for the alphabet's window, with `--faults disk-full`.
    package static var exploreName: String? { "disk-full" }
    /// Asked for by name, so that the default alphabet, and what explore finds with it, stay.
    package static var exploredByDefault: Bool { false }
    package static func explored(_ a: FaultAlphabet) -> [DiskFull] { a.devices.map { DiskFull(devices: $0, forMs: a.windowMs) } }
}

// MARK: - Trace records

extension DiskFull {
    /// Its trace records (`TraceEvent.fault`), as checkers and tools read them.
    public enum Record: Sendable, Equatable {
        /// A phone's disk is full until `until`.
        case diskFull(until: SimTime)
        /// A write of the SDK's failed on a full disk and was not applied (`op.takesRoom`).
        case writeFailed(StoreOp)

        /// The record as the trace carries it (tag 32 with the end in `b`; tag 33 with the
        /// write's code above the tag and its argument in `b`).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .diskFull(let until): return FaultRecord(a: 32, b: until)
            case .writeFailed(let op):
                let (code, word): (UInt64, UInt64)
                switch op {
                case .indexPhotos(let from, let count): (code, word) = (1, UInt64(from) << 16 | UInt64(count))
                case .saveModels: (code, word) = (3, 0)
                case .savePlaceData: (code, word) = (5, 0)
                case .queueReport: (code, word) = (9, 0)
                case .reportQueued(let id): (code, word) = (21, id)
                default: (code, word) = (0, 0)   // takes no room: never refused
                }
                return FaultRecord(a: 33 | code << 8, b: word)
            }
        }

        /// `r` read as one of these records, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            switch r.tag {
            case 32: self = .diskFull(until: r.b)
            case 33:
                switch r.a >> 8 {
                case 1: self = .writeFailed(.indexPhotos(from: UInt32(truncatingIfNeeded: r.b >> 16), count: UInt16(truncatingIfNeeded: r.b)))
                case 3: self = .writeFailed(.saveModels)
                case 5: self = .writeFailed(.savePlaceData)
                case 9: self = .writeFailed(.queueReport)
                case 21: self = .writeFailed(.reportQueued(id: r.b))
                default: return nil
                }
            default: return nil
            }
        }
    }
}

extension FaultRecord {
    /// A phone's disk is full until `until` (P3).
    @inlinable public static func diskFull(until: SimTime) -> FaultRecord { DiskFull.Record.diskFull(until: until).fault }
    /// The SDK's write `op` failed on a full disk and was not applied (P3).
    @inlinable public static func writeFailed(_ op: StoreOp) -> FaultRecord { DiskFull.Record.writeFailed(op).fault }
}

extension DiskFull: FaultRecords {
    package static var recordTags: [UInt8] { [32, 33] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// A mark on the timeline where a disk fills: `device 3 disk full for 2d`.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        guard case .diskFull(let until)? = Record(r) else { return nil }
        return FaultWindowRecord(until: until, mark: .deviceMoment(label: "disk full until \(DurationText.format(until))"))
    }
}
