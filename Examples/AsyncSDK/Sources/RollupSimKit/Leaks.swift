import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Dispatch
import SimKit
import SimKitAsync
import Rollup

/// Leaky services, as a team might write them by mistake: each lets work escape SimKit's
/// loop, and the host stops the first seed with a verdict naming the leak.

/// A transport that hands its answer back through `DispatchQueue.global()` (a completion
/// handler bridged with a continuation): the resume runs on a Dispatch thread.
public enum LeakDispatch: BugChoice {
    public static func transport(_ device: SimDevice) -> any RollupTransport { DispatchHopTransport(inner: SimTransport(device: device)) }
}

struct DispatchHopTransport: RollupTransport {
    let inner: SimTransport
    func send(_ endpoint: Endpoint, token: DeviceToken?) async throws -> Reply {
        let reply = try await inner.send(endpoint, token: token)
        return await withCheckedContinuation { c in DispatchQueue.global().async { c.resume(returning: reply) } }
    }
}

/// A clock that reads the wall clock (`Date()`) for its time.
public enum LeakDate: BugChoice {
    public static func clock(_ device: SimDevice) -> any RollupClock { DateClock(sleeper: SimRollupClock(clock: device.clock)) }
}

struct DateClock: RollupClock {
    let sleeper: SimRollupClock
    var nowMillis: Millis { Millis(Date().timeIntervalSince1970 * 1000) }
    func sleep(for duration: Duration) async throws { try await sleeper.sleep(for: duration) }
}

/// A transport whose request spins: it yields forever instead of waiting for an answer
/// (a polling loop without a sleep). The step never settles.
public enum LeakSpin: BugChoice {
    public static func transport(_ device: SimDevice) -> any RollupTransport { SpinTransport() }
}

struct SpinTransport: RollupTransport {
    func send(_ endpoint: Endpoint, token: DeviceToken?) async throws -> Reply {
        while true { await Task.yield() }
    }
}

/// A transport whose `query` and `profile` wait on a continuation nobody resumes (a
/// callback that never comes): the API call never returns.
public enum LeakHang: BugChoice {
    public static func transport(_ device: SimDevice) -> any RollupTransport { HangTransport(inner: SimTransport(device: device)) }
}

struct HangTransport: RollupTransport {
    /// The continuations left waiting, kept so that they are not reported as leaked.
    final class Waiting: @unchecked Sendable { var list: [UnsafeContinuation<Void, Never>] = [] }
    static let waiting = Waiting()
    let inner: SimTransport
    func send(_ endpoint: Endpoint, token: DeviceToken?) async throws -> Reply {
        guard endpoint == .query || endpoint == .profile else { return try await inner.send(endpoint, token: token) }
        await withUnsafeContinuation { c in Self.waiting.list.append(c) }
        return .unreachable
    }
}

/// Downloads in `Set` order: the trace depends on the hash seed (`hash-check` finds it).
public enum LeakSet: BugChoice { public static var bugs: PlantedBugs { .downloadsInSetOrder } }

// MARK: - Libraries from the open ecosystem, used the usual way

/// A URLProtocol that answers every request at once with a verdict, as a team's own tests
/// stub the network: nothing leaves the machine, but URLSession still runs the request on
/// its own queues and threads and hands the answer back from one of them.
final class CannedAnswers: URLProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func startLoading() {
        guard let url = request.url, let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil) else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data(#"{"servedAt": 1}"#.utf8))
        client?.urlProtocolDidFinishLoading(self)
    }
    override func stopLoading() {}
}

/// An API client as open-source ones build it (kean/Get's `APIClient`): it owns a
/// URLSession whose delegate it is, so session and client keep each other alive, with the
/// session's queues and its libcurl handle, until the session is invalidated.
final class APIClient: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private(set) var session: URLSession!
    override init() {
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [CannedAnswers.self]
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }
    func data(for request: URLRequest) async throws -> (Data, URLResponse) { try await session.data(for: request) }
    /// What an app does when it is done with the client. (Not `invalidateAndCancel()`: on
    /// Linux, cancelling a request that has just finished makes FoundationNetworking stop
    /// the process, "Trying to access a behaviour for a task that in not in the registry".)
    func invalidate() { session.finishTasksAndInvalidate() }
}

