/// The simulation on the reference server, `ServerModel`: what most code runs
/// (`World<ReferenceSDK, InvariantChecker>`). A world on another server core is a
/// `SimWorld<SDK, MyServer, Observer>`.
public typealias World<SDK: SDKCore, Observer: TraceObserver> = SimWorld<SDK, ServerModel, Observer>

/// The simulation: one virtual clock, one event queue, one seeded stream, one server,
/// a network and N devices, run by a single loop (`run`). Generic over the SDK core, the
/// server core and the trace observer, so all three are called directly, never through
/// an existential (each is specialised where the world is built).
///
/// Each event is popped, the clock is set to its time, and it is handed to its target
/// (a device's SDK, the network, the server, or the schedule); effects the SDK returns are
/// applied in order and every observable change goes to the trace.
public struct SimWorld<SDK: SDKCore, Server: ServerCore, Observer: TraceObserver> {
    /// What the world was built from; `extend(as:)` may add statements and move the end.
    public internal(set) var setup: WorldSetup {
        @inlinable get { _setup }
        @inlinable set { _setup = newValue }
        @inlinable _modify { yield &_setup }
    }
    @usableFromInline var _setup: WorldSetup
    public internal(set) var facts: WorldFacts {
        @inlinable get { _facts }
        @inlinable set { _facts = newValue }
        @inlinable _modify { yield &_facts }
    }
    @usableFromInline var _facts: WorldFacts
    /// The current virtual time; set before each event is handled.
    public internal(set) var now: SimTime {
        @inlinable get { _now }
        @inlinable set { _now = newValue }
        @inlinable _modify { yield &_now }
    }
    @usableFromInline var _now: SimTime = 0
    @usableFromInline package var queue: EventQueue
    /// The server core; built from the setup's accounts and apps (and a mutant's flaws).
    public var server: Server
    /// Per-device state and SDK processes; written without per-write uniqueness checks
    /// (see `DeviceTable`), so only this module writes them.
    package internal(set) var devices: DeviceTable<DeviceState> {
        @inlinable get { _devices }
        @inlinable set { _devices = newValue }
        @inlinable _modify { yield &_devices }
    }
    @usableFromInline var _devices: DeviceTable<DeviceState>
    package internal(set) var sdks: DeviceTable<SDK> {
        @inlinable get { _sdks }
        @inlinable set { _sdks = newValue }
        @inlinable _modify { yield &_sdks }
    }
    @usableFromInline var _sdks: DeviceTable<SDK>
    public var observer: Observer
    public internal(set) var fingerprint: Fingerprint {
        @inlinable get { _fingerprint }
        @inlinable set { _fingerprint = newValue }
        @inlinable _modify { yield &_fingerprint }
    }
    @usableFromInline var _fingerprint = Fingerprint()
    package internal(set) var rings: DeviceRings {
        @inlinable get { _rings }
        @inlinable set { _rings = newValue }
        @inlinable _modify { yield &_rings }
    }
    @usableFromInline var _rings: DeviceRings
    /// Events handled so far.
    public internal(set) var eventsHandled: UInt64 {
        @inlinable get { _eventsHandled }
        @inlinable set { _eventsHandled = newValue }
        @inlinable _modify { yield &_eventsHandled }
    }
    @usableFromInline var _eventsHandled: UInt64 = 0
    /// Why the run stopped before its end; nil when it ran to its end.
    public internal(set) var stop: StopReason? {
        @inlinable get { _stop }
        @inlinable set { _stop = newValue }
        @inlinable _modify { yield &_stop }
    }
    @usableFromInline var _stop: StopReason?
    /// The run stopped before its end (an event budget, the queue's or the memory bound).
    @inlinable public var stoppedByBudget: Bool { stop != nil }
    /// Why the run stopped early, in words; nil when it ran to its end.
    @inlinable public var stopReason: String? { stop?.description }
    /// Whether the queue's bound comes from the memory budget rather than the count of
    /// events per device (then a full queue is a memory bound).
    @usableFromInline let queueBoundByMemory: Bool
    /// An event was refused because the queue was full: the run stops at once.
    @usableFromInline var queueFull = false
    /// The event loop stops before its next event: the queue is full, or (for a fork point,
    /// `runToForkPoint`) the last scheduled statement has fired.
    @usableFromInline var haltLoop = false
    /// Set by `runToForkPoint`: the loop halts right after the event that fires the last
    /// pending statement.
    @usableFromInline var haltAfterLastStatement = false
    /// The observer's run has begun (`run` or `runToForkPoint`); a fork goes on with it.
    @usableFromInline var observerBegun = false
    /// The world is new, or `runToForkPoint` stopped it right after its last statement
    /// fired: statements may be added (`extend(as:)`).
    @usableFromInline var atForkPoint = true

