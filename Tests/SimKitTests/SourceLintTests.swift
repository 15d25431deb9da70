import Foundation
import Testing

/// The determinism lint (SPEC §1, STYLE.md) as a test, so `swift test` fails when
/// `Sources/SimKit` reaches for the wall clock, system randomness, threads, concurrency,
/// the environment, the file system, per-process hashes, or Set/Dictionary.
///
/// The pattern table is read from `scripts/lint-determinism.sh` itself, so the script
/// and this test cannot drift apart; the rules for comments and `// determinism:`
/// justifications are restated here and checked against the script on fixtures.
///
/// Decision on `SimRandom.pick`: its `Set` is only a membership test and the result is
/// sorted, so it is deterministic — but the lint cannot see that, so such a use must say
/// so with `// determinism: <why>` on the line or the comment line above. Every
/// Set/Dictionary in the engine then carries its own argument for why order cannot leak.
enum DeterminismLint {
    struct Rule {
        let what: String
        let pattern: String
        let regex: Regex<AnyRegexOutput>
    }

    struct Finding: Equatable, CustomStringConvertible {
        let file: String
        let line: Int
        let what: String
        var description: String { "\(file):\(line): \(what)" }
    }

    static let marker = "// determinism:"

    /// The `description%%regex` lines between `# BEGIN PATTERNS` and `# END PATTERNS`.
    static func rules(script: String) throws -> [Rule] {
        let lines = script.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let begin = lines.firstIndex(of: "# BEGIN PATTERNS"), let end = lines.firstIndex(of: "# END PATTERNS"), begin < end else {
            throw LintError("no '# BEGIN PATTERNS' ... '# END PATTERNS' block in the script")
        }
        return try lines[(begin + 1)..<end].filter { !$0.isEmpty && !$0.hasPrefix("#") }.map { line in
            guard let sep = line.range(of: "%%") else { throw LintError("pattern line without '%%': \(line)") }
            let pattern = String(line[sep.upperBound...])
            return Rule(what: String(line[..<sep.lowerBound]), pattern: pattern, regex: try Regex(pattern))
        }
    }

    /// The code that is checked on each line, by number: comment-only lines, justified
    /// lines (marker on the line or on the comment line just above) and trailing
    /// comments are left out. Mirrors the awk step of the script.
    static func checkedCode(_ text: String) -> [(line: Int, code: String)] {
        var out: [(Int, String)] = []
        var justified = false
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.hasPrefix("//") || trimmed.hasPrefix("/*") || trimmed.hasPrefix("*") {
                justified = line.contains(marker)
                continue
            }
            defer { justified = false }
            if justified || line.contains(marker) { continue }
            let code = line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? line
            out.append((i + 1, code))
        }
        return out
    }

    static func check(file: String, text: String, rules: [Rule]) -> [Finding] {
        var found: [Finding] = []
        for (line, code) in checkedCode(text) {
            for rule in rules where code.contains(rule.regex) {
                found.append(Finding(file: file, line: line, what: rule.what))
            }
        }
        return found
    }

    struct LintError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }
}

@Suite struct SourceLintTests {
    static func root() throws -> URL {
        try #require(PackageFiles.root(), "Package.swift not found above \(#filePath)")
    }

    static func rules() throws -> [DeterminismLint.Rule] {
        let script = try root().appendingPathComponent("scripts/lint-determinism.sh")
        return try DeterminismLint.rules(script: String(contentsOf: script, encoding: .utf8))
    }

    /// Swift files under `dir`, as (path relative to `base`, contents), in path order.
    static func swiftFiles(in dir: URL, relativeTo base: URL) throws -> [(String, String)] {
        let paths = try #require(FileManager.default.subpaths(atPath: dir.path), "cannot list \(dir.path)")
        return try paths.filter { $0.hasSuffix(".swift") }.sorted().map { sub in
            let url = dir.appendingPathComponent(sub)
            let rel = String(url.path.dropFirst(base.path.count + 1))
            return (rel, try String(contentsOf: url, encoding: .utf8))
        }
    }

