import Foundation
import Testing
import Invariants
import Scenarios
@testable import SimKitCommand

/// `simkit mutants --list` (issue 37): a name is printed whole, so it can be pasted into
/// `--sdk mutant:NAME`, and the columns after it still line up.
@Suite("Command line: mutants --list", .serialized)
struct MutantsListTests {
    static let heading = "ordering-only"

    @Test("every name --list prints is a whole mutant name that --sdk mutant:NAME accepts; every mutant is listed")
    func namesArePastable() throws {
        let r = try SimkitProcess.run(["mutants", "--list"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix(Self.heading) }
        let printed = lines.map { String($0.prefix { $0 != " " }) }
        for name in printed {
            #expect(Mutants.named(name) != nil, "'\(name)' printed by --list is not a mutant name")
            // Server mutants are chosen with --sdk mutant:NAME too (--server takes reference or custom:NAME).
            #expect(throws: Never.self, "--sdk mutant:\(name)") { _ = try FuzzCommand.sdkChoice("mutant:" + name) }
            #expect(throws: Never.self, "run --sdk mutant:\(name)") { _ = try RunCommand.sdkChoice("mutant:" + name) }
        }
        #expect(printed == Mutants.all.map(\.name) + Mutants.orderingOnly.map(\.name))
    }

    @Test("the columns line up: side, invariant and bug start at the same place on every line")
    func columnsLineUp() {
        let lines = MutantsCommand.listLines().filter { !$0.hasPrefix(Self.heading) }
        let mutants = Mutants.all + Mutants.orderingOnly
        #expect(lines.count == mutants.count)
        func start(_ text: String, in line: String) -> Int? {
            line.range(of: " " + text + " ").map { line.distance(from: line.startIndex, to: $0.lowerBound) + 1 }
        }
        let sides = Set(zip(lines, mutants).map { start($1.side.rawValue, in: $0) })
        let invariants = Set(zip(lines, mutants).map { start($1.expected.rawValue, in: $0) })
        let bugs = Set(zip(lines, mutants).map { line, m in line.range(of: m.summary).map { line.distance(from: line.startIndex, to: $0.lowerBound) } })
        #expect(sides.count == 1 && !sides.contains(nil), "\(sides)")
        #expect(invariants.count == 1 && !invariants.contains(nil), "\(invariants)")
        #expect(bugs.count == 1 && !bugs.contains(nil), "\(bugs)")
        #expect(sides.first! == (mutants.map(\.name.count).max() ?? 0) + 1)
    }
}
