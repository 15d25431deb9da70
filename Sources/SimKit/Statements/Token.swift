/// The kinds of token in a scenario line.
package enum TokenKind: Equatable, Sendable {
    /// A letter or `_` then letters, digits, `_`, `-`: keywords, names, keys.
    case word
    /// A digit then digits, letters and inner `.`: numbers, durations, `0.5`.
    case number
    /// A double-quoted string; `text` holds the value with escapes undone.
    case string
    /// `%`
    case percent
    /// `..`
    case dotDot
    /// `#` right after a token (as in `photos#17`); a `#` after a space starts a comment.
    case hash
    /// `>=`
    case atLeast
    /// `<=`
    case atMost
}

/// One token: its kind, its text and where it starts in the file. The lexer
/// (`ScenarioLanguage`) makes them and a statement's own code reads them (`Cursor`): they
/// live below the language so that a fault kind (`Sources/SimKit/Faults`) parses its
/// statement in the file that says what it does to the world.
package struct Token: Equatable, Sendable {
    /// What sort of token this is.
    package var kind: TokenKind
    /// The source text (for strings: the value without quotes and escapes).
    package var text: String
    /// Byte offset of the first byte in the file.
    package var offset: Int

    /// A token.
    package init(kind: TokenKind, text: String, offset: Int) { self.kind = kind; self.text = text; self.offset = offset }

    /// How the token is quoted in a message.
    package var quoted: String { kind == .string ? "'\"\(text)\"'" : "'\(text)'" }
}

extension Token {
    /// An ASCII letter.
    package static func isLetter(_ b: UInt8) -> Bool { (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) }
    /// An ASCII digit.
    package static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
}
