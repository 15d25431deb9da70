import Testing
@testable import SimKit
@testable import Invariants

/// The checker keeps one `DeviceTruth` per device (a million in a big run) and starts a
/// `StepTruth` for every step, so both must stay small and free of references; its disk
/// replica must follow the SDK's disk exactly, for every field a rule reads.
@Suite struct TruthLayoutTests {
    @Test("a device's truth takes 88 bytes and its server record 8, with no references") func deviceTruthIsSmall() {
        #expect(MemoryLayout<DeviceTruth>.stride <= 88)
        #expect(MemoryLayout<DiskTruth>.size <= 17)
        #expect(_isPOD(DeviceTruth.self))
        #expect(MemoryLayout<ServerTruth.RecordT>.stride <= 8)
    }

    @Test("a step's truth holds no references, so starting a step copies no counted value") func stepTruthIsTrivial() {
        #expect(_isPOD(StepTruth.self))
    }

    @Test("the checker's reading of access revoked is SDKState.isAccessRevoked") func revokedMatchesTheSDK() {
        for state in SDKState.allCases { #expect(InvariantChecker.revoked(state) == state.isAccessRevoked) }
    }

    @Test("the checker's reading of a lock error is Answer.isLockError") func lockErrorMatchesTheProtocol() {
        for answer in Answer.allCases { #expect(InvariantChecker.isLockError(answer) == answer.isLockError) }
    }

    /// Every kind of write, in a long random order, applied to the SDK's disk and to the
    /// checker's replica: after each, the replica reads what the disk holds.
    @Test("the disk replica follows LocalData.apply for every field a rule reads") func diskReplicaFollowsTheDisk() {
        var random = SimRandom(seed: 42)
        var disk = LocalData()
        var replica = DiskTruth()
        let credentials = [Credential.none, Credential(device: 3, generation: 1), Credential(device: 3, generation: 2)]
        for _ in 0..<20_000 {
            let op: StoreOp
            switch random.below(19) {
            case 0: op = .indexPhotos(from: disk.indexedCount, count: UInt16(random.below(300)))
            case 1: op = .deleteIndex
            case 2: op = .saveModels
            case 3: op = .deleteModels
            case 4: op = .savePlaceData
            case 5: op = .deletePlaceData
            case 6: op = .setCredential(credentials[Int(random.below(3))])
            case 7: op = .deleteCredential
            case 8: op = .queueReport
            case 9: op = .reportsUploaded(UInt32(random.below(4)))
            case 10: op = .dropReports
            case 11: op = .lock
            case 12: op = .unlock
            case 13: op = .setLockedSince(random.below(2) == 0 ? LocalData.never : random.below(1_000_000))
            case 14: op = .markPurged
            case 15: op = .setLastAnsweredCheck(random.below(1_000_000))
            case 16: op = .setPendingReset(credentials[Int(random.below(3))])
            case 17: op = .scheduleBackground
            default: op = .cancelBackground
            }
            disk.apply(op)
            replica.apply(op)
            #expect(replica.indexedCount == disk.indexedCount)
            #expect(replica.reportsQueued == disk.reportsQueued)
            #expect(replica.lockedSince == disk.lockedSince)
            #expect(replica.modelsPresent == disk.modelsPresent)
            #expect(replica.placeDataPresent == disk.placeDataPresent)
            #expect(replica.locked == disk.locked)
            #expect(replica.backgroundScheduled == disk.backgroundScheduled)
            #expect(replica.hasCredential == !disk.credential.isNone)
            #expect(replica.hasPendingReset == !disk.pendingReset.isNone)
        }
    }

    /// A check or run-report upload 32 ids back is abandoned (the SDK's window of awaited
    /// ids, D9): the truth stops awaiting it, though its timeout may never be delivered.
    @Test func abandonedCheckAndUploadAreNotAwaited() {
        var t = DeviceTruth()
        t.sent(1, .check)
        t.sent(2, .runReport)
        for id in UInt32(3)...32 { t.sent(id, .query) }
        #expect(t.checkInFlight == 1 && t.reportInFlight == 2, "31 ids on, the check is still awaited")
        t.sent(33, .query)
        #expect(t.checkInFlight == 0 && t.reportInFlight == 2)
        t.sent(34, .query)
        #expect(t.reportInFlight == 0)
    }
}
