/// Text made safe for XML 1.0 content and double-quoted attributes: the timeline page and
/// the JUnit report share it.
@usableFromInline package enum XMLText {
    /// Escapes `&`, `<`, `>`, quotes; control characters XML 1.0 forbids become spaces.
    /// - Complexity: O(n).
    @usableFromInline package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for ch in text.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                if ch.value < 0x20, ch != "\n", ch != "\t" { out += " " } else { out.unicodeScalars.append(ch) }
            }
        }
        return out
    }
}
