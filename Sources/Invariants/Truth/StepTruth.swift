import SimKit

/// What one SDK step did, gathered from its records: the input, the answer it handled
/// (fresh or stale), and the effects that matter to the rules. Judged at `stepEnd`, or, when
/// the step ends with work in progress (`unsettled`, an async SDK's storage write), at the
/// end of the first of the device's next steps that ends without: the steps between are
/// one episode, merged (`merge`), judged as one step whose inputs all came at its start.
///
/// It holds no references (the first stale effect is kept as its trace event and put in
/// words only for a report), so starting a step is a plain write of bytes. One is started
/// and ended for every step, so its flags share one word: `start` and `end` write a few
/// words, not the whole step, and `endStep` tests several at once (`hasAny`, as in `mayBreakData`).
@usableFromInline struct StepTruth {
    @usableFromInline enum Input: Equatable {
        case none
        case lifecycle(LifecycleInput)
        case response(RequestKind, Answer, fresh: Bool)
        case timer(TimerKind)
    }

    // What the step is, and the truth just before it: fixed when the step starts.
    private(set) var device: DeviceIndex
    private(set) var input: Input
    /// The flags below, one bit each: fixed when the step starts, set by its records, all
    /// cleared in one write when it ends (`end`).
    private var bits: UInt32
    private(set) var diskBefore: DiskTruth
    private(set) var lastAnsweredBefore: SimTime
    var calledBack: CallOutcome?
    /// For a verdict: its `servedAt`, and the newest one delivered before it (D4, D9).
    var servedAt: SimTime = 0
    var newestBefore: SimTime = 0
    /// Kept here, read only while its bit is set: see `uploadCarriedUpTo`, `firstStaleEffect`.
    private var carriedUpTo: UInt32 = 0
    private var staleEffect: TraceEvent = .runEnded
    /// The fresh, newest lock error of the step (with `freshLockError`): its request and answer.
    var lockErrorKind: RequestKind = .check
    var lockErrorAnswer: Answer = .appDisabled
    /// The `servedAt` of the lock error that locked the device in this step (D3's
    /// lockedSince may be it): set when it locks, so later verdicts of the episode keep it.
    var lockServedAt: SimTime = 0
    /// Steps merged into this one (an episode, see the type's comment); bounded.
    var merged: UInt8 = 0
    /// When the episode's latest step ended with work still in progress (set when it is
    /// parked; read only at the run's end, `InvariantChecker.finish`).
    var parkedAt: SimTime = 0
    /// P3: run reports the step queued, and those whose queue write a full disk refused.
    var reportsWritten: UInt8 = 0
    var reportsRefused: UInt8 = 0
    /// The most steps one episode merges: past it, the episode is judged anyway.
    static let mergedMax: UInt8 = 64

    static let isActivationBit: UInt32 = 1 << 0
    static let isResetBit: UInt32 = 1 << 1
    static let isStaleBit: UInt32 = 1 << 2
    static let revokedBeforeBit: UInt32 = 1 << 3
    static let lockedBeforeBit: UInt32 = 1 << 4
    static let checkInFlightBeforeBit: UInt32 = 1 << 5
    static let actedBit: UInt32 = 1 << 6
    static let sentCheckBit: UInt32 = 1 << 7
    static let sentResetBit: UInt32 = 1 << 8
    static let sentReportBit: UInt32 = 1 << 9
    static let runStartedBit: UInt32 = 1 << 10
    static let runStartedInBackgroundBit: UInt32 = 1 << 11
    static let runEndedBit: UInt32 = 1 << 12
    static let queuedReportBit: UInt32 = 1 << 13
    static let freshLockErrorBit: UInt32 = 1 << 14
    static let purgeDueBit: UInt32 = 1 << 15
    static let mustUnlockBit: UInt32 = 1 << 16
    static let unlockFromPurgeBit: UInt32 = 1 << 17
    static let freshDeviceUnknownBit: UInt32 = 1 << 18
    static let carriedBit: UInt32 = 1 << 19
    static let staleEffectBit: UInt32 = 1 << 20
    static let isAPICallBit: UInt32 = 1 << 21
    static let olderVerdictBit: UInt32 = 1 << 22
    static let mayUnlockBit: UInt32 = 1 << 23
    static let purgeAllowedBit: UInt32 = 1 << 24
    static let olderLockErrorBit: UInt32 = 1 << 25
    static let isLaunchBit: UInt32 = 1 << 26
    static let continuesBit: UInt32 = 1 << 27
    static let isBecameActiveBit: UInt32 = 1 << 28
    static let isServerCallBit: UInt32 = 1 << 29
    static let olderOnlyByAttestationBit: UInt32 = 1 << 30
    /// A write of the step failed on a full disk (P3).
    static let writeFailedBit: UInt32 = 1 << 31
    /// Without one of these a step can break no rule judged at its end (see `endStep`).
    static let mayBreakAnyMask: UInt32 = actedBit | freshLockErrorBit | mustUnlockBit | isResetBit | isActivationBit
        | isStaleBit | purgeDueBit | lockedBeforeBit | isAPICallBit | runStartedBit | runEndedBit | queuedReportBit
        | olderVerdictBit | carriedBit | freshDeviceUnknownBit | continuesBit

