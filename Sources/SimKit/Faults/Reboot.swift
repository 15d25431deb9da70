/// `reboot SEL unlock-after D` (SPEC §1.5, P4): the selected phones restart. The app's
/// process dies, and until the person first unlocks the phone, D later, the SDK's protected
/// data (its files and keychain items) can be neither read nor written: each step's
/// context says so (`SDKContext.dataLocked`), and the engine refuses every write of the
/// step (but the background task's, which is the OS's) and traces it as refused
/// (`writeRefused`). The disk the step is handed is not to be read: unreadable is not
/// absent. The OS may run the app in the background meanwhile: each reboot fires one
/// background run halfway to the unlock (if the SDK's task is registered), as iOS does
/// after a restart.
public struct Reboot: Sendable, Equatable {
    /// The phones that restart.
    package var devices: DeviceSelector
    /// How long until the person first unlocks it.
    package var forMs: SimTime
    /// `reboot SEL unlock-after D`.
    package init(devices: DeviceSelector, forMs: SimTime) { self.devices = devices; self.forMs = forMs }

    /// The fault as the world injects it: the devices by index.
    public struct Injection: Sendable, Equatable {
        public var devices: DeviceSelection
        public var forMs: SimTime
        public init(devices: DeviceSelection, forMs: SimTime) { self.devices = devices; self.forMs = forMs }
    }

    /// The phones' protected data in a world (`FaultWindows.reboot`): empty until one restarts.
    @usableFromInline struct Locks: Sendable, Equatable {
        /// Per device, when the person first unlocks it after its last restart (0: never locked).
        @usableFromInline var unlockAt: [SimTime] = []
        @inlinable init() {}
    }

    /// The code of its end events (`FaultEnd`): the background run fired halfway to the unlock.
    @inlinable package static var endCode: UInt8 { 32 }
}

// MARK: - The statement

