/// The state an SDK reports to its app (SPEC §4 states): `.failed(.accessRevoked)` is
/// `locked`, or `purged` once the data has been deleted after 30 days.
public enum SDKState: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case unconfigured, indexing, idle, locked, purged
    public var description: String {
        switch self {
        case .unconfigured: "unconfigured"
        case .indexing: "indexing"
        case .idle: "idle"
        case .locked: "locked"
        case .purged: "purged"
        }
    }
    /// `.failed(.accessRevoked)`: the SDK is locked, with or without its data.
    @inlinable public var isAccessRevoked: Bool { self == .locked || self == .purged }
}

/// A call of the SDK's public API by the app.
public enum APICall: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// On-device search over the index.
    case search
    /// Server-backed calls (S7).
    case query, profile
    public var description: String {
        switch self { case .search: "search"; case .query: "query"; case .profile: "profile" }
    }
    /// The request a server-backed call sends, or nil for `search`.
    public var requestKind: RequestKind? {
        switch self { case .search: nil; case .query: .query; case .profile: .profile }
    }
}

/// How an API call ended.
public enum CallOutcome: UInt8, Sendable, CustomStringConvertible {
    case returned
    /// Threw `accessRevoked` (D3).
    case threwAccessRevoked
    /// Failed for a transient reason (offline, timeout, 5xx) or a non-lock refusal.
    case failed
    public var description: String {
        switch self { case .returned: "returned"; case .threwAccessRevoked: "threw accessRevoked"; case .failed: "failed" }
    }
}

/// The SDK's timers. Each kind has one live instance per device: setting it again or
/// cancelling it makes the earlier firing stale (the engine drops it).
public enum TimerKind: UInt8, Sendable, CaseIterable {
    /// The next chunk of an indexing run.
    case indexChunk
    /// A request's timeout (D9): arm it with `Effect.setTimeout(of:kind:at:)`; its `arg`
    /// names the request it guards (`RequestTimeout(arg:)`), and the engine traces its
    /// firing as that request's timeout (`delivered`, answer `timedOut`). Not cancellable,
    /// many may be live; the timeout of a request already answered is dropped if the SDK
    /// says it would ignore it (`SDKCore.ignoresTimer`).
    case requestTimeout
    /// Retry of the server-side reset (D7).
    case resetRetry
    /// Retry of the run-report upload (D10).
    case reportRetry
}

/// The request a `requestTimeout` timer guards, carried in the timer's `arg`.
public struct RequestTimeout: Sendable, Equatable {
    /// The request's id (below 2^29).
    public var id: UInt32
    public var kind: RequestKind
    @inlinable public init(id: UInt32, kind: RequestKind) {
        precondition(id < 1 << 29, "request id \(id) does not fit a timer's argument")
        self.id = id; self.kind = kind
    }
    /// The request a firing's `arg` names, or nil when it names none.
    @inlinable public init?(arg: UInt32) {
        guard let kind = RequestKind(rawValue: UInt8(arg & 7)) else { return nil }
        self.id = arg >> 3; self.kind = kind
    }
    /// The id alone, for a look-up on every firing.
    @inlinable public static func id(inArg arg: UInt32) -> UInt32 { arg >> 3 }
    /// The timer argument that carries this timeout.
    @inlinable public var arg: UInt32 { id << 3 | UInt32(kind.rawValue) }
}

/// Something that happens to the SDK: a lifecycle event, an API call, a response or a timer.
public enum SDKInput: Sendable, Equatable {
    /// A cold start: the app process starts and calls `configure` (D1).
    /// `inBackground` is a launch by the OS for a background run.
    case launch(inBackground: Bool)
    /// The app becomes active (comes to the foreground).
    case becameActive
    /// The app goes to the background.
    case wentToBackground
    /// The OS fires the SDK's background indexing task.
    case backgroundRun
    /// The OS asks the SDK's background run to stop (iOS's expiration handler, SPEC P5): its
    /// time is up. The OS kills the process a few seconds later (`BackgroundLimit.graceMs`)
    /// unless the run has ended (`Effect.runEnded`) by then. Sent only in a world with a
    /// `background-limit`.
    case backgroundExpiring
    case call(APICall)
    /// The app calls `reset()` (D7).
    case reset
    /// The answer to request `id` of `kind` (a verdict or a transient failure).
    case response(id: UInt32, kind: RequestKind, reply: ServerReply)
    case timer(TimerKind, arg: UInt32)
}