    @usableFromInline let random: SimRandom
    /// The seed's key for per-device draws (see `draw`).
    @usableFromInline let drawKey: UInt64
    @usableFromInline var groupStart: [UInt32]
    /// Each group's round-trip range, when some group has a link of its own (`GroupSpec.latencyMs`);
    /// nil when every device uses the network's, the common case, which costs one test a request.
    @usableFromInline let groupLinks: [ClosedRange<SimTime>]?
    /// The network line's round-trip range, every device's when `groupLinks` is nil.
    @usableFromInline let networkLink: ClosedRange<SimTime>
    /// The current key of each app, as the dashboard last set it (for `update`).
    @usableFromInline var currentKey: [KeyID]
    /// How many times each scheduled statement has fired.
    @usableFromInline var firings: [UInt32]
    /// Statement firings by (time, statement index): same-time statements in file order.
    /// Only the earliest is in the main queue at a time (one `statement` event).
    @usableFromInline var statementsDue = KeyHeap()
    @usableFromInline var requests = RequestPool()
    /// The fault windows in force (`Faults/`).
    @usableFromInline var faults = FaultWindows()
    /// Pinned request fates and the request counts they need; inactive by default.
    @usableFromInline var fates = FateTable()
    /// Whether `run` prefetches the next event's state: only for worlds too big for the
    /// cache, where it pays for its instructions.
    @usableFromInline let prefetching: Bool
    /// Whether `run` asks early only for the devices its runs of person actions reach
    /// next: for worlds too big for the cache but too small for `prefetching`.
    @usableFromInline let prefetchingRuns: Bool
    /// A reusable buffer for the SDK's effects: no allocation per event once warm.
    @usableFromInline var effects = EffectBuffer()
    /// A reusable buffer for the jittered moments of one statement's firing, written
    /// through its pointer (no uniqueness check or capacity test per device), filled and
    /// handed to the queue within one `fireStatement`; a copy of the world that finds it
    /// shared makes its own first.
    @usableFromInline var runEntries = QueueBuffer<UInt64>(count: 0)

