import Foundation

/// Bad input on the command line: printed as `simkit: error: …` and exit 2.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ message: String) { description = message }
}

/// A small, strict parser for `--flag value`, `--flag=value`, `--switch` and positionals.
/// Unknown flags are errors (with a did-you-mean), never ignored.
struct Arguments {
    private(set) var positionals: [String] = []
    private var values: [(name: String, value: String?)] = []
    private var used: Set<String> = []

    /// Parses `args`; `switches` are flags without a value, `options` take one.
    init(_ args: [String], switches: [String], options: [String]) throws {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "--" { positionals.append(contentsOf: args[(i + 1)...]); break }
            if a.hasPrefix("-"), a.count > 1, Int(a) == nil {
                var name = a.hasPrefix("--") ? String(a.dropFirst(2)) : String(a.dropFirst())
                var inline: String?
                if let eq = name.firstIndex(of: "=") { inline = String(name[name.index(after: eq)...]); name = String(name[..<eq]) }
                if name == "h" { name = "help" }
                if switches.contains(name) || name == "help" {
                    if inline != nil { throw UsageError("flag '--\(name)' takes no value") }
                    values.append((name, nil))
                } else if options.contains(name) {
                    if let v = inline { values.append((name, v)) } else {
                        guard i + 1 < args.count else { throw UsageError("flag '--\(name)' needs a value") }
                        values.append((name, args[i + 1])); i += 1
                    }
                } else {
                    let known = (switches + options).map { "--" + $0 }
                    let hint = nearest("--" + name, in: known).map { "; did you mean '\($0)'?" } ?? ""
                    throw UsageError("unknown flag '\(a)'\(hint)")
                }
            } else {
                positionals.append(a)
            }
            i += 1
        }
    }

    func has(_ name: String) -> Bool { values.contains { $0.name == name } }
    func string(_ name: String) -> String? { values.last { $0.name == name }?.value }

    /// An unsigned integer flag within `range`, or the default.
    func uint(_ name: String, default def: UInt64, range: ClosedRange<UInt64> = 0...UInt64.max) throws -> UInt64 {
        guard let s = string(name) else { return def }
        let cleaned = s.replacingOccurrences(of: "_", with: "")
        guard let v = UInt64(cleaned) else { throw UsageError("'--\(name)' expects a whole number, got '\(s)'") }
        guard range.contains(v) else { throw UsageError("'--\(name)' must be in \(range.lowerBound)...\(range.upperBound), got \(v)") }
        return v
    }

    /// A duration flag (`90d`, `1d12h`), or the default.
    func duration(_ name: String, default def: UInt64, max: UInt64 = 3_650 * 86_400_000) throws -> UInt64 {
        guard let s = string(name) else { return def }
        guard let v = parseDuration(s) else { throw UsageError("'--\(name)' expects a duration like 30d, 6h or 1d12h, got '\(s)'") }
        guard v > 0, v <= max else { throw UsageError("'--\(name)' must be between 1ms and \(formatDuration(max)), got '\(s)'") }
        return v
    }
}

/// The closest candidate by edit distance, if it is close enough to be a likely typo.
func nearest(_ word: String, in candidates: [String]) -> String? {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        var prev = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var cur = [i + 1]
            for (j, cb) in b.enumerated() {
                let substitution: Int = prev[j] + (ca == cb ? 0 : 1)
                let best: Int = Swift.min(prev[j + 1] + 1, cur[j] + 1)
                cur.append(Swift.min(best, substitution))
            }
            prev = cur
        }
        return prev[b.count]
    }
    let w = Array(word)
    var best: (word: String, distance: Int)?
    for c in candidates.sorted() {
        let d = distance(w, Array(c))
        if best == nil || d < best!.distance { best = (c, d) }
    }
    guard let found = best, found.distance <= Swift.max(2, w.count / 3) else { return nil }
    return found.word
}
