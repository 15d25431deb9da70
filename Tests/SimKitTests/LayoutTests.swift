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
        #expect(MemoryLayout<ReferenceSDK>.stride <= 32)
    }
}
