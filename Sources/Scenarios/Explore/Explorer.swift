import Invariants
import SimKit
import ScenarioLanguage
import Scenarios

/// What `Explorer` searches: the world, the alphabet of actions, the moments they may
/// happen at, and the bounds. Every path it tries is a scenario of this world.
package struct ExploreOptions: Sendable {
    /// Devices of the one app (1…3).
    package var devices = 2
    /// The most actions on a path (not counting the launch at 0 s).
    package var maxActions = 4
    /// The SDK core (or mutant) on the devices.
    package var sdk: SDKChoice = .reference
    /// Breadth first: the first violation found is one of fewest actions.
    package var breadthFirst = false
    /// Runs each path from its parent's world, forked (`SimWorld.fork()`), instead of from
    /// the start; the runs, states and counterexamples are the same either way (tested).
    package var forking = true
    /// The state store's budget, in bytes (`StateDigest.storedBytes` a state, and the
    /// breadth-first frontier's paths): when full, the search stops, incomplete.
    package var stateBudgetBytes: UInt64 = 512 << 20
    /// The most scenario runs (one per path tried); more stops the search, incomplete.
    package var maxRuns: UInt64 = 50_000_000
    /// The person's actions, for each device.
    package var persons: [ScenarioLanguage.PersonAction] = [.launch, .open, .close, .background, .query, .reset]
    /// The person's actions tried at a boundary (see `boundaries`).
    package var boundaryPersons: [ScenarioLanguage.PersonAction] = [.launch, .open, .background]
    /// Dashboard and Rollup actions: disable, enable, rotate (stop-old now, keep-old 30d),
    /// Rollup revoke and restore; and each device's update to a build with the current key.
    package var dashboard = true
    /// Which of those actions (`ExploreDashboard.defaults` by default: all but the
    /// account's), in this order.
    package var dashboardKinds: [ExploreDashboard] = ExploreDashboard.defaults
    /// Fault windows: those of `faultKinds`; false leaves every fault out.
    package var faults = true
    /// The kinds of fault windows in the alphabet (all by default), in this order.
    package var faultKinds: [ExploreFault] = ExploreFault.defaultCases
    /// How long an injected fault lasts (longer than `soonMs`, so the next action meets it),
    /// but for slow responses (`slowWindowMs`).
    package var faultWindowMs: SimTime = 2 * Ms.minute
    /// How much later the answers of a `slow-responses` window come back: longer than
    /// `slowWindowMs` plus a round trip, so that a request judged just after the window
    /// ends is answered first; shorter than the 30 s timeout, so the slowed answer still
    /// counts (D9).
    package var slowByMs: SimTime = 10 * Ms.second
    /// How long a `slow-responses` window lasts: short, so that its end, a pending event,
    /// gives a moment ("just after it") at which a newer request overtakes the slowed answers.
    package var slowWindowMs: SimTime = Ms.second
    /// "Soon": the next action after everything the last one started has settled.
    package var soonMs: SimTime = Ms.minute
    /// The most moments tried between the pending events before "soon": just before the
    /// first, just after each (a request reaching the server, its answer arriving).
    package var raceMoments = 2
    /// The most boundaries tried (the nearest ones after "soon"): 24 h after a device's
    /// last answered check, 30 days after its lock or after the stop the checkers' truth
    /// dates, a rotated key's grace deadline, 30 days after a disable or revocation. Each
    /// is tried at the `boundaryMoments`.
    package var boundaries = 2
    /// The moments tried at each boundary B (`before` and `after`, B ∓ 1 s, by default;
    /// the exact ones, `judged-at` and `after-1ms`, on demand: they find the mutants that
    /// put a `>` for a `>=`, at a fifth more runs at 3 actions on 2 devices, see
    /// docs/explore.md).
    package var boundaryMoments: [ExploreBoundaryMoment] = [.before, .after]
    /// Each dashboard, Rollup and fault action (all but the person's) at most once on a
    /// path (`--each-once`): a bound like `maxActions`, which cuts the paths that repeat a
    /// disable, a rotation or a fault window (mostly changing nothing but the time) and so
    /// lets a small alphabet reach a few more actions. False by default.
    package var eachOnce = false
    /// The fixed round trip of every request (latency A..A).
    package var latencyMs: SimTime = 20
    /// How long a path's last run goes on after its last action (answers, retries, liveness).
    package var settleMs: SimTime = 10 * Ms.minute
    /// The most requests on a path whose network fate is chosen (`--fates N`, 0 by
    /// default): for every path searched, each of its runs' requests in turn (and, up to
    /// this many, later ones of the runs that follows) meets each of `fateKinds` instead of
    /// what the seed draws (`RequestFate`, written as the scenario's `pin` lines). Pinned
    /// runs are run from the start and leave no state to search on; they multiply the runs
    /// by about the requests of a path times the fates, so take a small alphabet.
    package var maxFates = 0
    /// The fates tried for a pinned request, in this order (all by default).
    /// The fates enumerated: all but `overtaken`, whose answer waits for another verdict
    /// (the fuzzer's generator pins it; the explorer's `--race` builds that race itself).
    package var fateKinds: [RequestFate] = RequestFate.allCases.filter { $0 != .overtaken }
    /// The scenarios' seed (it still draws which of two milliseconds an answer takes).
    package var seed: UInt64 = 1
    /// Every device launches at 0 s, before the first explored action.
    package var launchAtStart = true
    /// More of the world, each with its actions (`ExploreExtra`); none by default.
    package var extras: [ExploreExtra] = []
    /// Threads that run a node's leaves (its children at the last level, about 98% of the
    /// runs) side by side (`--jobs`). The leaves are taken in their order all the same
    /// (the first that breaks a rule is the one kept, the runs after it are not counted),
    /// so the runs, states and counterexample do not depend on it (tested).
    package var jobs = 1
    /// Builds a leaf's setup from its parent world's setup and the step's compiled action
    /// (`Explorer.LeafActions`) instead of compiling the whole path's scenario; the same
    /// setup either way (tested), at a sixth of a leaf's cost.
    package var incrementalSetup = true
    /// This shard's part of the search, `(index, count)` with 1 <= index <= count: the
    /// first actions whose position among the root's choices is `index - 1` modulo
    /// `count`, and all their continuations. Shards share no state store, so a state
    /// reached in two shards is counted and searched in both.
    package var shard: (index: Int, count: Int) = (1, 1)

    /// The defaults: 2 devices, 4 actions, the reference SDK, depth first.
    package init() {}

    /// What is wrong with these options, or nil.
    package var problem: String? {
        if !(1...3).contains(devices) { return "devices must be 1 to 3, not \(devices)" }
        if !(0...20).contains(maxActions) { return "actions must be 0 to 20, not \(maxActions)" }
        if latencyMs == 0 || latencyMs > Ms.minute { return "latency must be 1ms to 1m" }
        if soonMs <= latencyMs { return "soon must be longer than the latency" }
        if faultWindowMs == 0 { return "the fault window must be longer than 0s" }
        if slowWindowMs == 0 { return "the slow-responses window must be longer than 0s" }
        if slowByMs == 0 || slowByMs > Ms.hour { return "the slow-responses delay must be 1ms to 1h" }
        if shard.count < 1 || shard.index < 1 || shard.index > shard.count { return "shard must be I/N with 1 <= I <= N" }
        if !(0...3).contains(maxFates) { return "fates must be 0 to 3, not \(maxFates)" }
        if maxFates > 0, fateKinds.isEmpty { return "fates need at least one fate kind" }
        if !(1...256).contains(jobs) { return "jobs must be 1 to 256, not \(jobs)" }
        return nil
    }
}

