/// `clock SEL back D` and `clock SEL forward D` (SPEC §1.5, P2): the selected phones' wall
/// clocks jump by D, back or forward, from whatever they read (the person sets the date, a
/// time-zone trip, a flat battery). Elapsed time is untouched: timers, timeouts and sleeps
/// run on the true time, and so does every step's `now`; the SDK reads the phone's clock
/// through `SDKContext.wallClock(at:)` (`wallClockOffsetSeconds`), at its next step (the OS
/// tells an app nothing when the clock is set). The server's time is the truth.
///
/// A phone's clock keeps its offset across app processes and for the rest of the run; a
/// later jump moves it again (the offsets add, held within `maxOffsetS`). Jumps are whole
/// seconds: the offset travels in 32 bits of the step's context.
public struct PhoneClock: Sendable, Equatable {
    /// The phones whose clocks jump.
    package var devices: DeviceSelector
    /// `back` (the clock reads earlier) or `forward`.
    package var back: Bool
    /// By how much, in milliseconds (whole seconds).
    package var byMs: SimTime
    /// `clock SEL back|forward D`.
    package init(devices: DeviceSelector, back: Bool, byMs: SimTime) { self.devices = devices; self.back = back; self.byMs = byMs }

    /// The farthest a phone's clock gets from the true time, either way: 20 years, in
    /// seconds (a 32-bit offset holds 68). Jumps beyond it stop there.
    @usableFromInline package static let maxOffsetS: Int64 = 20 * 365 * 86_400

    /// The fault as the world injects it: the devices by index, the signed jump in seconds.
    public struct Injection: Sendable, Equatable {
        public var devices: DeviceSelection
        public var byS: Int32
        public init(devices: DeviceSelection, byS: Int32) { self.devices = devices; self.byS = byS }
    }

    /// The phones' clocks in a world (`FaultWindows.phoneClock`): empty until one jumps, so a
    /// world without the fault reads no per-device value (`wallClockOffset(of:)`).
    @usableFromInline struct Clocks: Sendable, Equatable {
        /// Per device, its wall clock's offset from the true time, in seconds.
        @usableFromInline var offsetS: [Int32] = []
        @inlinable init() {}
    }

    /// The code of its end events (`FaultEnd`): it has none, the code is its own anyway.
    @inlinable package static var endCode: UInt8 { 24 }
}

// MARK: - The statement