/// A transport that sends the key check through URLSession (stubbed by a URLProtocol)
/// instead of its injected network: the request runs on URLSession's threads, an escape
/// at the step that sent it, every time.
public enum LeakURLSession: BugChoice {
    public static func transport(_ device: SimDevice) -> any RollupTransport { URLSessionHopTransport(inner: SimTransport(device: device), client: APIClient()) }
}

struct URLSessionHopTransport: RollupTransport {
    let inner: SimTransport
    let client: APIClient
    func send(_ endpoint: Endpoint, token: DeviceToken?) async throws -> Reply {
        guard endpoint == .keyCheck || endpoint == .register else { return try await inner.send(endpoint, token: token) }
        let request = URLRequest(url: URL(string: "https://api.rollup.invalid/v1/key-check")!)
        _ = try await client.data(for: request)
        return try await inner.send(endpoint, token: token)
    }
}

/// A clock whose sleeps are `Task.sleep(for:)` on the default clock (ContinuousClock), as
/// a debounce or a timer written the usual way does: under SimKit such a sleep ends at
/// once and the clock's time stands still, so a library's timer loop would spin; the
/// verdict names the clock (`escape-unsimulated-clock`), not the spin.
public enum LeakContinuousClock: BugChoice {
    public static func clock(_ device: SimDevice) -> any RollupClock { ContinuousSleeps(reader: SimRollupClock(clock: device.clock)) }
}

struct ContinuousSleeps: RollupClock {
    let reader: SimRollupClock
    var nowMillis: Millis { reader.nowMillis }
    func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}

// MARK: - Pipelines the app builds around the SDK

/// What a harness builds around the SDK, besides calling it: a pipeline over its state
/// stream (a debounce, as swift-async-algorithms' `debounce(for:)` does it), a heartbeat
/// timer (as `AsyncTimerSequence.repeating(every:)`), a URLSession per process; and
/// whether its `tearDown` ends them.
public protocol PipelineChoice: Sendable {
    associatedtype Bugs: BugChoice = NoBugs
    /// The clock the debounce and the timer sleep on: the injected one, or ContinuousClock.
    static var onContinuousClock: Bool { get }
    static var debounces: Bool { get }
    static var ticks: Bool { get }
    /// Whether each process keeps a URLSession (opened at launch, as an app's API client does).
    static var keepsSession: Bool { get }
    /// Whether the harness's `tearDown` finishes the pipeline and invalidates the session.
    static var tearsDown: Bool { get }
    /// Whether the SDK's key checks go through the session too (`LeakURLSession`).
    static var sendsThroughSession: Bool { get }
}
extension PipelineChoice {
    public static var onContinuousClock: Bool { false }
    public static var debounces: Bool { true }
    public static var ticks: Bool { false }
    public static var keepsSession: Bool { false }
    public static var tearsDown: Bool { true }
    public static var sendsThroughSession: Bool { false }
}

/// A debounce on ContinuousClock, the library's default clock: `escape-unsimulated-clock`.
public enum DebounceOnContinuousClock: PipelineChoice { public static var onContinuousClock: Bool { true } }
/// A heartbeat timer on ContinuousClock: `escape-unsimulated-clock`, not a spin.
public enum TimerOnContinuousClock: PipelineChoice {
    public static var onContinuousClock: Bool { true }
    public static var debounces: Bool { false }
    public static var ticks: Bool { true }
}
/// The pipeline and a URLSession per process on the injected clock, ended by `tearDown`:
/// a correct harness, whose campaign stays flat in memory and open files.
public enum PipelineEnded: PipelineChoice { public static var keepsSession: Bool { true }; public static var ticks: Bool { true } }
/// The same, with no `tearDown`: each process leaves its pipeline waiting and its session open.
public enum PipelineLeftWaiting: PipelineChoice {
    public static var keepsSession: Bool { true }
    public static var ticks: Bool { true }
    public static var tearsDown: Bool { false }
}
/// The URLSession escape (`LeakURLSession`'s transport over the harness's client), in a
/// harness that ends its processes properly.
public enum URLSessionEscape: PipelineChoice {
    public static var keepsSession: Bool { true }
    public static var sendsThroughSession: Bool { true }
}

