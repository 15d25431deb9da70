import Testing
import SimKit
import Invariants
import Scenarios
import ScenarioSearch
import SimKitTesting
import PhotoAccess
@testable import PhotoAccessSimKit

let cores = SDKCores(PhotoAccessCores.all)

/// The SDK as shipped keeps every promise on fuzz seeds (the CI sweep of 20,000 runs the
/// command line in release: see the README); each planted bug is caught, shrunk, and its
/// reproducer names the core that failed.
@Suite struct PhotoAccessTests {
    @Test("the SDK as shipped passes fuzz seeds", arguments: 0..<4 as Range<UInt64>)
    func passesFuzzSeeds(slice: UInt64) {
        for seed in slice * 10..<(slice + 1) * 10 {
            let run = SimKitTest.seed(seed, sdk: .custom("app-team"), cores: cores)
            #expect(run.passed, "\(run)")
        }
    }

    /// The first of seeds `0..<limit` on which `core` breaks `invariant`.
    func firstFailing(_ core: String, _ invariant: InvariantID, limit: UInt64) -> SeedRun? {
        for seed in 0..<limit {
            let run = SimKitTest.seed(seed, sdk: .custom(core), cores: cores)
            if run.broken.contains(invariant) { return run }
        }
        return nil
    }

    /// Caught by fuzzing, shrunk to a small file that names the core, which fails on the
    /// buggy core and passes on the SDK as shipped.
    func caughtAndShrunk(_ core: String, _ invariant: InvariantID, limit: UInt64) throws {
        let run = try #require(firstFailing(core, invariant, limit: limit), "\(core) broke no \(invariant) in \(limit) seeds")
        #expect("\(run)".contains("--sdk custom:\(core)"), "\(run)")
        let reproducer = run.reproducer
        #expect(reproducer.contains("sdk custom \(core)\n"), "\(reproducer)")
        #expect(reproducer.contains("--sdk custom:\(core)"), "\(reproducer)")
        let small = try SimKitTest.scenario(source: reproducer, cores: cores)
        #expect(small.broken.contains(invariant), "\(small)")
        #expect(small.scenario.statementCount <= 12, "\(reproducer)")
        let shipped = try SimKitTest.scenario(source: reproducer, sdk: .custom("app-team"), cores: cores)
        #expect(!shipped.broken.contains(invariant), "\(shipped)")
        print("\(core): seed \(run.seed), reproducer of \(small.scenario.statementCount) statements:\n\(reproducer)")
    }

    @Test func lockingOnEvery403IsCaught() throws {
        try caughtAndShrunk("app-team-any-403", .neverLockOnTransient, limit: 300)
    }

    @Test func purgingByTheDeviceClockIsCaught() throws {
        try caughtAndShrunk("app-team-device-clock", .purgeOnlyAfter30ContinuousDays, limit: 400)
    }

    /// P2: the phone's clock set back past the launch's key check, then the app opened 3 h
    /// later (1 h after a disable): the SDK checks, because its calendar clock reads earlier
    /// than at its last verdict, and locks; with the clock set forward a month during the stop it purges
    /// nothing. (Counting on elapsed time alone, it did not check at 3h.)
    @Test func aClockSetBackBringsTheCheck() throws {
        let source = """
            scenario "clock"
            seed 47
            duration 2d
            account acme
            app photos account acme key rk_live_A
            devices 5 app photos
            at 0s launch all
            at 2h close all
            at 2h clock all back 2d
            at 2h disable photos
            at 3h open all
            at 3h1m expect all photos locked
            at 4h clock all forward 40d
            at 4h1m close all
            at 4h2m open all
            at 5h expect all photos locked
            at 1d expect none photos purged
            """
        let run = try SimKitTest.scenario(source: source, sdk: .custom("app-team"), cores: cores)
        #expect(run.passed, "\(run)")
        #expect(run.broken.isEmpty, "\(run)")
    }

    /// P5: background runs get 30 s and 2,000 new photos take longer: each run is asked to
    /// stop mid-run, ends with its report keeping every chunk written, and the next run
    /// resumes (nothing broken, the person's open indexes the rest).
    @Test func anExpiringBackgroundRunKeepsItsProgress() throws {
        let source = """
            scenario "background time"
            seed 53
            duration 2d
            account acme
            app photos account acme key rk_live_A
            devices 5 app photos
            at 0s launch all
            at 1h close all
            at 2h background-limit all 30s
            at 2h1m add-photos 2000 all
            at 2h2m background all
            at 6h background all
            at 1d open all
            at 1d1h expect all photos idle
            """
        let run = try SimKitTest.scenario(source: source, sdk: .custom("app-team"), cores: cores)
        #expect(run.passed, "\(run)")
        #expect(run.broken.isEmpty, "\(run)")
    }