    /// A world ready to run: devices built, the schedule's first firings queued.
    @inlinable public init(setup: WorldSetup, observer: Observer) {
        _setup = setup
        var facts = WorldFacts(setup: setup)
        facts.sdkStatement = SDK.statement
        self.observer = observer
        random = SimRandom(seed: setup.seed)
        drawKey = random.fork(Stream.deviceDraws).seed
        let n = setup.deviceCount
        prefetching = n >= Self.prefetchFromDevices
        prefetchingRuns = n >= Self.runPrefetchFromDevices
        precondition(n < Int(Event.world), "too many devices")
        let countLimit = setup.queueLimit ?? max(1 << 20, n * 64)
        let memoryLimit = Self.queueLimit(memoryBudgetBytes: setup.memoryBudgetBytes, devices: n)
        queueBoundByMemory = memoryLimit < countLimit
        let limit = min(countLimit, memoryLimit)
        queue = EventQueue(capacityLimit: limit, reserving: min(n * 8, 1 << 25, limit))
        queue.prefetches = n >= Self.queueHintsFromDevices
        var serverSetup = ServerSetup(keyCount: setup.keyNames.count, deviceCount: n)
        serverSetup.keyNames = setup.keyNames
        for a in setup.accounts { _ = serverSetup.addAccount(approved: a.approved) }
        for a in setup.apps { _ = serverSetup.addApp(account: a.account, key: a.initialKey, approved: !a.pending) }
        server = Self.freshServer(serverSetup, setup)
        currentKey = setup.apps.map(\.initialKey)
        let network = setup.network.latencyMinMs...max(setup.network.latencyMinMs, setup.network.latencyMaxMs)
        networkLink = network
        groupLinks = setup.groups.contains { $0.latencyMs != nil } ? setup.groups.map { $0.latencyMs ?? network } : nil
        _rings = DeviceRings(devices: n, depth: setup.ringDepth)
        requests.reserve(n)
        SDK.worldBegins()
        _sdks = DeviceTable(repeating: Self.freshProcess(flaws: setup.sdkFlaws), count: n)
        var built: [DeviceState] = []
        built.reserveCapacity(n)
        groupStart = []
        var start: UInt32 = 0
        for group in setup.groups {
            groupStart.append(start)
            var d = DeviceState()
            d.app = group.app
            d.genuine = !group.clones
            d.key = setup.apps[Int(group.app)].initialKey
            for i in 0..<group.count {
                var r = random.fork(Stream.library, UInt64(start + i))
                d.photoCount = UInt32(r.int(in: UInt64(group.photosMin)...UInt64(max(group.photosMin, group.photosMax))))
                built.append(d)
            }
            start += group.count
        }
        groupStart.append(start)
        facts.devicePhotos = built.map(\.photoCount)
        if setup.countsRequests || !setup.pinnedFates.isEmpty { fates = FateTable(setup: setup, devices: n) }
        _facts = facts
        _devices = DeviceTable(built)
        firings = Array(repeating: 0, count: setup.schedule.count)
        precondition(setup.schedule.count < 1 << Self.statementBits, "too many statements")
        for (i, s) in setup.schedule.enumerated() where s.firstAtMs <= min(s.untilMs, setup.durationMs) {
            statementsDue.push(s.firstAtMs << Self.statementBits | UInt64(i))
        }
        if let first = statementsDue.min {
            schedule(.statement, at: first >> Self.statementBits)
        }
    }

    /// Runs to the end of the scenario's duration or the event budget, whichever comes
    /// first, then tells the observer the run is over.
    @inlinable public mutating func run() {
        observer.begin(facts)
        observerBegun = true
        runEvents(to: setup.durationMs)
        finishRun(at: setup.durationMs)
    }

    /// Handles the events due at or before `end`, in order, until the budget, the queue's
    /// bound or a fork point (`haltAfterLastStatement`) stops it. The loop of every run.
    @inline(__always)
    @inlinable mutating func runEvents(to end: SimTime) {
        // The loop below writes the tables and the queue without uniqueness checks: make
        // them this world's alone (a copy of the world shares them until then).
        _devices.makeUnique()
        _sdks.makeUnique()
        queue.makeUnique()
        requests.makeUnique()
        effects.makeUnique()
        _rings.makeUnique()
        haltLoop = queueFull
        atForkPoint = false
        let budget = setup.eventBudget
        while eventsHandled < budget, !haltLoop, let event = queue.popUnique(notAfter: end) {
            assert(event.time >= now, "time went backwards: \(event.time) < \(now)")
            now = event.time
            eventsHandled &+= 1
            if prefetching {
                if let next = queue.open.first { prefetch(next) }
                if let d = queue.runTarget(ahead: Self.runPrefetchAhead) { prefetch(device: d) }
                queue.walkAhead()
            } else if prefetchingRuns, let d = queue.runTarget(ahead: Self.runPrefetchAhead) {
                prefetch(device: d)
            }
            handle(event)
        }
        if eventsHandled >= budget, let next = queue.nextTime, next <= end {
            stop = .eventBudget(events: budget, atMs: now)
        }
        if queueFull {
            stop = queueBoundByMemory
                ? .memoryBound(events: queue.capacityLimit, budgetBytes: setup.memoryBudgetBytes, atMs: now)
                : .queueBound(events: queue.capacityLimit, atMs: now)
        }
    }

