import Foundation
import Testing

/// The README's examples of tool output must not go stale. Every fenced ```` ```console ````
/// block of README.md holds `$ simkit ARGS` lines, run in the page's order in one fresh
/// folder (with `scenarios` linked to the package's, so a file one command writes is there
/// for the next), and the lines after each are its expected standard output. A last line `…`
/// means the output goes on; `$ echo $?` checks the previous command's exit status. Timings
/// (`4.7 s`, `21 seeds/s`, `0.10 M events/s`) are compared as numbers-to-be.
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

    @Test("every console block of README.md prints what the README says")
    func examplesMatch() throws {
        let readme = try String(contentsOfFile: PackageRoot.path + "/README.md", encoding: .utf8)
        let sessions = Self.sessions(readme)
        let commands = sessions.flatMap { $0 }.filter { if case .command = $0 { true } else { false } }
        #expect(commands.count >= 4, "the README's console examples were not found")
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
                    #expect(lastStatus == code, "README.md:\(line): the exit status is \(lastStatus.map(String.init) ?? "?"), not \(code)")
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
                            README.md:\(step.line): 'simkit \(step.args.joined(separator: " "))' prints something else; \
                            first difference at its output line \(first + 1):
                            README: \(first < want.count ? step.expected[first] : "(nothing)")
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
