/// A problem found in a scenario file, in the style of the Swift compiler.
///
/// Rendered by `rendered` as exactly:
/// ```
/// FILE:LINE:COL: error: MESSAGE
/// <the source line>
/// <spaces>^
/// hint: did you mean 'rotate'?
/// note: ...
/// ```
/// The source line and caret are left out when the location has no line (line 0); the
/// `hint:` and `note:` lines appear only when set. Every line ends with `\n`. The caret
/// stands under the column; tabs before it are copied so it lines up. A source line longer
/// than `excerptBytes` is shown as a window of that many bytes around the column, with `…`
/// where it was cut, so a huge line never comes back whole with a caret line as long.
package struct Diagnostic: Equatable, Sendable {
    /// How bad the problem is.
    package enum Severity: String, Equatable, Sendable {
        /// The file is rejected.
        case error
        /// The file is accepted but probably not what was meant.
        case warning
    }

    /// How bad the problem is.
    package var severity: Severity
    /// Where it is.
    package var location: SourceLocation
    /// What is wrong: lowercase, no trailing period, tokens in single quotes.
    package var message: String
    /// A fix to try, such as `did you mean 'rotate'?`, or nil.
    package var hint: String?
    /// Extra context, or nil.
    package var note: String?
    /// The text of the source line, for the excerpt; empty when there is none.
    package var sourceLine: String

    /// A diagnostic with all its parts.
    package init(severity: Severity = .error, location: SourceLocation, message: String,
                hint: String? = nil, note: String? = nil, sourceLine: String = "") {
        self.severity = severity
        self.location = location
        self.message = message
        self.hint = hint
        self.note = note
        self.sourceLine = sourceLine
    }

    /// The most bytes of the source line an excerpt shows.
    package static let excerptBytes = 160

    /// The compiler-style text described on the type, ending with a newline.
    package var rendered: String {
        let loc = location
        var out = "\(loc.file):\(loc.line):\(loc.column): \(severity.rawValue): \(message)\n"
        if loc.line >= 1 {
            let bytes = Array(sourceLine.utf8)
            var caret = max(0, loc.column - 1)   // bytes before the caret, in what is shown
            var shown = bytes[...]
            var cutBefore = false, cutAfter = false
            if bytes.count > Self.excerptBytes {
                var start = max(0, min(caret - Self.excerptBytes / 2, bytes.count - Self.excerptBytes))
                while start > 0, bytes[start] & 0xC0 == 0x80 { start -= 1 }   // not inside a character
                var end = min(bytes.count, start + Self.excerptBytes)
                while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
                shown = bytes[start..<end]
                caret -= start
                cutBefore = start > 0
                cutAfter = end < bytes.count
            }
            out += (cutBefore ? "…" : "") + String(decoding: shown, as: UTF8.self) + (cutAfter ? "…" : "") + "\n"
            var pad = cutBefore ? " " : ""
            let prefix = Array(shown.prefix(max(0, caret)))
            // One space per character before the caret (tabs kept), so multi-byte text lines up.
            for ch in String(decoding: prefix, as: UTF8.self) { pad += ch == "\t" ? "\t" : " " }
            out += pad + "^\n"
        }
        if let hint { out += "hint: \(hint)\n" }
        if let note { out += "note: \(note)\n" }
        return out
    }

    /// All diagnostics rendered one after another.
    package static func render(_ diagnostics: [Diagnostic]) -> String {
        diagnostics.map(\.rendered).joined()
    }
}

/// Spelling suggestions for diagnostics.
enum Suggest {
    /// Levenshtein distance between two ASCII-ish strings, bounded by their lengths.
    /// - Complexity: O(a × b); both are at most a line long.
    static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf8), y = Array(b.utf8)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var prev = Array(0...y.count)
        var cur = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            cur[0] = i
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            }
            swap(&prev, &cur)
        }
        return prev[y.count]
    }

    /// The candidate nearest to `word`, if it is close enough to be a likely typo.
    /// Ties go to the earlier candidate, so the answer is stable.
    static func nearest(_ word: String, in candidates: [String]) -> String? {
        guard word.utf8.count <= 64 else { return nil }
        var best: (String, Int)? = nil
        for c in candidates {
            let d = distance(word, c)
            if best == nil || d < best!.1 { best = (c, d) }
        }
        guard let (c, d) = best else { return nil }
        let allowed = max(1, min(3, max(word.utf8.count, c.utf8.count) / 3))
        return d <= allowed ? c : nil
    }

    /// `did you mean 'X'?` for the nearest candidate, or nil.
    static func hint(_ word: String, in candidates: [String]) -> String? {
        nearest(word, in: candidates).map { "did you mean '\($0)'?" }
    }
}
