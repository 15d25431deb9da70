import SimKit

/// What the checkers know of one device, from the trace alone: what the SDK reported and
/// wrote (its state and a replica of its disk), and the ground truth the rules are
/// judged by (whether access is stopped, since when, which requests are awaited).
///
/// Two kinds of truth live here. What the SDK saw and did (`locked`, `lockedSince`, the
/// disk replica) is judged against the answers it got. Whether access is stopped in truth
/// (`stopStart`) is rebuilt from the scenario's dashboard and Rollup records, the keys'
/// deadlines, the install's key and the device's server record, by the S rules alone: it is
/// what the server must have decided, whatever any answer said (S2, D5).
///
/// One is kept per device, a million of them in a big run, so every field is as narrow
/// as what it holds and the fields are laid out widest first with no padding holes
/// (a test keeps its size). It holds no references, so copying it is a plain
/// copy of bytes. A record changes it through one mutating method where it can (such as
/// `answerArrives`, `lock`, `follow`): each write into the checker's array of them first
/// checks that the array's storage is not shared.
@usableFromInline struct DeviceTruth {
    /// The first fresh lock error since access was last granted.
    var lockedSince: SimTime = LocalData.never
    /// The last fresh verdict on a key check (D1).
    var lastAnswered: SimTime = LocalData.never
    /// In truth, since when every request of this device has been refused with a lock
    /// error without a break, or `never` while it would not be (S2, D5).
    var stopStart: SimTime = LocalData.never
    /// The newest stop that had lasted 30 days (`longStopMs`) when it ended: its start, and
    /// its end (the last moment of it). A lock error served in it may be delivered after
    /// access came back, even after more breaks; only a stop of 30 days makes a verdict
    /// served in it allow a purge (D5), so shorter ones need not be remembered. Two stops
    /// of 30 days cannot both end while one answer is in flight (its timeout is shorter).
    var longStopStart: SimTime = LocalData.never
    var longStopEnd: SimTime = LocalData.never
    /// The newest `servedAt` of a fresh verdict delivered to this device (D4, D9).
    var newestVerdictAt: SimTime = 0
    /// A replica of the SDK's disk, from `store` records.
    var disk = DiskTruth()
    /// The state the SDK last reported.
    var state: SDKState = .unconfigured
    /// The flags below, one bit each (seven bytes saved on a million devices' truth).
    private var bits: UInt8 = 1
    @inline(__always) private func bit(_ b: UInt8) -> Bool { bits & b != 0 }
    @inline(__always) private mutating func set(_ b: UInt8, _ on: Bool) { bits = on ? bits | b : bits & ~b }
    /// The person allows Photos access (D8).
    var photosAllowed: Bool { get { bit(1) } set { set(1, newValue) } }
    /// Access is stopped: a fresh lock error came, and no check has succeeded since (D2–D5).
    var locked: Bool { get { bit(2) } set { set(2, newValue) } }
    /// The data was purged in this lock.
    var purged: Bool { get { bit(4) } set { set(4, newValue) } }
    /// The models were on the device when the lock began (D4).
    var modelsAtLock: Bool { get { bit(8) } set { set(8, newValue) } }
    /// A report upload failed and none has succeeded since (coverage).
    var reportUploadFailed: Bool { get { bit(16) } set { set(16, newValue) } }
    /// D1: a key check was sent since the last run ended (or this process began). A run
    /// seen only by its state may have been started by any launch, activation or background
    /// run since then, so a check sent since any of them counts for it.
    var checkedSinceRun: Bool { get { bit(32) } set { set(32, newValue) } }
    /// A background task was registered when the lock began: an unlock registers one again
    /// (D4: indexing resumes where it stopped, background runs included).
    var backgroundAtLock: Bool { get { bit(128) } set { set(128, newValue) } }
    /// More flags, in the byte that was padding before `key` (the size stays 136 bytes).
    private var moreBits: UInt8 = 0
    @inline(__always) private func more(_ b: UInt8) -> Bool { moreBits & b != 0 }
    @inline(__always) private mutating func setMore(_ b: UInt8, _ on: Bool) { moreBits = on ? moreBits | b : moreBits & ~b }
    /// The app is in the foreground: launched there or become active, and neither sent to
    /// the background nor ended since (D4: an unlock there resumes indexing at once).
    var foreground: Bool { get { more(1) } set { setMore(1, newValue) } }
    /// An indexing run is going: started, and neither ended nor its process gone since.
    var running: Bool { get { more(2) } set { setMore(2, newValue) } }
    /// The last unlock came while another request (a check sent while locked) was still
    /// awaited: an older refusal may still arrive (a coverage point only).
    var unlockedWithRequestInFlight: Bool { get { more(4) } set { setMore(4, newValue) } }
    /// A key check was sent since the last launch, activation or background run: a run that
    /// starts now has checked its key (D1).
    var checkedSinceTrigger: Bool { get { more(8) } set { setMore(8, newValue) } }
    /// A fresh, newest `device_unknown` came and no registration was sent since: the SDK
    /// registers again at the latest at its next call or run (D6).
    var registerOwed: Bool { get { more(16) } set { setMore(16, newValue) } }
    /// The run going was seen only through the state `indexing` (the SDK reports no run
    /// events): it ends when the state leaves `indexing`.
    var runInferred: Bool { get { more(32) } set { setMore(32, newValue) } }
    /// The app process is running (from its `processStarted` and `processKilled` records).
    var processAlive: Bool { get { more(64) } set { setMore(64, newValue) } }
    /// D6: a lock error answered a query or profile request and no call has thrown
    /// `accessRevoked` since (a call may throw on its own answer's lock error).
    var callLockError: Bool { get { more(128) } set { setMore(128, newValue) } }
    /// The key the install carries now (S1). Here, after the one-byte fields, it fills
    /// what would be padding.
    var key: KeyID = 0
    /// D10: an upload can carry only reports queued before it was sent: the two newest
    /// uploads awaited, with the queued-ever count when each was sent. `upload0` is the
    /// newest, awaited until `reportUntilSec` (its timeout).
    var upload0 = (id: UInt32(0), upTo: UInt32(0))
    var upload1 = (id: UInt32(0), upTo: UInt32(0))
    /// The index when the lock began (D4).
    var indexAtLock: UInt32 = 0
    /// Photos in the library: the world's fact at the start, plus `add-photos` (D4).
    var photoCount: UInt32 = 0
    /// Requests awaited: bit i is request `lastSentID - i` of this process (D9).
    ///
    /// The bits only remember which of the last 32 requests were answered, so that the
    /// timeout of an answered one is known to be stale; whether an answer is fresh is judged
    /// by D9 itself (its timeout, a reset or purge since it was sent), with no window of the
    /// SDK's: a timeout of a request further back is taken as fresh (a transient, which
    /// breaks no rule by coming).
    var lastSentID: UInt32 = 0
    var awaiting: UInt32 = 0
    /// Requests with a lower id were sent before the last reset or purge: their answers
    /// are stale (D9).
    var epochStartID: UInt32 = 0
    /// The key check awaited (0: none), until its timeout (`checkUntilSec`), and the newest
    /// upload's timeout (in whole seconds rounded up: a request ends at its timeout, D9).
    var checkInFlight: UInt32 = 0
    var checkUntilSec: UInt32 = 0
    var reportUntilSec: UInt32 = 0
    /// D6: the timeout of the newest registration awaited (whole seconds rounded up; 0:
    /// none), kept apart from `checkInFlight`: a key check sent while a registration is
    /// awaited does not end the wait, and that registration stands for the one a
    /// `device_unknown` asks for. Its answer is known by its timeout (`registerAnswered`).
    var registerUntilSec: UInt32 = 0
    /// The last request the server acted on (coverage of S9: acted, answer lost).
    var lastServedID: UInt32 = 0
    /// D10: run reports ever queued on this disk, and ever settled (confirmed uploaded by a
    /// 200, or dropped).
    var reportsQueuedEver: UInt32 = 0
    var reportsSettled: UInt32 = 0
    /// D10: when the last fresh answer to an upload that was not a 200 came, in whole
    /// seconds rounded up, or 0 (none, or a 200 since): the SDK's stated back-off counts
    /// from it (rounded up, the checker never asks for an upload before the SDK's time).
    var lastUploadFailSec: UInt32 = 0
    /// D10: an upload is owed by this second (a launch, activation or run end came with
    /// reports queued and the back-off run out; rounded up), or 0.
    var uploadDueSec: UInt32 = 0
    /// D4: the library's size when the run going started (photos added later are for the
    /// next run).
    var runPhotos: UInt32 = 0
    /// D7: the credential generation the last `reset()` deleted (0: none): no request but
    /// the reset's own delete may carry it afterwards.
    var deletedGeneration: UInt32 = 0

