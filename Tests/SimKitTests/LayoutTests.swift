import Testing
@testable import SimKit

/// Per-device values are multiplied by a million in the largest runs: their sizes are
/// budgeted (issue 8, ≤ 600 resident bytes a device), so a field that widens one is a
/// decision, not an accident.
@Suite struct LayoutTests {
    @Test func perDeviceValuesKeepTheirSize() {
        #expect(MemoryLayout<LocalData>.stride == 56)
        #expect(MemoryLayout<DeviceState>.stride == 96)
        #expect(MemoryLayout<Event>.stride == 32)
        // 40 for the state of D4 and D9, and 8 for the flaws a mutant runs with (they
        // left the settings every core receives, `SDKConfig`).
        #expect(MemoryLayout<ReferenceSDK>.stride <= 48)
    }

    /// A fault kind's `Injection` rides in `WorldAction.fault`: one wider than 32 bytes
    /// makes every `ScheduledAction` 72 bytes instead of 64, an instruction a person action.
    @Test func scheduledActionsKeepTheirSize() {
        #expect(MemoryLayout<WorldAction>.size == 32)
        #expect(MemoryLayout<ScheduledAction>.stride == 64)
    }
}

/// Values the engine copies on every SDK step are a whole number of words: a copy of a
/// struct with a ragged end is made of overlapping 16-byte moves, and a load that spans
/// two earlier stores cannot be forwarded from them (a stall of a dozen cycles or more,
/// seen in `perf annotate` of `ReferenceSDK.handle` before the padding).
@Suite struct CopyAlignmentTests {
    @Test func stepCopiesAreWholeWords() {
        #expect(MemoryLayout<LocalData>.size == 56)
        #expect(MemoryLayout<SDKConfig>.size == 56)
        #expect(MemoryLayout<SDKContext>.size <= 16)
    }
}
