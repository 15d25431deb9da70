import SimKit
import Invariants

extension Explorer {
    /// One search on the SDK core `SDK`: what it found so far, the bound on path length
    /// (it drops when a counterexample is found, so that only shorter ones are looked
    /// for), and the states seen with the fewest actions at which each was searched from
    /// (depth first revisits a state reached again with fewer; breadth first never needs to).
    struct Search<SDK: SDKCore> {
        typealias SimWorld = World<SDK, InvariantChecker>
        let explorer: Explorer
        var result = ExploreResult()
        var bound: Int
        var seen: [StateDigest: Int] = [:]   // determinism: looked up, never iterated
        var frontierBytes: UInt64 = 0
        /// The alphabet's actions compiled once, for leaves' setups (`incrementalSetup`).
        let leafTable: LeafActions?
        var options: ExploreOptions { explorer.options }

        init(_ explorer: Explorer) {
            self.explorer = explorer
            self.bound = explorer.options.maxActions
            self.leafTable = explorer.options.incrementalSetup && explorer.options.forking ? explorer.leafActions() : nil
        }

        /// The root first, then its children breadth first or depth first.
        mutating func run() -> ExploreResult {
            let rootWorld = options.forking ? explorer.forkPoint(SDK.self, path: [], parent: nil) : nil
            guard bound > 0 else {
                _ = visit([], parent: nil)
                return result
            }
            guard let rootNode = root(from: rootWorld) else { return result }
            let rootChildren = explorer.children(of: [], node: rootNode, table: leafTable).enumerated()
                .filter { $0.offset % options.shard.count == options.shard.index - 1 }.map(\.element)
            if options.breadthFirst {
                breadthFirst(rootNode: rootNode, rootWorld: rootWorld, rootChildren: rootChildren)
            } else {
                depthFirst(rootWorld: rootWorld, rootChildren: rootChildren)
            }
            return result
        }

        /// Runs the root, the world before any explored action at 0 s, and its settled run
        /// (with fates pinned, when asked); nil when it breaks a rule already (the
        /// counterexample is recorded), else the node to search on.
        mutating func root(from rootWorld: SimWorld?) -> NodeRun? {
            var rootNode = explorer.runNode(SDK.self, path: [], duration: 0, digest: true, from: rootWorld)
            let settled = explorer.runNode(SDK.self, path: [], duration: options.settleMs, digest: false, from: rootWorld)
            result.runs += 2
            if rootNode.broken.isEmpty {
                rootNode.broken = settled.broken; rootNode.headline = settled.headline; rootNode.story = settled.story; rootNode.now = settled.now
            }
            var rootPins: [PinnedFate] = []
            if rootNode.broken.isEmpty, options.maxFates > 0,
               let pinned = explorer.tryFates(SDK.self, path: [], duration: options.settleMs, sent: settled.sent, result: &result) {
                rootNode.broken = pinned.broken; rootNode.headline = pinned.headline; rootNode.story = pinned.story; rootNode.now = pinned.now
                rootPins = pinned.pins
            }
            if !rootNode.broken.isEmpty {
                let s = explorer.scenario(path: [], duration: rootNode.now, pins: rootPins)
                result.counterexample = .init(scenario: s, path: [], pins: s.pins, broken: rootNode.broken, headline: rootNode.headline,
                                              story: rootNode.story)
                return nil
            }
            seen[rootNode.digest] = 0
            result.distinctStates = 1
            return rootNode
        }

