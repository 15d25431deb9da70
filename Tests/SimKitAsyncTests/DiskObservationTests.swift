import Testing
import SimKit
@testable import SimKitAsync

/// The storage mapping's diff (docs/observation.md, "Storage in the SDK's own shape"):
/// what changed between two reads of the SDK's own files, as the store effects the
/// checkers judge, in the order they judge them.
@Suite struct DiskObservationTests {
    let cred = Credential(device: 3, generation: 2)

    @Test func aRunsProgressIsIndexedPhotosInPiecesAndAReport() {
        let old = DiskObservation(indexedPhotos: 10, modelsPresent: true, placeDataPresent: true, credential: cred)
        var new = old
        new.indexedPhotos = 70_000
        new.queuedReports = 1
        #expect(DiskObservation.changes(from: old, to: new)
                == [.indexPhotos(from: 10, count: 65_535), .indexPhotos(from: 65_545, count: 4_455), .queueReport])
    }

    @Test func aResetOwesTheDeleteBeforeItDeletes() {
        let old = DiskObservation(indexedPhotos: 5, modelsPresent: true, placeDataPresent: true, credential: cred, queuedReports: 2)
        let new = DiskObservation(pendingReset: cred)
        #expect(DiskObservation.changes(from: old, to: new)
                == [.setPendingReset(cred), .deleteIndex, .deleteModels, .deletePlaceData, .reportsRemoved(2), .deleteCredential])
    }

    @Test func aPurgeLocksThenDeletesThenMarks() {
        let old = DiskObservation(indexedPhotos: 5, modelsPresent: true, placeDataPresent: true, credential: cred)
        let new = DiskObservation(locked: true, lockedSince: 99, purged: true)
        #expect(DiskObservation.changes(from: old, to: new)
                == [.setLockedSince(99), .lock, .deleteIndex, .deleteModels, .deletePlaceData, .deleteCredential, .markPurged])
        // Access back: the lock and the mark go first, then what the SDK writes.
        let back = DiskObservation(credential: Credential(device: 3, generation: 3))
        #expect(DiskObservation.changes(from: new, to: back)
                == [.unlock, .setLockedSince(LocalData.never), .setCredential(Credential(device: 3, generation: 3))])
    }

    @Test func nothingChangedIsNoEffect() {
        let same = DiskObservation(indexedPhotos: 5, credential: cred, lastAnsweredCheck: 7)
        #expect(DiskObservation.changes(from: same, to: same).isEmpty)
    }
}
