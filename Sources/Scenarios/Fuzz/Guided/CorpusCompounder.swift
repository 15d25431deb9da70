import SimKit
import ScenarioLanguage

/// Puts scripts side by side in one scenario (`simkit corpus distill`'s compounds): the
/// second script's accounts, apps, device groups and keys are renamed apart (a suffix
/// `-mK`, keys `_mK`), so its dashboard and Rollup actions touch only its own app and its
/// person actions only its own devices; each script keeps its own network latency as its
/// groups' links (SPEC §1.4). Server faults stay shared: they hit every device, which the
/// caller's check on the merged run catches when it matters.
package enum ScenarioMerger {
    /// `base` with `part`'s declarations and timeline added, `part`'s names given the
    /// suffix of `tag`. `part`'s `expect` lines are left out. The result may not compile.
    package static func merge(_ base: ScenarioFile, _ part: ScenarioFile, tag: Int) -> ScenarioFile {
        var out = base
        out.duration = max(base.duration, part.duration)
        for i in out.groups.indices where out.groups[i].latency == nil {
            out.groups[i].latency = base.network.latencyMin...max(base.network.latencyMin, base.network.latencyMax)
        }
        func name(_ n: String) -> String { n + "-m\(tag)" }
        func key(_ k: String) -> String { k + "_m\(tag)" }
        out.accounts += part.accounts.map { var a = $0; a.name = name(a.name); return a }
        out.apps += part.apps.map { var a = $0; a.name = name(a.name); a.account = name(a.account); a.key = key(a.key); return a }
        let groups = part.groups.map { g -> DeviceGroupDecl in
            var n = DeviceGroupDecl(kind: g.kind, count: g.count, app: name(g.app), name: name(g.name), copying: g.copying.map(name))
            n.latency = g.latency ?? part.network.latencyMin...max(part.network.latencyMin, part.network.latencyMax)
            return n
        }
        out.groups += groups
        let own = groups.map(\.name)
        /// The selector in `part`'s names, as one or more selectors of the merged scenario
        /// (`all` becomes each of `part`'s groups).
        func selectors(_ sel: DeviceSelector) -> [DeviceSelector] {
            switch sel {
            case .all, .group("all"): own.map { .group($0) }
            case .group(let g): [.group(name(g))]
            case .count(let n, of: "all"): own.map { .count(n, of: $0) }
            case .count(let n, of: let g): [.count(n, of: name(g))]
            case .share(let s, of: "all"): own.map { .share(s, of: $0) }
            case .share(let s, of: let g): [.share(s, of: name(g))]
            case .device(let g, let i): [.device(group: name(g), index: i)]
            }
        }
        func actions(_ a: Action) -> [Action] {
            switch a {
            case .person(let p, let sel): selectors(sel).map { .person(p, $0) }
            case .update(let sel, let k): selectors(sel).map { .update($0, key: k.map(key)) }
            case .addPhotos(let n, let sel): selectors(sel).map { .addPhotos(n, $0) }
            case .forgetDevice(let sel): selectors(sel).map { .forgetDevice($0) }
            case .fault(let f):
                // A fault on devices is renamed like any selector; one of the server or the
                // network as a whole is shared by every device.
                if let sel = f.base.selectedDevices { selectors(sel).map { .fault(AnyFaultStatement(f.base.selecting($0))) } } else { [a] }
            case .rotate(let app, let k, let old): [.rotate(app: name(app), key: key(k), old: old)]
            case .stopOldKey(let app, let k): [.stopOldKey(app: name(app), key: key(k))]
            case .disable(let app): [.disable(app: name(app))]
            case .enable(let app): [.enable(app: name(app))]
            case .rollupApp(let v, let app): [.rollupApp(v, app: name(app))]
            case .rollupAccount(let v, let acc): [.rollupAccount(v, account: name(acc))]
            }
        }
        out.pins += part.pins.map { var p = $0; p.group = name(p.group); return p }
        for st in part.timeline {
            guard case .action(let a) = st.body else { continue }
            for b in actions(a) { out.timeline.append(TimedStatement(schedule: st.schedule, body: .action(b))) }
        }
        return out
    }
}