        /// Runs one path (forked from `parent`, its parent's world at its fork point, when
        /// forking); returns the node to expand and its world, or nil (leaf, violation,
        /// pruned, stop).
        mutating func visit(_ path: [ExploreStep], parent: SimWorld?) -> (NodeRun, SimWorld?)? {
            let depth = path.count
            let leaf = depth >= bound
            let t = path.last?.time ?? 0
            // A leaf's world is needed only once: extended from its parent and run on in place.
            // When the parent cannot take the step, the path is built from the start, once.
            var leafWorld: SimWorld?
            var pinnedFound: [PinnedFate] = []
            var refused: WorldSetup?
            if leaf, options.forking, let parent {
                let built = leafTable.flatMap { explorer.leafSetup(path: path, duration: t, parent: parent.setup, table: $0) }
                    ?? explorer.setup(path: path, duration: t)
                var world = parent.fork()
                if world.extend(as: built) { leafWorld = world } else { refused = built }
            }
            let start = options.forking && leafWorld == nil
                ? explorer.forkPoint(SDK.self, path: path, parent: refused == nil ? parent : nil, built: refused) : nil
            var node = leafWorld != nil ? explorer.finishNode(leafWorld.take()!, duration: t + options.settleMs, digest: false)
                : explorer.runNode(SDK.self, path: path, duration: leaf ? t + options.settleMs : t, digest: !leaf, from: start)
            result.runs += 1
            result.maxDepth = max(result.maxDepth, depth)
            if result.runs % explorer.progressEvery == 0 { explorer.progress(result) }
            // A path searched on is also run on past its last action, as a leaf is, so that
            // a path breaks a rule at the same length whatever the bound: breadth first
            // then finds one of fewest actions. A state searched already needs no second look.
            var sentBySettled = node.sent   // a leaf's run is its settled run
            if !leaf, node.broken.isEmpty, node.stop == nil, (seen[node.digest].map { $0 > depth } ?? true) {
                let settled = explorer.runNode(SDK.self, path: path, duration: t + options.settleMs, digest: false, from: start)
                result.runs += 1
                sentBySettled = settled.sent
                if !settled.broken.isEmpty || settled.stop != nil {
                    node.broken = settled.broken; node.headline = settled.headline; node.story = settled.story
                    node.stop = settled.stop; node.now = settled.now
                }
            }
            // The same path with requests' fates pinned, when asked and the path itself is sound.
            if options.maxFates > 0, node.broken.isEmpty, node.stop == nil, !leaf ? (seen[node.digest].map { $0 > depth } ?? true) : true,
               let pinned = explorer.tryFates(SDK.self, path: path, duration: t + options.settleMs, sent: sentBySettled, result: &result) {
                node.broken = pinned.broken; node.headline = pinned.headline; node.story = pinned.story; node.now = pinned.now
                pinnedFound = pinned.pins
            }
            if !node.broken.isEmpty {
                record(node, path: path, pins: pinnedFound)
                return nil
            }
            if let stop = node.stop {
                result.incomplete = "a run stopped early: \(stop.description)"
                return nil
            }
            if leaf { return nil }
            return keep(node, depth: depth) ? (node, start) : nil
        }

        /// A path that broke a rule: the counterexample when it is the first, or shorter
        /// (or as short, with fewer pins) than the one found; from now on only shorter
        /// paths are worth finding.
        mutating func record(_ node: NodeRun, path: [ExploreStep], pins pinnedFound: [PinnedFate]) {
            let depth = path.count
            if result.counterexample == nil || depth < result.counterexample!.path.count
                || (depth == result.counterexample!.path.count && pinnedFound.count < result.counterexample!.pins.count) {
                var s = explorer.scenario(path: path, duration: node.now, pins: pinnedFound)
                s.name = "explore: \(node.broken.map(\.rawValue).joined(separator: ", ")) in \(depth) action\(depth == 1 ? "" : "s")"
                    + (pinnedFound.isEmpty ? "" : " and \(pinnedFound.count) pinned request\(pinnedFound.count == 1 ? "" : "s")")
                result.counterexample = .init(scenario: s, path: path, pins: s.pins, broken: node.broken, headline: node.headline, story: node.story)
            }
            bound = min(bound, max(depth - 1, 0))
        }

        /// Whether a sound node reached at `depth` is searched on: not when its state was
        /// searched from with as few actions, nor when the state store is full; a kept
        /// state is stored with its depth.
        mutating func keep(_ node: NodeRun, depth: Int) -> Bool {
            if let before = seen[node.digest], before <= depth { result.pruned += 1; return false }
            if seen[node.digest] == nil {
                if UInt64(seen.count + 1) * StateDigest.storedBytes + frontierBytes > options.stateBudgetBytes {
                    result.incomplete = "the state store is full (\(options.stateBudgetBytes) bytes, \(seen.count) states)"
                    return false
                }
            }
            seen[node.digest] = depth
            result.distinctStates = UInt64(seen.count)
            return true
        }

        /// True when the search must stop now (and says why in `result.incomplete`).
        mutating func stopping() -> Bool {
            if result.incomplete != nil { return true }
            if result.runs >= options.maxRuns { result.incomplete = "the run budget is spent (\(options.maxRuns) runs)"; return true }
            if explorer.shouldStop() { result.incomplete = "stopped before the search was exhausted"; return true }
            return false
        }