extension PhoneClock: FaultKind {
    package static var keyword: [String] { ["clock"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> PhoneClock {
        let devices = try c.selector()
        let back: Bool
        if c.isWord("back") { back = true } else if c.isWord("forward") { back = false } else {
            throw c.expected("'back' or 'forward'", hint: "a phone's clock jumps: 'clock all back 40d' or 'clock all forward 3h'")
        }
        _ = c.take()
        return PhoneClock(devices: devices, back: back, byMs: try c.duration("jump"))
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.devices(devices)
        let word = back ? "back" : "forward"
        if byMs == 0 { c.error(at: nil, after: word, "'clock' must jump by more than 0s") }
        else if byMs % Ms.second != 0 {
            c.error(at: nil, after: word, "'clock' jumps by whole seconds, not '\(c.spelled(after: word, byMs))'")
        }
        if byMs > ScenarioLimits.maxDuration {
            c.error(at: nil, after: word, "'clock' \(word) '\(c.spelled(after: word, byMs))' is longer than the limit of \(DurationText.format(ScenarioLimits.maxDuration))")
        }
    }

    package var text: String { "clock \(devices.text) \(back ? "back" : "forward") \(DurationText.format(byMs))" }
    package var selectedDevices: DeviceSelector? { devices }
    package func selecting(_ devices: DeviceSelector) -> PhoneClock { PhoneClock(devices: devices, back: back, byMs: byMs) }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        let s = Int32(min(byMs / Ms.second, SimTime(PhoneClock.maxOffsetS)))
        return .phoneClock(Injection(devices: try resolve(devices), byS: back ? -s : s))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `clock SEL back|forward D`, as the world runs it: `byS` negative sets it back.
    public static func phoneClock(_ devices: DeviceSelection, byS: Int32) -> WorldAction {
        .fault(.phoneClock(.init(devices: devices, byS: byS)))
    }
}

extension SimWorld {
    /// Each selected phone's clock jumps.
    @inlinable mutating func inject(_ f: PhoneClock.Injection, statement index: Int, firing: UInt32) {
        forEachSelected(f.devices, statement: index, firing: firing) { world, d in
            world.phoneClockJumps(device: d, byS: f.byS)
        }
    }

    /// Device `d`'s wall clock jumps by `byS` seconds (held within `PhoneClock.maxOffsetS`).
    @inlinable mutating func phoneClockJumps(device d: DeviceIndex, byS: Int32) {
        if faults.phoneClock.offsetS.isEmpty { faults.phoneClock.offsetS = Array(repeating: 0, count: _devices.count) }
        faults.onTheStep = true
        let i = Int(d)
        let old = faults.phoneClock.offsetS[i]
        let new = Int32(max(-PhoneClock.maxOffsetS, min(PhoneClock.maxOffsetS, Int64(old) + Int64(byS))))
        faults.phoneClock.offsetS[i] = new
        trace(d, .fault(.phoneClockSet(offsetS: new, jumpS: new &- old)))
    }

    /// Device `i`'s wall clock offset, in seconds: 0 in a world where no clock jumped.
    @inline(__always)
    @inlinable func phoneClockOffset(of i: Int) -> Int32 {
        faults.phoneClock.offsetS.isEmpty ? 0 : faults.phoneClock.offsetS[i]
    }
}

// MARK: - The search tools

extension PhoneClock {
    /// One seed in five, from the seed's fork "clock" (`drawnAlone`). Half of them set some
    /// phones' clocks back past their last key check (a launch just before), then open the
    /// app an hour later, more than 24 h later, and again a day on, with the clock still
    /// behind (D1 by the phone's clock: the check is owed); a quarter set them forward by a month or more
    /// while access is stopped, then talk to the server (a lock error whose stop is days old
    /// by the server and a month old by the phone: nothing may be purged, D5); the rest
    /// move them a little either way between opens (a check may come early).
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let devices = g.someDevices()
        switch g.below(4) {
        case 0, 1:
            let by = [2 * Ms.day, 3 * Ms.day, 40 * Ms.day, 365 * Ms.day][Int(g.below(4))]
            g.everyone(.launch, at: t - Ms.hour)
            g.add(PhoneClock(devices: devices, back: true, byMs: by), at: t)
            g.everyone(.open, at: t + Ms.hour)
            g.everyone(.open, at: t + Ms.day + [Ms.minute, Ms.hour, 6 * Ms.hour][Int(g.below(3))])
            g.everyone(.open, at: t + 2 * Ms.day + Ms.hour)
        case 2:
            let by = [30 * Ms.day, 31 * Ms.day, 45 * Ms.day, 365 * Ms.day][Int(g.below(4))]
            g.mainAppAccess(stopped: true, at: t - Ms.hour)
            g.poke(t - Ms.hour + Ms.minute)
            g.add(PhoneClock(devices: devices, back: false, byMs: by), at: t)
            g.poke(t + Ms.minute)
            g.mainAppAccess(stopped: false, at: t + 2 * Ms.hour)
            g.everyone(.open, at: t + 2 * Ms.hour + Ms.minute)
        default:
            let by = [Ms.hour, 12 * Ms.hour, 23 * Ms.hour, 2 * Ms.day][Int(g.below(4))]
            g.everyone(.open, at: t - Ms.hour)
            g.add(PhoneClock(devices: devices, back: g.chance(1, outOf: 2), byMs: by), at: t)
            g.everyone(.open, at: t + Ms.hour)
            g.everyone(.open, at: t + 13 * Ms.hour)
        }
    }

    /// Fork "clock" of the seed: its first clocks came after every other draw of the
    /// generator, so the other seeds kept their scripts.
    package static var drawnAlone: FaultDrawnAlone? { FaultDrawnAlone(oneIn: 5, stream: 0x636C_6F63_6B) }

    /// A new jump (a second to 30 days), either way; half the time, other devices.
    package func mutated<M: FaultMutations>(_ m: inout M) -> PhoneClock {
        PhoneClock(devices: m.chance(1, outOf: 2) ? m.someDevices() : devices, back: m.chance(1, outOf: 2), byMs: m.lengthMs)
    }

    /// One phone at a time, its clock set back two days (past any check of a short world)
    /// or forward 31 days (past D5's 30 days by the phone's clock), with `--faults clock`.
    package static var exploreName: String? { "clock" }
    /// Asked for by name (`--faults clock`), so that the default alphabet, and what explore
    /// finds with it, stay as they were.
    package static var exploredByDefault: Bool { false }
    package static func explored(_ a: FaultAlphabet) -> [PhoneClock] {
        a.devices.flatMap { [PhoneClock(devices: $0, back: true, byMs: 2 * Ms.day), PhoneClock(devices: $0, back: false, byMs: 31 * Ms.day)] }
    }
}

// MARK: - Trace records

extension PhoneClock {
    /// Its trace record (`TraceEvent.fault`), as checkers and tools read it.
    public enum Record: Sendable, Equatable {
        /// The phone's wall clock jumped by `jumpS` seconds; it is now `offsetS` seconds
        /// from the true time (negative: behind).
        case clockSet(offsetS: Int32, jumpS: Int32)

        /// The record as the trace carries it (tag 24; the offset above the tag, the jump in `b`).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .clockSet(let offset, let jump):
                FaultRecord(a: 24 | UInt64(UInt32(bitPattern: offset)) << 8, b: UInt64(UInt32(bitPattern: jump)))
            }
        }

        /// `r` read as this record, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            guard r.tag == 24 else { return nil }
            self = .clockSet(offsetS: Int32(bitPattern: UInt32(truncatingIfNeeded: r.a >> 8)),
                             jumpS: Int32(bitPattern: UInt32(truncatingIfNeeded: r.b)))
        }
    }
}

extension FaultRecord {
    /// A phone's wall clock jumped by `jumpS` seconds to `offsetS` from the true time.
    @inlinable public static func phoneClockSet(offsetS: Int32, jumpS: Int32) -> FaultRecord {
        PhoneClock.Record.clockSet(offsetS: offsetS, jumpS: jumpS).fault
    }
}

extension PhoneClock: FaultRecords {
    package static var recordTags: [UInt8] { [24] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// A mark on the timeline at the jump: `device 3 clock back 40d (now 38d behind)`.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        guard case .clockSet(let offset, let jump)? = Record(r) else { return nil }
        let by = DurationText.format(SimTime(jump.magnitude) * Ms.second)
        let off = offset == 0 ? "true time" : "\(DurationText.format(SimTime(offset.magnitude) * Ms.second)) \(offset < 0 ? "behind" : "ahead")"
        return FaultWindowRecord(until: nil, mark: .deviceMoment(label: "clock \(jump < 0 ? "back" : "forward") \(by) (now \(off))"))
    }
}
