/// A syntax error on one line; the parser reports it and goes on at the next line.
package struct ParseError: Error, Sendable {
    /// Byte offset in the file.
    package var offset: Int
    /// Lowercase message with quoted tokens.
    package var message: String
    /// Optional fix to try.
    package var hint: String? = nil
    /// Optional context.
    package var note: String? = nil

    /// An error at byte `offset`.
    package init(offset: Int, message: String, hint: String? = nil, note: String? = nil) {
        self.offset = offset; self.message = message; self.hint = hint; self.note = note
    }
}

/// The tokens of one statement and a position in them.
package struct Cursor {
    package let tokens: [Token]
    /// Byte offset just past the last byte of the line (where "expected …" at the end points).
    package let endOffset: Int
    package var pos = 0

    /// A cursor at the first of `tokens`; `endOffset` is just past the line's last byte.
    package init(tokens: [Token], endOffset: Int) { self.tokens = tokens; self.endOffset = endOffset }

    package var atEnd: Bool { pos >= tokens.count }
    package func peek(_ ahead: Int = 0) -> Token? { pos + ahead < tokens.count ? tokens[pos + ahead] : nil }
    /// The text of the last token taken, for "expected X after 'Y'".
    package var previous: String { pos > 0 ? tokens[pos - 1].quoted : "the start" }
    package func isWord(_ w: String) -> Bool { peek().map { $0.kind == .word && $0.text == w } ?? false }

    /// An error "expected WHAT after 'PREV'", at the next token or at the end of the line.
    package func expected(_ what: String, hint: String? = nil) -> ParseError {
        if let t = peek() {
            return ParseError(offset: t.offset, message: "expected \(what) after \(previous), found \(t.quoted)", hint: hint)
        }
        return ParseError(offset: endOffset, message: "expected \(what) after \(previous)", hint: hint)
    }

    package mutating func take() -> Token { pos += 1; return tokens[pos - 1] }

    package mutating func keyword(_ w: String) throws(ParseError) {
        guard isWord(w) else { throw expected("'\(w)'") }
        pos += 1
    }

    package mutating func word(_ what: String, hint: String? = nil) throws(ParseError) -> Token {
        guard let t = peek(), t.kind == .word else { throw expected(what, hint: hint) }
        pos += 1
        return t
    }

    package static func isName(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard let first = b.first, first >= 0x61, first <= 0x7A else { return false }
        return b.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || Token.isDigit($0) || $0 == 0x5F || $0 == 0x2D }
    }

    package mutating func name(_ what: String) throws(ParseError) -> String {
        let t = try word(what)
        guard Cursor.isName(t.text) else {
            throw ParseError(offset: t.offset, message: "invalid \(what) \(t.quoted)",
                             hint: "names start with a lowercase letter, then lowercase letters, digits, '_' or '-'")
        }
        return t.text
    }

    package mutating func key() throws(ParseError) -> String {
        let t = try word("key")
        let b = Array(t.text.utf8), prefix = Array("rk_live_".utf8)
        guard b.count > prefix.count, Array(b.prefix(prefix.count)) == prefix,
              b.dropFirst(prefix.count).allSatisfy({ Token.isLetter($0) || Token.isDigit($0) || $0 == 0x5F }) else {
            throw ParseError(offset: t.offset, message: "invalid key \(t.quoted)", hint: "keys look like 'rk_live_' followed by letters, digits or '_'")
        }
        return t.text
    }

    package mutating func number(_ what: String) throws(ParseError) -> UInt64 {
        guard let t = peek(), t.kind == .number else { throw expected(what) }
        pos += 1
        var value: UInt64 = 0
        for b in t.text.utf8 {
            guard Token.isDigit(b) else { throw ParseError(offset: t.offset, message: "invalid number \(t.quoted)") }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(b - 0x30))
            if o1 || o2 { throw ParseError(offset: t.offset, message: "number \(t.quoted) is too large") }
            value = a
        }
        return value
    }

    package mutating func duration(_ what: String = "duration") throws(ParseError) -> SimTime {
        guard let t = peek(), t.kind == .number else { throw expected(what, hint: Cursor.durationHint) }
        pos += 1
        if let d = DurationText.parse(t.text) { return d }
        if Cursor.looksLikeDuration(t.text) {
            throw ParseError(offset: t.offset, message: "\(what) \(t.quoted) is too large")
        }
        throw ParseError(offset: t.offset, message: "invalid \(what) \(t.quoted)", hint: Cursor.durationHint)
    }

    /// True when `s` is digits-and-unit parts, whatever their size.
    package static func looksLikeDuration(_ s: String) -> Bool {
        let b = Array(s.utf8)
        var i = 0
        guard !b.isEmpty else { return false }
        while i < b.count {
            let start = i
            while i < b.count, Token.isDigit(b[i]) { i += 1 }
            guard i > start, i < b.count else { return false }
            switch b[i] {
            case UInt8(ascii: "d"), UInt8(ascii: "h"), UInt8(ascii: "s"): i += 1
            case UInt8(ascii: "m"): i += (i + 1 < b.count && b[i + 1] == UInt8(ascii: "s")) ? 2 : 1
            default: return false
            }
        }
        return true
    }

    /// `N%` or `N.D%` or `N.DD%`, as basis points.
    package mutating func share() throws(ParseError) -> Share {
        guard let t = peek(), t.kind == .number else { throw expected("share such as '10%'") }
        pos += 1
        guard isPercent() else { throw expected("'%'") }
        pos += 1
        let parts = t.text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(Token.isDigit) }) else {
            throw ParseError(offset: t.offset, message: "invalid share '\(t.text)%'")
        }
        if parts.count == 2, parts[1].utf8.count > 2 {
            throw ParseError(offset: t.offset, message: "share '\(t.text)%' has more than two decimals")
        }
        var whole: UInt64 = 0
        for b in parts[0].utf8 {
            whole = whole &* 10 &+ UInt64(b - 0x30)
            if whole > 10_000_000 { throw ParseError(offset: t.offset, message: "share '\(t.text)%' is too large") }
        }
        var frac: UInt64 = 0
        if parts.count == 2 {
            for b in parts[1].utf8 { frac = frac * 10 + UInt64(b - 0x30) }
            if parts[1].utf8.count == 1 { frac *= 10 }
        }
        return Share(basisPoints: UInt32(whole * 100 + frac))
    }

    package func isPercent() -> Bool { peek()?.kind == .percent }

    package mutating func end() throws(ParseError) {
        if let t = peek() {
            throw ParseError(offset: t.offset, message: "unexpected \(t.quoted) at the end of the statement")
        }
    }

    /// How a selector may look.
    package static let selectorHint = "selectors are: all, GROUP, N of GROUP, N% of GROUP, device GROUP#I"
    /// How a duration may look.
    package static let durationHint = "durations look like 250ms, 10s, 15m, 6h, 30d or 1d12h"

    /// A device selector: `all`, `GROUP`, `N of GROUP`, `N% of GROUP` or `device GROUP#I`.
    package mutating func selector() throws(ParseError) -> DeviceSelector {
        guard let t = peek() else { throw expected("selector", hint: Cursor.selectorHint) }
        switch t.kind {
        case .word where t.text == "all":
            pos += 1
            return .all
        case .word where t.text == "device":
            pos += 1
            let group = try name("group name")
            guard peek()?.kind == .hash else { throw expected("'#'", hint: "a single device is written 'device GROUP#I'") }
            pos += 1
            let index = try number("device number")
            return .device(group: group, index: index)
        case .word:
            return .group(try name("group name"))
        case .number:
            if peek(1)?.kind == .percent {
                let s = try share()
                try keyword("of")
                return .share(s, of: try name("group name"))
            }
            let n = try number("number of devices")
            try keyword("of")
            return .count(n, of: try name("group name"))
        default:
            throw expected("selector", hint: Cursor.selectorHint)
        }
    }

    /// `for D`: a window's length.
    package mutating func forDuration() throws(ParseError) -> SimTime {
        try keyword("for")
        return try duration()
    }
}
