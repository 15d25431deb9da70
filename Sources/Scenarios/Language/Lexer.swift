import SimKit

/// A problem found while reading a line: the byte offset and message.
struct LexError: Error, Sendable {
    /// Byte offset in the file.
    var offset: Int
    /// Lowercase message with quoted tokens.
    var message: String
    /// Optional fix to try.
    var hint: String? = nil
}

/// Splits one line of bytes into tokens. Byte-based: anything that is not ASCII is only
/// allowed in strings and comments, and must be valid UTF-8 there.
enum Lexer {
    static func isLetter(_ b: UInt8) -> Bool { Token.isLetter(b) }
    static func isDigit(_ b: UInt8) -> Bool { Token.isDigit(b) }
    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

    /// The offset of the first byte that breaks UTF-8 in `bytes[range]`, or nil if valid.
    /// - Complexity: O(n).
    static func firstInvalidUTF8(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        var i = range.lowerBound
        while i < range.upperBound {
            let b = bytes[i]
            if b < 0x80 { i += 1; continue }
            let need: Int
            var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
            switch b {
            case 0xC2...0xDF: need = 1
            case 0xE0: need = 2; lo = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: need = 2
            case 0xED: need = 2; hi = 0x9F
            case 0xF0: need = 3; lo = 0x90
            case 0xF1...0xF3: need = 3
            case 0xF4: need = 3; hi = 0x8F
            default: return i
            }
            for k in 1...need {
                guard i + k < range.upperBound else { return i }
                let c = bytes[i + k]
                let (l, h) = k == 1 ? (lo, hi) : (UInt8(0x80), UInt8(0xBF))
                if c < l || c > h { return i }
            }
            i += need + 1
        }
        return nil
    }

    /// The tokens of `bytes[range]` (one line, without its newline), stopping at a comment.
    static func lex(_ bytes: [UInt8], _ range: Range<Int>) -> Result<[Token], LexError> {
        if range.count > ScenarioLimits.maxLineBytes {
            return .failure(LexError(offset: range.lowerBound + ScenarioLimits.maxLineBytes,
                                     message: "line is longer than \(ScenarioLimits.maxLineBytes) bytes"))
        }
        if let bad = firstInvalidUTF8(bytes, range) {
            return .failure(LexError(offset: bad, message: "invalid UTF-8 byte 0x\(hex(bytes[bad]))"))
        }
        var tokens: [Token] = []
        var i = range.lowerBound
        let end = range.upperBound
        func text(_ a: Int, _ b: Int) -> String { String(decoding: bytes[a..<b], as: UTF8.self) }
        while i < end {
            let b = bytes[i]
            if isSpace(b) { i += 1; continue }
            // `#` after a space or at the start of a line starts a comment; glued to a token it is a symbol.
            if b == UInt8(ascii: "#") {
                if i == range.lowerBound || isSpace(bytes[i - 1]) { break }
                tokens.append(Token(kind: .hash, text: "#", offset: i)); i += 1
            } else if isLetter(b) || b == UInt8(ascii: "_") {
                let s = i
                while i < end, isLetter(bytes[i]) || isDigit(bytes[i]) || bytes[i] == 0x5F || bytes[i] == 0x2D { i += 1 }
                tokens.append(Token(kind: .word, text: text(s, i), offset: s))
            } else if isDigit(b) {
                let s = i
                while i < end {
                    let c = bytes[i]
                    if isLetter(c) || isDigit(c) { i += 1; continue }
                    if c == UInt8(ascii: "."), i + 1 < end, isDigit(bytes[i + 1]) { i += 1; continue }
                    break
                }
                tokens.append(Token(kind: .number, text: text(s, i), offset: s))
            } else if b == UInt8(ascii: "\"") {
                let s = i
                i += 1
                var value: [UInt8] = []
                var closed = false
                while i < end {
                    let c = bytes[i]
                    if c == UInt8(ascii: "\"") { closed = true; i += 1; break }
                    if c == UInt8(ascii: "\\") {
                        guard i + 1 < end, bytes[i + 1] == UInt8(ascii: "\"") || bytes[i + 1] == UInt8(ascii: "\\") else {
                            return .failure(LexError(offset: i, message: "unknown escape in string; only '\\\"' and '\\\\' are allowed"))
                        }
                        value.append(bytes[i + 1]); i += 2; continue
                    }
                    if c < 0x20 && c != 0x09 || c == 0x7F {
                        return .failure(LexError(offset: i, message: "control character 0x\(hex(c)) in string"))
                    }
                    value.append(c); i += 1
                }
                guard closed else { return .failure(LexError(offset: s, message: "unterminated string")) }
                tokens.append(Token(kind: .string, text: String(decoding: value, as: UTF8.self), offset: s))
            } else if b == UInt8(ascii: "%") {
                tokens.append(Token(kind: .percent, text: "%", offset: i)); i += 1
            } else if b == UInt8(ascii: "."), i + 1 < end, bytes[i + 1] == UInt8(ascii: ".") {
                tokens.append(Token(kind: .dotDot, text: "..", offset: i)); i += 2
            } else if (b == UInt8(ascii: ">") || b == UInt8(ascii: "<")), i + 1 < end, bytes[i + 1] == UInt8(ascii: "=") {
                tokens.append(Token(kind: b == UInt8(ascii: ">") ? .atLeast : .atMost, text: text(i, i + 2), offset: i)); i += 2
            } else {
                let shown = b < 0x80 && b >= 0x20 ? "'\(Character(Unicode.Scalar(b)))'" : "byte 0x\(hex(b))"
                return .failure(LexError(offset: i, message: "unexpected character \(shown)"))
            }
            if tokens.count > ScenarioLimits.maxTokensPerLine {
                return .failure(LexError(offset: tokens[tokens.count - 1].offset,
                                         message: "more than \(ScenarioLimits.maxTokensPerLine) tokens on one line"))
            }
        }
        return .success(tokens)
    }

    /// Two upper-case hex digits.
    static func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
    }
}
