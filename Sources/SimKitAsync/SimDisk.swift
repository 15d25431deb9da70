import SimKit

/// What the checkers need to know of what an SDK keeps on the phone, read from the SDK's
/// own files by the team's read-only mapping (`AsyncSDKHarness.observe`): index progress,
/// models, place data, the credential, the lock, queued run reports, a reset still owed to
/// the server. What the checkers have no field for (a verdict watermark, report
/// identities, a second pending reset) stays in the SDK's own data.
public struct DiskObservation: Sendable, Equatable {
    /// Photos indexed: the index is photos `0..<indexedPhotos` (the library only grows).
    public var indexedPhotos: UInt32
    public var modelsPresent: Bool
    public var placeDataPresent: Bool
    /// The device credential the SDK holds, or `.none`.
    public var credential: Credential
    /// Access stopped (D3).
    public var locked: Bool
    /// The server time of the first lock error (D3), or nil (or an SDK that keeps none:
    /// `SDKStatement.recordsLockedSince = false`).
    public var lockedSince: SimTime?
    /// The data was deleted after 30 days of stop (D5).
    public var purged: Bool
    /// Run reports waiting to be uploaded (D10).
    public var queuedReports: UInt32
    /// The credential of a reset whose server-side delete has not succeeded (D7), or `.none`.
    public var pendingReset: Credential
    /// The SDK's own time of its last answered key check (D1), or nil.
    public var lastAnsweredCheck: SimTime?

    public init(indexedPhotos: UInt32 = 0, modelsPresent: Bool = false, placeDataPresent: Bool = false,
                credential: Credential = .none, locked: Bool = false, lockedSince: SimTime? = nil, purged: Bool = false,
                queuedReports: UInt32 = 0, pendingReset: Credential = .none, lastAnsweredCheck: SimTime? = nil) {
        self.indexedPhotos = indexedPhotos; self.modelsPresent = modelsPresent; self.placeDataPresent = placeDataPresent
        self.credential = credential; self.locked = locked; self.lockedSince = lockedSince; self.purged = purged
        self.queuedReports = queuedReports; self.pendingReset = pendingReset; self.lastAnsweredCheck = lastAnsweredCheck
    }

    /// The store operations that take the checkers' view of the disk from `old` to `new`,
    /// in the order the checkers judge them: a lift of the lock first; then the reset
    /// owed; the lock's time and the lock; deletions; additions; the purged mark last (after
    /// the deletions it stands for). Report counts say only how many joined or left the
    /// queue (`reportsRemoved`: the checkers judge why they left, D10).
    public static func changes(from old: DiskObservation, to new: DiskObservation) -> [StoreOp] {
        var ops: [StoreOp] = []
        if (old.locked && !new.locked) || (old.purged && !new.purged) { ops.append(.unlock) }
        if old.pendingReset != new.pendingReset { ops.append(.setPendingReset(new.pendingReset)) }
        if old.lockedSince != new.lockedSince { ops.append(.setLockedSince(new.lockedSince ?? LocalData.never)) }
        if !old.locked && new.locked { ops.append(.lock) }
        // Deletions.
        if new.indexedPhotos < old.indexedPhotos { ops.append(.deleteIndex) }
        if old.modelsPresent && !new.modelsPresent { ops.append(.deleteModels) }
        if old.placeDataPresent && !new.placeDataPresent { ops.append(.deletePlaceData) }
        if new.queuedReports < old.queuedReports { ops.append(.reportsRemoved(old.queuedReports - new.queuedReports)) }
        if !old.credential.isNone && new.credential.isNone { ops.append(.deleteCredential) }
        // Additions.
        if !new.credential.isNone && new.credential != old.credential { ops.append(.setCredential(new.credential)) }
        if !old.modelsPresent && new.modelsPresent { ops.append(.saveModels) }
        if !old.placeDataPresent && new.placeDataPresent { ops.append(.savePlaceData) }
        var from = new.indexedPhotos < old.indexedPhotos ? 0 : old.indexedPhotos
        while from < new.indexedPhotos {   // bounded: each piece adds up to 65,535 photos
            let count = UInt16(min(UInt32(UInt16.max), new.indexedPhotos - from))
            ops.append(.indexPhotos(from: from, count: count))
            from += UInt32(count)
        }
        if new.queuedReports > old.queuedReports {
            for _ in 0..<min(new.queuedReports - old.queuedReports, 4096) { ops.append(.queueReport) }
        }
        if old.lastAnsweredCheck != new.lastAnsweredCheck { ops.append(.setLastAnsweredCheck(new.lastAnsweredCheck ?? LocalData.never)) }
        if !old.purged && new.purged { ops.append(.markPurged) }
        return ops
    }
}

/// The files on one device's disk, by name: what the SDK wrote through `SimDisk`.
public struct SimDiskContents: Sendable, Equatable {
    var files: [String: [UInt8]] = [:]
    public init() {}
    public init(_ files: [String: [UInt8]]) { self.files = files }
    public subscript(name: String) -> [UInt8]? {
        get { files[name] }
        set { files[name] = newValue }
    }
}

/// The disk port for an SDK that keeps its own files (one state blob, files, a key-value
/// store): named byte arrays that survive the app process, each write whole and durable.
/// After every write SimKit reads the contents through the harness's mapping
/// (`AsyncSDKHarness.observe`) and traces what changed for the checkers, in SimKit's terms;
/// the mapping only reads, and nothing is translated by hand.
///
/// What a write of `SimDisk` throws besides the process's death.
public enum SimDiskError: Error, Equatable {
    /// The disk is full (P3): nothing was written (`NSFileWriteOutOfSpaceError`, `ENOSPC`).
    case full
    /// The phone restarted and has not been unlocked yet (P4): protected files can be
    /// neither read nor written (`NSFileReadNoPermissionError` under data protection). This
    /// is not "no file".
    case locked
}