/// The dashboard and Rollup actions the alphabet may hold (`--dashboard`).
package enum ExploreDashboard: String, Sendable, CaseIterable {
    /// `update device photos#I`, one action a device: a build with the app's current key.
    case update
    /// `disable photos`.
    case disable
    /// `enable photos`.
    case enable
    /// `rotate photos key K stop-old now`.
    case rotateNow = "rotate-now"
    /// `rotate photos key K keep-old 30d`.
    case rotateKeep = "rotate-keep"
    /// `rollup revoke photos`.
    case revoke
    /// `rollup restore photos`.
    case restore
    /// `rollup revoke-account acme`: Rollup revokes the app's account (not by default).
    case revokeAccount = "revoke-account"
    /// `rollup restore-account acme`: Rollup lifts the account's revocation (not by default).
    case restoreAccount = "restore-account"

    /// The default dashboard alphabet: all but the account actions, which only matter to
    /// the rules on how Rollup's app and account actions combine (S5) and would add two
    /// actions at every moment of every search.
    package static let defaults: [ExploreDashboard] = [.update, .disable, .enable, .rotateNow, .rotateKeep, .revoke, .restore]
}

/// The moments tried at a boundary B (`--boundary-moments`), in this order. Latency is
/// pinned (`ExploreOptions.latencyMs`, A..A), so a request sent at T reaches the server,
/// and is judged, at T + A/2: the server's boundaries (a grace deadline, 30 days of
/// stoppage) and the device's (24 h since its last answered check) are met exactly.
package enum ExploreBoundaryMoment: String, Sendable, CaseIterable {
    /// B - 1 s: an activation, and the server's judgement of its request, before B.
    case before
    /// B - A/2: a request sent then is judged by the server exactly at B (a grace
    /// deadline itself, a stop exactly 30 days old).
    case judgedAt = "judged-at"
    /// B + 1 ms: an activation 1 ms after B (24 h and 1 ms after the last answered check).
    case after1ms = "after-1ms"
    /// B + 1 s.
    case after

    /// The moment of `self` at the boundary `b`, with the round trip `latencyMs`.
    package func moment(at b: SimTime, latencyMs: SimTime) -> SimTime {
        switch self {
        case .before: b - Ms.second
        case .judgedAt: b - latencyMs / 2
        case .after1ms: b + 1
        case .after: b + Ms.second
        }
    }
}

