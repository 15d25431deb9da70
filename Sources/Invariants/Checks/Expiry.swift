import SimKit

/// P5: a background run whose time ran out (`background-limit`), judged from the fault's
/// records: what it wrote stays, and the next run resumes from it (D4). Whatever way the
/// SDK ends its run (at once, after a chunk, or not at all and killed after the grace), it
/// sets no written progress back and deletes nothing when its time is up, indexes no photo
/// again and downloads no model or place data again afterwards, and keeps its background
/// task registered while photos are left.
extension InvariantChecker {
    /// The checker's own truth of the fault, per device (`InvariantChecker.expiry`): empty
    /// until a limit record, so a run without the fault reads nothing of it.
    struct ExpiryTruth: Sendable, Equatable {
        /// The photos the disk replica held when the device's current run started.
        var indexAtRunStart: UInt32 = 0
        /// The current run was asked to stop (its time ran out).
        var expiredDuringRun = false
        /// A run was asked to stop, and no run has ended on its own since: what the SDK
        /// does to its progress until then is the expiry's to answer for.
        var sinceExpiry = false
        /// The background task was registered when the run was asked to stop.
        var taskAtExpiry = false
    }

    /// A record of the `background-limit` fault of device `d`'s.
    mutating func backgroundLimitRecord(_ d: DeviceIndex, _ r: BackgroundLimit.Record) {
        if expiry.isEmpty { expiry = Array(repeating: ExpiryTruth(), count: devices.count) }
        let i = Int(d)
        guard i < expiry.count else { return }
        switch r {
        case .limit: break
        case .expiring:
            let dev = devices[i]
            if dev.running {
                expiry[i].expiredDuringRun = true
                if dev.disk.indexedCount > expiry[i].indexAtRunStart, dev.disk.indexedCount < dev.photoCount { hit(.runExpiredMidChunk) }
            }
            expiry[i].sinceExpiry = true
            expiry[i].taskAtExpiry = dev.disk.backgroundScheduled
        case .killed:
            expiry[i].sinceExpiry = true
        }
    }

    /// A run starts (`runStarted`): the index it starts from.
    @inline(__always)
    mutating func expiryRunStarted(_ i: Int) {
        guard i < expiry.count else { return }
        expiry[i].indexAtRunStart = devices[i].disk.indexedCount
        expiry[i].expiredDuringRun = false
    }

    /// Whether device `i`'s progress is the expiry's to answer for (a run was asked to stop
    /// and none has ended on its own since).
    @inline(__always)
    func sinceExpiry(_ i: Int) -> Bool { i < expiry.count && expiry[i].sinceExpiry }

    /// Whether device `i`'s current run was asked to stop: its end is no run ending on its own.
    @inline(__always)
    func runExpired(_ i: Int) -> Bool { i < expiry.count && expiry[i].expiredDuringRun }

    /// A run ended on its own after an expiry: the next run resumed, the expiry's part is over.
    mutating func expiryRunCompleted(_ i: Int) {
        guard i < expiry.count, !expiry[i].expiredDuringRun else { return }
        expiry[i].sinceExpiry = false
    }

    /// The end of the step in which the OS asked device `d`'s run to stop: the background
    /// task it had is still registered while photos are left and access is not stopped
    /// (the next run resumes, D4).
    mutating func expiryStepEnds(_ d: DeviceIndex) {
        let i = Int(d)
        guard i < expiry.count, expiry[i].taskAtExpiry else { return }
        let dev = devices[i]
        if !dev.disk.backgroundScheduled, !dev.locked, !dev.disk.locked, !InvariantChecker.revoked(dev.state), dev.photosAllowed,
           dev.disk.indexedCount < dev.photoCount {
            violate(.backgroundExpiryKeepsProgress, d, "cancelled its background task when its background time ran out, with \(dev.photoCount - dev.disk.indexedCount) of \(dev.photoCount) photos not indexed: no background run will resume them")
        }
    }

    /// Whether the step is the one in which the OS asked the run to stop.
    var isExpiryStep: Bool {
        if case .lifecycle(.backgroundExpiring) = step.input { return true }
        return false
    }
}