    /// `input` is a launch (in the foreground or background) or the app becoming active.
    var isActivation: Bool { bit(Self.isActivationBit) }
    /// `input` is `reset()`.
    /// Set later than the step's start only for a reset() called before the unlock and done
    /// after it (`takeDeferredReset`).
    var isReset: Bool { get { bit(Self.isResetBit) } set { set(Self.isResetBit, newValue) } }
    /// `input` is a call of the API that must throw while locked: search, query, profile (D3).
    var isAPICall: Bool { bit(Self.isAPICallBit) }
    /// `input` is an answer that came after its timeout, a reset or a purge (D9).
    var isStale: Bool { bit(Self.isStaleBit) }
    /// The SDK reported access revoked, or its disk was locked.
    var revokedBefore: Bool { bit(Self.revokedBeforeBit) }
    var lockedBefore: Bool { bit(Self.lockedBeforeBit) }
    var checkInFlightBefore: Bool { bit(Self.checkInFlightBeforeBit) }

    // What the step did, from its records.
    /// The step had an effect (a request, a state, a callback, a run, a write).
    var acted: Bool { get { bit(Self.actedBit) } set { set(Self.actedBit, newValue) } }
    var sentCheck: Bool { get { bit(Self.sentCheckBit) } set { set(Self.sentCheckBit, newValue) } }
    var sentReset: Bool { get { bit(Self.sentResetBit) } set { set(Self.sentResetBit, newValue) } }
    var sentReport: Bool { get { bit(Self.sentReportBit) } set { set(Self.sentReportBit, newValue) } }
    var runStarted: Bool { get { bit(Self.runStartedBit) } set { set(Self.runStartedBit, newValue) } }
    var runStartedInBackground: Bool { get { bit(Self.runStartedInBackgroundBit) } set { set(Self.runStartedInBackgroundBit, newValue) } }
    var runEnded: Bool { get { bit(Self.runEndedBit) } set { set(Self.runEndedBit, newValue) } }
    var queuedReport: Bool { get { bit(Self.queuedReportBit) } set { set(Self.queuedReportBit, newValue) } }
    /// A fresh lock error, at least as new as every verdict before it, arrived (D2).
    var freshLockError: Bool { get { bit(Self.freshLockErrorBit) } set { set(Self.freshLockErrorBit, newValue) } }
    /// A fresh, newest lock error said access had been stopped 30 days (`stoppedSince`),
    /// and it had, in truth: the SDK must delete its data now (D5).
    var purgeDue: Bool { get { bit(Self.purgeDueBit) } set { set(Self.purgeDueBit, newValue) } }
    /// The step answers a fresh, newest lock error served when access had in truth been
    /// stopped for 30 days: deleting the data is allowed (D5).
    var purgeAllowed: Bool { get { bit(Self.purgeAllowedBit) } set { set(Self.purgeAllowedBit, newValue) } }
    /// A fresh, newest 200 to a key check while access was stopped: the SDK must unlock (D4).
    var mustUnlock: Bool { get { bit(Self.mustUnlockBit) } set { set(Self.mustUnlockBit, newValue) } }
    /// A fresh, newest 200 to any request while access was stopped: it may unlock (D4).
    var mayUnlock: Bool { get { bit(Self.mayUnlockBit) } set { set(Self.mayUnlockBit, newValue) } }
    /// The input is a fresh verdict older (by `servedAt`) than one already delivered: it
    /// must neither lock nor unlock (D4, D9); `olderLockError` when it is a lock error.
    var olderVerdict: Bool { get { bit(Self.olderVerdictBit) } set { set(Self.olderVerdictBit, newValue) } }
    var olderLockError: Bool { get { bit(Self.olderLockErrorBit) } set { set(Self.olderLockErrorBit, newValue) } }
    /// The verdict is older only than an `attestation_failed` (S6): acting on it or not are both D4.
    var olderOnlyByAttestation: Bool { get { bit(Self.olderOnlyByAttestationBit) } set { set(Self.olderOnlyByAttestationBit, newValue) } }
    /// `input` is a launch, in the foreground or the background.
    var isLaunch: Bool { bit(Self.isLaunchBit) }
    /// `input` is the app becoming active (not a launch).
    var isBecameActive: Bool { bit(Self.isBecameActiveBit) }
    /// `input` is a call of query or profile, the calls that need the server.
    var isServerCall: Bool { bit(Self.isServerCallBit) }
    /// The step ended with work in progress (`unsettled`): it is judged with the next.
    var continues: Bool { get { bit(Self.continuesBit) } set { set(Self.continuesBit, newValue) } }
    /// The unlock follows a purge: the SDK starts from scratch (D5).
    var unlockFromPurge: Bool { get { bit(Self.unlockFromPurgeBit) } set { set(Self.unlockFromPurgeBit, newValue) } }
    var freshDeviceUnknown: Bool { get { bit(Self.freshDeviceUnknownBit) } set { set(Self.freshDeviceUnknownBit, newValue) } }
    /// A write of the step failed on a full disk (P3): what it stopped is not "on its own".
    var writeFailed: Bool { get { bit(Self.writeFailedBit) } set { set(Self.writeFailedBit, newValue) } }

