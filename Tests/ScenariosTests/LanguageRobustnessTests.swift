import Testing
import SimKit
@testable import ScenarioLanguage

/// Random and mutated inputs never crash or hang the parser: each parses, or gets at
/// least one located error (line ≥ 1, column ≥ 1).
@Suite("Language: robustness")
struct LanguageRobustnessTests {
    static let vocabulary = [
        "at", "every", "jitter", "from", "until", "expect", "violation", "scenario", "seed", "duration", "sdk",
        "mutant", "custom", "reference", "account", "app", "key", "devices", "clones", "as", "network", "latency",
        "timeout", "open", "launch", "rotate", "stop-old", "now", "keep-old", "stop-old-key", "rollup", "approve",
        "revoke-account", "server", "errors", "down", "status", "for", "of", "device", "photos", "early", "all",
        "none", "locked", "purged", "rk_live_A", "rk_live_B", "rk_live_", "0s", "1d", "1d12h", "250ms", "30d",
        "99999999999999999999d", "18446744073709551616", "4294967296%", "0.5%", "100.001%", "150%", "17", "#",
        "photos#17", "..", ">=", "<=", "%", "\"", "\"x\"", "\\", "é", "\t", "3650d", "3651d", "0", "-1", "1e9",
    ]

    /// Asserts the contract for one input; returns true when it parsed.
    @discardableResult
    static func check(_ bytes: [UInt8], _ what: String) -> Bool {
        // Plain checks with `Issue.record` on failure: `#expect` in a 20,000-case loop is slow in debug.
        let r = ScenarioParser.parse(bytes: bytes, file: "fuzz.scenario")
        if r.scenario != nil {
            if r.hasErrors { Issue.record("\(what): a scenario with errors") }
            return true
        }
        if !r.hasErrors { Issue.record("\(what): no scenario and no error") }
        let lineCount = ScenarioTestLines.count(bytes)
        for d in r.diagnostics {
            let loc = d.location
            if loc.line < 1 || loc.line > lineCount || loc.column < 1 || d.rendered.isEmpty {
                Issue.record("\(what): bad location \(loc)")
            }
        }
        return false
    }