/// The fault windows the alphabet may hold (`--faults`), each as one action or one a device:
/// the fault kinds that name themselves for it (`FaultKind.exploreName`: `offline`,
/// `errors`, `timeouts`, `lost`, `slow`), in the kinds' order; each kind's file says which
/// statements it brings (`FaultKind.explored`).
package struct ExploreFault: RawRepresentable, Hashable, Sendable, CaseIterable {
    package let rawValue: String
    package init?(rawValue: String) {
        guard Faults.kinds.contains(where: { $0.exploreName == rawValue }) else { return nil }
        self.rawValue = rawValue
    }
    /// Every kind in the alphabet, in the kinds' order.
    package static var allCases: [ExploreFault] { Faults.kinds.compactMap { $0.exploreName.flatMap(ExploreFault.init) } }
    /// The kinds the alphabet holds without `--faults` (`FaultKind.exploredByDefault`).
    package static var defaultCases: [ExploreFault] {
        Faults.kinds.filter { $0.exploredByDefault }.compactMap { $0.exploreName.flatMap(ExploreFault.init) }
    }
}

/// Parts of the world left out by default, each with the actions it brings.
package enum ExploreExtra: String, Sendable, CaseIterable {
    /// The app starts waiting for Rollup's approval; Rollup may approve or reject it.
    case pending
    /// A second app of the account (key `rk_live_z`); a device may install a build that
    /// carries that key (`update device photos#I key rk_live_z`, a wrong build).
    case otherApp = "other-app"
    /// One clone that copies the devices' credentials and keys at each launch; it may
    /// launch, open and query.
    case clone
    /// The server may lose a device's record (`forget-device`).
    case forgetDevice = "forget-device"
}

/// One explored action: when it happens (since the start) and what it is.
package struct ExploreStep: Equatable, Sendable {
    /// Since the start of the scenario.
    package var time: SimTime
    /// A scenario action.
    package var action: Action
    /// The action as the compiler makes it (`Explorer.LeafActions`), when the search has it:
    /// a cache, not part of the step (equality ignores it).
    package var compiled: WorldAction?
    /// A step.
    package init(time: SimTime, action: Action, compiled: WorldAction? = nil) {
        self.time = time; self.action = action; self.compiled = compiled
    }
    /// The same time and action.
    package static func == (a: ExploreStep, b: ExploreStep) -> Bool { a.time == b.time && a.action == b.action }
}

