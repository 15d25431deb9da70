import Testing
import SimKit
import Invariants
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch

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
        (.resetRetriedAcrossRegistration, .staleResetSparesNewer, "reset-ignores-generation"),
        (.siblingKeyOnRegisteredDevice, .pendingToRegisteredDevice, "throw-on-pending"),
        (.resetInTrouble, .resetRetried, "reset-not-retried"),
        (.staleOkAfterLock, .staleResponseIgnored, "unlock-on-stale-ok"),
        (.lockedChecksAnsweredInOrder, .unlock, "check-reenters-on-activation"),
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

    @Test("the probes that read no trace write a script for every seed: no trap, every statement within the duration")
    func probesFitTheirRun() {
        for kind in [ScenarioGenerator.Interleaving.resetInTrouble, .siblingKeyOnRegisteredDevice] {
            for seed: UInt64 in 0..<3_000 {
                let s = InterleavingProbeTests.script(kind, seed: seed, sdk: .reference)
                for st in s.timeline {
                    if case .at(let t) = st.schedule { #expect(t <= s.duration, "\(kind) seed \(seed): a statement at \(t)") }
                }
            }
        }
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

    /// The boundaries a script's statements on `vault` make: a stop-now rotation, a grace
    /// deadline, 30 days after a stop.
    static func vaultBoundaries(_ s: ScenarioFile) -> [SimTime] {
        s.timeline.compactMap { st -> SimTime? in
            guard case .at(let t) = st.schedule, case .action(let a) = st.body else { return nil }
            switch a {
            case .rotate(app: "vault", _, .stopNow): return t
            case .rotate(app: "vault", _, .keep(let grace)): return t + grace
            case .disable(app: "vault"), .rollupApp(.revoke, app: "vault"), .rollupAccount(.revoke, account: "initech"): return t + 30 * Ms.day
            default: return nil
            }
        }
    }

    @Test("a request of the probe's kind is judged at its boundary ± its delta, by the trace, on most seeds; the reference passes")
    func kindMeetsItsBoundary() throws {
        var withBoundary = 0, met = 0
        var kinds = Set<String>()
        for seed: UInt64 in 0..<24 {
            let s = InterleavingProbeTests.script(.kindAtBoundary, seed: seed, sdk: .reference)
            let reference = try Fuzz.check(s, cores: SDKCores()).checker
            #expect(reference.broken.isEmpty, "seed \(seed): \(reference.violations.map(\.headline))")
            let boundaries = InterleavingProbeTests.vaultBoundaries(s)
            guard let b = boundaries.first else { continue }
            withBoundary += 1
            let windows = try #require(ScenarioGenerator.windows(of: s, untilMs: s.duration))
            // The vault's first device comes after the 3 devices of photos.
            // Judged at the boundary exactly, or at one of the deltas the probe draws.
            let deltas: Set<Int64> = [0, -1, 1, -1_000, 1_000, -60_000, 60_000]
            let hits = windows.filter { w in w.device == 3 && w.servedAt.map { deltas.contains(Int64($0) - Int64(b)) } == true }
            if !hits.isEmpty { met += 1 }
            for w in hits { kinds.insert("\(w.kind)") }
        }
        #expect(withBoundary >= 12 && met * 3 >= withBoundary * 2, "\(met) of \(withBoundary) boundaries met")
        #expect(kinds.count >= 5, "kinds met: \(kinds.sorted())")
    }

    @Test("a race in every state: an older answer arrives after a newer one on half the seeds or more; the reference passes")
    func racesOvertake() throws {
        var overtaken = 0
        for seed: UInt64 in 0..<16 {
            let s = InterleavingProbeTests.script(.raceInEveryState, seed: seed, sdk: .reference)
            let reference = try Fuzz.check(s, cores: SDKCores()).checker
            #expect(reference.broken.isEmpty, "seed \(seed): \(reference.violations.map(\.headline))")
            let windows = try #require(ScenarioGenerator.windows(of: s, untilMs: s.duration)).filter { $0.device == 3 }
            let over = windows.contains { a in
                windows.contains { b in
                    b.sentAt > a.sentAt && (b.deliveredAt ?? .max) < (a.deliveredAt ?? 0) && a.servedAt != nil && b.servedAt != nil
                }
            }
            if over { overtaken += 1 }
        }
        #expect(overtaken >= 8, "\(overtaken) of 16 seeds raced")
    }
}