/// determinism: the files are looked up by name, never iterated.
public final class SimDisk: @unchecked Sendable {
    unowned let device: SimDevice
    init(device: SimDevice) { self.device = device }

    /// The file named `name`, or nil when there is none. Before the first unlock after a
    /// restart (P4, `SimDevice.dataLocked`) it throws `SimDiskError.locked`.
    public func read(_ name: String) throws -> [UInt8]? {
        if device.dead { throw SimDevice.processDied() }
        if device.dataLocked { throw SimDiskError.locked }
        return device.diskSlot.contents.files[name]
    }

    /// Writes `bytes` as the whole file `name`. On a full disk (P3, `SimDevice.diskFull`)
    /// a write that needs room throws `SimDiskError.full` (`SimDevice.refusedForRoom`); deletions
    /// and the small records rewritten in place (a lock, a date, a credential) succeed, as
    /// the engine's rule for store changes says (docs/semantics.md). Before the first unlock
    /// after a restart (P4) every write throws `SimDiskError.locked`. A write that throws
    /// leaves the file as it was.
    public func write(_ name: String, _ bytes: [UInt8]) throws {
        if device.dead { throw SimDevice.processDied() }
        if device.dataLocked { throw SimDiskError.locked }
        if device.diskFull, device.refusedForRoom(name, bytes) { throw SimDiskError.full }
        let before = device.diskSlot
        device.diskSlot.contents.files[name] = bytes
        device.observeDisk(before: before)
    }

    /// Removes the file `name` (nothing when there is none).
    public func remove(_ name: String) throws {
        if device.dead { throw SimDevice.processDied() }
        if device.dataLocked { throw SimDiskError.locked }
        let before = device.diskSlot
        guard device.diskSlot.contents.files.removeValue(forKey: name) != nil else { return }
        device.observeDisk(before: before)
    }
}

/// One device's files and the checkers' view of them, kept by the loop for the world
/// running now (they outlive the app process, as a disk does).
struct DiskSlot {
    var contents = SimDiskContents()
    var seen = DiskObservation()
}

/// A write of the step through `SimDisk` that the checkers saw: where its operations start
/// in the step's effects, and the disk before it.
struct JournalEntry {
    var effect: Int
    var before: DiskSlot
}

extension SimDevice {
    var diskSlot: DiskSlot {
        get { SimLoop.shared.disks[index] ?? DiskSlot() }
        set { SimLoop.shared.disks[index] = newValue }
    }

    /// S6: a clone that copied a genuine install's storage starts its process holding the
    /// credential the world copied to it (`credential`, the world's replica of its disk),
    /// which its own files do not hold yet: the harness places it there (`place`), and the
    /// checkers' view takes it as already traced (the world traced the copy).
    func placeCopiedCredential(_ credential: Credential, _ place: (Credential, inout SimDiskContents) -> Bool) {
        guard let observe = diskMapping, !credential.isNone else { return }
        var slot = diskSlot
        guard slot.seen.credential != credential, place(credential, &slot.contents),
              let now = observe(slot.contents), now.credential == credential else { return }
        slot.seen.credential = credential
        if slot.seen != now { for op in DiskObservation.changes(from: slot.seen, to: now) { write(op) } }
        slot.seen = now
        diskSlot = slot
    }

    /// Whether a full disk refuses writing `bytes` as the file `name` (P3): through the
    /// harness's mapping, whether it makes a change that takes room (`StoreOp.takesRoom`: the
    /// index growing, models or place data saved, a report queued), the rule the engine
    /// applies to a core's store changes, so the two never disagree; those changes are then
    /// traced as failed writes, as a core's refused `store` effects are (a run's report that
    /// could not be queued is seen). Without a mapping: whether the file grows.
    func refusedForRoom(_ name: String, _ bytes: [UInt8]) -> Bool {
        let slot = diskSlot
        var after = slot.contents
        after.files[name] = bytes
        guard let observe = diskMapping, let now = observe(after) else {
            return bytes.count > slot.contents.files[name]?.count ?? 0
        }
        let refused = DiskObservation.changes(from: slot.seen, to: now).filter(\.takesRoom)
        for op in refused { write(op) }   // on a full disk: traced as failed, nothing applied
        return !refused.isEmpty
    }

    /// The mapping reads the disk as it is now; what changed is traced, in order. A write
    /// that changed what the checkers see is journalled with the disk `before` it, where its
    /// operations start in the step's effects (`undoWrites`).
    func observeDisk(before: DiskSlot) {
        guard let observe = diskMapping else { return }
        var slot = diskSlot
        guard let now = observe(slot.contents) else { return }
        let ops = DiskObservation.changes(from: slot.seen, to: now)
        if !ops.isEmpty { diskJournal.append(JournalEntry(effect: effects.count, before: before)) }
        for op in ops { write(op) }
        slot.seen = now
        diskSlot = slot
    }

    /// P1: the world's kill landed at the step's effect `effect` (one of the writes traced
    /// above): the files go back to what they held before the first write whose operations
    /// start there or later, so that the disk holds exactly the writes the world applied
    /// (SPEC P1: one write is atomic, and writes are durable in order). A save that changed
    /// nothing the checkers see is one the world cannot count: it stays if it came before.
    func undoWrites(fromEffect effect: Int) {
        if let entry = diskJournal.first(where: { $0.effect >= effect }) { diskSlot = entry.before }
        diskJournal.removeAll()
    }
}
