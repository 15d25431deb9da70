import Testing
@testable import SimKit

/// Per-device values are multiplied by a million in the largest runs: their sizes are
/// budgeted (issue 8, ≤ 600 resident bytes a device), so a field that widens one is a
/// decision, not an accident.
@Suite struct LayoutTests {
    @Test func perDeviceValuesKeepTheirSize() {
        #expect(MemoryLayout<LocalData>.stride == 48)
        #expect(MemoryLayout<DeviceState>.stride == 88)
        #expect(MemoryLayout<Event>.stride == 32)
        // 40 since the SDK keeps the newest verdict it acted on (D4, D9); 32 before.
        #expect(MemoryLayout<ReferenceSDK>.stride <= 40)
    }
}

/// Values the engine copies on every SDK step are a whole number of words: a copy of a
/// struct with a ragged end is made of overlapping 16-byte moves, and a load that spans
/// two earlier stores cannot be forwarded from them (a stall of a dozen cycles or more,
/// seen in `perf annotate` of `ReferenceSDK.handle` before the padding).
@Suite struct CopyAlignmentTests {
    @Test func stepCopiesAreWholeWords() {
        #expect(MemoryLayout<LocalData>.size == 48)
        #expect(MemoryLayout<SDKConfig>.size == 64)
        #expect(MemoryLayout<SDKContext>.size <= 16)
    }
}
