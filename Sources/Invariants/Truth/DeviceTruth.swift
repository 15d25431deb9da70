import SimKit

/// What the checkers know of one device, from the trace alone: what the SDK reported and
/// wrote (its state and a replica of its disk), and the ground truth the rules are
/// judged by (whether access is stopped, since when, which requests are awaited).
///
/// One is kept per device, a million of them in a big run, so every field is as narrow
/// as what it holds and the fields are laid out widest first with no padding holes:
/// 88 bytes (a test keeps it there). It holds no references, so copying it is a plain
/// copy of bytes. A record changes it through one mutating method where it can (such as
/// `answerArrives`, `lock`, `follow`): each write into the checker's array of them first
/// checks that the array's storage is not shared.
@usableFromInline struct DeviceTruth {
    /// The first fresh lock error since access was last granted.
    var lockedSince: SimTime = LocalData.never
    /// The last fresh verdict on a key check (D1).
    var lastAnswered: SimTime = LocalData.never
    /// A replica of the SDK's disk, from `store` records.
    var disk = DiskTruth()
    /// The state the SDK last reported.
    var state: SDKState = .unconfigured
    /// The person allows Photos access (D8).
    var photosAllowed = true
    /// Access is stopped: a fresh lock error came, and no check has succeeded since (D2–D5).
    var locked = false
    /// The data was purged in this lock.
    var purged = false
    /// The models were on the device when the lock began (D4).
    var modelsAtLock = false
    /// A report upload failed and none has succeeded since (coverage).
    var reportUploadFailed = false
    /// D10: an upload can carry only reports queued before it was sent: the two newest
    /// uploads awaited, with the queued-ever count when each was sent.
    var upload0 = (id: UInt32(0), upTo: UInt32(0))
    var upload1 = (id: UInt32(0), upTo: UInt32(0))
    /// The index when the lock began (D4).
    var indexAtLock: UInt32 = 0
    /// Requests awaited: bit i is request `lastSentID - i` of this process (D9).
    var lastSentID: UInt32 = 0
    var awaiting: UInt32 = 0
    /// The key check awaited, and the run-report upload awaited (0: none).
    var checkInFlight: UInt32 = 0
    var reportInFlight: UInt32 = 0
    /// The last request the server acted on (coverage of S9: acted, answer lost).
    var lastServedID: UInt32 = 0
    /// D10: run reports ever queued on this disk, and ever settled (confirmed uploaded by a
    /// 200, or dropped).
    var reportsQueuedEver: UInt32 = 0
    var reportsSettled: UInt32 = 0

    /// A new app process: nothing is awaited any more, and request ids start again.
    mutating func newProcess() {
        lastSentID = 0
        forgetAwaited()
    }

    mutating func forgetAwaited() {
        awaiting = 0
        checkInFlight = 0
        reportInFlight = 0
        upload0 = (0, 0)
        upload1 = (0, 0)
    }

    /// `reset()` (D7, D9): it deletes everything, the lock included; what is in flight is stale.
    mutating func reset() {
        forgetAwaited()
        locked = false
        lockedSince = LocalData.never
        purged = false
        lastAnswered = LocalData.never
    }

    @inline(__always)
    mutating func sent(_ id: UInt32, _ kind: RequestKind) {
        if id > lastSentID {
            let shift = id - lastSentID
            awaiting = shift >= 32 ? 0 : awaiting << shift
            lastSentID = id
        }
        if lastSentID - id < 32 { awaiting |= 1 << (lastSentID - id) }
        // A check or upload 32 ids back is abandoned, as the SDK's window abandons it (D9):
        // no longer awaited, though its stale answer or timeout may never come.
        if checkInFlight != 0, lastSentID - checkInFlight >= 32 { checkInFlight = 0 }
        if reportInFlight != 0, lastSentID - reportInFlight >= 32 { reportInFlight = 0 }
        switch kind {
        case .check, .register: checkInFlight = id
        case .runReport:
            reportInFlight = id
            upload1 = upload0
            upload0 = (id, reportsQueuedEver)
        default: break
        }
    }

    /// An answer to request `id` arrives: whether it was awaited, and for an upload how far
    /// into the queue it could carry (if known). Neither is awaited any more.
    @inline(__always)
    mutating func answerArrives(_ id: UInt32, _ kind: RequestKind) -> (awaited: Bool, carried: UInt32?) {
        let awaited = take(id)
        return (awaited, kind == .runReport ? takeUpload(id) : nil)
    }

    /// How far into the queue the awaited upload `id` could carry, if it is known; forgets it.
    @inline(__always)
    mutating func takeUpload(_ id: UInt32) -> UInt32? {
        if upload0.id == id, id != 0 { defer { upload0 = (0, 0) }; return upload0.upTo }
        if upload1.id == id, id != 0 { defer { upload1 = (0, 0) }; return upload1.upTo }
        return nil
    }

    /// Whether request `id` is awaited; it no longer is afterwards.
    @inline(__always)
    mutating func take(_ id: UInt32) -> Bool {
        if checkInFlight == id { checkInFlight = 0 }
        if reportInFlight == id { reportInFlight = 0 }
        guard id <= lastSentID, lastSentID - id < 32 else { return false }
        let bit: UInt32 = 1 << (lastSentID - id)
        defer { awaiting &= ~bit }
        return awaiting & bit != 0
    }

    /// A fresh lock error while access was granted: access stops now (D2, D3), and what
    /// the disk holds is what an unlock must resume with (D4).
    mutating func lock(at now: SimTime) {
        locked = true
        lockedSince = now
        purged = false
        indexAtLock = disk.indexedCount
        modelsAtLock = disk.modelsPresent
    }

    /// A fresh check succeeded while access was stopped: access is back (D4).
    mutating func unlock() {
        locked = false
        lockedSince = LocalData.never
        purged = false
    }

    /// Follows a write or delete on the disk: the replica, and the run reports queued and
    /// settled (D10). A purge forgets what was awaited (D9). Inlined into `store`, its one
    /// caller, with `DiskTruth.apply`: two calls a write cost some 30 instructions.
    @inline(__always)
    mutating func follow(_ op: StoreOp) {
        switch op {
        case .queueReport: reportsQueuedEver &+= 1
        case .reportsUploaded(let n):
            reportUploadFailed = false
            reportsSettled &+= UInt32(min(n, disk.reportsQueued))
        case .dropReports: reportsSettled = reportsQueuedEver
        case .markPurged: forgetAwaited()
        default: break
        }
        disk.apply(op)
    }
}
