import Testing
@testable import SimKit
@testable import Invariants

/// The checker keeps one `DeviceTruth` per device (a million in a big run) and starts a
/// `StepTruth` for every step, so both must stay small and free of references; its disk
/// replica must follow the SDK's disk exactly, for every field a rule reads.
@Suite struct TruthLayoutTests {
    /// 160 bytes: the current stop and the newest one of 30 days (start and end: an answer
    /// may be delivered after two breaks), the newest verdict, the install's key, library
    /// and credential generation, D9's own bounds, and since the rules were judged by SPEC
    /// alone (136 before) D10's back-off and owed upload (whole seconds), the library at a
    /// run's start (D4) and the credential a reset deleted (D7); fifteen flags share two
    /// bytes. The disk replica keeps the generation a reset owes (D7: 25 bytes, 21 before).
    @Test("a device's truth takes 160 bytes and its server record 8, with no references") func deviceTruthIsSmall() {
        #expect(MemoryLayout<DeviceTruth>.stride <= 160)
        #expect(MemoryLayout<DiskTruth>.size <= 25)
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

    /// A check or upload is awaited until its timeout (D9), however many requests follow
    /// it: the truth knows no window of the SDK's. An answer is stale after a reset (or a
    /// purge), and a timeout of a request answered among the last 32 is stale; one further
    /// back is taken as fresh.
    @Test func awaitedUntilTimeoutNotByWindow() {
        var t = DeviceTruth()
        let timeout: SimTime = 30_000
        t.sent(1, .check, at: 0, timeoutMs: timeout)
        t.sent(2, .runReport, at: 0, timeoutMs: timeout)
        for id in UInt32(3)...200 { t.sent(id, .query, at: 1_000, timeoutMs: timeout) }
        #expect(t.checkAwaited(at: 29_999) && t.reportAwaited(at: 30_000) && t.upload0.id == 2)
        #expect(!t.checkAwaited(at: 30_001) && !t.reportAwaited(at: 31_000))
        // An answer to request 2, far behind the last 32 ids, is still awaited.
        let far = t.answerArrives(2, .runReport).awaited
        #expect(far)
        // Request 199's answer is awaited once; its timeout afterwards is not.
        let first = t.take(199), second = t.take(199)
        #expect(first && !second)
        // After a reset, nothing sent before it is awaited; what is sent after is.
        t.reset()
        let old150 = t.take(150), old5 = t.take(5)
        #expect(!old150 && !old5)
        t.sent(201, .check, at: 2_000, timeoutMs: timeout)
        let fresh = t.take(201)
        #expect(fresh)
    }
}
