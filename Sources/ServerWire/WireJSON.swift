/// The little JSON the wire protocol needs (docs/server-protocol.md): a reader for one
/// reply line and the escaping of strings for the lines SimKit writes. Foundation's
/// `JSONSerialization` would do, but costs more than the round trip it decodes.
package enum WireJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number as written (read on demand as an unsigned integer).
    case number(String)
    case string(String)
    case array([WireJSON])
    case object([String: WireJSON])

    /// The value of `key` in an object, or nil (absent, or not an object).
    package subscript(key: String) -> WireJSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// A non-negative integer that fits 64 bits, or nil.
    package var uint: UInt64? {
        if case .number(let n) = self { return UInt64(n) }
        return nil
    }
    package var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    package var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
    package var isNull: Bool { self == .null }

    /// Parses one JSON value that fills `bytes` (whitespace around it allowed); nil for
    /// anything else. Nesting is bounded (32 levels) and so is the work: one pass.
    package static func parse(_ bytes: ArraySlice<UInt8>) -> WireJSON? {
        var p = Reader(bytes: bytes, i: bytes.startIndex)
        guard let v = p.value(depth: 0) else { return nil }
        p.skipSpace()
        return p.i == bytes.endIndex ? v : nil
    }

    package static func parse(_ text: String) -> WireJSON? { parse(ArraySlice(Array(text.utf8))) }

    /// `s` as a JSON string literal, quotes included.
    package static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    struct Reader {
        let bytes: ArraySlice<UInt8>
        var i: Int

        mutating func skipSpace() {
            while i < bytes.endIndex, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
        }

        mutating func literal(_ word: String) -> Bool {
            let w = Array(word.utf8)
            guard bytes.endIndex - i >= w.count, Array(bytes[i..<i + w.count]) == w else { return false }
            i += w.count
            return true
        }

        mutating func value(depth: Int) -> WireJSON? {
            guard depth < 32 else { return nil }
            skipSpace()
            guard i < bytes.endIndex else { return nil }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1
                var o: [String: WireJSON] = [:]
                skipSpace()
                if i < bytes.endIndex, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
                while true {
                    skipSpace()
                    guard let k = string() else { return nil }
                    skipSpace()
                    guard i < bytes.endIndex, bytes[i] == UInt8(ascii: ":") else { return nil }
                    i += 1
                    guard let v = value(depth: depth + 1) else { return nil }
                    o[k] = v
                    skipSpace()
                    guard i < bytes.endIndex else { return nil }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
                    return nil
                }
            case UInt8(ascii: "["):
                i += 1
                var a: [WireJSON] = []
                skipSpace()
                if i < bytes.endIndex, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
                while true {
                    guard let v = value(depth: depth + 1) else { return nil }
                    a.append(v)
                    skipSpace()
                    guard i < bytes.endIndex else { return nil }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
                    return nil
                }
            case UInt8(ascii: "\""):
                return string().map { .string($0) }
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default:
                let start = i
                while i < bytes.endIndex, Self.isNumberByte(bytes[i]) { i += 1 }
                guard i > start else { return nil }
                let text = String(decoding: bytes[start..<i], as: UTF8.self)
                guard Double(text) != nil else { return nil }
                return .number(text)
            }
        }

        static func isNumberByte(_ b: UInt8) -> Bool {
            (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: "-") || b == UInt8(ascii: "+") || b == UInt8(ascii: ".")
                || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
        }

        mutating func string() -> String? {
            guard i < bytes.endIndex, bytes[i] == UInt8(ascii: "\"") else { return nil }
            i += 1
            var out: [UInt8] = []
            while i < bytes.endIndex {
                let b = bytes[i]
                if b == UInt8(ascii: "\"") { i += 1; return String(validating: out, as: UTF8.self) }
                if b < 0x20 { return nil }
                if b == UInt8(ascii: "\\") {
                    i += 1
                    guard i < bytes.endIndex else { return nil }
                    let e = bytes[i]
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard bytes.endIndex - i > 4, let v = UInt32(String(decoding: bytes[i + 1...i + 4], as: UTF8.self), radix: 16) else { return nil }
                        i += 4
                        // Surrogates are not needed by the protocol: they read as U+FFFD.
                        let scalar = Unicode.Scalar(v) ?? "\u{FFFD}"
                        out.append(contentsOf: Array(String(scalar).utf8))
                    default: return nil
                    }
                    i += 1
                    continue
                }
                out.append(b)
                i += 1
            }
            return nil
        }
    }
}
