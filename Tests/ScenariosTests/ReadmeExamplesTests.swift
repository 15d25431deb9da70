import Foundation
import Testing

/// The examples of tool output in README.md and docs/*.md must not go stale. Every fenced
/// ```` ```console ```` block of a page holds `$ simkit ARGS` lines, run in the page's order
/// in one fresh folder for that page (with `scenarios` linked to the package's, so a file one
/// command writes is there for the next), and the lines after each are its expected standard
/// output. A last line `…` means the output goes on; `$ echo $?` checks the previous
/// command's exit status. Timings (`4.7 s`, `21 seeds/s`, `0.10 M events/s`) are compared as
/// numbers-to-be. `scripts/update-readme-examples.py PAGE` rewrites a page's expected output.
@Suite("README examples", .serialized)
struct ReadmeExamplesTests {
    struct Step { var args: [String]; var expected: [String]; var continues: Bool; var line: Int }
    enum Entry { case command(Step); case status(Int32, line: Int) }

    /// The console blocks of `text`, each a list of entries.
    static func sessions(_ text: String) -> [[Entry]] {
        var out: [[Entry]] = []
        var current: [Entry]?
        for (n, raw) in text.components(separatedBy: "\n").enumerated() {
            let line = raw
            if current == nil {
                if line == "```console" { current = [] }
                continue
            }
            if line == "```" { out.append(current!); current = nil; continue }
            if line.hasPrefix("$ simkit ") {
                let args = line.dropFirst("$ simkit ".count).split(separator: " ").map(String.init)
                current!.append(.command(Step(args: args, expected: [], continues: false, line: n + 1)))
            } else if line == "$ echo $?" {
                current!.append(.status(-1, line: n + 1))
            } else if case .status(-1, let at)? = current!.last, let code = Int32(line) {
                current![current!.count - 1] = .status(code, line: at)
            } else if case .command(var step)? = current!.last {
                if line == "…" { step.continues = true } else { step.expected.append(line) }
                current![current!.count - 1] = .command(step)
            }
        }
        return out
    }

    /// Wall-clock numbers vary from run to run and machine to machine.
    static func normalised(_ line: String) -> String {
        line.replacing(/[0-9][0-9,]*(\.[0-9]+)? (s|seeds\/s|M events\/s)\b/) { "# \($0.2)" }
    }

    /// README.md and every docs/*.md page, relative to the package root, README first.
    static var pages: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: PackageRoot.path + "/docs")) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    @Test("the README and the docs pages have console examples")
    func examplesAreFound() throws {
        #expect(Self.pages.count > 1, "no docs/*.md page found")
        var total = 0
        for page in Self.pages {
            let text = try String(contentsOfFile: PackageRoot.path + "/" + page, encoding: .utf8)
            total += Self.sessions(text).flatMap { $0 }.filter { if case .command = $0 { true } else { false } }.count
        }
        #expect(total >= 6, "the pages' console examples were not found")
        let readme = try String(contentsOfFile: PackageRoot.path + "/README.md", encoding: .utf8)
        #expect(!Self.sessions(readme).isEmpty, "README.md lost its failure example")
    }

    @Test("every console block of README.md and docs/*.md prints what the page says", arguments: pages)
    func examplesMatch(page: String) throws {
        let text = try String(contentsOfFile: PackageRoot.path + "/" + page, encoding: .utf8)
        let sessions = Self.sessions(text)
        // One folder for the whole page, as a reader would follow it top to bottom.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-readme-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir + "/scenarios", withDestinationPath: PackageRoot.path + "/scenarios")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for session in sessions {
            var lastStatus: Int32?
            for entry in session {
                switch entry {
                case .status(let code, let line):
                    #expect(lastStatus == code, "\(page):\(line): the exit status is \(lastStatus.map(String.init) ?? "?"), not \(code)")
                case .command(let step):
                    let r = try SimkitProcess.run(step.args, in: dir)
                    lastStatus = r.status
                    var got = r.stdout.components(separatedBy: "\n")
                    if got.last == "" { got.removeLast() }
                    if step.continues { got = Array(got.prefix(step.expected.count)) }
                    let want = step.expected.map(Self.normalised), have = got.map(Self.normalised)
                    if want != have {
                        let first = (0..<min(want.count, have.count)).first { want[$0] != have[$0] } ?? min(want.count, have.count)
                        Issue.record("""
                            \(page):\(step.line): 'simkit \(step.args.joined(separator: " "))' prints something else; \
                            first difference at its output line \(first + 1) \
                            (scripts/update-readme-examples.py \(page) rewrites it):
                            page:   \(first < want.count ? step.expected[first] : "(nothing)")
                            actual: \(first < got.count ? got[first] : "(nothing)")
                            whole output:
                            \(r.stdout)
                            """)
                    }
                }
            }
        }
    }

    @Test("the comparison sees a changed line and tolerates only timings")
    func comparisonIsStrict() {
        #expect(Self.normalised("28 of 28 seeds in 3.1 s (9 seeds/s, 0.06 M events/s, 1 job)")
                == Self.normalised("28 of 28 seeds in 0.2 s (1,390 seeds/s, 9.20 M events/s, 1 job)"))
        #expect(Self.normalised("28 of 28 seeds in 3.1 s") != Self.normalised("27 of 28 seeds in 3.1 s"))
        #expect(Self.normalised("(5 statements, 1 device)") != Self.normalised("(5 statements, 2 devices)"))
        let parsed = Self.sessions("x\n```console\n$ simkit a b\nout\n…\n$ echo $?\n1\n```\n")
        #expect(parsed.count == 1 && parsed[0].count == 2)
        if case .command(let step) = parsed[0][0] { #expect(step.args == ["a", "b"] && step.expected == ["out"] && step.continues) }
        if case .status(let code, _) = parsed[0][1] { #expect(code == 1) }
    }
}