/// What the SDK asks the engine to do; the engine applies effects in order and traces them.
public enum Effect: Sendable, Equatable {
    /// Sends a request; the engine adds the installed app's key and the App Attest result.
    case send(id: UInt32, kind: RequestKind, credential: Credential)
    case setTimer(TimerKind, at: SimTime, arg: UInt32)
    case cancelTimer(TimerKind)
    /// A write or delete on the device's disk. On a full disk (`SDKContext.diskFull`) one that
    /// takes room is not applied: the engine traces it as failed (P3).
    case store(StoreOp)
    /// The state the SDK reports to its app.
    case state(SDKState)
    case callResult(APICall, CallOutcome)
    /// An indexing run starts (`background` when the OS fired it) or ends.
    case runStarted(background: Bool)
    case runEnded
    /// The upload sent just before carries the named report `report` (its id in the SDK's
    /// own words): what the server receives on a 200, and what a reset's deletion forbids
    /// from then on (D7, D10). An SDK whose reports have no names sends none: its upload is
    /// taken to carry every report queued when it was sent.
    case carries(report: UInt64)
    /// The step ends with work of the SDK's own still in progress (an async SDK's storage
    /// write not done yet): its effects are judged with the device's next steps, until one
    /// ends without this. A sans-IO core, whose steps are whole, never asks for it.
    case unsettled
}

/// What the SDK may read with each input besides its own data and the world's settings:
/// the device's facts. Built by the engine per input; the SDK keeps none of it. It is
/// 16 bytes, passed in registers: the settings travel apart (`SDKConfig`), since building
/// one struct of both per input cost a store-forwarding stall on every step.
public struct SDKContext: Sendable {
    public var device: DeviceIndex
    /// Photos in the library; photo ids are `0..<photoCount` and only grow.
    public var photoCount: UInt32
    /// How far the phone's wall clock is from the true time, in whole seconds (SPEC P2): 0
    /// unless a `clock` fault set it, negative when it is behind. The `now` of a step is
    /// the true (elapsed) time, which the phone's clock never touches; `wallClock(at:)` is
    /// what the phone's calendar reads (`Date()` in an app). Seconds in 32 bits keep the
    /// context within two registers (about 68 years either way).
    public var wallClockOffsetSeconds: Int32
    /// Whether the person allows the app to read Photos.
    public var photosAllowed: Bool
    /// Whether the phone's disk is full in this step (SPEC P3, a `disk-full` fault): every
    /// write that takes room (`StoreOp.takesRoom`: the index growing, models or place data
    /// saved, a run report queued) fails, and the engine does not apply it (it traces it as
    /// failed); the old value stays. Deletions and the small records kept in place (lock,
    /// dates, credential, pending reset) still succeed. A step is one moment, so this is what
    /// an app learns from each such write's error, told before the step rather than after
    /// each write. An SDK must not count a failed write as done: progress not written is
    /// indexed again, a download not saved is downloaded again, and a report not queued is
    /// kept in memory and written when the disk has room (it dies with the process, P1).
    /// What a full disk may suspend meanwhile: indexing and downloads (docs/semantics.md).
    public var diskFull: Bool
    /// Whether the SDK's protected data is locked in this step (SPEC P4, a `reboot` fault):
    /// the phone restarted and the person has not unlocked it yet. The data can be neither
    /// read nor written: the `disk` handed to the step must not be read (unreadable is not
    /// absent: the SDK must not register again, start the index from scratch, download
    /// again or delete anything because of it), and every write fails (the engine traces it
    /// as refused), but the background task's, which is the OS's. Background runs may come
    /// meanwhile; the SDK waits for a step whose data is readable.
    public var dataLocked: Bool
    public init(device: DeviceIndex, photoCount: UInt32, photosAllowed: Bool, wallClockOffsetSeconds: Int32 = 0, diskFull: Bool = false,
                dataLocked: Bool = false) {
        self.device = device; self.photoCount = photoCount; self.photosAllowed = photosAllowed
        self.wallClockOffsetSeconds = wallClockOffsetSeconds
        self.diskFull = diskFull
        self.dataLocked = dataLocked
    }
    /// The phone's wall clock at true time `now`, in milliseconds since the world's start
    /// (negative when it was set back before it).
    @inlinable public func wallClock(at now: SimTime) -> Int64 { Int64(now) + wallClockOffsetMs }
    /// `wallClockOffsetSeconds` in milliseconds.
    @inlinable public var wallClockOffsetMs: Int64 { Int64(wallClockOffsetSeconds) * 1_000 }
}

