import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import Invariants
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch
import SimKit

/// Counts elements and checks well-formedness with Foundation's XML parser.
final class XMLProbe: NSObject, XMLParserDelegate {
    var elements = 0
    var violations: [String] = []
    var lanes = 0
    var error: String?

    static func parse(_ text: String) -> XMLProbe {
        let probe = XMLProbe()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = probe
        if !parser.parse() { probe.error = probe.error ?? "\(parser.parserError.map { "\($0)" } ?? "unknown") at line \(parser.lineNumber)" }
        return probe
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        elements += 1
        if attributes["class"] == "violation" { violations.append(attributes["data-inv"] ?? "") }
        if attributes["class"] == "lane" { lanes += 1 }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        error = "\(parseError) at line \(parser.lineNumber):\(parser.columnNumber)"
    }
}

@Suite("Timeline: the HTML picture of a run")
struct TimelineTests {
    static func mutantRun(_ seed: UInt64 = 27) throws -> Timeline.Result {
        let scenario = ScenarioGenerator.generate(seed: seed, options: GeneratorOptions(sdk: .mutant("lock-on-5xx")))
        return try Timeline.run(scenario, title: "seed \(seed)")
    }

    @Test("the page is well-formed XML and marks every kept violation with its invariant")
    func wellFormedWithMarkers() throws {
        let result = try Self.mutantRun()
        let probe = XMLProbe.parse(result.html)
        #expect(probe.error == nil, "\(probe.error ?? "")")
        #expect(probe.elements > 50)
        #expect(!result.violations.isEmpty)
        #expect(probe.violations.count == result.violations.count)
        #expect(Set(probe.violations) == Set(result.violations.map(\.invariant.rawValue)))
        #expect(probe.violations.contains("never-lock-on-transient"))
        #expect(probe.lanes == result.facts.deviceCount)
        #expect(result.html.contains("class=\"violation\""))
        #expect(result.html.contains("<script>\n//<![CDATA["))
        #expect(!result.html.contains("http://") || !result.html.contains("src=\"http"))
    }

    @Test("the same run gives the same bytes")
    func deterministic() throws {
        #expect(try Self.mutantRun().html == Self.mutantRun().html)
    }

    @Test("violating devices come first; beyond the lane limit the rest are sampled, and the page says so")
    func sampling() throws {
        let source = try String(contentsOfFile: PackageRoot.path + "/scenarios/thousand-devices-storm.scenario", encoding: .utf8)
        var scenario = try #require(ScenarioParser.parse(source, file: "storm", context: ScenarioRunner.standardContext).scenario)
        scenario.duration = 2 * Ms.day
        let result = try Timeline.run(scenario, sdk: .mutant("lock-on-5xx"), lanesMax: 60)
        let probe = XMLProbe.parse(result.html)
        #expect(probe.error == nil, "\(probe.error ?? "")")
        #expect(probe.lanes == 60)
        #expect(result.html.contains("sampled: 60 of 1000 devices"))
        #expect(result.html.utf8.count < 600_000, "\(result.html.utf8.count) bytes")

        let (lanes, _) = TimelineHTML.chooseLanes(deviceCount: 1000, violations: result.violations, options: TimelineOptions(title: "", lanesMax: 60))
        let violating = result.violations.map { Int($0.device) }
        var firstOnes: [Int] = []
        for d in violating where !firstOnes.contains(d) { firstOnes.append(d) }
        #expect(Array(lanes.prefix(min(60, firstOnes.count))) == Array(firstOnes.prefix(60)))
        #expect(Set(lanes).count == lanes.count)
    }

    @Test("lanes stay within their bounds: columns only grow, one tick per column and answer, at most the cap")
    func bounds() throws {
        let scenario = ScenarioGenerator.generate(seed: 136, options: GeneratorOptions(sdk: .mutant("lock-on-5xx")))
        let compiled = try ScenarioCompiler.compile(scenario)
        var world = World<ReferenceSDK, TimelineObserver>(setup: compiled.setup, observer: TimelineObserver(columns: 200, ticksPerLaneMax: 50))
        world.run()
        let t = world.observer
        for lane in t.lanes {
            #expect(lane.ticks.count <= 50)
            #expect(zip(lane.segments, lane.segments.dropFirst()).allSatisfy { $0.column < $1.column && $0.state != $1.state })
            #expect(zip(lane.ticks, lane.ticks.dropFirst()).allSatisfy { $0.column <= $1.column })
            let keys = lane.ticks.map { Int($0.column) * 16 + Int($0.answer.rawValue) }
            #expect(Set(keys).count == keys.count)
            #expect(lane.segments.allSatisfy { Int($0.column) < 200 })
            #expect(lane.ticks.allSatisfy { Int($0.column) % (1 << Int(lane.tickShift)) == 0 })
        }
        #expect(t.ticksDropped == 0)
        #expect(t.lanes.contains { $0.tickShift > 0 }, "some lane filled up and merged")
        // Merging keeps every answer: the counts add up to the answers delivered.
        var delivered = [Int](repeating: 0, count: t.lanes.count)
        var recorder = World<ReferenceSDK, TraceRecorder>(setup: compiled.setup, observer: TraceRecorder())
        recorder.run()
        for r in recorder.observer.records { if case .delivered = r.event, Int(r.device) < delivered.count { delivered[Int(r.device)] += 1 } }
        #expect(t.lanes.map { $0.ticks.reduce(0) { $0 + Int($1.count) } } == delivered)
    }