    /// P3: the disks are full for a day while new photos wait and runs end (their index
    /// writes and reports refused); the SDK counts none of it as done, keeps the refused
    /// reports, and writes them, and the photos, once the disk has room.
    @Test func aFullDiskLosesNothing() throws {
        let source = """
            scenario "disk full"
            seed 48
            duration 3d
            account acme
            app photos account acme key rk_live_A
            devices 10 app photos
            at 0s launch all
            at 1h expect all photos idle
            at 2h add-photos 300 all
            at 2h disk-full all for 1d
            at 3h open all
            at 3h10m close all
            at 6h background all
            at 12h reset 50% of photos
            at 12h1m open all
            at 12h10m close all
            at 18h background all
            at 1d2h open all
            at 1d3h expect all photos idle
            at 1d3h close all
            at 2d background all
            at 2d1h expect all photos idle
            """
        let run = try SimKitTest.scenario(source: source, sdk: .custom("app-team"), cores: cores)
        #expect(run.passed, "\(run)")
        #expect(run.broken.isEmpty, "\(run)")
    }

    /// P4: the phones restart at 2h and the person unlocks them at 10h; the OS runs the app
    /// in the background meanwhile (at 4h and halfway to the unlock), photos added before.
    /// The SDK reads nothing then, so it neither registers again, downloads, nor deletes its
    /// index; after the unlock it goes on with what it had (SimKit's own scenario file).
    @Test func lockedDataAfterARestartIsNotAbsent() throws {
        let source = """
            scenario "restart before the unlock"
            seed 51
            duration 2d
            account acme
            app photos account acme key rk_live_A
            devices 10 app photos
            at 0s launch all
            at 1h expect all photos idle
            at 1h30m add-photos 500 all
            at 2h reboot all unlock-after 8h
            at 4h background all
            at 10h1m open all
            at 10h5m expect all photos idle
            at 1d background all
            at 1d1h expect all photos idle
            """
        let run = try SimKitTest.scenario(source: source, sdk: .custom("app-team"), cores: cores)
        #expect(run.passed, "\(run)")
        #expect(run.broken.isEmpty, "\(run)")
    }

    /// The core is a value although the SDK is a class: a copy is deep before it is written.
    @Test func copiesDoNotShareTheController() {
        var a = PhotoAccessCore<NoBugs>()
        var effects = EffectBuffer()
        let context = SDKContext(device: 0, photoCount: 500, photosAllowed: true)
        a.handle(.launch(inBackground: false), now: 0, context: context, config: SDKConfig(), disk: LocalData(), effects: &effects)
        let awaited = a.box.controller.memory.awaited
        #expect(awaited == 1)
        var b = a
        effects.removeAll()
        b.handle(.reset, now: 1, context: context, config: SDKConfig(), disk: LocalData(), effects: &effects)
        #expect(b.box.controller.memory.awaited == 0)   // a reset forgets what was awaited…
        #expect(a.box.controller.memory.awaited == awaited)   // …in the copy only
        #expect(a.box !== b.box)
    }

    /// A world copied before a run and run again gives the same trace: no device's SDK
    /// state leaked between the copies.
    @Test func aCopiedWorldRunsTheSame() throws {
        let scenario = ScenarioGenerator.generate(seed: 5, options: GeneratorOptions(maxDevicesPerGroup: 10, maxDurationDays: 10))
        let compiled = try ScenarioCompiler.compile(scenario)
        var world = World<PhotoAccessCore<NoBugs>, NoObserver>(setup: compiled.setup, observer: NoObserver())
        var twin = world
        world.run()
        twin.run()
        #expect(world.fingerprint == twin.fingerprint && world.eventsHandled > 0)
    }
}

/// SimKit's conformance kit: every scenario of SimKit's that states SDK behaviour, run on
/// the SDK as shipped, and the rules each planted bug breaks named.
@Suite struct PhotoAccessConformanceTests {
    @Test func theShippedSDKConforms() {
        let report = SimKitTest.conformance(PhotoAccessCore<NoBugs>.self, name: "app-team", seeds: 0..<20)
        #expect(report.passed, "\(report)")
        #expect(report.scenarioFiles > 30)
    }

    @Test func theKitNamesWhatABugBreaks() {
        let report = SimKitTest.conformance(PhotoAccessCore<LockOnAny403>.self, name: "app-team-any-403", seeds: 0..<0)
        let line = report.lines.first { $0.hasPrefix("BROKEN never-lock-on-transient (D6): ") }
        #expect(line?.contains("pending-app.scenario") == true, "\(report)")
        #expect(report.lines.contains("BROKEN expectations of pending-app.scenario (S2 D6 S5): pending-app.scenario; first: expect none photos locked at 1h: 20 of 20 are locked"), "\(report)")
    }
}
