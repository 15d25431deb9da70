import SimKit

/// Collects a run's timeline as the trace streams by, at the resolution of the picture:
/// per device, its SDK state as segments, its answered requests as ticks, its offline
/// windows; for the world, server-wide fault windows and dashboard and Rollup actions.
///
/// Nothing is kept per record: time is mapped to one of `columns` pixel columns, ticks in
/// the same column with the same answer merge into one with a count, a state that lasts
/// less than a column shows as the most serious state of that column, and every list has
/// a named bound. Memory is O(devices × min(columns, bounds)), whatever the trace's length.
package struct TimelineObserver: TraceObserver {
    /// Horizontal resolution: the plot's width in pixels.
    package let columns: Int
    /// The most ticks kept per device; later ones are counted in `ticksDropped`.
    package let ticksPerLaneMax: Int
    /// The most offline windows kept per device, and server windows and dashboard marks kept.
    package let windowsPerLaneMax: Int
    package let worldMarksMax: Int

    package private(set) var facts: WorldFacts?
    package private(set) var lanes: [Lane] = []
    /// Server-wide fault windows, in start order.
    package private(set) var serverWindows: [FaultWindow] = []
    /// Dashboard and Rollup actions, and the moments a fault marks on a device (a phone's
    /// clock set), in time order.
    package private(set) var marks: [Mark] = []
    package private(set) var ticksDropped = 0
    package private(set) var marksDropped = 0
    /// When the run stopped.
    package private(set) var endMs: SimTime = 0

    var durationMs: SimTime = 1

    /// One device's picture.
    package struct Lane: Sendable {
        /// `(column, state)`: the state shown from that column on. Strictly increasing columns.
        package var segments: [(column: UInt16, state: SDKState)] = []
        /// Merged ticks, in column order.
        package var ticks: [Tick] = []
        /// Ticks not kept because even the coarsest merging left `ticksPerLaneMax` (rare).
        package var ticksDropped = 0
        /// Ticks merge within buckets of `1 << tickShift` columns: 0 until the lane fills
        /// up, then each time it does the buckets double and the ticks kept so far merge.
        package var tickShift: UInt8 = 0
        /// Offline windows as column ranges (end inclusive).
        package var offline: [(from: UInt16, to: UInt16)] = []
        /// Portal windows (P6) as column ranges (end inclusive).
        package var portal: [(from: UInt16, to: UInt16)] = []
        /// The state the SDK is really in now (the last segment may show a worse one).
        var current: SDKState = .unconfigured
        var offlineFrom: UInt16?
        var portalFrom: UInt16?
    }

    /// Requests answered in one pixel column with the same answer.
    package struct Tick: Sendable, Equatable {
        package var column: UInt16
        package var answer: Answer
        /// The first request's kind in this column.
        package var kind: RequestKind
        /// How many answers merged into this tick (saturates at `UInt16.max`).
        package var count: UInt16
    }

    /// A server-wide fault window.
    package struct FaultWindow: Sendable, Equatable {
        package var from: SimTime
        package var to: SimTime
        /// `server errors 50% status 503`, `server down`, …
        package var label: String
    }

    /// A dashboard or Rollup action: a labelled line across every lane.
    package struct Mark: Sendable, Equatable {
        package var time: SimTime
        package var label: String
        package var applied: Bool
    }

    /// An observer drawing into `columns` pixel columns.
    package init(columns: Int = 1_100, ticksPerLaneMax: Int = 300, windowsPerLaneMax: Int = 64, worldMarksMax: Int = 200) {
        precondition(columns >= 10 && columns <= Int(UInt16.max), "columns must be in 10...65535, got \(columns)")
        precondition(ticksPerLaneMax > 0 && windowsPerLaneMax > 0 && worldMarksMax > 0, "bounds must be positive")
        self.columns = columns
        self.ticksPerLaneMax = ticksPerLaneMax
        self.windowsPerLaneMax = windowsPerLaneMax
        self.worldMarksMax = worldMarksMax
    }

    /// The pixel column of virtual time `t`.
    @inline(__always) package func column(_ t: SimTime) -> UInt16 {
        UInt16(min(UInt64(columns - 1), min(t, durationMs) * UInt64(columns) / durationMs))
    }

    package mutating func begin(_ facts: WorldFacts) {
        self.facts = facts
        durationMs = max(1, facts.durationMs)
        // Guard the multiplication in `column`: 10 years × 65,535 columns fits in 64 bits.
        precondition(durationMs <= UInt64.max / UInt64(columns), "duration too long for \(columns) columns")
        var lane = Lane()
        lane.segments = [(0, .unconfigured)]
        lanes = Array(repeating: lane, count: facts.deviceCount)
    }

    package mutating func observe(_ r: TraceRecord) {
        if r.device == Event.world {
            world(r)
            return
        }
        let d = Int(r.device)
        guard d < lanes.count else { return }
        switch r.event {
        case .state(let s): state(d, s, at: column(r.time))
        case .delivered(_, let kind, let answer, _, _, _, _): tick(d, kind, answer, at: column(r.time))
        case .fault(let f):
            switch Faults.window(of: f)?.mark {
            case .deviceBandOpens?: if lanes[d].offlineFrom == nil { lanes[d].offlineFrom = column(r.time) }
            case .deviceBandCloses?: endOffline(d, at: column(r.time))
            case .portalBandOpens?: if lanes[d].portalFrom == nil { lanes[d].portalFrom = column(r.time) }
            case .portalBandCloses?: endPortal(d, at: column(r.time))
            case .deviceMoment(let label)?:
                guard marks.count < worldMarksMax else { marksDropped += 1; return }
                marks.append(Mark(time: r.time, label: "device \(d + 1) \(label)", applied: true))
            default: break
            }
        default: break
        }
    }

    package mutating func finish(at time: SimTime) {
        endMs = time
        let c = column(time)
        for d in lanes.indices {
            if lanes[d].offlineFrom != nil { endOffline(d, at: c) }
            if lanes[d].portalFrom != nil { endPortal(d, at: c) }
            catchUp(d, before: UInt16(columns), real: lanes[d].current)
        }
        for i in serverWindows.indices where serverWindows[i].to > time { serverWindows[i].to = time }
    }

    /// Orders states by how much a person needs to see them when they share a pixel.
    static func seriousness(_ s: SDKState) -> Int {
        switch s { case .unconfigured: 0; case .idle: 1; case .indexing: 2; case .locked: 3; case .purged: 4 }
    }

    mutating func state(_ d: Int, _ s: SDKState, at c: UInt16) {
        let real = lanes[d].current
        lanes[d].current = s
        catchUp(d, before: c, real: real)
        let last = lanes[d].segments.count - 1
        let shown = lanes[d].segments[last]
        if shown.column == c {
            // Within one pixel: show the most serious state; the real one takes over next column.
            if Self.seriousness(s) > Self.seriousness(shown.state) { lanes[d].segments[last].state = s }
            if last > 0, lanes[d].segments[last - 1].state == lanes[d].segments[last].state { lanes[d].segments.removeLast() }
        } else if shown.state != s {
            lanes[d].segments.append((c, s))
        }
        assert(lanes[d].segments.count <= columns, "more segments than columns: \(lanes[d].segments.count)")
    }

    /// When a pixel showed a brief serious state, the real state resumes in the next column.
    mutating func catchUp(_ d: Int, before c: UInt16, real: SDKState) {
        guard let shown = lanes[d].segments.last, shown.state != real, shown.column + 1 < c else { return }
        lanes[d].segments.append((shown.column + 1, real))
    }

    mutating func tick(_ d: Int, _ kind: RequestKind, _ answer: Answer, at column: UInt16) {
        if merge(d, Tick(column: column, answer: answer, kind: kind, count: 1)) { return }
        // Full: double the bucket width and merge what is kept, until there is room.
        while lanes[d].ticks.count >= ticksPerLaneMax, lanes[d].tickShift < Self.tickShiftMax {
            lanes[d].tickShift += 1
            let old = lanes[d].ticks
            lanes[d].ticks.removeAll(keepingCapacity: true)
            for t in old { _ = merge(d, t) }
        }
        if !merge(d, Tick(column: column, answer: answer, kind: kind, count: 1)) { ticksDropped += 1; lanes[d].ticksDropped += 1 }
    }

    /// The widest tick bucket: 2^12 columns is wider than any plot.
    static let tickShiftMax: UInt8 = 12

    /// Adds `tick` to lane `d` at its bucket, merging with a tick of the same answer there;
    /// false when it would need a new tick and the lane is full.
    mutating func merge(_ d: Int, _ tick: Tick) -> Bool {
        let shift = lanes[d].tickShift
        let c = (tick.column >> shift) << shift
        // Ticks of one bucket are adjacent (columns only grow); look back over that bucket only.
        var i = lanes[d].ticks.count - 1
        while i >= 0, lanes[d].ticks[i].column == c {
            if lanes[d].ticks[i].answer == tick.answer {
                lanes[d].ticks[i].count = UInt16(min(Int(UInt16.max), Int(lanes[d].ticks[i].count) + Int(tick.count)))
                return true
            }
            i -= 1
        }
        guard lanes[d].ticks.count < ticksPerLaneMax else { return false }
        var t = tick
        t.column = c
        lanes[d].ticks.append(t)
        return true
    }

    mutating func endOffline(_ d: Int, at c: UInt16) {
        guard let from = lanes[d].offlineFrom else { return }
        lanes[d].offlineFrom = nil
        Self.addBand(&lanes[d].offline, from: from, to: c, max: windowsPerLaneMax)
    }

    mutating func endPortal(_ d: Int, at c: UInt16) {
        guard let from = lanes[d].portalFrom else { return }
        lanes[d].portalFrom = nil
        Self.addBand(&lanes[d].portal, from: from, to: c, max: windowsPerLaneMax)
    }

    /// Adds the band `from...to` to `bands`, merged with the last one when they touch; at
    /// most `max` bands are kept.
    static func addBand(_ bands: inout [(from: UInt16, to: UInt16)], from: UInt16, to c: UInt16, max: Int) {
        if let last = bands.last, last.to + 1 >= from {
            bands[bands.count - 1].to = Swift.max(last.to, c)
        } else if bands.count < max {
            bands.append((from, c))
        }
    }

    mutating func world(_ r: TraceRecord) {
        switch r.event {
        case .dashboard(let action, let applied):
            guard marks.count < worldMarksMax else { marksDropped += 1; return }
            marks.append(Mark(time: r.time, label: "\(action)", applied: applied))
        case .fault(let f):
            // Each kind says what its record draws (`FaultWindowRecord.TimelineMark`).
            guard case .serverWindow(let label, let until)? = Faults.window(of: f)?.mark else { return }
            guard serverWindows.count < worldMarksMax else { marksDropped += 1; return }
            serverWindows.append(FaultWindow(from: r.time, to: until, label: label))
        default:
            break
        }
    }
}