    /// D5's "30 days in a row", the product's own number.
    static let longStopMs: SimTime = 30 * Ms.day

    /// Whether access had been stopped, in truth, for 30 days in a row when a lock error
    /// was served at `t`: `t` is in the current stop, or in the newest stop of 30 days, at
    /// least 30 days after it began. A stop that ended in the very millisecond `t` still
    /// covers it: the lock error may have been served before the change that ended the stop
    /// (a break and a new stop in that millisecond leave both possible; either allows).
    func stoppedThirtyDays(at t: SimTime) -> Bool {
        if stopStart != LocalData.never, stopStart <= t, t - stopStart >= DeviceTruth.longStopMs { return true }
        return longStopStart != LocalData.never && longStopStart <= t && t <= longStopEnd
            && t - longStopStart >= DeviceTruth.longStopMs
    }

    /// The start of the stop a lock error served at `t` was served in, as far as the
    /// truth remembers (for reports).
    func stopStart(servedAt t: SimTime) -> SimTime {
        if stopStart != LocalData.never, stopStart <= t { return stopStart }
        return longStopStart
    }

    /// The truth at `t`: access is stopped (`refused`) or not. Opens or closes a stop.
    mutating func follow(refused: Bool, at t: SimTime) {
        if refused, stopStart == LocalData.never {
            stopStart = t
        } else if !refused, stopStart != LocalData.never {
            if t - stopStart >= DeviceTruth.longStopMs { longStopStart = stopStart; longStopEnd = t }
            stopStart = LocalData.never
        }
    }