extension Reboot: FaultKind {
    package static var keyword: [String] { ["reboot"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> Reboot {
        let devices = try c.selector()
        guard c.isWord("unlock-after") else {
            throw c.expected("'unlock-after'", hint: "a phone restarts and is unlocked later: 'reboot all unlock-after 8h'")
        }
        _ = c.take()
        return Reboot(devices: devices, forMs: try c.duration("unlock-after"))
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.devices(devices)
        c.window(forMs, of: "'reboot' unlock-after")
    }

    package var text: String { "reboot \(devices.text) unlock-after \(DurationText.format(forMs))" }
    package var selectedDevices: DeviceSelector? { devices }
    package func selecting(_ devices: DeviceSelector) -> Reboot { Reboot(devices: devices, forMs: forMs) }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .reboot(Injection(devices: try resolve(devices), forMs: forMs))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `reboot SEL unlock-after D`, as the world runs it.
    public static func reboot(_ devices: DeviceSelection, unlockAfterMs: SimTime) -> WorldAction {
        .fault(.reboot(.init(devices: devices, forMs: unlockAfterMs)))
    }
}

extension SimWorld {
    /// Each selected phone restarts: its app's process dies, its protected data is locked
    /// until `forMs` from now, and the OS fires a background run halfway there.
    @inlinable mutating func inject(_ f: Reboot.Injection, statement index: Int, firing: UInt32) {
        let until = now.saturatingAdd(f.forMs)
        forEachSelected(f.devices, statement: index, firing: firing) { world, d in
            if world.faults.reboot.unlockAt.isEmpty { world.faults.reboot.unlockAt = Array(repeating: 0, count: world._devices.count) }
            world.faults.onTheStep = true
            let i = Int(d)
            world.killProcess(d)
            world.faults.reboot.unlockAt[i] = max(world.faults.reboot.unlockAt[i], until)
            world.trace(d, .fault(Reboot.Record.rebooted(unlockAt: world.faults.reboot.unlockAt[i]).fault))
            world.schedule(.faultEnds(FaultEnd(kind: Reboot.endCode, target: d)), at: world.now + f.forMs / 2)
        }
    }

    /// Halfway to the unlock: the OS runs the app in the background, its data still locked.
    @inlinable mutating func rebootBackgroundRun(device d: DeviceIndex) {
        guard dataIsLocked(Int(d)) else { return }
        personAct(.background, device: d, arg: 0)
    }

    /// Whether device `i`'s protected data is locked now (P4): false, reading nothing per
    /// device, in a world where no phone restarted.
    @inline(__always)
    @inlinable func dataIsLocked(_ i: Int) -> Bool {
        !faults.reboot.unlockAt.isEmpty && now < faults.reboot.unlockAt[i]
    }
}

// MARK: - The search tools

extension Reboot {
    /// One seed in six, from the seed's fork "reboot" (`drawnAlone`). The app runs, the
    /// phones restart, the OS runs it in the background before the unlock (the data
    /// unreadable), then the person opens it after the unlock.
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let length = [Ms.hour, 3 * Ms.hour, 8 * Ms.hour][Int(g.below(3))]
        g.everyone(.launch, at: t - Ms.hour)
        g.add(Reboot(devices: g.someDevices(), forMs: length), at: t)
        g.everyone(.background, at: t + length / 4)
        g.everyone(.open, at: t + length + Ms.minute)
        g.everyone(.background, at: t + length + Ms.hour)
    }

    /// Fork "reboot" of the seed: its first reboots came after every other draw.
    package static var drawnAlone: FaultDrawnAlone? { FaultDrawnAlone(oneIn: 6, stream: 0x7265_626F_6F74) }

    /// A new wait for the unlock; half the time, other devices.
    package func mutated<M: FaultMutations>(_ m: inout M) -> Reboot {
        Reboot(devices: m.chance(1, outOf: 2) ? m.someDevices() : devices, forMs: m.lengthMs)
    }

    /// One phone at a time, unlocked after the alphabet's window, with `--faults reboot`.
    package static var exploreName: String? { "reboot" }
    package static var exploredByDefault: Bool { false }
    package static func explored(_ a: FaultAlphabet) -> [Reboot] { a.devices.map { Reboot(devices: $0, forMs: a.windowMs) } }
}

// MARK: - Trace records

extension Reboot {
    /// Its trace records (`TraceEvent.fault`), as checkers and tools read them.
    public enum Record: Sendable, Equatable {
        /// A phone restarted; its protected data is locked until `unlockAt`.
        case rebooted(unlockAt: SimTime)
        /// A write (or delete) of the SDK's was refused: its data was locked. `code` names
        /// the store operation (`StoreOp.lockedCode`).
        case writeRefused(code: UInt8)

        /// The record as the trace carries it (tag 34 with the unlock in `b`; tag 35 with
        /// the operation's code above the tag).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .rebooted(let at): FaultRecord(a: 34, b: at)
            case .writeRefused(let code): FaultRecord(a: 35 | UInt64(code) << 8, b: 0)
            }
        }

        /// `r` read as one of these records, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            switch r.tag {
            case 34: self = .rebooted(unlockAt: r.b)
            case 35: self = .writeRefused(code: UInt8(truncatingIfNeeded: r.a >> 8))
            default: return nil
            }
        }
    }
}

extension StoreOp {
    /// A small code for the operation, in a `Reboot.Record.writeRefused`: 1 a deletion of a
    /// person's data (index, models, place data, credential, reports), 2 anything else.
    @inlinable public var lockedCode: UInt8 {
        switch self {
        case .deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .dropReports, .reportsRemoved: 1
        default: 2
        }
    }
}

extension Reboot: FaultRecords {
    package static var recordTags: [UInt8] { [34, 35] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// A mark on the timeline at the restart.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        guard case .rebooted(let at)? = Record(r) else { return nil }
        return FaultWindowRecord(until: at, mark: .deviceMoment(label: "reboot, unlocked at \(DurationText.format(at))"))
    }
}