    @Test("a portal window (P6) is a band on its devices' lanes, and only on theirs")
    func portalBand() throws {
        let source = """
        scenario "portal"
        duration 1d
        account acme
        app photos account acme key rk_live_A
        devices 2 app photos
        at 0s launch all
        at 6h portal device photos#1 answers login-page for 6h
        at 7h launch all

        """
        let scenario = try #require(ScenarioParser.parse(source, file: "p", context: ScenarioRunner.standardContext).scenario)
        let compiled = try ScenarioCompiler.compile(scenario)
        var world = World<ReferenceSDK, TimelineObserver>(setup: compiled.setup, observer: TimelineObserver(columns: 240))
        world.run()
        let lanes = world.observer.lanes
        #expect(lanes[0].portal.count == 1 && lanes[0].portal.first.map { $0.from == 60 && $0.to == 120 } == true, "\(lanes[0].portal)")
        #expect(lanes[1].portal.isEmpty && lanes[0].offline.isEmpty)
        let result = try Timeline.run(scenario)
        #expect(result.html.contains("class=\"portal\"") && result.html.contains(">portal</span>"))
        #expect(XMLProbe.parse(result.html).error == nil)
    }

    @Test("a device that never ran shows one unconfigured segment; a run with nothing broken says so")
    func quietRun() throws {
        let source = """
        scenario "quiet"
        duration 1d
        account acme
        app photos account acme key rk_live_A
        devices 2 app photos
        at 1h launch device photos#1

        """
        let scenario = try #require(ScenarioParser.parse(source, file: "q", context: ScenarioRunner.standardContext).scenario)
        let result = try Timeline.run(scenario)
        #expect(result.violations.isEmpty)
        #expect(result.html.contains("No invariant broken."))
        #expect(XMLProbe.parse(result.html).error == nil)
    }

    /// The dashboard labels of a page and the x of each mark's line.
    final class MarkProbe: NSObject, XMLParserDelegate {
        struct Label { var x: Int; var y: Int; var text: String; var tip: String }
        var labels: [Label] = []
        var lines: [Int] = []
        var svgWidth = 0
        private var open: Label?

