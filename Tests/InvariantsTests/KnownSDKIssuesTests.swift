import Testing
import SimKit

/// Regression tests for bugs of the reference SDK found while writing the invariant tests,
/// driving `ReferenceSDK` by hand (sans-IO: inputs in, effects out).
@Suite struct KnownSDKIssuesTests {
    /// A sans-IO harness: one process of the reference SDK and its disk.
    struct Harness {
        var sdk = ReferenceSDK()
        var disk = LocalData()
        var photos: UInt32 = 200
        var now: SimTime = 1_000
        var sent: [(id: UInt32, kind: RequestKind)] = []
        var timers: [TimerKind] = []

        mutating func handle(_ input: SDKInput) {
            var effects = EffectBuffer()
            sdk.handle(input, now: now, context: SDKContext(device: 0, photoCount: photos, photosAllowed: true),
                       config: SDKConfig(), disk: disk, effects: &effects)
            for e in effects {
                switch e {
                case .store(let op): disk.apply(op)
                case .send(let id, let kind, _): sent.append((id, kind))
                case .setTimer(let kind, _, _): timers.append(kind)
                default: break
                }
            }
        }
        mutating func answer(_ id: UInt32, _ kind: RequestKind, _ answer: Answer) {
            handle(.response(id: id, kind: kind, reply: ServerReply(answer)))
        }
        func last(_ kind: RequestKind) -> UInt32 { sent.last { $0.kind == kind }!.id }
    }

    /// D10, `ReferenceSDK.lockOrPurge` sets `reportsUploading = 0` while the run-report
    /// upload it counts is still in flight. After an unlock, a second upload is sent and
    /// counted; when the first upload's 200 arrives it marks the *second* upload's count
    /// uploaded, the second's 200 then marks the reports of a third upload uploaded, and
    /// when that third one fails, `uploadFailed` sees `reportsUploading == 0`: no retry,
    /// and a report that no upload delivered is gone from the queue.
    @Test("a lock and unlock while a run report is uploading loses no report (D10)")
    func noReportLostAcrossLockWhileUploading() {
        var h = Harness()
        let c = Credential(device: 0, generation: 1)
        for op: StoreOp in [.setCredential(c), .saveModels, .savePlaceData, .indexPhotos(from: 0, count: 200),
                            .scheduleBackground, .setLastAnsweredCheck(0)] { h.disk.apply(op) }
        h.photos = 240
        h.handle(.launch(inBackground: false))                         // a run: its check
        h.now += 100; h.answer(h.last(.check), .check, .ok)
        h.now += 10_000; h.handle(.timer(.indexChunk, arg: 0))         // report R1 queued; upload A carries R1
        let uploadA = h.last(.runReport)
        h.now += 100; h.handle(.call(.query))
        h.now += 100; h.answer(h.last(.query), .query, .appDisabled)   // locks while A is in flight
        h.now += 100; h.handle(.wentToBackground); h.handle(.becameActive)
        h.now += 100; h.answer(h.last(.check), .check, .ok)            // unlocks; A is still in flight
        #expect(h.last(.runReport) == uploadA, "a second upload of R1 went out while A was in flight")
        h.photos = 280
        h.now += 100; h.handle(.backgroundRun)
        h.now += 100; h.answer(h.last(.check), .check, .ok)
        h.now += 10_000; h.handle(.timer(.indexChunk, arg: 0))         // R2 queued
        #expect(h.disk.reportsQueued == 2)
        h.now += 100; h.answer(uploadA, .runReport, .ok)               // A delivered R1; upload C carries R2
        #expect(h.disk.reportsQueued == 1)
        let uploadC = h.last(.runReport)
        #expect(uploadC != uploadA)
        let timersBefore = h.timers.filter { $0 == .reportRetry }.count
        h.now += 100; h.answer(uploadC, .runReport, .serverError)      // C failed: R2 stays queued, retried
        #expect(h.disk.reportsQueued == 1)
        #expect(h.timers.filter { $0 == .reportRetry }.count > timersBefore, "no retry set for the failed upload")
    }

    /// D4, found by `simkit fuzz` (seed 138116 of the 160,000 default seeds): a run's
    /// model download is in flight when another request is answered `device_unknown`; the
    /// SDK registers again, and the registration's 200 took the run on by sending a second
    /// model download. Both were answered 200, and the models were saved twice: "downloaded
    /// the models again although they were on the device". The run now waits for the
    /// download it has in flight.
    @Test("a re-registration during a model download sends no second download (D4)")
    func noSecondDownloadAfterReRegistration() {
        var h = Harness()
        for op: StoreOp in [.setCredential(Credential(device: 0, generation: 1)), .scheduleBackground] { h.disk.apply(op) }
        h.handle(.launch(inBackground: false))                           // a run: its check
        h.now += 100; h.answer(h.last(.check), .check, .ok)              // download #2
        let download = h.last(.modelDownload)
        h.now += 10; h.handle(.call(.query))
        h.now += 10; h.answer(h.last(.query), .query, .deviceUnknown)    // forgets the credential, registers
        h.now += 100
        h.handle(.response(id: h.last(.register), kind: .register,
                           reply: ServerReply(.ok, credential: Credential(device: 0, generation: 2))))
        #expect(h.sent.filter { $0.kind == .modelDownload }.map(\.id) == [download],
                "a second model download went out while the first was in flight")
        h.now += 100; h.answer(download, .modelDownload, .ok)            // the models; then place data
        #expect(h.disk.modelsPresent)
        #expect(h.sent.last?.kind == .placeData)
        #expect(h.sent.filter { $0.kind == .modelDownload }.count == 1)
    }

    /// D2, D9: an answer before its timeout counts, however many requests followed. The
    /// reference once abandoned a download (and a check, an upload) after 32 newer ids, as
    /// many calls answered at once while offline can send within one timeout, and ignored
    /// its answer (a reviewer's finding). Now the download is awaited until its timeout;
    /// after the timeout its answer is stale and the next check's 200 sends a new one.
    @Test("a download is awaited until its timeout, however many requests follow (D2, D9)", arguments: [false, true])
    func downloadAwaitedUntilItsTimeout(timesOut: Bool) {
        var h = Harness()
        for op: StoreOp in [.setCredential(Credential(device: 0, generation: 1)), .scheduleBackground] { h.disk.apply(op) }
        h.handle(.launch(inBackground: false))
        h.now += 100; h.answer(h.last(.check), .check, .ok)              // download #2
        let download = h.last(.modelDownload)
        for _ in 0..<40 {                                                // offline: answered at once
            h.now += 10; h.handle(.call(.query)); h.answer(h.last(.query), .query, .offline)
        }
        if timesOut {
            h.now += 30 * Ms.second
            h.handle(.timer(.requestTimeout, arg: download << 3 | UInt32(RequestKind.modelDownload.rawValue)))
        }
        h.now += 10; h.answer(download, .modelDownload, .ok)              // fresh, or after its timeout
        #expect(h.disk.modelsPresent == !timesOut)
        guard timesOut else { return }
        h.now += 25 * Ms.hour; h.handle(.wentToBackground); h.handle(.becameActive)   // a check is due (D1)
        #expect(h.sent.last?.kind == .check)
        h.now += 100; h.answer(h.last(.check), .check, .ok)
        #expect(h.sent.filter { $0.kind == .modelDownload }.count == 2, "the run waited for a download that timed out")
    }
}
