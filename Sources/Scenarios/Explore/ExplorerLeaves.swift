import Dispatch
import Synchronization
import SimKit
import Invariants
import ScenarioLanguage
import Scenarios

/// The leaves of a search: a path at the last level is run once, past its last step, and
/// leaves nothing to search on. They are nearly all of the runs (a node on 2 devices has
/// about 100 children), so two things make them cheaper without changing what is run:
///
/// - **Setups without compiling** (`ExploreOptions.incrementalSetup`). A path's scenario
///   compiles to its parent's setup with one `at T ACTION` statement more
///   (`ScenarioCompiler.timeline` compiles each statement by itself), so a leaf's setup is
///   its parent world's setup with the step's compiled action appended. Each action of the
///   alphabet is compiled once (`LeafActions`); a rotation interns a new key (the setup's
///   `keyNames` change), so a rotation, or an action whose compiled form needs a key the
///   parent's setup does not name the same way, is compiled from the whole scenario as before.
///   `ExploreLeafTests` holds the two setups equal for every child of many paths.
/// - **Leaves side by side** (`ExploreOptions.jobs`). A node's leaves are independent runs,
///   each forked from the node's world, which none of them writes (its tables are copied on
///   a fork's first write: `SimWorld.fork()`). They run on `jobs` threads into one array, and
///   are then taken in order exactly as one thread takes them: the first that breaks a rule
///   is recorded and the rest of the batch is not counted. So the runs, distinct states,
///   pruned paths and counterexample are the same for any `jobs` (tested).
extension Explorer {
    /// Each action of the alphabet but the rotations, compiled once: the world action that
    /// `at T ACTION` compiles to, and the key names of the scenario it was compiled in.
    struct LeafActions: @unchecked Sendable {   // determinism: read only, never iterated into a trace
        var entries: [(action: Action, compiled: WorldAction)] = []
        /// The compiled form of each action of `actions(rotations:)` in its order, nil for a
        /// rotation (whose key depends on the path): the alphabet's other actions are the
        /// same whatever the rotations.
        var aligned: [WorldAction?] = []
        var keyNames: [String] = []

        /// The compiled form of `action`, if it is in the table.
        func compiled(_ action: Action) -> WorldAction? {
            for e in entries where e.action == action { return e.compiled }
            return nil
        }
    }

    /// Compiles every non-rotation action of the alphabet once, in a one-step scenario.
    func leafActions() -> LeafActions {
        var table = LeafActions()
        for a in actions(rotations: 0) {
            table.aligned.append(nil)
            if case .rotate = a { continue }
            let s = setup(path: [ExploreStep(time: 1, action: a)], duration: 1)
            guard let last = s.schedule.last, last.firstAtMs == 1, last.periodMs == 0 else { continue }
            table.entries.append((a, last.action))
            table.aligned[table.aligned.count - 1] = last.action
            table.keyNames = s.keyNames
        }
        return table
    }

    /// The setup of `path` (ending at `duration`), built from `parent`, the setup of the path
    /// without its last step, when the step's action is in `table` and compiles against the
    /// same key names; nil otherwise (compile the whole scenario).
    func leafSetup(path: [ExploreStep], duration: SimTime, parent: WorldSetup, table: LeafActions) -> WorldSetup? {
        guard let step = path.last, let compiled = step.compiled ?? table.compiled(step.action), parent.keyNames.starts(with: table.keyNames),
              parent.pinnedFates.isEmpty else { return nil }
        var s = parent
        s.schedule.append(.at(step.time, compiled))
        s.durationMs = max(duration, 1)
        return s
    }

    /// Runs the leaf `path` past its last step, from `parent` (its parent's world at its
    /// fork point): forked and extended when it can be, else built and run from the start.
    /// Writes nothing shared: leaves of one parent may run on several threads.
    func leafRun<SDK: SDKCore>(_: SDK.Type, path: [ExploreStep], parent: World<SDK, InvariantChecker>, table: LeafActions?) -> NodeRun {
        let t = path.last?.time ?? 0
        let built = table.flatMap { leafSetup(path: path, duration: t, parent: parent.setup, table: $0) }
            ?? setup(path: path, duration: t)
        var world = parent.fork()
        if world.extend(as: built) {
            return finishNode(consume world, duration: t + options.settleMs, digest: false)   // moved: its tables stay its own
        }
        var fresh = World<SDK, InvariantChecker>(setup: built, observer: InvariantChecker(maxPerInvariant: 1))
        fresh.runToForkPoint()
        return finishNode(consume fresh, duration: t + options.settleMs, digest: false)
    }

    /// The runs of the leaves `paths`, all children of `parent`, in their order, on at most
    /// `jobs` threads.
    func leafRuns<SDK: SDKCore>(_ sdk: SDK.Type, paths: [[ExploreStep]], parent: World<SDK, InvariantChecker>,
                                table: LeafActions?, jobs: Int) -> [NodeRun] {
        if jobs <= 1 || paths.count < 2 {
            return paths.map { leafRun(sdk, path: $0, parent: parent, table: table) }
        }
        let work = LeafBatch(explorer: self, paths: paths, parent: parent, table: table)
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: min(jobs, paths.count)) { _ in
            while true {
                let i = next.add(1, ordering: .relaxed).oldValue
                if i >= work.paths.count { break }
                work.store(i, work.explorer.leafRun(sdk, path: work.paths[i], parent: work.parent, table: work.table))
            }
        }
        return work.results()
    }
}

/// One batch of leaves and the slots their runs are written to, each by the thread that
/// ran it; read after all threads are done (`concurrentPerform` returns then).
final class LeafBatch<SDK: SDKCore>: @unchecked Sendable {   // determinism: each slot written once, read after the join
    let explorer: Explorer
    let paths: [[ExploreStep]]
    let parent: World<SDK, InvariantChecker>
    let table: Explorer.LeafActions?
    let slots: UnsafeMutableBufferPointer<Explorer.NodeRun?>

    init(explorer: Explorer, paths: [[ExploreStep]], parent: World<SDK, InvariantChecker>, table: Explorer.LeafActions?) {
        self.explorer = explorer; self.paths = paths; self.parent = parent; self.table = table
        slots = .allocate(capacity: paths.count)
        slots.initialize(repeating: nil)
    }

    func store(_ i: Int, _ run: Explorer.NodeRun) { slots[i] = run }

    func results() -> [Explorer.NodeRun] { slots.map { $0! } }

    deinit {
        _ = slots.deinitialize()
        slots.deallocate()
    }
}
