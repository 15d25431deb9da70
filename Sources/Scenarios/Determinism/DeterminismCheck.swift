import SimKit
import Invariants
import ScenarioLanguage

/// The determinism guard: runs a scenario a second time and compares the two traces
/// record by record. SimKit's own code is kept deterministic by a lint and by tests; a
/// core plugged in by a user is not, and its leaks (a `Set` or `Dictionary` iterated in
/// hash order, `Date()`, the system random generator, a global counter) make a seed stop
/// reproducing with nothing to say why. This says where the runs part and why.
///
/// Generic over the SDK core (`SDK: SDKCore`): any core a user plugs in is checked the
/// same way. A normal run pays nothing for it: a checked seed's own run is unchanged, its
/// repeat runs without observers (`again`), and only a seed that differs is run with
/// observers that keep and compare traces (`TraceTape`, `TraceComparer`).
@usableFromInline package enum DeterminismCheck {
    /// `simkit fuzz` checks one seed in this many by default (`DeterminismCheck.sampled`).
    @usableFromInline package static let defaultSampleOneIn: UInt64 = 64

    /// Whether `seed` is one of the seeds checked when one in `n` is (`n` 0: none, 1: all).
    /// A hash of the seed (the split-mix finaliser), not `seed % n`: the checked seeds
    /// spread over the shards of a campaign instead of all falling in shard 1. A function
    /// of the seed alone, so a seed's verdict does not depend on `--jobs` or sharding.
    @usableFromInline package static func sampled(_ seed: UInt64, oneIn n: UInt64) -> Bool {
        guard n > 1 else { return n == 1 }
        var z = seed &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return z % n == 0
    }

    /// The core's name in reports: its type's name, with the mutant it runs, if any.
    @usableFromInline package static func coreName<SDK: SDKCore>(_ sdk: SDK.Type, choice: SDKChoice? = nil) -> String {
        let name = String(describing: sdk)
        if case .mutant(let m)? = choice { return "\(name) (mutant:\(m))" }
        return name
    }

    /// The cores' name in reports: the SDK core's (as above), and the server core's type
    /// when it is not the reference `ServerModel` (`MySDK on server MyServer`).
    @usableFromInline package static func coreName<SDK: SDKCore, Server: ServerCore>(_ sdk: SDK.Type, server: Server.Type,
                                                                  choice: SDKChoice? = nil) -> String {
        let name = coreName(sdk, choice: choice)
        return ObjectIdentifier(server) == ObjectIdentifier(ServerModel.self) ? name : "\(name) on server \(String(describing: server))"
    }

    /// How many records before the difference are read to find its step and the records
    /// that agreed (a step's records are contiguous and few).
    static let window = 4_096

    /// Runs `setup` once more on the core `SDK` and compares its trace with `tape`, the
    /// trace of a first run that printed `fingerprint` after `events` events. Nil when the
    /// two runs are the same, record for record and event for event.
    ///
    /// The first run's world must still be alive (the callers here keep it): the second
    /// run's allocations then land at other addresses, and Swift seeds each `Set` and
    /// `Dictionary` with its storage's address, so an order that leaks from one differs
    /// between the two runs in one process, as it would between two processes.
    /// - Complexity: one more simulation of `setup`.
    @usableFromInline package static func compare<SDK: SDKCore>(_ setup: WorldSetup, sdk: SDK.Type, against tape: TraceTape,
                                             fingerprint: Fingerprint, events: UInt64, core: String? = nil,
                                             names: (String, String) = ("run 1", "run 2")) -> Nondeterminism? {
        compare(setup, sdk: sdk, server: ServerModel.self, against: tape, fingerprint: fingerprint, events: events,
                core: core, names: names)
    }

    /// `compare(_:sdk:against:fingerprint:events:core:names:)` on the server core `server`.
    @usableFromInline package static func compare<SDK: SDKCore, Server: ServerCore>(_ setup: WorldSetup, sdk: SDK.Type, server: Server.Type,
                                                                 against tape: TraceTape, fingerprint: Fingerprint,
                                                                 events: UInt64, core: String? = nil,
                                                                 names: (String, String) = ("run 1", "run 2")) -> Nondeterminism? {
        var second = SimWorld<SDK, Server, TraceComparer>(setup: setup, observer: TraceComparer(tape))
        second.run()
        let sameTrace = second.fingerprint == fingerprint && second.observer.count == tape.count
        let coreName = core ?? coreName(sdk, server: server)
        let detail = "fingerprints: \(names.0) \(fingerprint) (\(Nondeterminism.grouped(tape.count)) records, "
            + "\(Nondeterminism.grouped(events)) events), \(names.1) \(second.fingerprint) "
            + "(\(Nondeterminism.grouped(second.observer.count)) records, \(Nondeterminism.grouped(second.eventsHandled)) events)"
        if let i = second.observer.firstDifference {
            let facts = tape.facts
            let lower = max(0, i - window)
            let before = (lower..<min(i, tape.records.count)).map { k in
                TraceLine(number: UInt64(k + 1), text: TraceText.line(tape.records[k], facts: facts))
            }
            let mine = i < tape.records.count ? tape.records[i] : nil
            let theirs = second.observer.theirs
            var more = detail
            if let mine, let theirs, TraceText.line(mine, facts: facts) == TraceText.line(theirs, facts: facts) {
                more += "; the two records differ in a field their text does not show: \(mine.event) and \(theirs.event)"
            }
            return .located(number: UInt64(i + 1), before: before, first: mine.map { TraceText.line($0, facts: facts) },
                            second: theirs.map { TraceText.line($0, facts: facts) }, names: names, core: coreName, detail: more)
        }
        if sameTrace {
            if second.eventsHandled == events { return nil }
            return .unlocated(.untraced, explanation: "the two traces are the same, record for record, but the runs handled "
                                + "\(Nondeterminism.grouped(events)) and \(Nondeterminism.grouped(second.eventsHandled)) events: an "
                                + "effect that leaves no trace record (a timer set or cancelled, then dropped) differed, so a step "
                                + "of the core was not a function of its input and state (core: \(coreName)).",
                              names: names, core: coreName, detail: detail)
        }
        return .unlocated(.unlocated, explanation: "the fingerprints differ past the first "
                            + "\(Nondeterminism.grouped(UInt64(tape.records.count))) records, which are all the guard keeps "
                            + "(TraceTape.defaultLimit); run a shorter scenario to see where.",
                          names: names, core: coreName, detail: detail)
    }

    /// Runs `setup` once more on the core `SDK`, without observers, and compares its
    /// fingerprint, record count and event count with a first run's: the cheap check that
    /// `simkit fuzz` makes on its sampled seeds. Only when they differ, two more runs keep
    /// and compare their traces (`twice`) to say where; if those two agree (a leak that did
    /// not repeat), the report says the runs differed without a place.
    /// - Complexity: one simulation without checkers; three for a run that differs.
    @usableFromInline package static func again<SDK: SDKCore>(_ setup: WorldSetup, sdk: SDK.Type, fingerprint: Fingerprint, events: UInt64,
                                           core: String? = nil) -> Nondeterminism? {
        again(setup, sdk: sdk, server: ServerModel.self, fingerprint: fingerprint, events: events, core: core)
    }

    /// `again(_:sdk:fingerprint:events:core:)` on the server core `server`.
    @usableFromInline package static func again<SDK: SDKCore, Server: ServerCore>(_ setup: WorldSetup, sdk: SDK.Type, server: Server.Type,
                                                               fingerprint: Fingerprint, events: UInt64,
                                                               core: String? = nil) -> Nondeterminism? {
        var second = SimWorld<SDK, Server, NoObserver>(setup: setup, observer: NoObserver())
        second.run()
        if second.fingerprint == fingerprint, second.eventsHandled == events { return nil }
        let differed = "runs 1 and 2 (the checked run and one more) differed: fingerprints \(fingerprint) "
            + "(\(Nondeterminism.grouped(fingerprint.records)) records, \(Nondeterminism.grouped(events)) events) and "
            + "\(second.fingerprint) (\(Nondeterminism.grouped(second.fingerprint.records)) records, "
            + "\(Nondeterminism.grouped(second.eventsHandled)) events)"
        let coreName = core ?? coreName(sdk, server: server)
        return withExtendedLifetime(second) {
            guard var located = twice(setup, sdk: sdk, server: server, core: coreName, names: ("run 3", "run 4")) else {
                return .unlocated(.unlocated, explanation: "two runs differed, but two more, made to find where, were the "
                                  + "same: the leak did not repeat (core: \(coreName)).", names: ("run 1", "run 2"),
                                  core: coreName, detail: differed)
            }
            located.detail = [differed, located.detail].compactMap { $0 }.joined(separator: "; ")
            return located
        }
    }

    /// Runs `setup` twice on the core `SDK` and compares the traces (`compare`).
    /// - Complexity: two simulations of `setup`, and its trace in memory (up to `tapeLimit` records).
    @usableFromInline package static func twice<SDK: SDKCore>(_ setup: WorldSetup, sdk: SDK.Type, core: String? = nil,
                                           names: (String, String) = ("run 1", "run 2"),
                                           tapeLimit: Int = TraceTape.defaultLimit) -> Nondeterminism? {
        twice(setup, sdk: sdk, server: ServerModel.self, core: core, names: names, tapeLimit: tapeLimit)
    }

    /// `twice(_:sdk:core:names:tapeLimit:)` on the server core `server`.
    @usableFromInline package static func twice<SDK: SDKCore, Server: ServerCore>(_ setup: WorldSetup, sdk: SDK.Type, server: Server.Type,
                                                               core: String? = nil, names: (String, String) = ("run 1", "run 2"),
                                                               tapeLimit: Int = TraceTape.defaultLimit) -> Nondeterminism? {
        var first = SimWorld<SDK, Server, TraceTape>(setup: setup, observer: TraceTape(limit: tapeLimit))
        first.run()
        // Kept alive through the second run (see `compare`).
        return withExtendedLifetime(first) {
            compare(setup, sdk: sdk, server: server, against: first.observer, fingerprint: first.fingerprint, events: first.eventsHandled,
                    core: core, names: names)
        }
    }
}