/// Settings shared by every SDK in a world, what the rules are about; times in milliseconds.
///
/// Its size is a whole number of words (56 bytes; see `CopyAlignmentTests`): a struct
/// with a ragged end is copied in overlapping 16-byte moves, which defeat store forwarding.
public struct SDKConfig: Sendable, Equatable {
    /// D9: every request times out after this long.
    public var requestTimeoutMs: SimTime = 30 * Ms.second
    /// D1: on activation, check when the last answered check is older than this.
    public var checkIntervalMs: SimTime = 24 * Ms.hour
    /// D5: delete the data after access has stayed stopped this long.
    public var purgeAfterMs: SimTime = 30 * Ms.day
    /// The time an indexing chunk takes (`chunkPhotos` photos).
    public var chunkMs: SimTime = 10 * Ms.second
    /// Retries of the reset and report uploads back off from the first to the largest delay.
    public var retryFirstMs: SimTime = 30 * Ms.second
    public var retryMaxMs: SimTime = 6 * Ms.hour
    /// Photos indexed per chunk.
    public var chunkPhotos: UInt16 = 200
    /// For an async SDK (SimKitAsync): the longest a wait for the storage
    /// (`SimDevice.synchronize`, after writes) takes, ms (the scenario's `storage latency
    /// D`); each draws its time from 0 to this. 0: it returns at once. The writes are
    /// durable when made; only the caller waits. A sans-IO core never reads it.
    public var storageLatencyMaxMs: UInt16 = 0
    /// For an async SDK (SimKitAsync): the seed of the order in which a step runs the jobs
    /// ready at once (the scenario's `schedule seed N`), part of the seed's schedule, so
    /// fuzzing explores interleavings and replay keeps them; 0 runs them in the order they
    /// became ready (`schedule fifo`). A sans-IO core has no jobs and never reads it.
    public var jobPickSeed: UInt32 = 0
    public init() {}
}

extension Effect {
    /// Arms the timeout of request `id` of `kind` at `at` (D9).
    @inlinable public static func setTimeout(of id: UInt32, kind: RequestKind, at: SimTime) -> Effect {
        .setTimer(.requestTimeout, at: at, arg: RequestTimeout(id: id, kind: kind).arg)
    }
}