    /// A new app process: nothing is awaited any more, and request ids start again.
    mutating func newProcess() {
        lastSentID = 0
        processEnded()
        epochStartID = 0
        processAlive = true
    }

    /// The app process ended: no run goes on, nothing is in the foreground, nothing sent
    /// is awaited.
    mutating func processEnded() {
        forgetAwaited()
        foreground = false
        running = false
        runInferred = false
        checkedSinceRun = false
        processAlive = false
        uploadDueSec = 0   // D10: a device not opened again owes no upload
        callLockError = false
    }

    /// Nothing sent so far is awaited (a reset, a purge, a dead process).
    mutating func forgetAwaited() {
        epochStartID = lastSentID &+ 1
        awaiting = 0
        checkInFlight = 0
        registerUntilSec = 0
        upload0 = (0, 0)
        upload1 = (0, 0)
    }

    /// `reset()` (D7, D9): it deletes everything, the lock included; what is in flight is stale.
    mutating func reset() {
        forgetAwaited()
        locked = false
        lockedSince = LocalData.never
        purged = false
        // D1's last answered check stays: D7 does not list it among what reset() deletes,
        // so an SDK may keep it (one that forgets it only checks sooner).
        // D10: the reports go with the reset, and with them what was owed for them; D6:
        // the credential the server forgot is gone too.
        uploadDueSec = 0
        lastUploadFailSec = 0
        registerOwed = false
        // D6's excuse for a call's accessRevoked stays: a call answered by a lock error
        // before the reset may still throw on it after (an SDK that awaited a write between).
    }

    @inline(__always)
    mutating func sent(_ id: UInt32, _ kind: RequestKind, at now: SimTime, timeoutMs: SimTime) {
        if id > lastSentID {
            let shift = id - lastSentID
            awaiting = shift >= 32 ? 0 : awaiting << shift
            lastSentID = id
        }
        if lastSentID - id < 32 { awaiting |= 1 << (lastSentID - id) }
        switch kind {
        case .check, .register:
            checkInFlight = id
            checkUntilSec = now.saturatingAdd(timeoutMs).secondsRoundedUp
            if kind == .register { registerUntilSec = checkUntilSec }
        case .runReport:
            reportUntilSec = now.saturatingAdd(timeoutMs).secondsRoundedUp
            upload1 = upload0
            upload0 = (id, reportsQueuedEver)
        default: break
        }
    }

