/// What the SDK keeps on the device's disk. It survives the app process (a cold launch
/// reads it back) and only changes through `StoreOp`s, which the engine applies and
/// traces, so the invariant checkers see every write and delete.
public struct LocalData: Sendable, Equatable {
    // Widest fields first, so the struct packs into 56 bytes (it sits in every device).
    /// When access stopped (D3), or `LocalData.never`; kept by later lock errors.
    public var lockedSince: SimTime = LocalData.never
    /// The last check the server answered with a verdict (D1), or `LocalData.never`.
    public var lastAnsweredCheck: SimTime = LocalData.never
    /// How far the phone's wall clock was from the true time when that check was answered,
    /// in milliseconds (P2; `SDKContext.wallClockOffsetMs`): with `lastAnsweredCheck`, what
    /// the phone's clock read then, so that D1 can be kept by the phone's clock too (a clock
    /// set back past the check). Written only when it changes: 0 in a world whose clocks
    /// are true, which then writes nothing more than before.
    public var lastCheckWallOffsetMs: Int64 = 0
    /// The device credential from the server, or `.none`.
    public var credential: Credential = .none
    /// A reset whose server-side delete has not succeeded yet (D7): the old credential.
    public var pendingReset: Credential = .none
    /// Photos indexed so far: the library only grows, so the index is photos `0..<indexedCount`.
    public var indexedCount: UInt32 = 0
    /// Run reports waiting to be uploaded (D10).
    public var reportsQueued: UInt32 = 0
    /// A delete still owed from an earlier `reset()` when a later one named a newer
    /// registration (D7: each is retried until it succeeds): the generation of its
    /// credential (of this device, as `pendingReset`'s), or 0. Set only while
    /// `pendingReset` is, and written by the reference SDK only in that case.
    public var earlierPendingResetGeneration: UInt32 = 0
    /// Model downloads saved since the models were last deleted.
    public var modelDownloads: UInt16 = 0
    /// The flags below, one bit each, so that the struct stays 56 bytes.
    @usableFromInline var flags: UInt8 = 0
    public var modelsPresent: Bool { get { flag(1) } set { setFlag(1, newValue) } }
    public var placeDataPresent: Bool { get { flag(2) } set { setFlag(2, newValue) } }
    /// Access is stopped (D3): the SDK is locked, `.failed(.accessRevoked)`.
    public var locked: Bool { get { flag(4) } set { setFlag(4, newValue) } }
    /// Access stopped and the data was deleted after 30 days (D5); cleared when access returns.
    public var purged: Bool { get { flag(8) } set { setFlag(8, newValue) } }
    /// Whether the SDK has a background indexing task registered with the OS.
    public var backgroundScheduled: Bool { get { flag(16) } set { setFlag(16, newValue) } }
    /// Pads the size to the stride, 56 bytes; always 0. A struct with a ragged end is
    /// copied in overlapping 16-byte moves, which defeat store forwarding (see `CopyAlignmentTests`).
    var padding: UInt8 = 0

    @inlinable @inline(__always) func flag(_ b: UInt8) -> Bool { flags & b != 0 }
    @inlinable @inline(__always) mutating func setFlag(_ b: UInt8, _ on: Bool) { flags = on ? flags | b : flags & ~b }

    /// The earlier delete still owed as a credential (`earlierPendingResetGeneration`), or `.none`.
    @inlinable public var earlierPendingReset: Credential {
        earlierPendingResetGeneration == 0 || pendingReset.isNone ? .none
            : Credential(device: pendingReset.device, generation: earlierPendingResetGeneration)
    }

    /// "No such time" for the optional times above, without an Optional's extra bytes.
    public static let never: SimTime = .max

    public init() {}

    @inlinable public var isLocked: Bool { locked }
    /// True when nothing that `reset()` must delete is left (D7).
    public var isEmpty: Bool {
        indexedCount == 0 && !modelsPresent && !placeDataPresent && reportsQueued == 0 && credential.isNone
    }

    /// Applies one storage operation.
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    public mutating func apply(_ op: StoreOp) {
        switch op {
        case .indexPhotos(let from, let count):
            indexedCount = from &+ UInt32(count)
        case .deleteIndex: indexedCount = 0
        case .saveModels: modelsPresent = true; modelDownloads &+= 1
        case .deleteModels: modelsPresent = false; modelDownloads = 0
        case .savePlaceData: placeDataPresent = true
        case .deletePlaceData: placeDataPresent = false
        case .setCredential(let c): credential = c
        case .deleteCredential: credential = .none
        case .queueReport: reportsQueued += 1   // a report needs an event: the event budget bounds it
        case .reportsUploaded(let n): reportsQueued -= min(reportsQueued, n)
        case .dropReports: reportsQueued = 0
        case .reportsRemoved(let n): reportsQueued -= min(reportsQueued, n)
        case .reportQueued: reportsQueued += 1
        case .reportLeft: reportsQueued -= min(reportsQueued, 1)
        case .lock: locked = true
        case .unlock: locked = false; purged = false
        case .setLockedSince(let t): lockedSince = t
        case .markPurged: purged = true
        case .setLastAnsweredCheck(let t): lastAnsweredCheck = t
        case .setLastCheckWallOffset(let ms): lastCheckWallOffsetMs = ms
        case .setPendingReset(let c): pendingReset = c
        case .setEarlierPendingReset(let g): earlierPendingResetGeneration = g
        case .scheduleBackground: backgroundScheduled = true
        case .cancelBackground: backgroundScheduled = false
        }
    }
}

/// One write or delete on the device's disk.
public enum StoreOp: Sendable, Equatable {
    /// Photos `from..<from+count` were indexed; `from` must equal the index's size.
    case indexPhotos(from: UInt32, count: UInt16)
    case deleteIndex
    case saveModels, deleteModels
    case savePlaceData, deletePlaceData
    case setCredential(Credential), deleteCredential
    case queueReport
    case reportsUploaded(UInt32)
    case dropReports
    /// `n` reports left the queue, said by an SDK that shows its storage through a mapping
    /// (it does not say why): the checkers judge them received (a 200 to an upload that
    /// carried them) or deleted by `reset()`, or else lost (D10).
    case reportsRemoved(UInt32)
    /// A run report the SDK names (its own id) joined the queue (D10); for an SDK whose
    /// uploads name the reports they carry (`Effect.carries`).
    case reportQueued(id: UInt64)
    /// The named report left the queue: the checkers judge it received (a 200 to an upload
    /// that carried it) or deleted by `reset()`, or else lost (D10).
    case reportLeft(id: UInt64)
    /// Access stopped (D3).
    case lock
    /// Access is back: the lock (and the purged mark) is lifted; `lockedSince` is separate.
    case unlock
    /// `LocalData.never` clears it.
    case setLockedSince(SimTime)
    case markPurged
    case setLastAnsweredCheck(SimTime)
    /// The phone's wall-clock offset (ms from the true time) when the last answered check
    /// was answered (P2): written beside `setLastAnsweredCheck` when it differs from the one kept.
    case setLastCheckWallOffset(Int64)
    /// `.none` clears it once the server has deleted the record.
    case setPendingReset(Credential)
    /// An earlier delete still owed (`LocalData.earlierPendingResetGeneration`); 0 clears it.
    case setEarlierPendingReset(generation: UInt32)
    case scheduleBackground, cancelBackground
}
