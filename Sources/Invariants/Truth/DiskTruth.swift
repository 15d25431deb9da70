import SimKit

/// The checkers' replica of the SDK's disk: only what a rule reads, replayed from the
/// `store` records by the checkers' own reading of each `StoreOp` (not `LocalData.apply`).
/// One is kept per device, a million of them in a big run, and one is copied at the start
/// of each step (`StepTruth.diskBefore`), so it is kept small: 25 bytes, its four flags
/// packed in one byte.
struct DiskTruth {
    /// When access stopped (D3), or `LocalData.never`; kept by later lock errors.
    var lockedSince: SimTime = LocalData.never
    /// Photos indexed so far: the index is photos `0..<indexedCount`.
    var indexedCount: UInt32 = 0
    /// Run reports waiting to be uploaded (D10).
    var reportsQueued: UInt32 = 0
    /// The generation of the device credential on the disk, 0 for none (D7: reset deletes
    /// it). S2.5 refuses a mismatch only for the live record's credential: with an older
    /// one the server answers `device_unknown`, which is no lock error.
    var credentialGeneration: UInt32 = 0
    /// The generation of the credential a reset still has to delete on the server, 0 for
    /// none (D7).
    var pendingResetGeneration: UInt32 = 0
    /// The flags below, one bit each.
    private var bits: UInt8 = 0

    /// The models are on the device.
    var modelsPresent: Bool { get { bit(1) } set { set(1, newValue) } }
    /// The place data is on the device.
    var placeDataPresent: Bool { get { bit(2) } set { set(2, newValue) } }
    /// Access is stopped on disk (D3).
    var locked: Bool { get { bit(4) } set { set(4, newValue) } }
    /// A background indexing task is registered with the OS (D3: not while locked).
    var backgroundScheduled: Bool { get { bit(8) } set { set(8, newValue) } }
    /// The device credential is on the disk (D7: reset deletes it).
    var hasCredential: Bool { credentialGeneration != 0 }
    /// A reset's server-side delete is still pending (D7).
    var hasPendingReset: Bool { pendingResetGeneration != 0 }

    @inline(__always) private func bit(_ b: UInt8) -> Bool { bits & b != 0 }
    @inline(__always) private mutating func set(_ b: UInt8, _ on: Bool) { bits = on ? bits | b : bits & ~b }

    /// Applies one storage operation as the SDK's disk does (SPEC §4), for the fields kept.
    /// Inlined into `DeviceTruth.follow`, its one caller.
    @inline(__always)
    mutating func apply(_ op: StoreOp) {
        switch op {
        case .indexPhotos(let from, let count): indexedCount = from &+ UInt32(count)
        case .deleteIndex: indexedCount = 0
        case .saveModels: modelsPresent = true
        case .deleteModels: modelsPresent = false
        case .savePlaceData: placeDataPresent = true
        case .deletePlaceData: placeDataPresent = false
        case .setCredential(let c): credentialGeneration = c.generation
        case .deleteCredential: credentialGeneration = 0
        case .queueReport: reportsQueued += 1   // traps on overflow, as the SDK's disk does
        case .reportsUploaded(let n): reportsQueued -= min(reportsQueued, n)
        case .dropReports: reportsQueued = 0
        case .reportsRemoved(let n): reportsQueued -= min(reportsQueued, n)
        case .reportQueued: reportsQueued += 1
        case .reportLeft: reportsQueued -= min(reportsQueued, 1)
        case .lock: locked = true
        case .unlock: locked = false
        case .setLockedSince(let t): lockedSince = t
        case .setPendingReset(let c): pendingResetGeneration = c.isNone ? 0 : c.generation
        case .scheduleBackground: backgroundScheduled = true
        case .cancelBackground: backgroundScheduled = false
        // No rule reads these off the disk: the deletes a reset owes are the server truth's
        // (`InvariantChecker.owedResets`), judged by whether the server still holds them.
        case .markPurged, .setLastAnsweredCheck, .setLastCheckWallOffset, .setEarlierPendingReset: break
        }
    }
}
