/// `offline SEL for D` (SPEC §1.4, partitions): the selected devices lose the network for D.
/// A request sent meanwhile fails at once, answered `offline`, and the server never sees
/// it; answers already on their way still arrive. A device's window ends at the later of
/// its windows' ends. The end is kept with the device (`DeviceState.offlineUntil`), which
/// the send path reads for every request anyway (`sendRequest`).
public struct Offline: Sendable, Equatable {
    /// The devices that lose the network.
    package var devices: DeviceSelector
    /// How long.
    package var forMs: SimTime
    /// `offline SEL for D`.
    package init(devices: DeviceSelector, forMs: SimTime) { self.devices = devices; self.forMs = forMs }

    /// The fault as the world injects it: the devices by index.
    public struct Injection: Sendable, Equatable {
        public var devices: DeviceSelection
        public var forMs: SimTime
        public init(devices: DeviceSelection, forMs: SimTime) { self.devices = devices; self.forMs = forMs }
    }

    /// The code of its end events (`FaultEnd`).
    @inlinable package static var endCode: UInt8 { 0 }
}

// MARK: - The statement

extension Offline: FaultKind {
    package static var keyword: [String] { ["offline"] }

    package static func parse(_ c: inout Cursor) throws(ParseError) -> Offline {
        let devices = try c.selector()
        return Offline(devices: devices, forMs: try c.forDuration())
    }

    package func check<C: FaultChecks>(_ c: inout C) {
        c.devices(devices)
        c.window(forMs, of: "'offline'")
    }

    package var text: String { "offline \(devices.text) for \(DurationText.format(forMs))" }
    package var selectedDevices: DeviceSelector? { devices }
    package func selecting(_ devices: DeviceSelector) -> Offline { Offline(devices: devices, forMs: forMs) }

    package func lowered<E: Error>(_ resolve: (DeviceSelector) throws(E) -> DeviceSelection) throws(E) -> Fault {
        .offline(Injection(devices: try resolve(devices), forMs: forMs))
    }
}

// MARK: - In the world

extension WorldAction {
    /// `offline SEL for D`, as the world runs it.
    public static func offline(_ devices: DeviceSelection, forMs: SimTime) -> WorldAction {
        .fault(.offline(.init(devices: devices, forMs: forMs)))
    }
}

extension SimWorld {
    /// Each selected device loses the network until `forMs` from now, unless it already
    /// has until later.
    @inlinable mutating func inject(_ f: Offline.Injection, statement index: Int, firing: UInt32) {
        let until = now.saturatingAdd(f.forMs)
        forEachSelected(f.devices, statement: index, firing: firing) { world, d in
            let i = Int(d)
            if world._devices[i].offlineUntil < until {
                world._devices[i].offlineUntil = until
                world.trace(d, .fault(.offline(until: until)))
                world.schedule(.faultEnds(FaultEnd(kind: Offline.endCode, target: d)), at: until)
            }
        }
    }

    /// A device's partition ends (unless a later one extended it).
    @inlinable mutating func offlineEnds(device d: DeviceIndex) {
        if _devices[Int(d)].offlineUntil == now { trace(d, .fault(.offlineEnded)) }
    }
}

// MARK: - The search tools

extension Offline {
    /// A window on some devices of the main group, of a drawn length.
    package static func draw<G: FaultDraws>(at t: SimTime, _ g: inout G) {
        let f = Offline(devices: g.someDevices(), forMs: g.faultLength())
        g.add(f, at: t)
    }

    /// A new length; half the time, other devices.
    package func mutated<M: FaultMutations>(_ m: inout M) -> Offline {
        m.chance(1, outOf: 2) ? Offline(devices: m.someDevices(), forMs: m.lengthMs) : Offline(devices: devices, forMs: m.lengthMs)
    }

    /// One device at a time: `offline device photos#I for 2m`.
    package static var exploreName: String? { "offline" }
    package static func explored(_ a: FaultAlphabet) -> [Offline] { a.devices.map { Offline(devices: $0, forMs: a.windowMs) } }
}

// MARK: - Trace records

extension Offline {
    /// Its trace records (`TraceEvent.fault`), as checkers and tools read them.
    public enum Record: Sendable, Equatable {
        /// A device loses its network until `until`.
        case offline(until: SimTime)
        /// A device's partition ended.
        case offlineEnded

        /// The record as the trace carries it (tags 1 and 2).
        @inlinable public var fault: FaultRecord {
            switch self {
            case .offline(let until): FaultRecord(a: 1, b: until)
            case .offlineEnded: FaultRecord(a: 2, b: 0)
            }
        }

        /// `r` read as one of these records, or nil when it is another kind's.
        @inlinable public init?(_ r: FaultRecord) {
            switch r.tag {
            case 1: self = .offline(until: r.b)
            case 2: self = .offlineEnded
            default: return nil
            }
        }
    }
}

extension FaultRecord {
    /// A device loses its network until `until`.
    @inlinable public static func offline(until: SimTime) -> FaultRecord { Offline.Record.offline(until: until).fault }
    /// A device's partition ended.
    @inlinable public static var offlineEnded: FaultRecord { Offline.Record.offlineEnded.fault }
}

extension Offline: FaultRecords {
    package static var recordTags: [UInt8] { [1, 2] }
    package static func text(of r: FaultRecord) -> String { Record(r).map { "\($0)" } ?? "" }

    /// The device's lane on the timeline shows the window as its "offline" band.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? {
        switch Record(r) {
        case .offline(let until)?: FaultWindowRecord(until: until, mark: .deviceBandOpens)
        case .offlineEnded?: FaultWindowRecord(until: nil, mark: .deviceBandCloses)
        case nil: nil
        }
    }
}
