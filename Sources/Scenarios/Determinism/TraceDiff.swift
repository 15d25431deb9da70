import SimKit

/// Two traces written as text (`TraceWriter`: `simkit replay --trace`, `simkit run
/// --trace`) compared line by line: `simkit diff`, and the determinism guard across two
/// processes, which cannot share records in memory.
///
/// The text of a record shows every field an SDK decides; a difference only in a field
/// it leaves out (a `served` record's audit generation, a `delivered` answer's send time)
/// is not seen here, where fingerprints see it.
@usableFromInline package enum TraceDiff {
    /// A trace file, split: its header line, its records, its closing line.
    @usableFromInline package struct Trace: Sendable {
        /// `# simkit trace: seed 5, 40 devices, 90d`.
        @usableFromInline package var header: String
        /// One line per record, in order.
        @usableFromInline package var records: [String]
        /// `# end at 90d00h00m00.000s, 7,205 records`, or nil when the file was cut short.
        @usableFromInline package var footer: String?
    }

    /// A file that is not a trace: what is wrong with it.
    @usableFromInline package struct BadTrace: Error, Sendable, CustomStringConvertible {
        @usableFromInline package var description: String
    }

    /// Splits the text of a trace file named `name`; throws when it does not start with a
    /// trace header.
    /// - Complexity: O(length of `text`).
    @usableFromInline package static func parse(_ text: String, name: String) throws(BadTrace) -> Trace {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        guard let header = lines.first, header.hasPrefix("# simkit trace:") else {
            throw BadTrace(description: "'\(name)' is not a simkit trace: its first line is not '# simkit trace: …' "
                           + "(write one with 'simkit replay SEED --trace FILE' or 'simkit run FILE --trace OUT')")
        }
        var footer: String?
        var records = Array(lines.dropFirst())
        if let last = records.last, last.hasPrefix("# end at ") { footer = last; records.removeLast() }
        if let bad = records.firstIndex(where: { $0.hasPrefix("#") }) {
            throw BadTrace(description: "'\(name)': line \(bad + 2) is a comment inside the records: '\(records[bad])'")
        }
        return Trace(header: header, records: records, footer: footer)
    }

    /// Where `a` and `b` first differ, with the records that agreed before it and what the
    /// place says about the cause (`Nondeterminism`); nil when they are the same, line for
    /// line. `core` names the SDK core when the caller knows it.
    /// - Complexity: O(records).
    @usableFromInline package static func compare(_ a: Trace, _ b: Trace, names: (String, String), core: String? = nil) -> Nondeterminism? {
        var detail: String? = a.header == b.header ? nil : "the headers differ: '\(a.header)' and '\(b.header)'"
        let common = min(a.records.count, b.records.count)
        var i = 0
        while i < common, a.records[i] == b.records[i] { i += 1 }
        if i == common, a.records.count == b.records.count {
            if a.footer == b.footer, detail == nil { return nil }
            if a.footer != b.footer { detail = [detail, "the closing lines differ: '\(a.footer ?? "(none: cut short)")' and '\(b.footer ?? "(none: cut short)")'"].compactMap { $0 }.joined(separator: "; ") }
            return .unlocated(.unlocated, explanation: "every record is the same (\(Nondeterminism.grouped(UInt64(common)))), but not the "
                              + "lines around them.", names: names, core: core, detail: detail)
        }
        let lower = max(0, i - DeterminismCheck.window)
        let before = (lower..<i).map { TraceLine(number: UInt64($0 + 1), text: a.records[$0]) }
        let counts = "\(names.0): \(Nondeterminism.grouped(UInt64(a.records.count))) records, \(names.1): \(Nondeterminism.grouped(UInt64(b.records.count)))"
        var n = Nondeterminism.located(number: UInt64(i + 1), before: before, first: i < a.records.count ? a.records[i] : nil,
                        second: i < b.records.count ? b.records[i] : nil, names: names, core: core,
                        detail: [detail, counts].compactMap { $0 }.joined(separator: "; "))
        if a.header != b.header {
            n.explanation = "the two traces are not of the same run (their headers differ: another seed, scenario or size), "
                + "so they may differ anywhere; compare two traces of one run to find a nondeterministic core."
        }
        return n
    }

    /// The whole trace of a run of `setup` on `SDK`, as a trace file's text.
    /// - Complexity: one simulation; the text in memory (about 60 bytes a record).
    @usableFromInline package static func text<SDK: SDKCore>(of setup: WorldSetup, sdk: SDK.Type) -> String {
        text(of: setup, sdk: sdk, server: ServerModel.self)
    }

    /// `text(of:sdk:)` on the server core `server`.
    @usableFromInline package static func text<SDK: SDKCore, Server: ServerCore>(of setup: WorldSetup, sdk: SDK.Type, server: Server.Type) -> String {
        let sink = TextSink()
        var world = SimWorld<SDK, Server, TraceWriter>(setup: setup, observer: TraceWriter { sink.text += $0 })
        world.run()
        return sink.text
    }

    /// Where a `TraceWriter` in memory appends its chunks.
    final class TextSink { var text = "" }
}