    /// Ends a run at `end`: the clock moves there (unless a bound stopped the run) and the
    /// observer is told the run is over.
    @inlinable mutating func finishRun(at end: SimTime) {
        if !stoppedByBudget { now = max(now, end) }
        observer.finish(at: now)
    }

    /// Queues `e`, due at `time`; when the queue's bound refuses it, the run stops (a runaway schedule is
    /// reported, never silently thinned).
    @inline(__always)
    @inlinable mutating func schedule(_ e: WorldEvent, at time: SimTime) {
        if !queue.pushUnique(e.packed(time: time)) { queueFull = true; haltLoop = true }
    }

    /// Hands one event to its target.
    @inline(__always)
    @inlinable mutating func handle(_ e: Event) {
        switch WorldEvent(e) {
        case .statement:
            fireDueStatements()
            if haltAfterLastStatement, statementsDue.isEmpty { haltLoop = true }
        case .personAction(let d, let index): personActionFromStatement(device: d, statement: Int(index))
        case .requestArrives(_, let slot): requestArrives(slot: slot)
        case .responseArrives(_, let slot): responseArrives(slot: slot)
        case .timer(let kind, let d, let arg, let stamp): timerFires(kind, device: d, arg: arg, stamp: stamp)
        case .faultEnds(let end): faultEnds(end)
        }
    }

    /// Bytes a pending event may hold: its place in the queue, twice over for the queue's
    /// growth, and a request slot (most pending events are requests on the wire).
    @inlinable static var bytesPerPendingEvent: UInt64 {
        UInt64(2 * MemoryLayout<Event>.stride + MemoryLayout<RequestPool.Slot>.stride)
    }

    /// Bytes a device holds whatever is pending: its state, its SDK, its trace ring, and
    /// the checkers' truth of it; a round bound above what a checked million-device world
    /// measures, the queue included (docs/performance.md).
    @inlinable static var bytesPerDevice: UInt64 { 1_024 }

    /// The most events that may be pending so that the world stays within
    /// `memoryBudgetBytes`: what is left after the devices, per pending event; at least 2^16.
    @inlinable static func queueLimit(memoryBudgetBytes: UInt64, devices: Int) -> Int {
        let fixed = UInt64(devices).multipliedReportingOverflow(by: bytesPerDevice)
        let left = fixed.overflow || fixed.partialValue >= memoryBudgetBytes ? 0 : memoryBudgetBytes - fixed.partialValue
        return Int(max(1 << 16, min(left / bytesPerPendingEvent, UInt64(Int.max))))
    }

    /// Worlds of at least this many devices prefetch the next event's state: theirs
    /// outgrows a core's L2, and below this size its loads from L3 cost less than the hints'
    /// instructions (timings in docs/performance.md).
    @inlinable static var prefetchFromDevices: Int { 1 << 14 }

    /// Worlds of at least this many devices (and fewer than `prefetchFromDevices`) ask
    /// early for the state of the device that a run of person actions reaches a few events
    /// on: a person action is a device's first event in hours, so its state, SDK and truth
    /// are misses, and the branches on them wait. Below this size the state stays in L2 and
    /// the hints only cost instructions (timings in docs/performance.md).
    @inlinable static var runPrefetchFromDevices: Int { 1 << 13 }

