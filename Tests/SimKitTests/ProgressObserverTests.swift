import Testing
@testable import SimKit

/// The progress of a long run (`simkit timeline`'s line) is read off the trace's times:
/// it reports as virtual time passes each hundredth of the run, and changes nothing.
@Suite struct ProgressObserverTests {
    final class Reports: @unchecked Sendable { var times: [SimTime] = [] }

    @Test func reportsEachHundredthAndChangesNothing() {
        let setup = StandardWorkload.setup(seed: 3, devices: 50, days: 20, ringDepth: 0)
        var plain = World<ReferenceSDK, NoObserver>(setup: setup, observer: NoObserver())
        plain.run()
        let reports = Reports()
        var watched = World<ReferenceSDK, ProgressObserver>(
            setup: setup, observer: ProgressObserver(durationMs: setup.durationMs) { reports.times.append($0) })
        watched.run()
        #expect(watched.fingerprint == plain.fingerprint)
        #expect(watched.eventsHandled == plain.eventsHandled)
        let step = setup.durationMs / 100
        #expect(reports.times.count >= 50 && reports.times.count <= 101, "\(reports.times.count) reports")
        #expect(reports.times == reports.times.sorted())
        for (a, b) in zip(reports.times, reports.times.dropFirst()) { #expect(b - a >= step) }
        #expect((reports.times.last ?? 0) >= setup.durationMs - 2 * step)
    }
}
