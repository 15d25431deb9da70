import Foundation

/// The last bytes a server process wrote to its standard error (`ProcessTransport.stderrLimit`),
/// and the last error in them for reports.
package final class StderrTail: @unchecked Sendable {
    let lock = NSLock()
    var bytes: [UInt8] = []

    func append(_ chunk: ArraySlice<UInt8>) {
        lock.lock(); defer { lock.unlock() }
        bytes.append(contentsOf: chunk)
        if bytes.count > ProcessTransport.stderrLimit { bytes.removeFirst(bytes.count - ProcessTransport.stderrLimit) }
    }

    /// `StderrTail.lastError(in:)` of what was kept.
    func lastError() -> [String] {
        lock.lock(); defer { lock.unlock() }
        return Self.lastError(in: String(decoding: bytes, as: UTF8.self))
    }

    /// The most lines a report shows; a longer error keeps its first `keptAtStart` lines
    /// (where Node, Java and Go put the message) and its last ones (where Python puts it).
    package static let maxLines = 60
    static let keptAtStart = 25
    /// Lines shown when no error's start is recognised.
    static let plainLines = 20

    /// The last error in `text`, whole when it fits `maxLines`: from the start of the last
    /// exception or panic report SimKit recognises (Python's `Traceback`, a Node uncaught
    /// error's `FILE:LINE` or a message followed by `at` frames, Java's `Exception in
    /// thread` and its `Caused by` blocks, Go's `panic:`, Rust's `panicked at`, Ruby's `from`
    /// frames) to the end; else the last `plainLines` lines. A Node or Python exception's
    /// message is always in it, not only its stack frames.
    package static func lastError(in text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        while let last = lines.last, last.trimmingSpaces.isEmpty { lines.removeLast() }
        guard !lines.isEmpty else { return [] }
        var shown = Array(lines[(errorStart(lines) ?? max(0, lines.count - plainLines))...])
        if shown.count > maxLines {
            let end = maxLines - keptAtStart - 1
            shown = Array(shown.prefix(keptAtStart)) + ["… (\(shown.count - keptAtStart - end) lines left out) …"] + Array(shown.suffix(end))
        }
        return shown
    }

    /// Where the last error report begins in `lines`, or nil.
    static func errorStart(_ lines: [String]) -> Int? {
        func indented(_ l: String) -> Bool { l.first == " " || l.first == "\t" }
        func frame(_ l: String) -> Bool {
            guard indented(l) else { return false }
            let t = l.trimmingSpaces
            return t.hasPrefix("at ") || t.hasPrefix("from ") || (t.hasPrefix("... ") && t.hasSuffix(" more"))
        }
        /// A Node uncaught error's first line: `/path/file.js:LINE` (the source line and a caret follow).
        func fileLine(_ l: String) -> Bool {
            guard !indented(l), !l.contains(" "), let colon = l.lastIndex(of: ":") else { return false }
            let digits = l[l.index(after: colon)...]
            return !digits.isEmpty && digits.allSatisfy(\.isNumber)
        }
        func marker(_ l: String) -> Bool {
            l.hasPrefix("Traceback (most recent call last):") || l.hasPrefix("panic: ") || l.hasPrefix("fatal error: ")
                || l.hasPrefix("Exception in thread ") || (l.hasPrefix("thread '") && l.contains("panicked at"))
        }
        var i = lines.count - 1
        while i >= 0 {
            let l = lines[i]
            if marker(l) || fileLine(l) { return i }
            if !indented(l), !l.isEmpty, i + 1 < lines.count, frame(lines[i + 1]) {
                // A message and its frames: earlier blocks of the same report (Java's
                // `Caused by:`) and a Node `FILE:LINE` header just before it belong to it.
                var start = i
                while start > 0, frame(lines[start - 1]) {
                    var j = start - 1
                    while j > 0, indented(lines[j]) { j -= 1 }
                    if indented(lines[j]) { break }
                    start = j
                }
                for j in stride(from: start - 1, through: max(0, start - 6), by: -1) where fileLine(lines[j]) || marker(lines[j]) {
                    return j
                }
                return start
            }
            i -= 1
        }
        return nil
    }
}

extension String {
    /// Without spaces and tabs at either end.
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
