/// A person's or the OS's action on a device, as the engine delivers it.
public enum PersonAction: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case launch, open, close, background, search, query, profile, update, reset
    case revokePhotos, grantPhotos, addPhotos
    public var description: String {
        switch self {
        case .launch: "launch"
        case .open: "open"
        case .close: "close"
        case .background: "background"
        case .search: "search"
        case .query: "query"
        case .profile: "profile"
        case .update: "update"
        case .reset: "reset"
        case .revokePhotos: "revoke-photos"
        case .grantPhotos: "grant-photos"
        case .addPhotos: "add-photos"
        }
    }
}

/// A lifecycle input or API call handed to the SDK: the first record of its step.
public enum LifecycleInput: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case launch, launchInBackground, becameActive, wentToBackground, backgroundRun
    case search, query, profile, reset
    /// The OS asks a background run to stop: its time is up (P5, `background-limit`).
    case backgroundExpiring
    public var description: String {
        switch self {
        case .launch: "launch"
        case .launchInBackground: "launch in background"
        case .becameActive: "became active"
        case .wentToBackground: "went to background"
        case .backgroundRun: "background run"
        case .search: "search"
        case .query: "query"
        case .profile: "profile"
        case .reset: "reset()"
        case .backgroundExpiring: "background time up"
        }
    }
}

/// A change made in the developer dashboard or by Rollup.
public enum DashboardAction: Sendable, Equatable, CustomStringConvertible {
    /// A new current key; the old one keeps working for `graceMs`, or stops now when nil.
    case rotate(app: AppID, newKey: KeyID, graceMs: SimTime?)
    case stopOldKey(app: AppID, key: KeyID)
    case disable(app: AppID)
    case enable(app: AppID)
    case rollupApp(RollupAppAction, app: AppID)
    case rollupAccount(RollupAccountAction, account: AccountID)

    public var description: String {
        switch self {
        case .rotate(let app, let key, let grace):
            "rotate app \(app) key \(key) " + (grace.map { "keep-old \(DurationText.format($0))" } ?? "stop-old now")
        case .stopOldKey(let app, let key): "stop-old-key app \(app) key \(key)"
        case .disable(let app): "disable app \(app)"
        case .enable(let app): "enable app \(app)"
        case .rollupApp(let a, let app): "rollup \(a) app \(app)"
        case .rollupAccount(let a, let acc): "rollup \(a) account \(acc)"
        }
    }
}

extension RollupAppAction: CustomStringConvertible {
    public var description: String {
        switch self { case .approve: "approve"; case .reject: "reject"; case .revoke: "revoke"; case .restore: "restore" }
    }
}

extension RollupAccountAction: CustomStringConvertible {
    public var description: String {
        switch self { case .approve: "approve-account"; case .revoke: "revoke-account"; case .restore: "restore-account" }
    }
}

/// Everything observable that happens in a simulation. A record's `device` says whose
/// it is (`Event.world` for server-wide and dashboard records).
public enum TraceEvent: Sendable, Equatable {
    /// The person or the OS acted on the device (`arg`: photos added, key shipped, …).
    case person(PersonAction, arg: UInt32)
    /// The SDK process started (`inBackground` for an OS launch) or was killed.
    case processStarted(inBackground: Bool)
    case processKilled
    /// The SDK sent request `id`.
    case requestSent(id: UInt32, kind: RequestKind, key: KeyID, credential: Credential)
    /// The request reached the server, which answered it (before any loss on the way back).
    /// `recordAfter` audits the server's store: the generation of the device's record
    /// after the request (0: none), so checkers can see a reset that did not delete.
    case served(id: UInt32, kind: RequestKind, key: KeyID, credential: Credential, reply: ServerReply, recordAfter: UInt32)
    /// The server still holds an earlier record of the device (`generation`) besides the
    /// newest (`recordAfter`): one record each, oldest first, right before the `served`
    /// record of a registration or a reset answered 200 (`ServerCore.forEachEarlierRecord`).
    case holds(generation: UInt32)
    /// A lifecycle input starts an SDK step (responses start theirs with `delivered`,
    /// timers with `timerFired`); every step ends with `stepEnd`.
    case input(LifecycleInput)
    /// An answer reached the SDK: a server verdict, a 5xx, offline, or the SDK's own timeout
    /// (`viaTimer`). Late answers are delivered too; judging them stale is the SDK's job.
    /// `sentAt` is when the request left the device (0 for `viaTimer`); `servedAt` and
    /// `stoppedSince` are the reply's (S2; `ServerReply.none` when it is no verdict).
    case delivered(id: UInt32, kind: RequestKind, answer: Answer, viaTimer: Bool, sentAt: SimTime,
                   servedAt: SimTime, stoppedSince: SimTime)
    /// An answer was dropped because the process that sent the request had died.
    case droppedForDeadProcess(id: UInt32)
    /// One of the SDK's timers fired (`arg` as it was set); a request's timeout is traced
    /// as `delivered(…, viaTimer: true)` instead.
    case timerFired(TimerKind, arg: UInt32)
    case state(SDKState)
    case store(StoreOp)
    case callResult(APICall, CallOutcome)
    case runStarted(background: Bool)
    case runEnded
    case backgroundRunSkipped
    /// An injected fault's record: a window opening or closing (its kind's file in `Faults/` says which).
    case fault(FaultRecord)
    case dashboard(DashboardAction, applied: Bool)
    /// The server lost a device's record (`forget-device`).
    case forgotDevice
    /// A scenario's probe point: an `expect` is judged here (`arg`: the expectation index).
    case probe(arg: UInt32)
    /// The upload sent just before (the device's last `requestSent`) carries the named run
    /// report `report` (D7, D10): one record a report, for an SDK that names them.
    case carries(report: UInt64)
    /// The step ends with work of the SDK's own still in progress (a storage write an async
    /// SDK awaits, not done yet): the checkers judge its effects together with the device's
    /// next steps, until one ends with nothing in progress. Right before its `stepEnd`.
    case unsettled
    /// The end of one SDK input's handling (all its effects are in the trace before it).
    case stepEnd
}

/// One trace record: when, whose, what.
public struct TraceRecord: Sendable, Equatable {
    public var time: SimTime
    public var device: DeviceIndex
    public var event: TraceEvent
    @inlinable public init(time: SimTime, device: DeviceIndex, event: TraceEvent) {
        self.time = time; self.device = device; self.event = event
    }
}