/// The SDK core as a sans-IO state machine: it takes an input with the current virtual
/// time and returns effects; it never does I/O, reads clocks, or draws randomness.
///
/// One value is the state of one app process. A cold launch makes a new value with
/// `init()`; what must survive lives in `LocalData`, which the SDK reads through `disk`
/// and changes only through `.store` effects (the engine applies them after the call). Plug in your own core by
/// conforming to this protocol; the engine is generic over it, so it costs no
/// existential call per event. A core must behave as a value: `simkit explore` copies
/// whole worlds mid-run (`SimWorld.fork()`) and runs the copies on, so a core that keeps
/// its state in a class must copy it on write (as `Examples/AppTeamSDK`'s core does).
public protocol SDKCore: Sendable {
    /// A fresh app process, before `configure`.
    init()
    /// Handles one input at `now` under the world's settings `config`, appending effects
    /// to `effects` (the engine's buffer, for this call only: append, never keep or copy it).
    mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                         effects: inout EffectBuffer)
    /// Whether a firing of timer `kind` with `arg` would be ignored if it came now: no
    /// effect and no change of state. The engine then drops the firing, as it drops a
    /// cancelled timer, with no step and no trace record. An SDK that answers true must
    /// ignore that firing in `handle` too (debug builds hand it to a copy of the SDK and
    /// assert that it asks for nothing); the default, false, hands every firing to it.
    func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool
    /// Handles `input` if it needs nothing but this value's own memory (no disk, settings,
    /// context or effect: going to the background, for the reference) and returns true;
    /// false, doing nothing, for every other input. The engine may then skip `handle` for
    /// it (the step is traced as usual); it does so only in a world no phone fault has
    /// touched, and hands the input to `handle` otherwise, so `handle` must do the same
    /// for such an input (the reference's calls this first). Debug builds hand the input
    /// to a copy of the SDK's `handle` too and assert that it asks for nothing (and, for
    /// an SDK of plain values, that it leaves the same state). The default, false, costs
    /// nothing: the engine's call is compiled away.
    mutating func handledAlone(_ input: SDKInput) -> Bool
    /// Whether the core is told of answers the network lost (`answerLost`). The default,
    /// false, costs nothing: the engine's call is compiled away.
    static var hearsLostAnswers: Bool { get }
    /// The network lost the answer to request `id` of this app process (the server may
    /// have acted on it, S9): it will never arrive. Told when the world decides it, which is
    /// no step of the SDK: the core may note it, and asks for nothing. An async SDK's host
    /// delivers answers when they arrive, late ones too, and learns here that a request
    /// awaited has none coming (`SimKitAsync`). Called only when `hearsLostAnswers`.
    mutating func answerLost(id: UInt32)
    /// A world of this core type is being built (its first statement): a core whose
    /// processes share state beyond one world (an async SDK's run loop) forgets what the
    /// last world left there. The default does nothing.
    static func worldBegins()
    /// The verdict of its own that the world built last ended with, if any: something that
    /// went wrong in the core itself and that no invariant judges (an async SDK's escapes,
    /// `SimKitAsync`). The runners make it the seed's one broken name, as they do a wire
    /// server's failure. The default: nil.
    static var verdict: SDKVerdict? { get }
    /// What this SDK states where SPEC lets it choose within a limit (its back-offs, D7 and
    /// D10): the checkers judge its liveness by these. The default: SPEC's limits (6 h).
    static var statement: SDKStatement { get }
    /// Whether a clone's copy of its genuine device's credential (S6: a clone group that
    /// copies credentials) can reach this SDK's storage. A core that keeps its own storage
    /// shape (an async SDK's files, seen through a read-only mapping) cannot be handed one:
    /// its clones then launch with only the copied key, and the world writes no credential
    /// the SDK never saw. The default: true.
    static var takesCopiedCredentials: Bool { get }
    /// Whether each `.store` effect is one write of the SDK's, which a kill may land
    /// between (P1, `kill … at-write`). A core whose one write shows as several operations
    /// in a row (an async SDK's file, seen through a mapping) says false: a kill then
    /// counts each run of consecutive `.store` effects as one write and never tears it.
    /// The default: true.
    static var storeOpsAreWrites: Bool { get }
    /// A kill (P1, `kill … at-write`) landed at the step's effect `effect`, one of its
    /// writes: that write and every later effect of the step were not applied, and the
    /// process ends. A core that keeps the SDK's storage itself, outside the `LocalData` the
    /// world hands each step (an async SDK's own files, `SimDisk`), sets it back to what it
    /// held before that write, so that the next launch reads exactly the writes made before
    /// the kill. The default does nothing.
    mutating func killed(atEffect effect: Int)
}

extension SDKCore {
    @inlinable public func ignoresTimer(_ kind: TimerKind, arg: UInt32) -> Bool { false }
    @inlinable public mutating func handledAlone(_ input: SDKInput) -> Bool { false }
    @inlinable public static var hearsLostAnswers: Bool { false }
    @inlinable public mutating func answerLost(id: UInt32) {}
    @inlinable public static func worldBegins() {}
    @inlinable public static var verdict: SDKVerdict? { nil }
    @inlinable public static var statement: SDKStatement { .specLimits }
    @inlinable public static var takesCopiedCredentials: Bool { true }
    @inlinable public static var storeOpsAreWrites: Bool { true }
    @inlinable public mutating func killed(atEffect effect: Int) {}
}

/// A verdict an SDK core gives itself (`SDKCore.verdict`): its name (`escape-foreign-thread`,
/// `step-never-settles`, …) and one line saying where: the device, its time, the step.
public struct SDKVerdict: Sendable, Equatable {
    public var name: String
    public var report: String
    public init(name: String, report: String) { self.name = name; self.report = report }
}