    /// One mutation of a valid text.
    static func mutate(_ text: [UInt8], _ rng: inout SimRandom) -> [UInt8] {
        var lines = text.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        let i = Int(rng.below(UInt64(lines.count)))
        func word() -> [UInt8] { Array(vocabulary[Int(rng.below(UInt64(vocabulary.count)))].utf8) }
        switch rng.below(10) {
        case 0:   // cut a line short
            lines[i] = Array(lines[i].prefix(Int(rng.below(UInt64(lines[i].count + 1)))))
        case 1:   // swap two tokens
            var toks = lines[i].split(separator: 0x20).map(Array.init)
            if toks.count >= 2 {
                let a = Int(rng.below(UInt64(toks.count))), b = Int(rng.below(UInt64(toks.count)))
                toks.swapAt(a, b)
                lines[i] = Array(toks.joined(separator: [0x20]))
            }
        case 2:   // replace a token with a vocabulary word
            var toks = lines[i].split(separator: 0x20).map(Array.init)
            if !toks.isEmpty { toks[Int(rng.below(UInt64(toks.count)))] = word() }
            lines[i] = Array(toks.joined(separator: [0x20]))
        case 3:   // insert random bytes, often invalid UTF-8
            let at = Int(rng.below(UInt64(lines[i].count + 1)))
            lines[i].insert(contentsOf: (0..<rng.int(in: 1...4)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
        case 4:   // drop or duplicate a line
            if rng.chance(1, outOf: 2) { lines.remove(at: i) } else { lines.insert(lines[i], at: i) }
        case 5:   // huge numbers
            lines[i] += Array(" 99999999999999999999d 184467440737095516160".utf8)
        case 6:   // a very long line
            lines[i] += [UInt8](repeating: UInt8(ascii: "a"), count: Int(rng.int(in: 4_000...5_000)))
        case 7:   // deep nonsense: a run of words
            lines[i] = Array((0..<rng.int(in: 1...80)).map { _ in word() }.joined(separator: [0x20]))
        case 8:   // change a digit
            if let d = lines[i].firstIndex(where: { $0 >= 0x30 && $0 <= 0x39 }) { lines[i][d] = UInt8(0x30 + rng.below(10)) }
        default:  // truncate the file anywhere
            let all = Array(lines.joined(separator: [0x0A]))
            return Array(all.prefix(Int(rng.below(UInt64(all.count + 1)))))
        }
        return Array(lines.joined(separator: [0x0A]))
    }

    /// 4 × 4,000 mutations of the SPEC example and of random valid scenarios.
    @Test(arguments: 0..<4)
    func mutatedInputs(batch: UInt64) {
        var rng = SimRandom(seed: 0xF00D + batch)
        let spec = Array(LanguageFixtures.specExample.utf8)
        let generated: [[UInt8]] = (0..<200).map { k in
            var gen = LanguageASTGenerator(seed: batch * 100_000 + UInt64(k))
            return Array(ScenarioPrinter.print(gen.make()).utf8)
        }
        var parsed = 0
        for i in 0..<4_000 {
            let base = i % 2 == 0 ? spec : generated[(i / 2) % generated.count]
            var input = base
            for _ in 0..<rng.int(in: 1...3) { input = Self.mutate(input, &rng) }
            if Self.check(input, "batch \(batch) case \(i)") { parsed += 1 }
        }
        #expect(parsed > 0 && parsed < 4_000, "mutations should sometimes keep the file valid, and usually not")
    }

    /// 4,000 inputs of pure noise: random bytes and random token soup.
    @Test func randomInputs() {
        var rng = SimRandom(seed: 0xBAD)
        for i in 0..<4_000 {
            var bytes: [UInt8] = []
            if i % 2 == 0 {
                bytes = (0..<rng.int(in: 0...300)).map { _ in
                    rng.chance(1, outOf: 8) ? 0x0A : UInt8(truncatingIfNeeded: rng.next())
                }
            } else {
                for _ in 0..<rng.int(in: 1...60) {
                    bytes += Array(Self.vocabulary[Int(rng.below(UInt64(Self.vocabulary.count)))].utf8)
                    bytes.append(rng.chance(1, outOf: 6) ? 0x0A : 0x20)
                }
            }
            Self.check(bytes, "noise \(i)")
        }
    }

    @Test func limitsAreErrorsNotTraps() {
        let cases = [
            "seed 18446744073709551616\n",
            "duration 3651d\n",
            "duration 0s\n",
            "account a\napp b account a key rk_live_A\ndevices 1000001 app b\n",
            "account a\napp b account a key rk_live_A\ndevices 600000 app b\nclones 600000 app b\n",
            "at 1d timeouts 99999999999999999999% for 1h\n",
            "at 1d timeouts 0.123% for 1h\n",
            "every 0s open all\n",
            String(repeating: "x", count: 10_000) + "\n",
            String(repeating: "at ", count: 100) + "\n",
        ]
        for c in cases {
            let r = ScenarioParser.parse(c, file: "limits.scenario")
            #expect(r.scenario == nil && r.hasErrors, "\(c.prefix(60))")
        }
        let many = String(repeating: "at 1d launch all\n", count: ScenarioLimits.maxStatements + 1)
        let r = ScenarioParser.parse(many, file: "many.scenario")
        #expect(r.diagnostics.map(\.message) == ["more than 100000 statements"])
    }
}

/// Counts lines the way the parser does: one more than the newlines.
enum ScenarioTestLines {
    static func count(_ bytes: [UInt8]) -> Int {
        var n = 1
        for i in bytes.indices where bytes[i] == 0x0A || (bytes[i] == 0x0D && (i + 1 == bytes.count || bytes[i + 1] != 0x0A)) {
            n += 1   // LF, CRLF (counted at its LF) and a lone CR each end a line
        }
        return n
    }
}