        /// Breadth first. The searched-on nodes as a tree (parent, step, what its run left):
        /// a level is a list of nodes whose children are tried next, each path rebuilt from
        /// the tree, so the frontier costs a node per state, not a path per child.
        mutating func breadthFirst(rootNode: NodeRun, rootWorld: SimWorld?, rootChildren: [ExploreStep]) {
            var tree = [TreeNode(parent: -1, step: nil, run: rootNode)]
            let nodeBytes = UInt64(MemoryLayout<TreeNode>.stride) + 64   // and its arrays' buffers
            var parents = [0]
            levels: while !parents.isEmpty {
                var next: [Int] = []
                for p in parents {
                    let base = Self.path(of: p, in: tree)
                    // The frontier keeps no worlds (they would not fit): a parent's world is
                    // built again, once for all its children.
                    let parentWorld = !options.forking ? nil : p == 0 ? rootWorld
                        : explorer.forkPoint(SDK.self, path: base, parent: nil)
                    for c in p == 0 ? rootChildren : explorer.children(of: base, node: tree[p].run, table: leafTable) {
                        if stopping() { return }
                        let path = base + [c]
                        guard let (node, _) = visit(path, parent: parentWorld) else {
                            if result.counterexample != nil { break levels }
                            continue
                        }
                        tree.append(TreeNode(parent: p, step: c, run: node))
                        next.append(tree.count - 1)
                        frontierBytes = UInt64(tree.count) * nodeBytes
                        if UInt64(seen.count) * StateDigest.storedBytes + frontierBytes > options.stateBudgetBytes {
                            result.incomplete = "the state store is full (\(options.stateBudgetBytes) bytes, \(seen.count) states, \(tree.count) searched on)"
                            return
                        }
                    }
                }
                parents = next
            }
        }

        /// The path of the breadth-first tree's node `index`, from the root.
        static func path(of index: Int, in tree: [TreeNode]) -> [ExploreStep] {
            var out: [ExploreStep] = []
            var i = index
            while let step = tree[i].step { out.append(step); i = tree[i].parent }
            return out.reversed()
        }

        /// The leaves `children[next...]` of the node `base` (whose world is `parent`), run
        /// as a batch (`leafRuns`, on `jobs` threads) and then taken in order as `visit`
        /// takes a leaf: each counted, the first that breaks a rule recorded (the bound then
        /// drops below them, so the rest are not counted, as one thread would not have run
        /// them), a run stopped early making the search incomplete. A batch is at most the
        /// runs left in the budget; `next` moves past what was taken.
        mutating func leafBatch(_ next: inout Int, of children: [ExploreStep], after base: [ExploreStep], parent: SimWorld) {
            let count = Int(min(UInt64(children.count - next), options.maxRuns - result.runs))
            let paths = children[next..<(next + count)].map { base + [$0] }
            let runs = explorer.leafRuns(SDK.self, paths: paths, parent: parent, table: leafTable, jobs: options.jobs)
            for (path, node) in zip(paths, runs) {
                next += 1
                result.runs += 1
                result.maxDepth = max(result.maxDepth, path.count)
                if result.runs % explorer.progressEvery == 0 { explorer.progress(result) }
                if !node.broken.isEmpty { record(node, path: path, pins: []); return }
                if let stop = node.stop { result.incomplete = "a run stopped early: \(stop.description)"; return }
            }
        }

        /// Depth first: a stack of children lists, each with the index of the next to try.
        /// Each frame keeps its path's world at its fork point, for its children to fork.
        mutating func depthFirst(rootWorld: SimWorld?, rootChildren: [ExploreStep]) {
            var stack: [(path: [ExploreStep], children: [ExploreStep], next: Int, world: SimWorld?)] = [([], rootChildren, 0, rootWorld)]
            while !stack.isEmpty {
                if stopping() { return }
                let top = stack.count - 1
                if stack[top].next >= stack[top].children.count || stack[top].path.count >= bound { stack.removeLast(); continue }
                if stack[top].path.count + 1 == bound, options.maxFates == 0, let world = stack[top].world {
                    leafBatch(&stack[top].next, of: stack[top].children, after: stack[top].path, parent: world)
                    continue
                }
                let step = stack[top].children[stack[top].next]
                stack[top].next += 1
                let path = stack[top].path + [step]
                if let (node, world) = visit(path, parent: stack[top].world), path.count < bound {
                    stack.append((path, explorer.children(of: path, node: node, table: leafTable), 0, world))
                }
            }
        }
    }
}
