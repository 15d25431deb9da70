/// Where something sits in a scenario file, as the parser saw it.
///
/// Stored in the AST beside each statement and declaration so that diagnostics and the
/// runner can name a line. Two marks always compare equal: a location is not part of a
/// scenario's meaning, so `parse(print(ast)) == ast` holds although the lines move.
package struct SourceMark: Equatable, Hashable, Sendable {
    /// Byte offset of the statement's first token in the file, from 0.
    package var offset: Int
    /// 1-based line; 0 for a statement built in code rather than parsed.
    package var line: Int
    /// 1-based column in UTF-8 bytes; 0 for a statement built in code.
    package var column: Int

    /// A mark for a statement built in code (line 0).
    package static let synthetic = SourceMark(offset: 0, line: 0, column: 0)

    /// A mark at `offset`, `line`, `column`.
    package init(offset: Int, line: Int, column: Int) {
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// Always true: locations never take part in equality.
    package static func == (lhs: SourceMark, rhs: SourceMark) -> Bool { true }

    /// Hashes nothing, to agree with `==`.
    package func hash(into hasher: inout Hasher) {}
}

/// A location to report: file name, 1-based line and 1-based column (UTF-8 bytes).
package struct SourceLocation: Equatable, Hashable, Sendable {
    /// The file name as given to the parser.
    package var file: String
    /// 1-based line number.
    package var line: Int
    /// 1-based column, counted in UTF-8 bytes as swift-syntax does.
    package var column: Int

    /// A location in `file` at `line`:`column`.
    package init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }
}

/// The lines of a source file as byte ranges; turns byte offsets into lines and columns.
///
/// A line ends at LF, CRLF or a lone CR (files saved with old Mac line endings are read
/// as lines, not as one long comment). A UTF-8 byte order mark at the start is skipped:
/// line 1 starts after it.
struct SourceLines: Sendable {
    /// The whole file.
    let bytes: [UInt8]
    /// Byte offset where each line starts; `lineStarts[0]` is 0, or 3 after a byte order mark.
    let lineStarts: [Int]

    /// The UTF-8 byte order mark.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        let skip = bytes.starts(with: SourceLines.byteOrderMark) ? 3 : 0
        var starts = [skip]
        bytes.withUnsafeBufferPointer { buffer in   // a plain index loop: fast even in debug builds
            var i = skip
            while i < buffer.count {
                let b = buffer[i]
                // A CR ends a line unless an LF follows (then the LF ends it, as CRLF).
                if b == 0x0A || (b == 0x0D && (i + 1 == buffer.count || buffer[i + 1] != 0x0A)) { starts.append(i + 1) }
                i += 1
            }
        }
        lineStarts = starts
    }

    /// Number of lines; after a final newline comes one more, empty line.
    var count: Int { lineStarts.count }

    /// Byte range of 0-based line `index`, without its line ending (LF, CRLF or CR).
    func range(ofLine index: Int) -> Range<Int> {
        let start = lineStarts[index]
        var end = index + 1 < lineStarts.count ? lineStarts[index + 1] - 1 : bytes.count
        if end > start, bytes[end - 1] == 0x0D { end -= 1 }
        return start..<max(start, end)
    }

    /// 0-based line index holding byte `offset` (binary search).
    func lineIndex(of offset: Int) -> Int {
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= offset { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// 1-based line and column of byte `offset`.
    func lineColumn(of offset: Int) -> (line: Int, column: Int) {
        let index = lineIndex(of: offset)
        return (index + 1, offset - lineStarts[index] + 1)
    }

    /// The text of the line holding `offset`, with invalid UTF-8 repaired, for display.
    func text(ofLineAt offset: Int) -> String {
        let r = range(ofLine: lineIndex(of: offset))
        return String(decoding: bytes[r], as: UTF8.self)
    }

    /// The mark for byte `offset`.
    func mark(_ offset: Int) -> SourceMark {
        let (line, column) = lineColumn(of: offset)
        return SourceMark(offset: offset, line: line, column: column)
    }
}