/// The Rollup harness with a pipeline around it (`PipelineChoice`).
public final class PipelineHarness<Choice: PipelineChoice>: AsyncSDKHarness {
    let inner: RollupHarness<Choice.Bugs>
    let pipeline: Task<Void, Never>
    let client: APIClient?
    /// What the pipeline delivered: the debounced states and the heartbeats.
    final class Sink: @unchecked Sendable { var states: [RollupState] = []; var beats = 0 }
    let sink = Sink()

    public init(device: SimDevice) {
        let client = Choice.keepsSession ? APIClient() : nil
        self.client = client
        if Choice.sendsThroughSession, let client {
            inner = RollupHarness<Choice.Bugs>(device: device, transport: URLSessionHopTransport(inner: SimTransport(device: device), client: client))
        } else {
            inner = RollupHarness<Choice.Bugs>(device: device)
        }
        let updates = inner.sdk.stateUpdates, sink = self.sink, clock = device.clock
        pipeline = Task {
            // A window of recent states, as a library's buffer keeps: what a pipeline left
            // waiting holds for good.
            var window: [RollupState] = []
            window.reserveCapacity(2_048)
            await withTaskGroup(of: Void.self) { group in
                if Choice.ticks {
                    group.addTask {
                        if Choice.onContinuousClock { await heartbeat(every: .seconds(5), clock: ContinuousClock()) { sink.beats += 1 } }
                        else { await heartbeat(every: .seconds(6 * 3600), clock: clock) { sink.beats += 1 } }
                    }
                }
                if Choice.debounces {
                    if Choice.onContinuousClock { await debounce(updates, for: .milliseconds(300), clock: ContinuousClock()) { sink.states.append($0) } }
                    else { await debounce(updates, for: .milliseconds(300), clock: clock) { sink.states.append($0) } }
                } else {
                    for await s in updates { window.append(s) }
                }
                group.cancelAll()
            }
            window.removeAll()
        }
    }

    public func handle(_ event: DeviceEvent) async { await inner.handle(event) }

    public func tearDown() async {
        guard Choice.tearsDown else { return }
        pipeline.cancel()                  // the stream's iteration ends, and the timer with it
        client?.invalidate()               // the session, its queues and its libcurl handle go
    }
}

/// `debounce(for:)` written the usual way: each element restarts a wait on `clock`; the
/// element that is still the newest when the wait ends is delivered.
func debounce<C: Clock>(_ upstream: AsyncStream<RollupState>, for interval: C.Duration, clock: C,
                        deliver: @escaping @Sendable (RollupState) -> Void) async {
    var pending: Task<Void, Never>?
    for await state in upstream {
        pending?.cancel()
        pending = Task {
            do { try await clock.sleep(until: clock.now.advanced(by: interval), tolerance: nil) } catch { return }
            deliver(state)
        }
    }
    pending?.cancel()
}

/// `AsyncTimerSequence.repeating(every:)` written the usual way: ticks at `interval` on
/// `clock` until the task is cancelled (a failed sleep does not end it; the next check does).
func heartbeat<C: Clock>(every interval: C.Duration, clock: C, tick: () -> Void) async {
    var next = clock.now.advanced(by: interval)
    while !Task.isCancelled {
        try? await clock.sleep(until: next, tolerance: nil)
        if Task.isCancelled { return }
        tick()
        next = next.advanced(by: interval)
    }
}

// MARK: - A loop that restarts after a failed sleep

/// The Rollup harness with an uploader loop of the usual shape beside the SDK: it sleeps
/// on the injected clock, and when a sleep fails it tries again, until its task is
/// cancelled. Correct code: when the process dies, SimKit cancels its tasks for real
/// (`Task.isCancelled` becomes true), so the loop ends instead of spinning.
public final class RetryLoopHarness: AsyncSDKHarness {
    let inner: RollupHarness<NoBugs>
    let uploader: Task<Void, Never>
    final class Count: @unchecked Sendable { var rounds = 0 }
    let count = Count()

    public init(device: SimDevice) {
        inner = RollupHarness<NoBugs>(device: device)
        let clock = device.clock, count = self.count
        uploader = Task {
            while !Task.isCancelled {
                do { try await clock.sleep(until: clock.now.advanced(by: .seconds(4 * 3600)), tolerance: nil) } catch { continue }
                count.rounds += 1
            }
        }
    }

    public func handle(_ event: DeviceEvent) async { await inner.handle(event) }
}
