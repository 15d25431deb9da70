/// Something that watches a simulation's trace as it happens: the invariant checkers,
/// the fingerprint, a streaming writer. The engine is generic over its observer, so a
/// composed observer costs direct (inlinable) calls, not existential dispatch.
public protocol TraceObserver {
    /// Called once before the first event, with the world's fixed facts.
    mutating func begin(_ facts: WorldFacts)
    /// Called for every trace record, in order.
    mutating func observe(_ record: TraceRecord)
    /// Called once when the run stops at `time` (its end, or the event budget).
    mutating func finish(at time: SimTime)
    /// A hint: records of `device` are coming soon, start loading its state into cache
    /// (see `Prefetch`). Must not change anything observable.
    func prefetch(device: DeviceIndex)
    /// A copy of this observer that may go on observing by itself, for `SimWorld.fork()`.
    /// The default is a plain copy: right for a value whose storage is copied on write. An
    /// observer that writes shared storage in place must copy it here.
    func forked() -> Self
}

extension TraceObserver {
    public mutating func begin(_ facts: WorldFacts) {}
    public mutating func finish(at time: SimTime) {}
    @inlinable public func prefetch(device: DeviceIndex) {}
    public func forked() -> Self { self }
}

/// An observer that does nothing, for runs that need only the fingerprint.
public struct NoObserver: TraceObserver {
    public init() {}
    @inlinable public mutating func observe(_ record: TraceRecord) {}
}

/// Two observers side by side; nest pairs to compose more.
public struct ObserverPair<A: TraceObserver, B: TraceObserver>: TraceObserver {
    public var first: A
    public var second: B
    public init(_ first: A, _ second: B) { self.first = first; self.second = second }
    public mutating func begin(_ facts: WorldFacts) { first.begin(facts); second.begin(facts) }
    public func forked() -> Self { ObserverPair(first.forked(), second.forked()) }
    @inlinable public mutating func observe(_ record: TraceRecord) { first.observe(record); second.observe(record) }
    public mutating func finish(at time: SimTime) { first.finish(at: time); second.finish(at: time) }
    @inlinable public func prefetch(device: DeviceIndex) { first.prefetch(device: device); second.prefetch(device: device) }
}

/// An observer that keeps every record in memory: for tests and short runs only.
public struct TraceRecorder: TraceObserver {
    public var records: [TraceRecord] = []
    /// The most records kept; later ones are counted in `dropped`.
    public let limit: Int
    public var dropped = 0
    public init(limit: Int = 1_000_000) { self.limit = limit }
    public mutating func observe(_ record: TraceRecord) {
        if records.count < limit { records.append(record) } else { dropped += 1 }
    }
}

/// Tells `report` how far a run has come in virtual time, each time it passes another
/// hundredth of `durationMs`: for a progress line on a long run. It only reads the records'
/// times, so the run is the same with it or without it; what `report` does with the
/// wall clock stays outside the simulation.
public struct ProgressObserver: TraceObserver {
    let report: (SimTime) -> Void
    let stepMs: SimTime
    @usableFromInline var nextMs: SimTime = 0

    public init(durationMs: SimTime, report: @escaping (SimTime) -> Void) {
        self.report = report
        stepMs = max(1, durationMs / 100)
    }

    @inlinable public mutating func observe(_ record: TraceRecord) {
        if record.time >= nextMs { passed(record.time) }
    }

    @usableFromInline mutating func passed(_ time: SimTime) {
        report(time)
        nextMs = time.saturatingAdd(stepMs)
    }
}
