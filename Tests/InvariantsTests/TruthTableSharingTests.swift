import Testing
@testable import Invariants

/// The checker's truth table writes without a per-write copy-on-write check: a checker
/// copied after `begin` must be copied with `forked()`, which gives it truth of its own.
/// A copy made with `copied()` is a value; in a debug build, a write while a plain copy
/// still shares the storage stops the process instead of changing the copy's truth.
@Suite struct TruthTableSharingTests {
    @Test func aCopiedTableIsAValue() {
        var table = TruthTable(repeating: 0, count: 3)
        var copy = table.copied()
        copy[0] = 5
        table[2] = 4
        #expect((0..<3).map { table[$0] } == [0, 0, 4])
        #expect((0..<3).map { copy[$0] } == [5, 0, 0])
    }

    #if DEBUG
    @Test func aSharedTableIsNotWritten() async {
        await #expect(processExitsWith: .failure) {
            var table = TruthTable(repeating: 0, count: 3)
            let copy = table
            table[1] = 2
            _ = copy
        }
    }
    #endif
}