        static func parse(_ html: String) -> MarkProbe {
            let probe = MarkProbe()
            let parser = XMLParser(data: Data(html.utf8))
            parser.delegate = probe
            _ = parser.parse()
            return probe
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            if name == "svg" { svgWidth = Int(attributes["width"] ?? "") ?? 0 }
            let cls = attributes["class"] ?? ""
            if name == "line", cls == "mark" || cls == "mark refused" { lines.append(Int(attributes["x1"] ?? "") ?? -1) }
            if name == "text", cls == "mark-label" {
                open = Label(x: Int(attributes["x"] ?? "") ?? -1, y: Int(attributes["y"] ?? "") ?? -1, text: "", tip: attributes["data-t"] ?? "")
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { open?.text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == "text", let label = open { labels.append(label); open = nil }
        }
    }

    /// Pairs of labels whose boxes (the text's estimated width, a row's height) overlap.
    static func overlaps(_ labels: [MarkProbe.Label]) -> [String] {
        var found: [String] = []
        for (i, a) in labels.enumerated() {
            for b in labels[(i + 1)...] {
                let ax1 = a.x + TimelineHTML.textWidth(a.text), bx1 = b.x + TimelineHTML.textWidth(b.text)
                let sameRow = abs(a.y - b.y) < TimelineHTML.marksRowHeight
                if sameRow, a.x < bx1, b.x < ax1 { found.append("'\(a.text)' at \(a.x),\(a.y) and '\(b.text)' at \(b.x),\(b.y)") }
            }
        }
        return found
    }

    @Test("dashboard labels never overlap, even where actions crowd together (seed 3 around 3d06h–3d12h)")
    func markLabelsApart() throws {
        let scenario = ScenarioGenerator.generate(seed: 3, options: GeneratorOptions())
        let result = try Timeline.run(scenario, title: "seed 3")
        let probe = MarkProbe.parse(result.html)
        // The case in point: marks closer together than one label is wide.
        let xs = probe.lines.sorted()
        #expect(zip(xs, xs.dropFirst()).filter { $1 - $0 < 10 }.count >= 10, "seed 3 no longer crowds its marks: \(xs)")
        #expect(probe.labels.count >= 5)
        let overlapping = Self.overlaps(probe.labels)
        #expect(overlapping.isEmpty, "\(overlapping.joined(separator: "; "))")
        // Bounded rows; each label starts at or just right of its first line and fits the picture.
        #expect(Set(probe.labels.map(\.y)).count <= TimelineHTML.marksRows)
        #expect(probe.labels.allSatisfy { $0.x + TimelineHTML.textWidth($0.text) <= probe.svgWidth })
        // Every mark is on exactly one label's hover text, in time order: none is lost.
        let tips = probe.labels.flatMap { $0.tip.split(separator: "\n").map(String.init) }
        #expect(tips.count == probe.lines.count)
        // The crowd of toggles around 3d10h–3d12h shares one label that counts them; hover lists each.
        let cluster = try #require(probe.labels.first { $0.text.contains(" actions") }, "\(probe.labels.map(\.text))")
        #expect(cluster.text.hasPrefix("\(cluster.tip.split(separator: "\n").count) actions"), "\(cluster.text): \(cluster.tip)")
    }

    @Test("the mark layout stays within its rows and apart for dense, spread and mixed marks; the same input, the same layout")
    func markLayout() {
        func marks(_ times: [Int]) -> [TimelineObserver.Mark] {
            times.enumerated().map { i, t in TimelineObserver.Mark(time: SimTime(t), label: i % 3 == 0 ? "rollup approve-account account 0" : "disable app 0", applied: true) }
        }
        let cases: [[Int]] = [
            Array(repeating: 500, count: 200),                       // all at once
            (0..<200).map { $0 * 2 },                                // a mark every 2 px
            (0..<200).map { $0 * 9 },                                // just apart enough to be told one by one
            (0..<60).map { ($0 * 37) % 1_100 }.sorted(),             // scattered
            [0, 0, 10, 20, 30, 40, 45, 400, 401, 402, 403, 1_090, 1_099],
        ]
        for times in cases {
            let ms = marks(times)
            let layout = TimelineHTML.layoutMarks(ms, x: { Int($0) })
            #expect(layout == TimelineHTML.layoutMarks(ms, x: { Int($0) }))
            #expect(layout.allSatisfy { $0.row >= 0 && $0.row < TimelineHTML.marksRows })
            #expect(layout.flatMap { Array($0.marks) } == Array(ms.indices), "every mark under one label, in order")
            for l in layout {
                let first = Int(ms[l.marks.lowerBound].time)
                #expect(l.x >= first + 3 && l.x <= first + 3 + TimelineHTML.labelShiftMax)
            }
            let labels = layout.map { MarkProbe.Label(x: $0.x, y: $0.row * TimelineHTML.marksRowHeight, text: $0.text, tip: "") }
            #expect(Self.overlaps(labels).isEmpty, "\(times.prefix(20))")
        }
    }

    @Test("escaping keeps markup out of text and attributes")
    func escaping() {
        #expect(TimelineHTML.esc("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;")
    }
}

@Suite("Command line: timeline", .serialized)
struct TimelineCommandTests {
    @Test("writes a page for a mutant seed and exits 1; the same bytes twice")
    func seedPage() throws {
        let out = try SimkitProcess.write("t.html", "")
        let r = try SimkitProcess.run(["timeline", "--seed", "27", "--sdk", "mutant:lock-on-5xx", "-o", out])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stdout.contains("broken:"))
        let first = try String(contentsOfFile: out, encoding: .utf8)
        _ = try SimkitProcess.run(["timeline", "--seed", "27", "--sdk", "mutant:lock-on-5xx", "-o", out])
        #expect(try String(contentsOfFile: out, encoding: .utf8) == first)
        #expect(XMLProbe.parse(first).error == nil)
    }

    @Test("a file with --show draws only the chosen devices")
    func show() throws {
        let out = try SimkitProcess.write("s.html", "")
        let r = try SimkitProcess.run(["timeline", "scenarios/leaked-key-stopped-at-once.scenario", "--show", "photos#3,device photos#5", "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(XMLProbe.parse(try String(contentsOfFile: out, encoding: .utf8)).lanes == 2)
    }

    @Test("bad input exits 2 with a clear message", arguments: [
        (["timeline", "--seed", "1"], "missing '-o OUT.html'"),
        (["timeline", "-o", "x.html"], "expected a scenario FILE or --seed SEED"),
        (["timeline", "--seed", "x", "-o", "x.html"], "expects a whole number"),
        (["timeline", "--seed", "1", "--sdk", "mutant:nope", "-o", "x.html"], "unknown mutant"),
        (["timeline", "scenarios/leaked-key-stopped-at-once.scenario", "--show", "fotos", "-o", "x.html"], "did you mean 'photos'"),
        (["timeline", "scenarios/leaked-key-stopped-at-once.scenario", "--devices", "3", "-o", "x.html"], "goes with --seed"),
        (["timeline", "--lanes", "0", "--seed", "1", "-o", "x.html"], "must be in 1...2000"),
    ])
    func badInput(args: [String], message: String) throws {
        let r = try SimkitProcess.run(args)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test("--help exits 0 and the command is listed")
    func help() throws {
        let r = try SimkitProcess.run(["timeline", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("usage: simkit timeline"))
        #expect(try SimkitProcess.run(["--help"]).stdout.contains("timeline"))
    }
}