/// Builds a few compound scripts for the front of a distilled corpus: each is a corpus
/// script with others put beside it (`ScenarioMerger`) as long as the merged run, on the
/// core under study, still passes, keeps every edge feature it had, and reaches an edge
/// that no script chosen so far reached (`GuidanceObserver.edges`: a verdict, an activation
/// or a request within a minute of a true boundary, rules lifted or in force together, a
/// stale verdict, a lock error on a download). A starting corpus is replayed first, so
/// the first seeds of a guided run reach many boundaries each, instead of one or two.
///
/// Greedy and deterministic: a compound starts from the script with the most edges not yet
/// reached (ties: fewer devices, then the smaller key) and tries the next best scripts in
/// that order; the order the scripts were read in plays no part. It ends when no script
/// reaches an edge that no compound reaches, or at `count`; so distilling a distilled
/// corpus (its compounds kept, `reached`) builds no new one.
package enum CorpusCompounder {
    /// A script that may go into a compound: what it reaches, and a key for ties.
    package struct Part: Sendable {
        package var scenario: ScenarioFile
        package var features: FeatureMap
        package var edges: FeatureMap
        package var key: String
        package init(scenario: ScenarioFile, features: FeatureMap, edges: FeatureMap, key: String) {
            self.scenario = scenario; self.features = features; self.edges = edges; self.key = key
        }
        var devices: UInt64 { scenario.groups.reduce(0) { $0 + $1.count } }
    }

    /// One compound: the merged script, what it reaches, and how many scripts it holds.
    package struct Compound: Sendable {
        package var scenario: ScenarioFile
        package var features: FeatureMap
        package var edges: FeatureMap
        package var parts: Int
        package init(scenario: ScenarioFile, features: FeatureMap, edges: FeatureMap, parts: Int) {
            self.scenario = scenario; self.features = features; self.edges = edges; self.parts = parts
        }
    }

    /// The title a compound is written with; `parts(ofTitle:)` reads it back, so that
    /// distilling a distilled corpus keeps its compounds as they are.
    package static func title(_ rank: Int, parts: Int) -> String { "corpus: compound \(rank) of \(parts) scripts" }

    /// The number of scripts in a compound titled by `title(_:parts:)`, or nil for another title.
    package static func parts(ofTitle title: String) -> Int? {
        let words = title.split(separator: " ")
        guard words.count == 6, title.hasPrefix("corpus: compound "), words[3] == "of", words[5] == "scripts" else { return nil }
        return Int(words[4])
    }

    /// How many compounds `simkit corpus distill` builds by default.
    package static let defaultCount = 4
    /// The most scripts in one compound.
    package static let maxParts = 12
    /// The most devices in one compound (genuine and clones): a compound runs often.
    package static let maxDevices: UInt64 = 48
    /// How many candidate scripts are tried to grow a compound by one before it is done.
    package static let triesPerStep = 16

    /// Builds up to `count` compounds. `measure` runs scripts (side by side if it likes)
    /// and gives, for each, its features and edges, or nil when it does not compile, breaks
    /// an invariant or stops early; results must not depend on how it runs them.
    /// `batch` scripts are handed to `measure` at a time (its jobs), the first acceptable
    /// in rank order taken, so the result is the same for any `batch`.
    /// `reached`: the edges of compounds already made (a distilled corpus distilled again).
    package static func build(_ parts: [Part], count: Int = defaultCount, batch: Int = 1, reached start: FeatureMap = FeatureMap(),
                             measure: ([ScenarioFile]) -> [(features: FeatureMap, edges: FeatureMap)?]) -> [Compound] {
        var reached = start   // edges of the compounds built so far
        var used = Array(repeating: false, count: parts.count)   // in the compound being built
        var out: [Compound] = []
        /// The unused scripts, best first: most edges beyond `known`, then fewer devices, then key.
        func ranked(beyond known: FeatureMap, room: UInt64) -> [(index: Int, gain: Int)] {
            parts.indices.compactMap { i -> (Int, Int)? in
                guard !used[i], parts[i].devices <= room else { return nil }
                let gain = known.newFeatures(in: parts[i].edges)
                return gain > 0 ? (i, gain) : nil
            }.sorted { a, b in
                if a.1 != b.1 { return a.1 > b.1 }
                if parts[a.0].devices != parts[b.0].devices { return parts[a.0].devices < parts[b.0].devices }
                return parts[a.0].key < parts[b.0].key
            }
        }
        while out.count < count {
            guard let first = ranked(beyond: reached, room: maxDevices).first else { break }
            used[first.index] = true
            var c = Compound(scenario: parts[first.index].scenario, features: parts[first.index].features,
                             edges: parts[first.index].edges, parts: 1)
            grow: while c.parts < maxParts {
                var known = reached; known.formUnion(c.edges)
                let devices = c.scenario.groups.reduce(0) { $0 + $1.count }
                let tries = ranked(beyond: known, room: maxDevices - min(maxDevices, devices)).prefix(triesPerStep).map(\.index)
                guard !tries.isEmpty else { break }
                for start in stride(from: 0, to: tries.count, by: max(1, batch)) {
                    let chunk = Array(tries[start..<min(tries.count, start + max(1, batch))])
                    let merged = chunk.map { ScenarioMerger.merge(c.scenario, parts[$0].scenario, tag: c.parts + 1) }
                    let runs = measure(merged)
                    for (k, i) in chunk.enumerated() {
                        // Kept if the merged run still reaches every edge the compound
                        // reached, and one more. A script whose edges were not all kept
                        // may go into (or start) a later compound.
                        guard let run = runs[k], run.edges.newFeatures(in: c.edges) == 0,
                              known.newFeatures(in: run.edges) > 0 else { continue }
                        used[i] = true
                        c = Compound(scenario: merged[k], features: run.features, edges: run.edges, parts: c.parts + 1)
                        continue grow
                    }
                }
                break
            }
            reached.formUnion(c.edges)
            out.append(c)
            used = Array(repeating: false, count: parts.count)
        }
        return out
    }
}