    /// A fresh 200 to a run-report upload: the queued-ever count when it was sent (D10).
    var uploadCarriedUpTo: UInt32? {
        get { bit(Self.carriedBit) ? carriedUpTo : nil }
        set { if let n = newValue { carriedUpTo = n; bits |= Self.carriedBit } else { bits &= ~Self.carriedBit } }
    }
    /// The first effect of a stale step (its trace event), for the report: see `describe`.
    var firstStaleEffect: TraceEvent? {
        get { bit(Self.staleEffectBit) ? staleEffect : nil }
        set { if let e = newValue { staleEffect = e; bits |= Self.staleEffectBit } else { bits &= ~Self.staleEffectBit } }
    }

    /// Whether any of `mask`'s flags is set (the masks are the `…Bit` constants above).
    @inline(__always) func hasAny(_ mask: UInt32) -> Bool { bits & mask != 0 }
    @inline(__always) private func bit(_ mask: UInt32) -> Bool { bits & mask != 0 }
    @inline(__always) private mutating func set(_ mask: UInt32, _ on: Bool) { bits = on ? bits | mask : bits & ~mask }

    /// No step: between a `stepEnd` and the next step's first record.
    init() {
        device = .max
        input = .none
        bits = 0
        diskBefore = DiskTruth()
        lastAnsweredBefore = LocalData.never
    }

    /// Starts a step of `input` on device `d`, with what the truth said just before it.
    /// It writes every field a record or the judging can read while the step is going;
    /// the two kept behind bits (`carriedUpTo`, `staleEffect`) are left as they are.
    @inline(__always)
    mutating func start(device d: DeviceIndex, input: Input, before dev: DeviceTruth, at now: SimTime) {
        device = d
        self.input = input
        merged = 0
        reportsWritten = 0; reportsRefused = 0
        var b = Self.bits(of: input)
        if InvariantChecker.revoked(dev.state) || dev.disk.locked { b |= Self.revokedBeforeBit }
        if dev.locked { b |= Self.lockedBeforeBit }
        if dev.checkAwaited(at: now) { b |= Self.checkInFlightBeforeBit }
        bits = b
        diskBefore = dev.disk
        lastAnsweredBefore = dev.lastAnswered
        calledBack = nil
    }

    /// The flags an input sets when its step starts.
    @inline(__always)
    static func bits(of input: Input) -> UInt32 {
        switch input {
        case .lifecycle(.launch), .lifecycle(.launchInBackground): isActivationBit | isLaunchBit
        case .lifecycle(.becameActive): isActivationBit | isBecameActiveBit
        case .lifecycle(.reset): isResetBit
        case .lifecycle(.search): isAPICallBit
        case .lifecycle(.query), .lifecycle(.profile): isAPICallBit | isServerCallBit
        case .response(_, _, fresh: false): isStaleBit
        default: 0
        }
    }

    /// Another step of the same device joins this episode (this step ended `unsettled`):
    /// its input's flags join this one's, what was true before stays the episode's start,
    /// and its input becomes the one named unless it is only a timer (a wake or a write's
    /// completion). A stale answer never joins: it is judged alone (D9).
    mutating func merge(_ input: Input) {
        bits = (bits & ~Self.continuesBit) | Self.bits(of: input)
        switch input {
        case .timer, .none: if case .none = self.input { self.input = input }
        default: self.input = input
        }
        merged &+= 1
    }

    /// The step is over: back to no step, as `init()` reads to every record that can come
    /// before the next step starts. Those records read only `device`, `input` and the flags
    /// (the rest is read by the judging at `stepEnd`, which needs a step, and `start`
    /// writes it), so only these are written, not the whole step.
    @inline(__always)
    mutating func end() {
        device = .max
        input = .none
        bits = 0
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