/// What the search found and what it cost.
package struct ExploreResult: Sendable {
    /// Scenario runs made: one per path tried.
    package var runs: UInt64 = 0
    /// Distinct world states reached (the state store's size).
    package var distinctStates: UInt64 = 0
    /// Paths not searched on because their state was searched already.
    package var pruned: UInt64 = 0
    /// Of `runs`, those with a request's fate pinned (`maxFates`).
    package var pinnedRuns: UInt64 = 0
    /// The most actions on a path tried.
    package var maxDepth = 0
    /// The shortest violating path found, or nil.
    package var counterexample: Counterexample?
    /// Why the search stopped before it was exhausted; nil when exhausted (or a
    /// counterexample was found breadth first).
    package var incomplete: String?

    /// A path whose scenario breaks an invariant.
    package struct Counterexample: Sendable {
        /// The scenario that breaks it: `simkit run` fails it the same way.
        package var scenario: ScenarioFile
        /// The actions, in order.
        package var path: [ExploreStep]
        /// The requests whose fate it pins (`maxFates`), as the scenario's `pin` lines.
        package var pins: [PinDecl] = []
        /// The invariants it breaks, sorted.
        package var broken: [InvariantID]
        /// The first violation's headline.
        package var headline: String
        /// The first violation told as a story (`FailureStory`), wrapped, two spaces in.
        package var story: String = ""
    }
}

