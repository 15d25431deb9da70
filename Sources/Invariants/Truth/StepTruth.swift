import SimKit

/// What one SDK step did, gathered from its records: the input, the answer it handled
/// (fresh or stale), and the effects that matter to the rules. Judged at `stepEnd`.
struct StepTruth {
    enum Input: Equatable {
        case none
        case lifecycle(LifecycleInput)
        case response(RequestKind, Answer, fresh: Bool)
        case timer(TimerKind)
    }

    var device: DeviceIndex = .max
    var input: Input = .none
    var effects = 0
    var stateBefore: SDKState = .unconfigured
    var diskBefore = LocalData()
    var lockedBefore = false
    var lastAnsweredBefore: SimTime = LocalData.never
    var checkInFlightBefore = false
    var sentCheck = false
    var sentReset = false
    var sentReport = false
    var runStarted = false
    var runStartedInBackground = false
    var runEnded = false
    var queuedReport = false
    var calledBack: CallOutcome?
    /// A fresh lock error arrived in this step (D2), first locking access (`locking`).
    var freshLockError = false
    var locking = false
    /// A fresh check answered a lock error at or after `lockedSince + 30 d` (D5).
    var purgeDue = false
    /// A fresh check succeeded while access was stopped: the SDK must unlock (D4).
    var mustUnlock = false
    /// The unlock follows a purge: the SDK starts from scratch (D5).
    var unlockFromPurge = false
    var freshDeviceUnknown = false
    /// A fresh 200 to a run-report upload: the queued-ever count when it was sent (D10).
    var uploadCarriedUpTo: UInt32?
    /// The first effect of a stale step, for the report.
    var firstStaleEffect: String?

    var isActivation: Bool {
        input == .lifecycle(.launch) || input == .lifecycle(.launchInBackground) || input == .lifecycle(.becameActive)
    }
    var isReset: Bool { input == .lifecycle(.reset) }
    func isResponse(to kind: RequestKind) -> Bool { if case .response(kind, _, _) = input { return true }; return false }
    var isStale: Bool { if case .response(_, _, let fresh) = input { return !fresh }; return false }
}
