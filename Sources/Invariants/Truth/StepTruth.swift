import SimKit

/// What one SDK step did, gathered from its records: the input, the answer it handled
/// (fresh or stale), and the effects that matter to the rules. Judged at `stepEnd`.
///
/// It holds no references (the first stale effect is kept as its trace event and put in
/// words only for a report), so starting a step is a plain write of bytes.
@usableFromInline struct StepTruth {
    @usableFromInline enum Input: Equatable {
        case none
        case lifecycle(LifecycleInput)
        case response(RequestKind, Answer, fresh: Bool)
        case timer(TimerKind)
    }

    // What the step is, and the truth just before it: fixed when the step starts.
    let device: DeviceIndex
    let input: Input
    /// `input` is a launch (in the foreground or background) or the app becoming active.
    let isActivation: Bool
    /// `input` is `reset()`.
    let isReset: Bool
    /// `input` is an answer that came after its timeout, a reset or a purge (D9).
    let isStale: Bool
    /// The SDK reported access revoked, or its disk was locked.
    let revokedBefore: Bool
    let diskBefore: DiskTruth
    let lockedBefore: Bool
    let lastAnsweredBefore: SimTime
    let checkInFlightBefore: Bool

    // What the step did, from its records.
    var effects = 0
    var sentCheck = false
    var sentReset = false
    var sentReport = false
    var runStarted = false
    var runStartedInBackground = false
    var runEnded = false
    var queuedReport = false
    var calledBack: CallOutcome?
    /// A fresh lock error arrived in this step (D2).
    var freshLockError = false
    /// A fresh check answered a lock error at or after `lockedSince + 30 d` (D5).
    var purgeDue = false
    /// A fresh check succeeded while access was stopped: the SDK must unlock (D4).
    var mustUnlock = false
    /// The unlock follows a purge: the SDK starts from scratch (D5).
    var unlockFromPurge = false
    var freshDeviceUnknown = false
    /// A fresh 200 to a run-report upload: the queued-ever count when it was sent (D10).
    var uploadCarriedUpTo: UInt32?
    /// The first effect of a stale step (its trace event), for the report: see `describe`.
    var firstStaleEffect: TraceEvent?

    /// No step: between a `stepEnd` and the next step's first record.
    init() {
        device = .max
        input = .none
        isActivation = false
        isReset = false
        isStale = false
        revokedBefore = false
        diskBefore = DiskTruth()
        lockedBefore = false
        lastAnsweredBefore = LocalData.never
        checkInFlightBefore = false
    }

    /// A step of `input` on device `d`, with what the truth said just before it.
    @inline(__always)
    init(device d: DeviceIndex, input: Input, before dev: DeviceTruth) {
        device = d
        self.input = input
        isActivation = switch input {
        case .lifecycle(.launch), .lifecycle(.launchInBackground), .lifecycle(.becameActive): true
        default: false
        }
        isReset = if case .lifecycle(.reset) = input { true } else { false }
        isStale = if case .response(_, _, fresh: false) = input { true } else { false }
        revokedBefore = InvariantChecker.revoked(dev.state) || dev.disk.locked
        diskBefore = dev.disk
        lockedBefore = dev.locked
        lastAnsweredBefore = dev.lastAnswered
        checkInFlightBefore = dev.checkInFlight != 0
    }

    func isResponse(to kind: RequestKind) -> Bool { if case .response(kind, _, _) = input { return true }; return false }

    /// A step's effect in words, for the report of a stale step that acted (D9).
    static func describe(_ effect: TraceEvent) -> String {
        switch effect {
        case .requestSent(_, let kind, _, _): "sent a \(kind) request"
        case .state(let s): "reported the state \(s)"
        case .callResult(let call, let outcome): "\(call) \(outcome)"
        case .runStarted: "started an indexing run"
        case .store(let op): "wrote \(op) to its disk"
        default: "\(effect)"
        }
    }
}