/// `simkit explore`: searches every path of at most `maxActions` actions of a small
/// world, each path a `ScenarioFile`, and reports the shortest one that breaks an
/// invariant (SPEC §3) or that none does.
///
/// A path is run as a scenario from the start (no world is forked mid-run: each run
/// replays its prefix, correct and simpler, at the cost of a run per path). After each
/// run the world's state (`World.stateParts()`, the checkers' `stateParts()`) is digested;
/// a path that reaches a state already searched at the same or fewer actions goes no
/// further. The order of the search is fixed by the options alone: same options, same
/// runs, same counterexample.
package struct Explorer {
    package let options: ExploreOptions
    /// The custom cores `sdk: .custom(NAME)` may name.
    package let cores: SDKCores
    /// Asked before each run: true stops the search (incomplete). A time limit or an interrupt.
    package var shouldStop: () -> Bool = { false }
    /// Called every `progressEvery` runs with the result so far.
    package var progress: (ExploreResult) -> Void = { _ in }
    package var progressEvery: UInt64 = 10_000

    /// An explorer; throws when the options are wrong.
    package init(options: ExploreOptions, cores: SDKCores = SDKCores()) throws(CompileError) {
        if let problem = options.problem { throw CompileError(problem) }
        if case .mutant(let name) = options.sdk, Mutants.named(name) == nil {
            throw CompileError("unknown mutant '\(name)'; known: \(Mutants.names.joined(separator: ", "))")
        }
        _ = try cores.core(for: options.sdk)
        self.options = options
        self.cores = cores
    }

    static let app = "photos", account = "acme", otherApp = "other", otherKey = "rk_live_z"
    static let clone = DeviceSelector.device(group: DeviceGroupDecl.defaultName(kind: .clones, app: app), index: 1)

    /// The scenario of `path`, running to `duration`, with the requests of `pins` pinned.
    package func scenario(path: [ExploreStep], duration: SimTime, pins: [PinnedFate]) -> ScenarioFile {
        var s = scenario(path: path, duration: duration)
        s.pins = pins.map { PinDecl(group: Explorer.app, index: UInt64($0.device) + 1, request: UInt64($0.request), fate: $0.fate) }
        return s
    }

    /// The scenario of `path`, running to `duration`.
    package func scenario(path: [ExploreStep], duration: SimTime) -> ScenarioFile {
        var s = ScenarioFile()
        s.name = "explore: \(path.count) action\(path.count == 1 ? "" : "s") on \(options.devices) device\(options.devices == 1 ? "" : "s")"
        s.seed = options.seed
        s.duration = max(duration, 1)
        s.sdk = options.sdk
        s.accounts = [AccountDecl(name: Explorer.account)]
        s.apps = [AppDecl(name: Explorer.app, account: Explorer.account, key: Explorer.key(0),
                          pending: options.extras.contains(.pending))]
        if options.extras.contains(.otherApp) {
            s.apps.append(AppDecl(name: Explorer.otherApp, account: Explorer.account, key: Explorer.otherKey))
        }
        s.groups = [DeviceGroupDecl(kind: .devices, count: UInt64(options.devices), app: Explorer.app)]
        if options.extras.contains(.clone) {
            s.groups.append(DeviceGroupDecl(kind: .clones, count: 1, app: Explorer.app, copying: Explorer.app))
        }
        s.network = NetworkDecl(latencyMin: options.latencyMs, latencyMax: options.latencyMs, timeout: 30 * Ms.second)
        if options.launchAtStart {
            s.timeline.append(TimedStatement(schedule: .at(0), body: .action(.person(.launch, .all))))
        }
        for step in path { s.timeline.append(TimedStatement(schedule: .at(step.time), body: .action(step.action))) }
        return s
    }

    /// The app's n-th key: `rk_live_a`, `rk_live_b`, …
    static func key(_ n: Int) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        return "rk_live_" + (n < letters.count ? String(letters[n]) : "k\(n)")
    }

    /// What one run of a path left: its state's digest, what broke, and what the next
    /// moments are computed from.
    struct NodeRun {
        var digest = StateDigest()
        var broken: [InvariantID] = []
        var headline = ""
        var story = ""
        var stop: StopReason?
        var now: SimTime = 0
        /// Distinct times of the pending events, ascending.
        var pendingTimes: [SimTime] = []
        /// Per device, the last answered check and the lock's start (`LocalData.never` if
        /// none), as the SDK wrote them on its disk.
        var lastChecks: [SimTime] = []
        var lockedSince: [SimTime] = []
        /// Per device, the checkers' truth (what the server decided and when, from the
        /// trace): the last fresh verdict on a key check, and since when access is stopped
        /// (`LocalData.never` if none). A mutant SDK's own flags may be wrong; these are not.
        var truthLastAnswered: [SimTime] = []
        var truthStopStart: [SimTime] = []
        /// The requests sent, in order (when `maxFates` > 0; else empty).
        var sent: [(device: DeviceIndex, request: UInt32)] = []
    }

    /// A node of the breadth-first tree: its parent's index, its last step, what its run left.
    struct TreeNode { var parent: Int; var step: ExploreStep?; var run: NodeRun }

    /// Runs the search.
    package func run() throws(CompileError) -> ExploreResult {
        switch try cores.core(for: options.sdk) {
        case .reference: return search(ReferenceSDK.self)
        case .custom(_, let type): return openAndSearch(type)
        }
    }

    func openAndSearch<SDK: SDKCore>(_ type: SDK.Type) -> ExploreResult { search(type) }

    /// Compiles the scenario of `path`, ending at `duration`, with the requests of `pins` pinned.
    func setup(path: [ExploreStep], duration: SimTime, pins: [PinnedFate] = []) -> WorldSetup {
        do {
            var setup = try ScenarioCompiler.compile(scenario(path: path, duration: duration)).setup
            setup.countsRequests = options.maxFates > 0
            setup.pinnedFates = pins
            return setup
        } catch {
            preconditionFailure("an explored scenario does not compile: \(error)")
        }
    }

    /// The world of `path` at its fork point (just after its last step fired): forked from
    /// `parent`, the world of the path without its last step, when it can be, else built
    /// and run from the start.
    /// `built` is the path's compiled setup when the caller has it already.
    func forkPoint<SDK: SDKCore>(_: SDK.Type, path: [ExploreStep], parent: World<SDK, InvariantChecker>?,
                                 built: WorldSetup? = nil) -> World<SDK, InvariantChecker> {
        let built = built ?? setup(path: path, duration: path.last?.time ?? 0)
        if let parent {
            var world = parent.fork()
            if world.extend(as: built) {
                world.runToForkPoint()
                return world
            }
        }
        var world = World<SDK, InvariantChecker>(setup: built, observer: InvariantChecker(maxPerInvariant: 1))
        world.runToForkPoint()
        return world
    }

    /// Runs `path` to `duration` on `SDK` and digests the state it reached: from `start`
    /// (the path's world at its fork point) when forking, else from the start.
    func runNode<SDK: SDKCore>(_: SDK.Type, path: [ExploreStep], duration: SimTime, digest: Bool,
                               from start: World<SDK, InvariantChecker>?) -> NodeRun {
        if let start { return finishNode(start.fork(), duration: duration, digest: digest) }
        return finishNode(World<SDK, InvariantChecker>(setup: setup(path: path, duration: duration), observer: InvariantChecker(maxPerInvariant: 1)),
                          duration: duration, digest: digest)
    }

    /// Runs `world` (a new world, or one at a fork point, which it takes) on to `duration`
    /// and digests the state it reached.
    func finishNode<SDK: SDKCore>(_ world: consuming World<SDK, InvariantChecker>, duration: SimTime, digest: Bool) -> NodeRun {
        var world = world
        world.resume(to: duration)
        var out = NodeRun()
        out.stop = world.stop
        out.now = world.now
        // `broken` sorts the invariants by name; a run that broke none (nearly all) skips it.
        out.broken = world.observer.counts.contains(where: { $0 > 0 }) ? world.observer.broken : []
        out.headline = world.observer.violations.first?.headline ?? ""
        out.story = world.observer.violations.first.map { FailureStory($0).wrapped(indent: "  ") } ?? ""
        if options.maxFates > 0 { out.sent = world.sentRequests() }
        guard digest else { return out }
        var d = StateDigest()
        d.add(parts: world.stateParts())
        let truth = world.observer.stateParts()
        d.add(parts: truth)
        out.digest = d
        var times: [SimTime] = []
        for e in world.pendingEvents() where times.last != e.time { times.append(e.time) }
        out.pendingTimes = times
        out.lastChecks = world.devices.map(\.disk.lastAnsweredCheck)
        out.lockedSince = world.devices.map(\.disk.lockedSince)
        (out.truthLastAnswered, out.truthStopStart) = Explorer.truthTimes(truth)
        return out
    }

    /// The checkers' truth of each device's last answered check and stop start, read from
    /// `InvariantChecker.stateParts()` (its `truth` part, one `DeviceTruth` a device, whose
    /// fields are internal to Invariants) by `Mirror`: a read-only look that needs no new
    /// API there. Empty arrays when the part or the fields are not found.
    package static func truthTimes(_ parts: [(label: String, value: Any)]) -> (lastAnswered: [SimTime], stopStart: [SimTime]) {
        var answered: [SimTime] = [], stops: [SimTime] = []
        guard let truths = parts.first(where: { $0.label == "truth" })?.value else { return ([], []) }
        for device in Mirror(reflecting: truths).children {
            for field in Mirror(reflecting: device.value).children {
                switch field.label {
                case "lastAnswered": if let t = field.value as? SimTime { answered.append(t) }
                case "stopStart": if let t = field.value as? SimTime { stops.append(t) }
                default: break
                }
            }
        }
        return (answered, stops)
    }

    /// The actions tried at an ordinary moment, in a fixed order; `rotations` names the next key.
    func actions(rotations: Int) -> [Action] {
        var out: [Action] = []
        let devices = (1...options.devices).map { DeviceSelector.device(group: Explorer.app, index: UInt64($0)) }
        for d in devices { for p in options.persons { out.append(.person(p, d)) } }
        let board = options.dashboard ? options.dashboardKinds : []
        if board.contains(.update) { for d in devices { out.append(.update(d, key: nil)) } }
        if options.extras.contains(.otherApp) { for d in devices { out.append(.update(d, key: Explorer.otherKey)) } }
        if options.extras.contains(.clone) { for p in [ScenarioLanguage.PersonAction.launch, .open, .query] { out.append(.person(p, Explorer.clone)) } }
        if options.extras.contains(.pending) {
            out.append(.rollupApp(.approve, app: Explorer.app))
            out.append(.rollupApp(.reject, app: Explorer.app))
        }
        if options.extras.contains(.forgetDevice) { for d in devices { out.append(.forgetDevice(d)) } }
        if board.contains(.disable) { out.append(.disable(app: Explorer.app)) }
        if board.contains(.enable) { out.append(.enable(app: Explorer.app)) }
        if board.contains(.rotateNow) { out.append(.rotate(app: Explorer.app, key: Explorer.key(rotations + 1), old: .stopNow)) }
        if board.contains(.rotateKeep) { out.append(.rotate(app: Explorer.app, key: Explorer.key(rotations + 1), old: .default)) }
        if board.contains(.revoke) { out.append(.rollupApp(.revoke, app: Explorer.app)) }
        if board.contains(.restore) { out.append(.rollupApp(.restore, app: Explorer.app)) }
        if board.contains(.revokeAccount) { out.append(.rollupAccount(.revoke, account: Explorer.account)) }
        if board.contains(.restoreAccount) { out.append(.rollupAccount(.restore, account: Explorer.account)) }
        if options.faults {
            let alphabet = FaultAlphabet(devices: devices, windowMs: options.faultWindowMs,
                                         shortWindowMs: options.slowWindowMs, delayMs: options.slowByMs)
            for kind in Faults.kinds {
                guard let name = kind.exploreName, options.faultKinds.contains(where: { $0.rawValue == name }) else { continue }
                for f in kind.explored(alphabet) { out.append(.fault(AnyFaultStatement(f))) }
            }
        }
        return out
    }

    /// The next steps after `path`, whose run is `node`, in a fixed order: the race
    /// moments and the moments its faults give (just after each slow-responses window of
    /// the path ends, `FaultKind.raceMoment`), in time order, "soon", then the boundaries.
    func children(of path: [ExploreStep], node: NodeRun, table: LeafActions? = nil) -> [ExploreStep] {
        let t = path.last?.time ?? 0
        let soon = t + options.soonMs
        let rotations = path.filter { if case .rotate = $0.action { return true } else { return false } }.count
        var all = actions(rotations: rotations)
        if options.eachOnce {
            let used = path.compactMap { Explorer.onceKind($0.action) }
            all = all.filter { a in Explorer.onceKind(a).map { !used.contains($0) } ?? true }
        }
        let compiled: [WorldAction?] = table.map { t in t.aligned.count == all.count && !options.eachOnce ? t.aligned : all.map { t.compiled($0) } }
            ?? Array(repeating: nil, count: all.count)
        let devicesCompiled = options.boundaryPersons.map { p in
            (1...options.devices).map { i in table?.compiled(.person(p, DeviceSelector.device(group: Explorer.app, index: UInt64(i)))) }
        }
        var out: [ExploreStep] = []
        // Between the pending events due before "soon": just before the first, just after each.
        var races: [SimTime] = []
        let due = node.pendingTimes.filter { $0 > t && $0 < soon }
        if let first = due.first, first - 1 > t { races.append(first - 1) }
        for (i, e) in due.enumerated() {
            let after = e + 1
            if after < soon, i + 1 >= due.count || after < due[i + 1] { races.append(after) }
        }
        var moments = Array(races.prefix(options.raceMoments))
        // The moments the path's faults give, whatever the race moments are (just after a
        // slow-responses window ends: a request judged then overtakes the slowed answers).
        for s in path {
            guard case .fault(let f) = s.action, let after = f.base.raceMoment(firedAt: s.time) else { continue }
            if after > t, after < soon, !moments.contains(after) { moments.append(after) }
        }
        moments.sort()
        for m in moments { for (a, c) in zip(all, compiled) { out.append(ExploreStep(time: m, action: a, compiled: c)) } }
        for (a, c) in zip(all, compiled) { out.append(ExploreStep(time: soon, action: a, compiled: c)) }
        // Boundaries the rules make relevant: from the SDK's disk, from the checkers' truth
        // (what the server decided and when), and from the path's own actions.
        var marks: [SimTime] = []
        for c in node.lastChecks + node.truthLastAnswered where c != LocalData.never { marks.append(c + 24 * Ms.hour) }
        for l in node.lockedSince + node.truthStopStart where l != LocalData.never { marks.append(l + 30 * Ms.day) }
        for s in path {
            switch s.action {
            case .rotate(_, _, .keep(let grace)): marks.append(s.time + grace)
            case .disable, .rollupApp(.revoke, _), .rollupAccount(.revoke, _): marks.append(s.time + 30 * Ms.day)
            default: break
            }
        }
        marks = marks.filter { $0 > soon + Ms.second }.sorted()
        var unique: [SimTime] = []
        for m in marks where unique.last != m { unique.append(m) }
        let devices = (1...options.devices).map { DeviceSelector.device(group: Explorer.app, index: UInt64($0)) }
        for b in unique.prefix(options.boundaries) {
            for moment in options.boundaryMoments.map({ $0.moment(at: b, latencyMs: options.latencyMs) }) where moment > t {
                for (i, d) in devices.enumerated() {
                    for (j, p) in options.boundaryPersons.enumerated() {
                        out.append(ExploreStep(time: moment, action: .person(p, d), compiled: devicesCompiled[j][i]))
                    }
                }
            }
        }
        return out
    }

    /// What `eachOnce` counts an action as: nil for a person's action (never bounded),
    /// otherwise its statement (a rotation by its policy alone: each names a new key).
    package static func onceKind(_ a: Action) -> String? {
        switch a {
        case .person: return nil
        case .rotate(_, _, .stopNow): return "rotate stop-old now"
        case .rotate: return "rotate keep-old"
        default: return ScenarioPrinter.action(a)
        }
    }

    /// What a pinned run of a path broke.
    struct PinnedViolation { var pins: [PinnedFate]; var broken: [InvariantID]; var headline: String; var story: String; var now: SimTime }

    /// Runs `path` (to `duration`) with pinned requests: first every set of one pin, then
    /// of two, up to `maxFates`, so the first violation found has the fewest pins. A set is
    /// a list of requests in the order they were sent, each pinned to one of `fateKinds`:
    /// the first is any request of a genuine device in `sent` (the unpinned run's, in send
    /// order); each next one any request sent after the last, in the run with the pins
    /// before it (a pin leaves what was sent before it alone, so each set is tried once,
    /// and every set of requests of a run is reached). Each run is from the start.
    /// Returns the first violation, or nil; a budget, a stop or a run that stopped early
    /// sets `result.incomplete`.
    func tryFates<SDK: SDKCore>(_: SDK.Type, path: [ExploreStep], duration: SimTime,
                                sent: [(device: DeviceIndex, request: UInt32)], result: inout ExploreResult) -> PinnedViolation? {
        // The sets of the current size that broke nothing: their pins, the position in the
        // send order of their last pin, and what their run sent.
        var level: [(pins: [PinnedFate], last: Int, sent: [(device: DeviceIndex, request: UInt32)])] = [([], -1, sent)]
        for size in 1...options.maxFates {
            var next: [(pins: [PinnedFate], last: Int, sent: [(device: DeviceIndex, request: UInt32)])] = []
            for base in level {
                for position in (base.last + 1)..<max(base.last + 1, base.sent.count) {
                    let request = base.sent[position]
                    guard Int(request.device) < options.devices else { continue }   // genuine devices only
                    for fate in options.fateKinds {
                        if result.incomplete != nil { return nil }
                        if result.runs >= options.maxRuns { result.incomplete = "the run budget is spent (\(options.maxRuns) runs)"; return nil }
                        if shouldStop() { result.incomplete = "stopped before the search was exhausted"; return nil }
                        let tried = base.pins + [PinnedFate(device: request.device, request: request.request, fate: fate)]
                        var world = World<SDK, InvariantChecker>(setup: setup(path: path, duration: duration, pins: tried),
                                                                 observer: InvariantChecker(maxPerInvariant: 1))
                        world.run()
                        result.runs += 1
                        result.pinnedRuns += 1
                        if result.runs % progressEvery == 0 { progress(result) }
                        if !world.observer.broken.isEmpty {
                            return PinnedViolation(pins: tried, broken: world.observer.broken,
                                                   headline: world.observer.violations.first?.headline ?? "",
                                                   story: world.observer.violations.first.map { FailureStory($0).wrapped(indent: "  ") } ?? "",
                                                   now: world.now)
                        }
                        if let stop = world.stop { result.incomplete = "a run stopped early: \(stop.description)"; return nil }
                        if size < options.maxFates { next.append((tried, position, world.sentRequests())) }
                    }
                }
            }
            level = next
        }
        return nil
    }

    /// The search, on the SDK core `SDK`: see `Search`.
    func search<SDK: SDKCore>(_ sdk: SDK.Type) -> ExploreResult {
        var search = Search<SDK>(self)
        return search.run()
    }
}