    /// An answer to request `id` arrives: whether it was awaited (sent in this process
    /// since the last reset or purge, not answered before, as far as the last 32 ids tell),
    /// and for an upload how far into the queue it could carry (if known). Neither is
    /// awaited any more.
    @inline(__always)
    mutating func answerArrives(_ id: UInt32, _ kind: RequestKind) -> (awaited: Bool, carried: UInt32?) {
        let awaited = take(id)
        return (awaited, kind == .runReport ? takeUpload(id) : nil)
    }

    /// Whether the key check sent last is still awaited at `now` (before its timeout).
    func checkAwaited(at now: SimTime) -> Bool {
        checkInFlight != 0 && now <= SimTime(checkUntilSec) &* 1000   // no division per step
    }

    /// Whether a registration is still awaited at `now` (sent, not answered, before its
    /// timeout), whatever key check went out after it (D6).
    func registerAwaited(at now: SimTime) -> Bool {
        registerUntilSec != 0 && now <= SimTime(registerUntilSec) &* 1000
    }

    /// The answer to a registration sent at `sentAt` arrived: if it is the newest one
    /// (the same timeout, to the second), no registration is awaited any more.
    mutating func registerAnswered(sentAt: SimTime, timeoutMs: SimTime) {
        if registerUntilSec == sentAt.saturatingAdd(timeoutMs).secondsRoundedUp { registerUntilSec = 0 }
    }

    /// Whether an upload may still be under way at `now`: the one sent last before its
    /// timeout, or the one before it, not yet answered (its timeout is not kept; it is
    /// forgotten when its answer or timeout arrives). Two uploads may be in flight, and
    /// the newer one's 200 may come first.
    func reportAwaited(at now: SimTime) -> Bool {
        (upload0.id != 0 && now <= SimTime(reportUntilSec) &* 1000) || upload1.id != 0
    }

    /// How far into the queue the awaited upload `id` could carry, if it is known; forgets it.
    @inline(__always)
    mutating func takeUpload(_ id: UInt32) -> UInt32? {
        if upload0.id == id, id != 0 {
            // The disk counts reports, it does not name them: once the newer upload is
            // answered first, the older one may settle what either carried.
            if upload1.id != 0 { upload1.upTo = max(upload1.upTo, upload0.upTo) }
            defer { upload0 = (0, 0) }
            return upload0.upTo
        }
        if upload1.id == id, id != 0 { defer { upload1 = (0, 0) }; return upload1.upTo }
        return nil
    }



    /// Whether request `id` is awaited; it no longer is afterwards.
    @inline(__always)
    mutating func take(_ id: UInt32) -> Bool {
        if checkInFlight == id { checkInFlight = 0 }
        guard id >= epochStartID, id <= lastSentID, id != 0 else { return false }
        guard lastSentID - id < 32 else { return true }   // further back: not known answered
        let bit: UInt32 = 1 << (lastSentID - id)
        defer { awaiting &= ~bit }
        return awaiting & bit != 0
    }

    /// A fresh lock error while access was granted: access stops now (D2, D3), and what
    /// the disk holds is what an unlock must resume with (D4).
    mutating func lock(at now: SimTime) {
        locked = true
        unlockedWithRequestInFlight = false
        lockedSince = now
        purged = false
        indexAtLock = disk.indexedCount
        modelsAtLock = disk.modelsPresent
        backgroundAtLock = disk.backgroundScheduled
    }

    /// A fresh check succeeded while access was stopped: access is back (D4).
    mutating func unlock() {
        locked = false
        lockedSince = LocalData.never
        purged = false
    }

    /// Follows a write or delete on the disk: the replica, and the run reports queued and
    /// settled (D10). A purge forgets what was awaited (D9). Inlined into `store`, its one
    /// caller, with `DiskTruth.apply`: as two calls a write, they would cost on every store.
    @inline(__always)
    mutating func follow(_ op: StoreOp) {
        switch op {
        case .queueReport: reportsQueuedEver &+= 1
        case .reportsUploaded(let n):
            reportUploadFailed = false
            reportsSettled &+= UInt32(min(n, disk.reportsQueued))
        case .dropReports: reportsSettled = reportsQueuedEver
        case .reportsRemoved(let n): reportsSettled &+= UInt32(min(n, disk.reportsQueued))
        case .reportQueued: reportsQueuedEver &+= 1
        case .reportLeft: if disk.reportsQueued > 0 { reportsSettled &+= 1 }
        case .markPurged: forgetAwaited()
        default: break
        }
        disk.apply(op)
    }
}
