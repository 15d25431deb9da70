import Foundation
import SimKitTestSupport
import Testing
import Invariants

/// What README.md and docs/*.md state that the tool can say must be what the tool says:
/// counts of mutants, scenario files, invariants and "sometimes" situations; the names
/// presented as invariants, mutants or situations; the stated fingerprints; the links
/// between the pages. (The console examples are `ReadmeExamplesTests`'.)
///
/// Dated measurements and engineering history may quote counts of their day: a line
/// `<!-- history: … -->` starts such a part, to the end of its page, and `<!-- history -->`
/// … `<!-- /history -->` marks one paragraph. Fingerprint blocks
/// (`<!-- fingerprints … -->` … `<!-- /fingerprints -->`) are checked wherever they are.
@Suite("Docs figures")
struct DocsFiguresTests {
    struct Page { var path: String; var text: String }

    static let pages: [Page] = ReadmeExamplesTests.pages.map {
        Page(path: $0, text: (try? String(contentsOfFile: PackageRoot.path + "/" + $0, encoding: .utf8)) ?? "")
    }

    /// The page without its history parts (a history paragraph's lines become empty lines).
    static func current(_ text: String) -> String {
        var out: [Substring] = []
        var inParagraph = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let t = line.trimmingCharacters(in: .whitespaces)
            // Lines left out stay as empty lines, so line numbers stay the page's.
            if inParagraph { if t == "<!-- /history -->" { inParagraph = false }; out.append(""); continue }
            if t == "<!-- history -->" { inParagraph = true; out.append(""); continue }
            if t.hasPrefix("<!-- history") { break }
            out.append(line)
        }
        return out.joined(separator: "\n")
    }

    /// The text outside fenced blocks, whose lines become empty lines (a block's own output
    /// is checked by running it).
    static func prose(_ text: String) -> String {
        var out: [Substring] = [], fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle(); out.append(""); continue }
            out.append(fenced ? "" : line)
        }
        return out.joined(separator: "\n")
    }

    /// The text outside console blocks (run by `ReadmeExamplesTests`) and outside blocks
    /// that a `<!-- not checked: why -->` line introduces.
    static func withoutCheckedElsewhere(_ text: String) -> String {
        var out: [Substring] = [], skipping = false, skipNext = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if skipping { if line.hasPrefix("```") { skipping = false }; out.append(""); continue }
            if line.hasPrefix("<!-- not checked") { skipNext = true; out.append(""); continue }
            if line.hasPrefix("```") && (line == "```console" || skipNext) { skipping = true; skipNext = false; out.append(""); continue }
            if !line.trimmingCharacters(in: .whitespaces).isEmpty { skipNext = false }
            out.append(line)
        }
        return out.joined(separator: "\n")
    }

    /// Every match of `regex` in every page's current prose, with where it is.
    static func statements(_ regex: Regex<AnyRegexOutput>) -> [(page: String, line: Int, match: Regex<AnyRegexOutput>.Match)] {
        var found: [(String, Int, Regex<AnyRegexOutput>.Match)] = []
        for page in pages {
            let lines = prose(current(page.text)).components(separatedBy: "\n")
            for (n, line) in lines.enumerated() {
                // A figure may be wrapped onto the next line: look at a line and its next one.
                let joined = n + 1 < lines.count ? line + " " + lines[n + 1] : line
                for m in joined.matches(of: regex) where joined.distance(from: joined.startIndex, to: m.range.lowerBound) < line.count {
                    found.append((page.path, n + 1, m))
                }
            }
        }
        return found
    }

    static func number(_ m: Regex<AnyRegexOutput>.Match, _ i: Int) -> Int? {
        (m.output[i].substring).flatMap { Int($0.replacing(",", with: "")) }
    }

    // MARK: counts

    /// The scored catalogue, as `simkit mutants --list` prints it: the lines before its
    /// ordering-only part.
    static func listedMutants() throws -> (scored: [String], orderingOnly: [String]) {
        let r = try SimkitProcess.run(["mutants", "--list"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let cut = lines.firstIndex { $0.hasPrefix("ordering-only") } ?? lines.endIndex
        let name = { (l: String) in String(l.split(separator: " ").first ?? "") }
        return (lines[..<cut].map(name), lines[cut...].dropFirst().map(name))
    }

    @Test("every count of mutants stated is the catalogue's")
    func mutantCounts() throws {
        let listed = try Self.listedMutants()
        #expect(listed.scored == Mutants.all.map(\.name), "`simkit mutants --list` and Mutants.all disagree")
        #expect(listed.orderingOnly == Mutants.orderingOnly.map(\.name))
        let scored = Mutants.all.count, deep = Mutants.deepNames.count
        // "49 mutants", "46 deliberately wrong SDKs", "49 of 49 mutants", "the 11 deep ones".
        let patterns: [(String, Int, String)] = [
            (#"\b([0-9][0-9,]*) (?:scored |SDK and server |of the |deliberately wrong |wrong )*(?:mutants|mutant SDKs|SDKs and servers|deliberately wrong)\b"#, scored, "mutants"),
            (#"\b[0-9][0-9,]* of (?:the |all )?([0-9][0-9,]*) mutants\b"#, scored, "mutants"),
            (#"\b([0-9][0-9,]*) deep(?: mutants| ones)?\b"#, deep, "deep mutants"),
            (#"\b([0-9][0-9,]*) ordering-only\b"#, Mutants.orderingOnly.count, "ordering-only mutants"),
        ]
        for (pattern, truth, what) in patterns {
            for s in Self.statements(try Regex(pattern)) {
                #expect(Self.number(s.match, 1) == truth,
                        "\(s.page):\(s.line): '\(s.match.output[0].substring ?? "")' but the catalogue has \(truth) \(what) (`simkit mutants --list`)")
            }
        }
    }

    @Test("every count of scenario files, invariants and situations stated is the tool's")
    func otherCounts() throws {
        let files = PackageRoot.scenarioFiles.count
        let patterns: [(String, Int, String)] = [
            (#"\b([0-9][0-9,]*) (?:hand-written )?(?:stories|scenario files|\.scenario files|files under `?scenarios)"#, files, "scenario files under scenarios/"),
            (#"\b([0-9][0-9,]*) invariants\b"#, InvariantID.allCases.count, "invariants (InvariantID)"),
            (#"\b([0-9][0-9,]*) "?sometimes"? situations\b"#, Coverage.allCases.count, "\"sometimes\" situations (Coverage)"),
        ]
        for (pattern, truth, what) in patterns {
            for s in Self.statements(try Regex(pattern)) {
                #expect(Self.number(s.match, 1) == truth,
                        "\(s.page):\(s.line): '\(s.match.output[0].substring ?? "")' but there are \(truth) \(what)")
            }
        }
    }

    // MARK: names

    /// Kebab-case words of the scenario language and the command line that are not names
    /// of invariants, mutants or situations.
    static let languageWords: Set<String> = [
        "add-photos", "grant-photos", "revoke-photos", "forget-device", "slow-responses", "lost-responses",
        "stop-old-key", "stop-old", "keep-old", "revoke-account", "restore-account", "approve-account",
        "rotate-now", "rotate-keep", "after-timeout", "after-1ms", "judged-at", "other-app", "login-page", "cut-short", "background-limit",
        "disk-full", "unlock-after", "at-write",
        // The server wire protocol (docs/server-protocol.md): its verdicts and words.
        "server-protocol", "server-unresponsive", "server-exited", "place-data", "model-download", "run-report",
        "rollup-app", "rollup-account", "stop-now", "new-key-already-issued",
    ]

    @Test("the invariants page lists every invariant, and only those")
    func invariantTable() throws {
        let page = try #require(Self.pages.first { $0.path == "docs/checkers.md" }, "docs/checkers.md is missing")
        let section = page.text.components(separatedBy: "\n## The invariants").dropFirst().first?
            .components(separatedBy: "\n## ").first ?? ""
        let listed = section.split(separator: "\n").compactMap { line in
            line.firstMatch(of: /^\| `([a-z0-9-]+)` \|/).map { String($0.output.1) }
        }
        let all = InvariantID.allCases.map(\.rawValue)
        #expect(Set(listed).count == listed.count, "an invariant is listed twice")
        for name in listed where !all.contains(name) {
            Issue.record("docs/checkers.md lists `\(name)`, which is not an invariant (Sources/Invariants/InvariantID.swift)")
        }
        for name in all where !listed.contains(name) {
            Issue.record("docs/checkers.md does not list the invariant `\(name)`")
        }
        // Each row's rules are the invariant's own.
        for id in InvariantID.allCases {
            if let row = section.split(separator: "\n").first(where: { $0.hasPrefix("| `\(id.rawValue)` |") }) {
                #expect(row.contains("| \(id.rules) |"), "docs/checkers.md: `\(id.rawValue)` is \(id.rules), not \(row)")
            }
        }
    }

    @Test("every name presented as an invariant, mutant or situation exists")
    func namesExist() throws {
        let invariants = Set(InvariantID.allCases.map(\.rawValue))
        let mutants = Set(Mutants.names)
        let situations = Set(Coverage.allCases.map(\.description))
        for page in Self.pages {
            let text = Self.current(page.text)
            for (n, line) in text.components(separatedBy: "\n").enumerated() {
                let at = "\(page.path):\(n + 1)"
                // `expect violation NAME`, a failure's `[NAME] TIME`, `BROKEN NAME`, "the invariant 'NAME'".
                for m in line.matches(of: /(?:expect violation |BROKEN |invariant '|\[(?=[a-z0-9-]+\] [0-9]))([a-z][a-z0-9]*(?:-[a-z0-9]+)+)/) {
                    let name = String(m.output.1)
                    #expect(invariants.contains(name), "\(at): '\(name)' is presented as an invariant but is none (InvariantID.swift)")
                }
                // `mutant:NAME`, `sdk mutant NAME`.
                for m in line.matches(of: /(?:mutant:|mutant )([a-z][a-z0-9]*(?:-[a-z0-9]+)+)/) {
                    let name = String(m.output.1)
                    #expect(mutants.contains(name), "\(at): '\(name)' is presented as a mutant but is none (`simkit mutants --list`)")
                }
            }
            // In prose, every `kebab-case` name must be something the tool knows.
            for (n, line) in Self.prose(text).components(separatedBy: "\n").enumerated() {
                for m in line.matches(of: /`([a-z][a-z0-9]*(?:-[a-z0-9]+)+)`/) {
                    let name = String(m.output.1)
                    let known = invariants.contains(name) || mutants.contains(name) || situations.contains(name)
                        || Self.languageWords.contains(name)
                    #expect(known, """
                        \(page.path):\(n + 1): `\(name)` is no invariant (InvariantID.swift), mutant \
                        (`simkit mutants --list`), "sometimes" situation (Coverage) or word of the language; \
                        if it is one of the language's, add it to DocsFiguresTests.languageWords
                        """)
                }
            }
        }
    }

    // MARK: fingerprints

    struct StatedFingerprint { var page: String; var args: [String]; var fingerprint: String; var events: Int?
        var deviceDays: Int {
            func value(_ flag: String, _ otherwise: Int) -> Int {
                args.firstIndex(of: flag).flatMap { args.indices.contains($0 + 1) ? Int(args[$0 + 1]) : nil } ?? otherwise
            }
            return value("--devices", 1000) * value("--days", 30)
        }
    }

    /// Every row of every fingerprints block: `| \`simkit fingerprint ARGS\` | \`HEX\` | EVENTS |`.
    static var statedFingerprints: [StatedFingerprint] {
        var out: [StatedFingerprint] = []
        for page in pages {
            var inside = false
            for line in page.text.split(separator: "\n") {
                if line.hasPrefix("<!-- fingerprints") { inside = true; continue }
                if line.hasPrefix("<!-- /fingerprints") { inside = false; continue }
                guard inside, let m = line.firstMatch(of: /^\| `simkit fingerprint([^`]*)` \| `([0-9a-f]{16})` \|(?: ([0-9,]+) \|)?/) else { continue }
                out.append(StatedFingerprint(page: page.path, args: m.output.1.split(separator: " ").map(String.init),
                                             fingerprint: String(m.output.2),
                                             events: m.output.3.flatMap { Int($0.replacing(",", with: "")) }))
            }
        }
        return out
    }

    /// Above this, a debug build takes several seconds: the slow tier's.
    static let smallWorld = 50_000

    static func check(_ stated: StatedFingerprint) throws {
        let r = try SimkitProcess.run(["fingerprint"] + stated.args)
        let printed = r.stdout.split(separator: " ")   // fingerprint HEX events N records N
        #expect(r.status == 0 && printed.count >= 4, "\(r.stdout)\(r.stderr)")
        guard printed.count >= 4 else { return }
        #expect(String(printed[1]) == stated.fingerprint,
                "\(stated.page): 'simkit fingerprint \(stated.args.joined(separator: " "))' prints \(printed[1]), not \(stated.fingerprint)")
        if let events = stated.events {
            #expect(Int(printed[3]) == events, "\(stated.page): the standard workload \(stated.args) has \(printed[3]) events, not \(events)")
        }
    }

    @Test("every fingerprint stated for a small world is the one simkit prints")
    func smallFingerprints() throws {
        let stated = Self.statedFingerprints
        #expect(stated.contains { $0.deviceDays <= Self.smallWorld }, "no fingerprint block with a small world found")
        for s in stated where s.deviceDays <= Self.smallWorld { try Self.check(s) }
    }

    @Test("every fingerprint stated for a big world is the one simkit prints", .tags(.slow),
          .enabled(if: ProcessInfo.processInfo.environment["SIMKIT_SLOW"] == "1", "the slow tier: run with SIMKIT_SLOW=1 swift test"))
    func bigFingerprints() throws {
        for s in Self.statedFingerprints where s.deviceDays > Self.smallWorld { try Self.check(s) }
    }

    @Test("a fingerprint in the current text is one a fingerprints block states and checks")
    func noUncheckedFingerprints() {
        let checked = Set(Self.statedFingerprints.map(\.fingerprint))
        for page in Self.pages {
            var inBlock = false
            for (n, line) in Self.withoutCheckedElsewhere(Self.current(page.text)).components(separatedBy: "\n").enumerated() {
                if line.hasPrefix("<!-- fingerprints") { inBlock = true }
                if line.hasPrefix("<!-- /fingerprints") { inBlock = false }
                if inBlock { continue }
                for m in line.matches(of: /\b[0-9a-f]{16}\b/) where !checked.contains(String(m.output)) {
                    Issue.record("""
                        \(page.path):\(n + 1): the fingerprint \(m.output) is stated but not \
                        checked: put it in a fingerprints block, or mark its paragraph as history
                        """)
                }
            }
        }
    }

    // MARK: links

    /// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { c -> Character? in
            if c == " " { return "-" }
            return c.isLetter || c.isNumber || c == "-" || c == "_" ? c : nil
        })
    }

    @Test("every link between the pages leads to a file, and to a heading when it names one")
    func linksResolve() throws {
        for page in Self.pages {
            let base = URL(fileURLWithPath: PackageRoot.path + "/" + page.path).deletingLastPathComponent()
            for m in Self.prose(page.text).matches(of: /\]\(([^)\s]+)\)/) {
                let target = String(m.output.1)
                if target.hasPrefix("http") || target.hasPrefix("mailto:") { continue }
                let parts = target.split(separator: "#", maxSplits: 1).map(String.init)
                let file = target.hasPrefix("#") ? URL(fileURLWithPath: PackageRoot.path + "/" + page.path)
                                                 : base.appendingPathComponent(parts[0]).standardized
                guard FileManager.default.fileExists(atPath: file.path) else {
                    Issue.record("\(page.path): the link '\(target)' leads nowhere"); continue
                }
                let fragment = target.hasPrefix("#") ? String(target.dropFirst()) : (parts.count > 1 ? parts[1] : nil)
                if let fragment, file.pathExtension == "md" {
                    let text = try String(contentsOf: file, encoding: .utf8)
                    let anchors = Self.prose(text).split(separator: "\n").filter { $0.hasPrefix("#") }
                        .map { Self.anchor($0.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)) }
                    #expect(anchors.contains(fragment), "\(page.path): the link '\(target)' names no heading of \(file.lastPathComponent)")
                }
            }
        }
    }
}
