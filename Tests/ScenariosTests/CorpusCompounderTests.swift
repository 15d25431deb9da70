import Foundation
import Testing
import SimKit
import Invariants
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch

/// Features and edges of `s` on the reference; nil when it does not compile or does not pass.
private func measured(_ s: ScenarioFile) -> (features: FeatureMap, edges: FeatureMap)? {
    guard GuidedFuzz.isValidFile(s, cores: SDKCores()) else { return nil }
    let (result, _, features, edges) = GuidedFuzz.measure(s, seed: s.seed, options: .init(), cores: SDKCores())
    return result.passed ? (features, edges) : nil
}

private func parse(_ text: String) throws -> ScenarioFile {
    let parsed = ScenarioParser.parse(text, file: "t.scenario", context: ScenarioRunner.standardContext(cores: SDKCores()))
    return try #require(parsed.scenario, "\(parsed.diagnostics)")
}

@Suite("Compound scripts for the front of a distilled corpus")
struct CorpusCompounderTests {
    @Test("a merge renames the second script apart: its own accounts, apps, groups and keys; 'all' becomes its groups; it prints as a valid file")
    func mergeRenamesApart() throws {
        var slowSeen = 0
        for k in 0..<12 as Range<UInt64> {
            let a = ScenarioGenerator.generate(seed: 40 + k), b = ScenarioGenerator.generate(seed: 90 + k)
            let m = ScenarioMerger.merge(a, b, tag: 2)
            #expect(GuidedFuzz.isValidFile(m, cores: SDKCores()), "seeds \(40 + k) and \(90 + k):\n\(ScenarioPrinter.print(m))")
            #expect(m.groups.count == a.groups.count + b.groups.count && m.apps.count == a.apps.count + b.apps.count)
            #expect(m.duration == max(a.duration, b.duration))
            #expect(Array(m.timeline.prefix(a.timeline.count)) == a.timeline, "the first script's statements come first, unchanged")
            #expect(m.groups.allSatisfy { $0.latency != nil }, "each script keeps its network's latency as its groups' links")
            for st in m.timeline.dropFirst(a.timeline.count) {
                guard case .action(let original) = st.body else { continue }
                // A fault on devices is checked like any selector.
                var action = original
                if case .fault(let f) = original, let sel = f.base.selectedDevices { action = .forgetDevice(sel) }
                switch action {
                case .person(_, let sel), .update(let sel, _), .forgetDevice(let sel), .addPhotos(_, let sel):
                    #expect(sel != .all, "'all' of the second script would reach the first's devices")
                    switch sel {
                    case .group(let g), .count(_, of: let g), .share(_, of: let g), .device(group: let g, _):
                        #expect(g.hasSuffix("-m2"), "\(action) names a group of the first script")
                    case .all: break
                    }
                case .disable(let app), .enable(let app), .rotate(let app, _, _), .stopOldKey(let app, _), .rollupApp(_, let app):
                    #expect(app.hasSuffix("-m2"))
                default: break
                }
                if case .fault(let f) = original, f.base is SlowResponses { slowSeen += 1 }
            }
        }
        #expect(slowSeen > 0, "a second script with a slow-responses window was merged (one seed in eight draws one)")
    }

    @Test("a request in the millisecond of a stop-old now rotation is an edge; one a minute later is not")
    func stopNowIsAnEdge() throws {
        func script(_ launch: String) throws -> ScenarioFile {
            try parse("""
            scenario "stop now"
            duration 2d
            account acme
            app photos account acme key rk_live_a
            devices 1 app photos
            network latency 1ms..1ms timeout 5s
            at 0s launch all
            at 5h close all
            at 10h rotate photos key rk_live_b stop-old now
            at \(launch) launch all

            """)
        }
        let exact = try #require(measured(try script("10h"))), later = try #require(measured(try script("10h2m")))
        #expect(exact.edges.count > later.edges.count, "exact \(exact.edges.count) edges, a minute later \(later.edges.count)")
        var both = exact.features; both.formUnion(exact.edges)
        #expect(both == exact.features, "every edge is a feature too")
    }

    @Test("compounds: greedy, each keeps the edges of its first script and reaches more; the same for any batch and input order")
    func buildIsDeterministic() throws {
        let small = GeneratorOptions(maxDevicesPerGroup: 5, maxDurationDays: 8)
        let parts = (0..<8 as Range<UInt64>).compactMap { k -> CorpusCompounder.Part? in
            let s = ScenarioGenerator.generate(seed: 300 + k, options: small)
            guard let m = measured(s) else { return nil }
            return CorpusCompounder.Part(scenario: s, features: m.features, edges: m.edges, key: String(format: "%04d", 300 + k))
        }
        #expect(parts.count >= 6)
        let measure: ([ScenarioFile]) -> [(features: FeatureMap, edges: FeatureMap)?] = { $0.map(measured) }
        let one = CorpusCompounder.build(parts, count: 2, batch: 1, measure: measure)
        let three = CorpusCompounder.build(parts.reversed(), count: 2, batch: 3, measure: measure)
        #expect(one.map(\.scenario) == three.map(\.scenario) && one.map(\.parts) == three.map(\.parts))
        let first = try #require(one.first)
        let best = parts.max { a, b in a.edges.count != b.edges.count ? a.edges.count < b.edges.count : a.key > b.key }!
        #expect(first.edges.newFeatures(in: best.edges) == 0, "the first compound starts from the script with the most edges")
        #expect(first.parts >= 2, "no script merged into the first compound")
        #expect(first.edges.count > best.edges.count)
        #expect(measured(first.scenario) != nil, "a compound passes on the reference")
        #expect(CorpusCompounder.parts(ofTitle: CorpusCompounder.title(3, parts: 7)) == 7)
        #expect(CorpusCompounder.parts(ofTitle: "corpus: fuzz seed 12") == nil)
    }
}
