import Testing
import SimKit
import Invariants
@testable import Scenarios

/// The generator's interleaving probes (issue 38): each builds its situation (the
/// "sometimes" point it names is reached), the bug that hides there is caught, and the
/// reference passes every probe script. Windows read from a run match its trace.
@Suite struct InterleavingProbeTests {
    /// A bare script: 3 devices launched at 0, 40 days, a varying latency, and one probe.
    static func script(_ kind: ScenarioGenerator.Interleaving, seed: UInt64, sdk: SDKChoice) -> ScenarioFile {
        var g = AimedProbeTests.bareGenerator("interleaving \(kind)", seed: seed, latencyMs: 20...800, sdk: sdk)
        g.weave(kind)
        return g.s
    }

    static let cases: [(ScenarioGenerator.Interleaving, Coverage, String)] = [
        (.backgroundDuringUnlock, .unlockInBackground, "unlock-only-in-foreground"),
        (.lockedRaceAcrossEnable, .staleRefusalAfterUnlock, "relock-by-older-check"),
        (.stopHeardFirstByACall, .purgeDueFromNonCheck, "purge-only-on-check"),
        (.clonesDoEverything, .cloneResetRefused, "clone-reset-deletes-record"),
        (.forgetDuringUpload, .reportUploadDeviceUnknown, "reports-settled-by-device-unknown"),
    ]

    @Test("each interleaving builds its situation on most seeds and catches the bug hiding there; the reference passes",
          arguments: cases.indices)
    func buildsItsSituation(_ index: Int) throws {
        let (kind, situation, name) = InterleavingProbeTests.cases[index]
        let mutant = try #require(Mutants.named(name))
        var reached: [UInt64] = [], caught: [UInt64] = []
        for seed: UInt64 in 0..<8 {
            let reference = try Fuzz.check(InterleavingProbeTests.script(kind, seed: seed, sdk: .reference), cores: SDKCores()).checker
            #expect(reference.broken.isEmpty, "\(kind) seed \(seed): the reference breaks \(reference.violations.map(\.headline))")
            if reference.coverage[situation] > 0 { reached.append(seed) }
            let run = try Fuzz.check(InterleavingProbeTests.script(kind, seed: seed, sdk: .mutant(name)), cores: SDKCores()).checker
            if run.broken.contains(mutant.expected) { caught.append(seed) }
        }
        #expect(reached.count >= 6, "\(kind) reached \(situation) under seeds \(reached) of 0..<8")
        #expect(caught.count >= 4, "\(kind) caught \(name) under seeds \(caught) of 0..<8")
    }

    @Test("an action placed in flight: the reference passes, and the script differs from the bare one only by appended statements")
    func actionInFlightIsAppendedAndClean() throws {
        for seed: UInt64 in 0..<12 {
            let s = InterleavingProbeTests.script(.actionInFlight, seed: seed, sdk: .reference)
            let reference = try Fuzz.check(s, cores: SDKCores()).checker
            #expect(reference.broken.isEmpty, "seed \(seed): \(reference.violations.map(\.headline))")
            #expect(s.timeline.first == TimedStatement(schedule: .at(0), body: .action(.person(.launch, .all))))
        }
    }

    @Test("windows read from a run match its trace: sent, judged and answered in order, one per request sent")
    func windowsMatchTheTrace() throws {
        let s = InterleavingProbeTests.script(.forgetDuringUpload, seed: 3, sdk: .reference)
        let windows = try #require(ScenarioGenerator.windows(of: s, untilMs: s.duration))
        var setup = try ScenarioCompiler.compile(s, sdk: .reference).setup
        setup.eventBudget = 2_000_000
        var world = World<ReferenceSDK, TraceRecorder>(setup: setup, observer: TraceRecorder())
        world.run()
        let sent = world.observer.records.filter { if case .requestSent = $0.event { return true } else { return false } }
        #expect(windows.count == sent.count && !windows.isEmpty)
        for (w, r) in zip(windows, sent) {
            guard case .requestSent(let id, let kind, _, _) = r.event else { continue }
            #expect(w.id == id && w.kind == kind && w.sentAt == r.time && w.device == r.device)
            if let j = w.servedAt { #expect(j >= w.sentAt) }
            if let a = w.deliveredAt { #expect(a >= (w.servedAt ?? w.sentAt)) }
        }
        #expect(windows.contains { $0.kind == .runReport && $0.served == .deviceUnknown })
    }

    @Test("a device's place in the script is its group and 1-based index, as the compiler lays devices out")
    func placeMatchesTheCompiler() throws {
        let s = InterleavingProbeTests.script(.clonesDoEverything, seed: 1, sdk: .reference)
        var g = ScenarioGenerator(seed: 1, options: GeneratorOptions())
        g.s = s
        let setup = try ScenarioCompiler.compile(s, sdk: .reference).setup
        var d: DeviceIndex = 0
        for (gi, group) in setup.groups.enumerated() {
            for i in 0..<group.count {
                let place = try #require(g.place(of: d))
                #expect(place.group == s.groups[gi].name && place.group == group.name && place.index == UInt64(i) + 1)
                d += 1
            }
        }
        #expect(g.place(of: d) == nil)
        #expect(g.firstDevice(of: s.groups.last!.name) == d - DeviceIndex(setup.groups.last!.count))
    }
}