    /// The real check: no finding anywhere in Sources/SimKit.
    @Test func simKitSourcesAreDeterministic() throws {
        let root = try Self.root()
        let rules = try Self.rules()
        let files = try Self.swiftFiles(in: root.appendingPathComponent("Sources/SimKit"), relativeTo: root)
        try #require(files.count > 10, "expected the SimKit sources, found \(files.count) files")
        let findings = files.flatMap { DeterminismLint.check(file: $0.0, text: $0.1, rules: rules) }
        #expect(findings.isEmpty, """
            nondeterministic APIs in Sources/SimKit (justify a safe use with '// determinism: why'):
            \(findings.map(\.description).joined(separator: "\n"))
            """)
    }

    static let offending: [String] = [
        "let now = Date()",
        "let t = Date.now",
        "var g = SystemRandomNumberGenerator()",
        "let x = Int.random(in: 0..<10)",
        "let y = [1, 2].randomElement() ?? arc4random()",
        "Thread.sleep(forTimeInterval: 1)",
        "DispatchQueue.main.async { }",
        "Task { await run() }",
        "Task.detached { }",
        "func load() async throws {}",
        "let v = await loader.value",
        "actor Cache {}",
        "final class Box: @unchecked Sendable {}",
        "let env = ProcessInfo.processInfo.environment",
        "let fm = FileManager.default",
        "let text = try String(contentsOf: url, encoding: .utf8)",
        "var seen = Set<Int>()",
        "var seen: Set<Int> = []",
        "let s: Set = [1, 2]",
        "let u = Set(ids)",
        "var byId: [UInt32: Device] = [:]",
        "var m = Dictionary<String, Int>()",
        "let table = [\"a\": 1]",
        "let table = [.approve: 1]",
        "let h = key.hashValue",
        "for (k, v) in [String: Int]() {}",
    ]

    static let clean: [String] = [
        "// Date() and Thread in a comment",
        "/// A Set<Int> in a doc comment",
        " * Dictionary<String, Int> in a block comment",
        "let x = r.below(10) // not Date()",
        "var chosen = Set<Int>()   // determinism: membership only, result sorted",
        "public struct ServerFlaws: OptionSet, Sendable, Hashable {",
        "static let units: [(suffix: String, ms: SimTime)] = []",
        "let dates = updateDates.count",
        "var r = random.fork(Stream.jitter, 3)",
        "let heap: [Event] = []",
        "let asyncCount = 3",
        "let task = tasks[0]",
        "let threads = 1",
        "app.append(contentsOf: repeatElement(spec.app, count: 3))",
    ]

    @Test func flagsEveryOffendingSample() throws {
        let rules = try Self.rules()
        for sample in Self.offending {
            #expect(!DeterminismLint.check(file: "x.swift", text: sample, rules: rules).isEmpty, "not flagged: \(sample)")
        }
    }

    @Test func passesCleanSamples() throws {
        let rules = try Self.rules()
        for sample in Self.clean {
            let f = DeterminismLint.check(file: "x.swift", text: sample, rules: rules)
            #expect(f.isEmpty, "wrongly flagged: \(sample) (\(f))")
        }
        // A justification on the comment line just above covers the next line only.
        let text = """
            // determinism: only a membership test; the output is sorted
            var chosen = Set<Int>()
            var other = Set<Int>()
            """
        #expect(DeterminismLint.check(file: "x.swift", text: text, rules: rules).map(\.line) == [3])
    }

    /// The script and the Swift check agree, on a fixture tree and on the real sources.
    @Test func scriptAgreesWithSwiftCheck() throws {
        let root = try Self.root()
        let script = root.appendingPathComponent("scripts/lint-determinism.sh")
        let rules = try Self.rules()
        let bash = try #require(["/bin/bash", "/usr/bin/bash"].map(URL.init(fileURLWithPath:)).first {
            FileManager.default.isExecutableFile(atPath: $0.path)
        }, "bash not found")

        let fixture = FileManager.default.temporaryDirectory
            .appendingPathComponent("simkit-lint-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(at: fixture) }
        let dir = fixture.appendingPathComponent("Sources/SimKit/Engine")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let bad = (Self.clean + Self.offending).joined(separator: "\n") + "\n"
        try bad.write(to: dir.appendingPathComponent("Bad.swift"), atomically: true, encoding: .utf8)
        try Self.clean.joined(separator: "\n").write(to: dir.appendingPathComponent("Good.swift"), atomically: true, encoding: .utf8)

        for (tree, expectFailure) in [(fixture, true), (root, nil as Bool?)] {
            let files = try Self.swiftFiles(in: tree.appendingPathComponent("Sources/SimKit"), relativeTo: tree)
            let swiftLines = Set(files.flatMap { DeterminismLint.check(file: $0.0, text: $0.1, rules: rules) }
                .map { "\($0.file):\($0.line)" })
            let run = try PackageFiles.run(bash, [script.path, tree.path])
            let scriptLines = Set(run.out.split(separator: "\n").filter { !$0.hasPrefix("lint-determinism:") }
                .map { $0.split(separator: ":").prefix(2).joined(separator: ":") })
            #expect(run.status == (swiftLines.isEmpty ? 0 : 1), "script exit \(run.status) for \(tree.path): \(run.out)\(run.err)")
            #expect(scriptLines == swiftLines, "script found \(scriptLines.sorted()), Swift found \(swiftLines.sorted())")
            if expectFailure == true {
                let offendingLines = Set((Self.clean.count + 1...Self.clean.count + Self.offending.count).map { "Sources/SimKit/Engine/Bad.swift:\($0)" })
                #expect(swiftLines == offendingLines, "fixture: exactly the offending lines are flagged")
            }
        }
    }
}
