import Testing
@testable import SimKit

@Suite struct DurationTests {
    static let printed: [(SimTime, String)] = [
        (0, "0s"),
        (1, "1ms"),
        (250, "250ms"),
        (1_000, "1s"),
        (1_001, "1s1ms"),
        (150_000, "2m30s"),
        (60_000, "1m"),
        (3_600_000, "1h"),
        (36 * 3_600_000, "1d12h"),
        (86_400_000, "1d"),
        (30 * 86_400_000, "30d"),
        (86_400_000 + 1, "1d1ms"),
        (93_784_005, "1d2h3m4s5ms"),
        (UInt64.max, "213503982334d14h25m51s615ms"),
    ]

    @Test(arguments: printed)
    func formatGivesTheCanonicalForm(ms: SimTime, text: String) {
        #expect(DurationText.format(ms) == text)
        #expect(DurationText.parse(text) == ms)
    }

    static let spelled: [(String, SimTime)] = [
        ("250ms", 250), ("10s", 10_000), ("15m", 900_000), ("6h", 21_600_000), ("30d", 2_592_000_000),
        ("1d12h", 129_600_000), ("2m30s", 150_000), ("0s", 0), ("0ms", 0), ("1m1ms", 60_001),
        ("18446744073709551615ms", .max),
    ]

    @Test(arguments: spelled)
    func parseSpellings(text: String, ms: SimTime) {
        #expect(DurationText.parse(text) == ms)
        #expect(DurationText.parse(Substring(text)) == ms, "StringProtocol overload")
    }

    static let malformed: [String] = [
        "", "10", "d", "5x", "1.5h", "99999999999999999999d", " 1s", "1s ", "-1s", "+1s", "1 s", "1S", "1D",
        "s", "ms", "1d1", "1mss", "1µs", "１s",                      // full-width digit
        "213503982335d",                                             // just past UInt64.max ms
        "18446744073709551616ms",                                    // UInt64.max + 1
        "18446744073709551615ms1ms",                                 // sum overflows
        "213503982334d15h",                                          // sum overflows
    ]

    @Test(arguments: malformed)
    func parseRejects(text: String) {
        #expect(DurationText.parse(text) == nil, "\(text.debugDescription) must not parse")
    }

    /// `format` then `parse` is the identity, and `format` is canonical: units strictly
    /// largest first, each part below its carry (h < 24, m < 60, s < 60, ms < 1000), no
    /// zero parts — so there is exactly one printed form per duration.
    @Test func roundTripOverRandomDurations() throws {
        var r = SimRandom(seed: 5)
        let sizes: [SimTime] = [Ms.day, Ms.hour, Ms.minute, Ms.second, Ms.millisecond]
        for i in 0..<20_000 {
            let x: SimTime
            switch i % 4 {
            case 0: x = r.next()                                           // full range
            case 1: x = r.below(100 * Ms.day)                              // realistic
            case 2: x = r.below(1_000) * sizes[Int(r.below(5))]            // one unit
            default: x = sizes.reduce(0) { $0 + r.below(3) * $1 }          // sums with zero parts
            }
            let text = DurationText.format(x)
            try #require(DurationText.parse(text) == x, "\(x) -> \(text) -> \(String(describing: DurationText.parse(text)))")
            try #require(isCanonical(text), "\(x) -> \(text) is not canonical")
        }
    }

    /// Parses `text` into (value, unit) parts and checks the canonical-form rules.
    func isCanonical(_ text: String) -> Bool {
        if text == "0s" { return true }
        let order = ["d", "h", "m", "s", "ms"]
        let carry: [SimTime?] = [nil, 24, 60, 60, 1_000]
        var rest = Substring(text)
        var lastUnit = -1
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            rest = rest.dropFirst(digits.count)
            let unitText = rest.hasPrefix("ms") ? "ms" : String(rest.prefix(1))
            rest = rest.dropFirst(unitText.count)
            guard let value = SimTime(digits), value > 0, !digits.hasPrefix("0"),
                  let unit = order.firstIndex(of: unitText), unit > lastUnit else { return false }
            if let c = carry[unit], value >= c { return false }
            lastUnit = unit
        }
        return true
    }

    @Test func parseNeverCrashesOnRandomText() {
        var r = SimRandom(seed: 11)
        let alphabet = Array("0123456789dhmsx .-9")
        for _ in 0..<5_000 {
            let n = Int(r.below(30))
            let text = String((0..<n).map { _ in alphabet[Int(r.below(UInt64(alphabet.count)))] })
            if let v = DurationText.parse(text) {
                // Whatever parses must print to something that parses to the same value.
                #expect(DurationText.parse(DurationText.format(v)) == v, "\(text)")
            }
        }
    }

    @Test func clockIsFixedWidth() {
        #expect(DurationText.clock(0) == "0d00h00m00.000s")
        #expect(DurationText.clock(3 * Ms.day + 2 * Ms.hour + 15 * Ms.minute + 7 * Ms.second + 250) == "3d02h15m07.250s")
        #expect(DurationText.clock(Ms.day - 1) == "0d23h59m59.999s")
    }
}
