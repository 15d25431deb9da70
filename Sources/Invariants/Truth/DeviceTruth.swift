import SimKit

/// What the checkers know of one device, from the trace alone: what the SDK reported and
/// wrote (its state and a replica of its disk), and the ground truth the rules are
/// judged by (whether access is stopped, since when, which requests are awaited).
struct DeviceTruth {
    // Fields are laid out widest first (8-byte, then 4-byte, then 1-byte), so the value
    // has no padding holes: one is kept per device, a million of them in a big run.

    /// A replica of the SDK's disk, from `store` records.
    var disk = LocalData()
    /// The first fresh lock error since access was last granted.
    var lockedSince: SimTime = LocalData.never
    /// The last fresh verdict on a key check (D1).
    var lastAnswered: SimTime = LocalData.never
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
    /// The state the SDK last reported.
    var state: SDKState = .unconfigured
    var hasProcess = false
    var foreground = false
    var photosAllowed = true
    /// Access is stopped: a fresh lock error came, and no check has succeeded since (D2–D5).
    var locked = false
    /// The data was purged in this lock.
    var purged = false
    /// The models were on the device when the lock began (D4).
    var modelsAtLock = false
    /// A report upload failed and none has succeeded since (coverage).
    var reportUploadFailed = false

    /// A new app process: nothing is awaited any more.
    mutating func newProcess(foreground: Bool) {
        hasProcess = true
        self.foreground = foreground
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

    mutating func sent(_ id: UInt32, _ kind: RequestKind) {
        if id > lastSentID {
            let shift = id - lastSentID
            awaiting = shift >= 32 ? 0 : awaiting << shift
            lastSentID = id
        }
        if lastSentID - id < 32 { awaiting |= 1 << (lastSentID - id) }
        if kind == .check || kind == .register { checkInFlight = id }
        if kind == .runReport {
            reportInFlight = id
            upload1 = upload0
            upload0 = (id, reportsQueuedEver)
        }
    }

    /// How far into the queue the awaited upload `id` could carry, if it is known; forgets it.
    mutating func takeUpload(_ id: UInt32) -> UInt32? {
        if upload0.id == id, id != 0 { defer { upload0 = (0, 0) }; return upload0.upTo }
        if upload1.id == id, id != 0 { defer { upload1 = (0, 0) }; return upload1.upTo }
        return nil
    }

    /// Whether request `id` is awaited; it no longer is afterwards.
    mutating func take(_ id: UInt32) -> Bool {
        if checkInFlight == id { checkInFlight = 0 }
        if reportInFlight == id { reportInFlight = 0 }
        guard id <= lastSentID, lastSentID - id < 32 else { return false }
        let bit: UInt32 = 1 << (lastSentID - id)
        defer { awaiting &= ~bit }
        return awaiting & bit != 0
    }
}
