import Invariants
import SimKit

/// What to draw and how to title it.
package struct TimelineOptions: Sendable {
    /// The page title: the scenario's name or `fuzz seed 27`.
    package var title: String
    /// A line under the title: seed, SDK, devices, events.
    package var subtitle: String
    /// The most device lanes drawn; beyond it lanes are sampled, violating devices first.
    package var lanesMax: Int
    /// Only these devices get lanes (nil: every device).
    package var only: [DeviceIndex]?
    /// A timeline page titled `title`.
    package init(title: String, subtitle: String = "", lanesMax: Int = 200, only: [DeviceIndex]? = nil) {
        self.title = title; self.subtitle = subtitle; self.lanesMax = lanesMax; self.only = only
    }
}

/// Renders a `TimelineObserver` and the run's violations as one self-contained XHTML
/// page: inline CSS, an inline SVG and a little JavaScript for hover details; no network.
///
/// The output is well-formed XML (every tag closed, attributes quoted, script in CDATA)
/// and byte-for-byte the same for the same run: no timestamps, no hashing order.
package enum TimelineHTML {
    static let labelWidth = 150
    static let rightPad = 24
    /// The most rows of dashboard labels; a label that fits no row joins its neighbour.
    static let marksRows = 4
    static let marksRowHeight = 14
    static let axisHeight = 22
    /// The most invariants told as stories under the picture (markers show every kept violation).
    static let storiesMax = 8

    /// The lanes drawn, in order: violating devices first (by first violation), then a
    /// deterministic even sample of the rest. Also says how they were chosen.
    package static func chooseLanes(deviceCount: Int, violations: [Violation], options: TimelineOptions) -> (lanes: [Int], note: String) {
        precondition(options.lanesMax > 0, "lanesMax must be positive")
        let allowed: [Int] = options.only.map { $0.map(Int.init).filter { $0 < deviceCount } } ?? Array(0..<deviceCount)
        var isAllowed = [Bool](repeating: options.only == nil, count: deviceCount)
        for d in allowed { isAllowed[d] = true }
        var chosen: [Int] = [], taken = [Bool](repeating: false, count: deviceCount)
        for v in violations where Int(v.device) < deviceCount && isAllowed[Int(v.device)] && !taken[Int(v.device)] {
            guard chosen.count < options.lanesMax else { break }
            chosen.append(Int(v.device)); taken[Int(v.device)] = true
        }
        let violating = chosen.count
        let rest = allowed.filter { !taken[$0] }
        let room = options.lanesMax - chosen.count
        if rest.count <= room {
            chosen += rest
            return (chosen, "\(chosen.count) device\(chosen.count == 1 ? "" : "s")" + (violating > 0 ? ", violating first" : ""))
        }
        // An even sample: the i-th of `room` picks is rest[i × count / room].
        for i in 0..<room { chosen.append(rest[i * rest.count / room]) }
        let note = "sampled: \(chosen.count) of \(allowed.count) devices (\(violating) violating device\(violating == 1 ? "" : "s") first, then an even sample of the rest)"
        return (chosen, note)
    }

    /// The page: the time axis, the server lane, a lane per chosen device, the dashboard
    /// marks and the violations, drawn in that order (later parts lie on top).
    /// - Complexity: O(lanes × (segments + ticks) + violations + marks); the output is
    ///   bounded by the observer's bounds and `lanesMax`.
    package static func render(_ t: TimelineObserver, violations: [Violation], options: TimelineOptions) -> String {
        guard let facts = t.facts else { return page(options, note: "nothing ran", body: "") }
        let (lanes, note) = chooseLanes(deviceCount: t.lanes.count, violations: violations, options: options)
        let l = Layout(t, laneCount: lanes.count, durationMs: facts.durationMs)

        var s = ""
        s.reserveCapacity(64 * 1024)
        s += "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"tl\" width=\"\(l.width)\" height=\"\(l.height)\" data-cols=\"\(l.cols)\" data-dur=\"\(l.duration)\" data-left=\"\(labelWidth)\">\n"
        s += "<defs><pattern id=\"hatch\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"2\" height=\"5\" fill=\"#5b6573\" opacity=\"0.55\"/></pattern></defs>\n"
        s += axisSVG(l)
        s += serverSVG(t, l)
        var violatingLane = [Bool](repeating: false, count: t.lanes.count)
        for v in violations where Int(v.device) < violatingLane.count { violatingLane[Int(v.device)] = true }
        for (row, d) in lanes.enumerated() {
            s += laneSVG(t.lanes[d], name: facts.deviceName(DeviceIndex(d)), violating: violatingLane[d], y: l.lanesTop + row * l.laneHeight, l)
        }
        s += marksSVG(t, l)
        s += violationsSVG(violations, lanes: lanes, deviceCount: t.lanes.count, l)
        s += "</svg>\n"

        var body = legend()
        body += "<div class=\"scroll\">\n" + s + "</div>\n"
        body += storyList(violations, facts: facts)
        return page(options, note: note + " · one pixel ≈ \(pixelText(l.duration / UInt64(l.cols)))" + droppedText(t, lanes: lanes), body: body)
    }

    /// Where the picture's parts go, from the number of lanes and the dashboard labels'
    /// rows; few lanes get room to read, many stay compact.
    struct Layout {
        let t: TimelineObserver
        let cols: Int
        let laneCount: Int
        let laneHeight: Int, barHeight: Int
        let marksTop = 4
        let markLabels: [MarkLabel]
        let width: Int, height: Int
        let axisTop: Int, serverTop: Int, lanesTop: Int
        let duration: SimTime

        init(_ t: TimelineObserver, laneCount: Int, durationMs: SimTime) {
            self.t = t
            self.cols = t.columns
            self.laneCount = laneCount
            laneHeight = laneCount <= 40 ? 22 : 14
            barHeight = laneCount <= 40 ? 17 : 11
            markLabels = layoutMarks(t.marks, x: { labelWidth + Int(t.column($0)) }, right: labelWidth + cols + rightPad - 2)
            // Room for the last labels: they start right of their line, not before the edge.
            width = markLabels.reduce(labelWidth + cols + rightPad) { max($0, $1.x + $1.width + 4) }
            let rows = markLabels.reduce(0) { max($0, $1.row + 1) }
            axisTop = marksTop + rows * marksRowHeight + 4
            serverTop = axisTop + axisHeight
            lanesTop = serverTop + laneHeight + 6
            height = lanesTop + laneCount * laneHeight + 8
            duration = max(1, durationMs)
        }

        /// The x of virtual time `time`.
        func x(_ time: SimTime) -> Int { labelWidth + Int(t.column(time)) }
        /// The x of pixel column `c`.
        func xc(_ c: UInt16) -> Int { labelWidth + Int(c) }
    }

    /// The time axis in days and hours, with grid lines across every lane.
    static func axisSVG(_ l: Layout) -> String {
        let step = axisStep(l.duration)
        var s = "<g class=\"axis\">"
        var at: SimTime = 0
        while at <= l.duration {
            let px = labelWidth + Int(UInt64(l.cols) * at / l.duration)
            s += "<line class=\"grid\" x1=\"\(px)\" x2=\"\(px)\" y1=\"\(l.axisTop + 14)\" y2=\"\(l.height - 8)\"/>"
            s += "<text x=\"\(px)\" y=\"\(l.axisTop + 11)\" text-anchor=\"middle\">\(axisLabel(at, step: step))</text>"
            at += step
        }
        s += "<text class=\"unit\" x=\"\(labelWidth - 16)\" y=\"\(l.axisTop + 11)\" text-anchor=\"end\">virtual time</text></g>\n"
        return s
    }

    /// Server-wide fault windows: shaded across every lane, solid on the server lane.
    static func serverSVG(_ t: TimelineObserver, _ l: Layout) -> String {
        var s = "<g class=\"server\"><text class=\"lane-name\" x=\"\(labelWidth - 8)\" y=\"\(l.serverTop + l.barHeight - 1)\" text-anchor=\"end\">server faults</text>"
        s += "<rect class=\"srv-bg\" x=\"\(labelWidth)\" y=\"\(l.serverTop)\" width=\"\(l.cols)\" height=\"\(l.barHeight)\"/>"
        for w in t.serverWindows {
            let x0 = l.x(w.from), x1 = max(x0 + 1, l.x(w.to))
            let tip = esc("\(w.label) from \(FailureStory.time(w.from)) to \(FailureStory.time(w.to))")
            s += "<rect class=\"fault-span\" x=\"\(x0)\" y=\"\(l.lanesTop)\" width=\"\(x1 - x0)\" height=\"\(l.laneCount * l.laneHeight)\"/>"
            s += "<rect class=\"fault\" x=\"\(x0)\" y=\"\(l.serverTop)\" width=\"\(x1 - x0)\" height=\"\(l.barHeight)\" data-t=\"\(tip)\"/>"
        }
        s += "</g>\n"
        return s
    }

    /// One device's lane at height `y`: its states, offline windows and answers.
    static func laneSVG(_ lane: TimelineObserver.Lane, name: String, violating: Bool, y: Int, _ l: Layout) -> String {
        let barHeight = l.barHeight, cols = l.cols
        var s = "<g class=\"lane\" transform=\"translate(0,\(y))\" data-n=\"\(esc(name))\" data-k=\"\(tickData(lane.ticks))\">"
        s += "<text class=\"lane-name\(violating ? " bad" : "")\" x=\"\(labelWidth - 8)\" y=\"\(barHeight - 1)\" text-anchor=\"end\">\(esc(name))</text>"
        // The state covering most of the lane is one rect; the others are one path each.
        var widths = [Int](repeating: 0, count: SDKState.allCases.count)
        var paths = [String](repeating: "", count: SDKState.allCases.count)
        for (i, seg) in lane.segments.enumerated() {
            let end = i + 1 < lane.segments.count ? Int(lane.segments[i + 1].column) : cols
            widths[Int(seg.state.rawValue)] += end - Int(seg.column)
        }
        let base = widths.indices.max { widths[$0] < widths[$1] || (widths[$0] == widths[$1] && $0 > $1) }!
        s += "<rect class=\"s\(base)\" x=\"\(labelWidth)\" width=\"\(cols)\" height=\"\(barHeight)\"/>"
        for (i, seg) in lane.segments.enumerated() where Int(seg.state.rawValue) != base {
            let w = (i + 1 < lane.segments.count ? Int(lane.segments[i + 1].column) : cols) - Int(seg.column)
            paths[Int(seg.state.rawValue)] += "M\(l.xc(seg.column)) 0h\(w)v\(barHeight)h-\(w)z"
        }
        for (state, d) in paths.enumerated() where !d.isEmpty { s += "<path class=\"s\(state)\" d=\"\(d)\"/>" }
        for w in lane.offline {
            s += "<rect class=\"off\" x=\"\(l.xc(w.from))\" width=\"\(Int(w.to) - Int(w.from) + 1)\" height=\"\(barHeight)\"/>"
        }
        for w in lane.portal {
            s += "<rect class=\"portal\" x=\"\(l.xc(w.from))\" width=\"\(Int(w.to) - Int(w.from) + 1)\" height=\"\(barHeight)\"/>"
        }
        // 200s in the lower half, transient failures in the upper half, refusals full height.
        let half = barHeight / 2
        for cls in AnswerClass.allCases {
            let (top, size) = switch cls { case .ok: (barHeight - half, half); case .transient: (0, half); default: (0, barHeight) }
            var d = ""
            for k in lane.ticks where AnswerClass(k.answer) == cls { d += "M\(l.xc(k.column)) \(top)v\(size)" }
            if !d.isEmpty { s += "<path class=\"\(cls.cssClass)\" d=\"\(d)\"/>" }
        }
        s += "</g>\n"
        return s
    }

    /// Dashboard and Rollup actions: a dashed line across every lane from its label's row;
    /// a label moved right of its line gets a leader to it, a cluster one label over a
    /// bracket spanning its lines. Labels go last, haloed, so no line crosses their text.
    static func marksSVG(_ t: TimelineObserver, _ l: Layout) -> String {
        var s = "<g class=\"marks\">"
        for label in l.markLabels {
            let labelY = l.marksTop + label.row * marksRowHeight + 10
            for i in label.marks {
                let m = t.marks[i], px = l.x(m.time)
                s += "<line class=\"mark\(m.applied ? "" : " refused")\" x1=\"\(px)\" x2=\"\(px)\" y1=\"\(labelY + 3)\" y2=\"\(l.height - 8)\" data-t=\"\(esc(markTip(m)))\"/>"
            }
            let x0 = l.x(t.marks[label.marks.lowerBound].time), x1 = l.x(t.marks[label.marks.upperBound - 1].time)
            if x1 > x0 { s += "<line class=\"mark-span\" x1=\"\(x0)\" x2=\"\(x1)\" y1=\"\(labelY + 3)\" y2=\"\(labelY + 3)\"/>" }
            if label.x > x1 + 3 { s += "<line class=\"mark-lead\" x1=\"\(x1)\" x2=\"\(label.x - 1)\" y1=\"\(labelY + 3)\" y2=\"\(labelY + 3)\"/>" }
        }
        for label in l.markLabels {
            let labelY = l.marksTop + label.row * marksRowHeight + 10
            let tip = label.marks.map { esc(markTip(t.marks[$0])) }.joined(separator: "&#10;")
            s += "<text class=\"mark-label\" x=\"\(label.x)\" y=\"\(labelY)\" data-t=\"\(tip)\">\(esc(label.text))</text>"
        }
        s += "</g>\n"
        return s
    }

    /// Violations: a red diamond on the device's lane (or the server lane) at its time;
    /// none for a device without a lane.
    static func violationsSVG(_ violations: [Violation], lanes: [Int], deviceCount: Int, _ l: Layout) -> String {
        var s = "<g class=\"violations\">"
        var rowOf = [Int](repeating: -1, count: deviceCount)
        for (row, d) in lanes.enumerated() { rowOf[d] = row }
        for v in violations {
            let cy: Int
            if Int(v.device) < rowOf.count {
                guard rowOf[Int(v.device)] >= 0 else { continue }
                cy = l.lanesTop + rowOf[Int(v.device)] * l.laneHeight + l.barHeight / 2
            } else {
                cy = l.serverTop + l.barHeight / 2
            }
            let cx = l.x(v.time), r = 7
            let tip = esc("[\(v.invariant.rawValue)] " + FailureStory(v).text)
            s += "<circle class=\"vring\" cx=\"\(cx)\" cy=\"\(cy)\" r=\"\(r + 4)\"/>"
            s += "<path class=\"violation\" data-inv=\"\(v.invariant.rawValue)\" data-t=\"\(tip)\" d=\"M\(cx) \(cy - r)L\(cx + r) \(cy)L\(cx) \(cy + r)L\(cx - r) \(cy)Z\"/>"
        }
        s += "</g>\n"
        return s
    }

    /// Answers by colour: 200, a lock error, a transient failure, another refusal.
    enum AnswerClass: Int, CaseIterable {
        case ok, other, transient, lock
        init(_ a: Answer) {
            if a == .ok { self = .ok } else if a.isLockError { self = .lock } else if a.isTransient { self = .transient } else { self = .other }
        }
        var cssClass: String { ["k-ok", "k-other", "k-tr", "k-lock"][rawValue] }
    }

    /// `column.answer.kind.count` per tick that is not a 200, space-separated, for hover
    /// details (200s are the most common and the tick's colour says enough).
    static func tickData(_ ticks: [TimelineObserver.Tick]) -> String {
        ticks.lazy.filter { $0.answer != .ok }
            .map { "\($0.column).\($0.answer.rawValue).\($0.kind.rawValue)" + ($0.count == 1 ? "" : ".\($0.count)") }
            .joined(separator: " ")
    }

    static func axisStep(_ duration: SimTime) -> SimTime {
        let steps: [SimTime] = [1, 3, 6, 12].map { $0 * Ms.hour } + [1, 2, 5, 7, 10, 15, 30, 60, 90, 180, 365].map { $0 * Ms.day }
        return steps.first { duration / $0 <= 16 } ?? 365 * Ms.day
    }

    static func axisLabel(_ at: SimTime, step: SimTime) -> String {
        if step % Ms.day == 0 { return "\(at / Ms.day)d" }
        let h = (at % Ms.day) / Ms.hour
        return "\(at / Ms.day)d\(h < 10 ? "0" : "")\(h)h"
    }

    static func pixelText(_ ms: SimTime) -> String {
        ms >= Ms.hour ? "\(ms / Ms.hour)h\(ms % Ms.hour / Ms.minute)m" : ms >= Ms.minute ? "\(ms / Ms.minute)m" : "\(ms / Ms.second)s"
    }

    static func droppedText(_ t: TimelineObserver, lanes: [Int]) -> String {
        var s = ""
        let dropped = lanes.reduce(0) { $0 + t.lanes[$1].ticksDropped }
        let shift = lanes.reduce(0) { max($0, Int(t.lanes[$1].tickShift)) }
        if shift > 0 { s += " · in busy lanes requests merge into ticks \(1 << shift) px apart (at most \(t.ticksPerLaneMax) a lane)" }
        if dropped > 0 { s += " · \(dropped) request ticks beyond \(t.ticksPerLaneMax) per lane not drawn" }
        if t.marksDropped > 0 { s += " · \(t.marksDropped) dashboard or fault marks not drawn" }
        return s
    }

    /// A dashboard label placed above the axis: the marks `marks` (indices into the
    /// observer's, in time order) under one text starting at `x` in row `row`.
    struct MarkLabel: Equatable {
        var marks: Range<Int>
        var text: String
        var row: Int
        var x: Int
        /// `textWidth(text)`: the room the layout gives the text.
        var width: Int
    }

    /// The width in pixels a mark label is given: 6.6 px a character, as wide as 10.5 px
    /// semibold DejaVu Sans (the widest of the fonts a page falls back to; Helvetica and
    /// Arial take about 5.5), so labels laid out apart stay apart in any of them.
    static func textWidth(_ text: String) -> Int { (text.count * 66 + 9) / 10 }

    /// The least room between two labels in a row, and how far right of its line a label may move.
    static let labelGap = 6, labelShiftMax = 30
    /// Three or more marks each within this many pixels of the previous share one label.
    static let clusterGap = 6

    /// The texts one label may have, the most telling first: the mark's own; for a cluster
    /// its count and what it holds (`disable app ×3`, `4 actions: disable app, enable app`),
    /// else just the count (`7 actions`). Hover lists every mark.
    static func labelTexts(_ marks: ArraySlice<TimelineObserver.Mark>) -> [String] {
        var kinds: [String] = []
        for m in marks where !kinds.contains(shortMark(m.label)) { kinds.append(shortMark(m.label)) }
        if marks.count == 1 { return kinds }
        if kinds.count == 1 { return ["\(kinds[0]) ×\(marks.count)"] }
        return (kinds.count <= 2 ? ["\(marks.count) actions: " + kinds.joined(separator: ", ")] : []) + ["\(marks.count) actions"]
    }

    /// Lays the dashboard labels out so that no two overlap: each mark's label starts just
    /// right of its line in the first of `marksRows` rows with room, moved right by up to
    /// `labelShiftMax` if need be. A run of three or more marks `clusterGap` apart shares one
    /// label (its shorter text where the longer would pass `right`, the picture's edge; the
    /// page widens for a last label that still does), and a label that fits no row joins its
    /// nearer neighbour, until every label fits. `x` is a time's pixel column.
    /// - Complexity: O(marks² × rows) at worst; marks are bounded by the observer.
    static func layoutMarks(_ marks: [TimelineObserver.Mark], x: (SimTime) -> Int, right: Int = .max) -> [MarkLabel] {
        guard !marks.isEmpty else { return [] }
        // Groups of consecutive marks: dense runs together, the rest alone.
        var groups: [Range<Int>] = []
        var start = 0
        for i in 1...marks.count {
            guard i == marks.count || x(marks[i].time) - x(marks[i - 1].time) > clusterGap else { continue }
            if i - start >= 3 { groups.append(start..<i) } else { groups += (start..<i).map { $0..<($0 + 1) } }
            start = i
        }
        while true {
            var labels: [MarkLabel] = [], rowEnd = [Int](repeating: Int.min / 2, count: marksRows), failed: Int?
            for (g, range) in groups.enumerated() {
                let x0 = x(marks[range.lowerBound].time)
                // The first text that fits, in the row that needs the least move right.
                var best: (text: String, row: Int, x: Int)?
                let texts = labelTexts(marks[range])
                for text in texts where best == nil {
                    for r in 0..<marksRows {
                        let at = max(x0 + 3, rowEnd[r] + labelGap)
                        guard at - (x0 + 3) <= labelShiftMax, at + textWidth(text) <= right || text == texts.last else { continue }
                        if best == nil || at < best!.x { best = (text, r, at) }
                        if at <= x0 + 3 { break }
                    }
                }
                guard let (text, row, at) = best else { failed = g; break }
                rowEnd[row] = at + textWidth(text)
                labels.append(MarkLabel(marks: range, text: text, row: row, x: at, width: textWidth(text)))
            }
            guard let g = failed else { return labels }
            // Join the nearer neighbour (the earlier one on a tie); a lone group always fits row 0.
            let gapBefore = g > 0 ? x(marks[groups[g].lowerBound].time) - x(marks[groups[g - 1].upperBound - 1].time) : Int.max
            let gapAfter = g + 1 < groups.count ? x(marks[groups[g + 1].lowerBound].time) - x(marks[groups[g].upperBound - 1].time) : Int.max
            let into = gapBefore <= gapAfter ? g - 1 : g + 1
            let merged = min(groups[g].lowerBound, groups[into].lowerBound)..<max(groups[g].upperBound, groups[into].upperBound)
            groups.replaceSubrange(min(g, into)...max(g, into), with: [merged])
        }
    }

    /// A mark's hover text: its time, the whole action, whether it was refused.
    static func markTip(_ m: TimelineObserver.Mark) -> String {
        "\(FailureStory.time(m.time)) \(m.label)\(m.applied ? "" : " (refused)")"
    }

    /// `rollup revoke app 0` → `rollup revoke`; labels stay short, hover has the rest.
    static func shortMark(_ label: String) -> String {
        let words = label.split(separator: " ")
        return words.prefix(2).joined(separator: " ")
    }

    static func legend() -> String {
        func item(_ swatch: String, _ label: String) -> String { "<span class=\"li\">\(swatch)\(label)</span>" }
        let states = SDKState.allCases.map { item("<span class=\"sw s\($0.rawValue)\"></span>", "\($0)") }.joined(separator: " ")
        return """
        <div class="legend"><b>SDK state</b> \(states) <span class="sep"></span><b>answers</b> \
        \(item("<span class=\"tk k-ok\"></span>", "200")) \(item("<span class=\"tk k-lock\"></span>", "lock error")) \
        \(item("<span class=\"tk k-tr\"></span>", "5xx, timeout, offline")) \(item("<span class=\"tk k-other\"></span>", "other refusal")) \
        <span class="sep"></span>\(item("<span class=\"sw off\"></span>", "offline")) \(item("<span class=\"sw portal\"></span>", "portal")) \(item("<span class=\"sw fault\"></span>", "server fault")) \
        \(item("<span class=\"tk mark\"></span>", "dashboard, Rollup")) \(item("<span class=\"dia\">◆</span>", "violation"))</div>

        """
    }

    /// The first violation of each invariant as a story; the rest are on the markers.
    static func storyList(_ violations: [Violation], facts: WorldFacts) -> String {
        guard !violations.isEmpty else { return "<p class=\"ok\">No invariant broken.</p>\n" }
        var told: [InvariantID] = []
        var s = "<h2>What broke</h2>\n<ol class=\"stories\">\n"
        for v in violations where !told.contains(v.invariant) && told.count < storiesMax {
            told.append(v.invariant)
            s += "<li><span class=\"inv\">\(esc(v.invariant.rawValue))</span> \(esc(FailureStory(v).text))</li>\n"
        }
        s += "</ol>\n"
        if violations.count > told.count {
            s += "<p class=\"note\">\(violations.count - told.count) more violation\(violations.count - told.count == 1 ? "" : "s") kept: hover the ◆ markers.</p>\n"
        }
        return s
    }

    /// Escapes text for XML content and double-quoted attributes.
    package static func esc(_ text: String) -> String { XMLText.escape(text) }

    static func page(_ o: TimelineOptions, note: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html xmlns="http://www.w3.org/1999/xhtml" lang="en">
        <head>
        <meta charset="utf-8"/>
        <title>\(esc(o.title)) · SimKit timeline</title>
        <style>
        \(css)
        </style>
        </head>
        <body>
        <h1>\(esc(o.title))</h1>
        <p class="sub">\(esc(o.subtitle))</p>
        <p class="note">\(esc(note))</p>
        \(body)<div id="tip"></div>
        <script>
        //<![CDATA[
        \(script)
        //]]>
        </script>
        </body>
        </html>

        """
    }

    static let css = """
    body{font:13px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1d2430;margin:16px 20px;background:#fff}
    h1{font-size:19px;margin:0 0 2px}h2{font-size:15px;margin:12px 0 2px}
    .sub,.note{margin:0;color:#4b5563}.note{font-size:12px;margin-bottom:8px}
    .legend{display:flex;flex-wrap:wrap;align-items:center;gap:4px 6px;margin:6px 0 6px;font-size:12px;max-width:1260px}
    .legend b{margin-right:0}.sep{width:10px}.li{white-space:nowrap}
    .sw{display:inline-block;width:16px;height:11px;border-radius:2px;vertical-align:-1px;margin:0 4px 0 6px}
    .tk{display:inline-block;width:3px;height:12px;vertical-align:-2px;margin:0 4px 0 8px}.tk.k-ok{height:6px;vertical-align:-2px}.tk.k-tr{height:6px;vertical-align:4px}
    .dia{color:#e11d48;font-size:15px;margin:0 3px 0 8px}
    .stories{margin:4px 0 10px;padding-left:22px;max-width:1220px}
    .stories li{margin:2px 0}.inv{font-weight:600;color:#be123c;margin-right:4px}
    .ok{color:#166534;font-weight:600}
    .scroll{overflow:auto}
    svg text{font-size:11px;fill:#374151}
    .lane-name{font:11px ui-monospace,Menlo,Consolas,monospace;fill:#374151}.lane-name.bad{fill:#be123c;font-weight:700}
    .grid{stroke:#e5e7eb;stroke-width:1}.unit{fill:#6b7280}
    .s0{fill:#e5e7eb}.s1{fill:#93c5fd}.s2{fill:#bbf7d0}.s3{fill:#fbbf24}.s4{fill:#a78bfa}
    .sw.s0{background:#e5e7eb}.sw.s1{background:#93c5fd}.sw.s2{background:#bbf7d0}.sw.s3{background:#fbbf24}.sw.s4{background:#a78bfa}
    .k-ok{stroke:#15803d;background:#15803d}.k-lock{stroke:#dc2626;background:#dc2626}.k-tr{stroke:#1e3a8a;background:#1e3a8a}.k-other{stroke:#9a3412;background:#9a3412}
    path.k-ok,path.k-lock,path.k-tr,path.k-other{stroke-width:1.4}
    .off{fill:url(#hatch)}.sw.off{background:repeating-linear-gradient(45deg,#5b6573 0 2px,#fff 2px 5px)}
    .portal{fill:#0d9488;opacity:0.35}.sw.portal{background:#0d9488;opacity:0.5}
    .srv-bg{fill:#f3f4f6}.fault{fill:#f87171}.fault-span{fill:#ef4444;opacity:0.09}.sw.fault{background:#f87171}
    .mark{stroke:#334155;stroke-width:1;stroke-dasharray:4 3}.mark.refused{stroke:#94a3b8}.tk.mark{background:#334155}
    .mark-label{font-size:10.5px;fill:#1e293b;font-weight:600;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
    .mark-span,.mark-lead{stroke:#334155;stroke-width:1}
    .violation{fill:#e11d48;stroke:#fff;stroke-width:1.5;cursor:pointer}.vring{fill:none;stroke:#e11d48;stroke-width:1.5;opacity:0.55;pointer-events:none}
    #tip{position:fixed;display:none;max-width:520px;background:#111827;color:#f9fafb;padding:6px 8px;border-radius:4px;font-size:12px;pointer-events:none;white-space:pre-wrap;z-index:9}
    """

    /// Hover details. It sits in CDATA for XML parsers (and a `//` comment hides the markers from
    /// JavaScript), so it must never contain `]]>` or `</script`.
    static var script: String { """
    (function(){
    var svg=document.getElementById('tl'),tip=document.getElementById('tip');
    if(!svg){return;}
    var cols=+svg.getAttribute('data-cols'),dur=+svg.getAttribute('data-dur'),left=+svg.getAttribute('data-left');
    var answers=[\(Answer.allCases.map { "'\($0)'" }.joined(separator: ","))];
    var kinds=[\(RequestKind.allCases.map { "'\($0)'" }.joined(separator: ","))];
    var states=[\(SDKState.allCases.map { "'\($0)'" }.joined(separator: ","))];
    function two(n){return (n+100+'').slice(1);}
    function when(c){var t=Math.floor(c*dur/cols),d=Math.floor(t/86400000),h=Math.floor(t%86400000/3600000),m=Math.floor(t%3600000/60000);return d+'d'+two(h)+'h'+two(m)+'m';}
    function show(e,text){tip.textContent=text;tip.style.display='block';tip.style.left=Math.min(e.clientX+14,window.innerWidth-540)+'px';tip.style.top=(e.clientY+14)+'px';}
    svg.addEventListener('mousemove',function(e){
      var t=e.target,text=t.getAttribute('data-t');
      if(text){show(e,text);return;}
      var g=t.parentNode;
      if(!g.getAttribute||!g.getAttribute('data-n')){tip.style.display='none';return;}
      var c=Math.round(e.clientX-svg.getBoundingClientRect().left-left);
      var k=t.getAttribute('class')||'',s=k.charAt(0)==='s'?states[+k.slice(1)]:'';
      if(k.slice(0,2)==='k-'){s={'k-ok':'200','k-lock':'lock error','k-tr':'5xx, timeout or offline','k-other':'refused'}[k];}
      var out=g.getAttribute('data-n')+' · '+when(c)+(s?' · '+s:'');
      var ks=(g.getAttribute('data-k')||'').split(' ');
      for(var j=0;j<ks.length;j++){if(!ks[j]){continue;}var p=ks[j].split('.');if(Math.abs(+p[0]-c)<=2){out+='\\n'+kinds[+p[2]]+' → '+answers[+p[1]]+(p[3]?' ×'+p[3]:'')+' at '+when(+p[0]);}}
      show(e,out);
    });
    svg.addEventListener('mouseleave',function(){tip.style.display='none';});
    })();
    """ }
}