    /// Worlds of at least this many devices also have their queue give itself cache hints
    /// (`EventQueue.prefetches`): its pool outgrows the cache later than the devices' state
    /// does, and below that the hints only cost instructions.
    @inlinable static var queueHintsFromDevices: Int { 1 << 15 }

    /// A hint: `e` runs next, start loading what it touches (its device's state, its
    /// request slot) while this one runs; at a million devices each is otherwise a miss.
    @inline(__always)
    @inlinable func prefetch(_ e: Event) {
        let d = e.target
        guard d != Event.world else { return }
        prefetch(device: d)
        if let s = WorldEvent.requestSlot(of: e) {
            if let slot = requests.address(of: s) {
                Prefetch.bytes(slot, count: MemoryLayout<RequestPool.Slot>.size)
            }
            server.prefetch(device: d)
        }
    }

    /// How far ahead in a run of jittered person actions `run` asks for a device's state.
    @inlinable static var runPrefetchAhead: Int { 8 }

    /// A hint: an event for device `d` comes soon; start loading its state, its SDK, its
    /// ring and the observer's truth of it.
    @inline(__always)
    @inlinable func prefetch(device d: DeviceIndex) {
        Prefetch.element(of: _devices, at: Int(d))
        Prefetch.element(of: _sdks, at: Int(d))
        if _rings.depth > 0 { _rings.prefetch(device: d) }
        observer.prefetch(device: d)
    }

    /// Bits of a schedule key that hold the statement index (100,000 statements fit).
    @inlinable static var statementBits: UInt64 { 20 }

    /// Sends one record to the fingerprint, the device's ring and the observer.
    @inline(__always)
    @inlinable mutating func trace(_ device: DeviceIndex, _ event: TraceEvent) {
        let r = TraceRecord(time: now, device: device, event: event)
        _fingerprint.add(r)
        if _rings.depth > 0 { _rings.pushUnique(r) }
        observer.observe(r)
    }

    /// The last trace records of a device, oldest first.
    @inlinable public func lastRecords(of device: DeviceIndex) -> [TraceRecord] { _rings.last(of: device) }

    /// Devices `lower..<upper` of group `g`.
    @inlinable public func devices(ofGroup g: Int) -> Range<Int> { Int(groupStart[g])..<Int(groupStart[g + 1]) }

    /// How many requests device `d` has sent, when the setup pins fates or counts requests
    /// (`WorldSetup.countsRequests`); else 0.
    public func requestsSent(device d: DeviceIndex) -> UInt32 {
        Int(d) < fates.sent.count ? fates.sent[Int(d)] : 0
    }

    /// With `WorldSetup.countsRequests`: every request sent so far, in order, as (device,
    /// its n-th request); else empty.
    public func sentRequests() -> [(device: DeviceIndex, request: UInt32)] {
        fates.log.map { (DeviceIndex(truncatingIfNeeded: $0 >> 32), UInt32(truncatingIfNeeded: $0)) }
    }

    /// A fresh random stream for one decision about `device`: counter-based, so each
    /// device's draws depend only on the seed, the device and how many it has made. The
    /// key mixes those into `drawKey`, a hash of the seed: mixed into the seed itself, the
    /// keys of seed 2 were those of seed 0 with draw numbers swapped in pairs (2 ^ n), so
    /// neighbouring fuzz seeds drew the same words in another order.
    @inline(__always)
    @inlinable mutating func draw(_ device: DeviceIndex) -> KeyedRandom {
        let n = _devices[Int(device)].draws
        _devices[Int(device)].draws &+= 1
        return KeyedRandom(key: drawKey ^ (UInt64(device) << 32 | UInt64(n)))
    }
}

/// Fork keys of the world's random streams: one per component, never reused.
@usableFromInline enum Stream {
    @usableFromInline static let library: UInt64 = 1
    @usableFromInline static let selection: UInt64 = 2
    @usableFromInline static let jitter: UInt64 = 3
    @usableFromInline static let deviceDraws: UInt64 = 4
}
