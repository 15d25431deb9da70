/// Virtual time in milliseconds since the start of a simulation.
///
/// A plain `UInt64`, so arithmetic on the hot path is free; `Ms` holds the unit
/// constants and `DurationText` parses and prints durations such as `1d12h`.
public typealias SimTime = UInt64

extension SimTime {
    /// `self + ms`, or `SimTime.max` when that overflows: a deadline past the end of time.
    /// For sums of times the scenario language does not bound (worlds built in code);
    /// a file's times and spans are bounded so that they never get near it.
    @inline(__always)
    public func saturatingAdd(_ ms: SimTime) -> SimTime {
        let (sum, overflow) = addingReportingOverflow(ms)
        return overflow ? .max : sum
    }

    /// `self - ms`, or 0 when `ms` is later: the start of time.
    @inline(__always)
    public func saturatingSubtract(_ ms: SimTime) -> SimTime { self > ms ? self - ms : 0 }

    /// This time in whole seconds, rounded up, saturating at `UInt32.max`: a compact
    /// deadline that is never earlier than the exact one.
    @inlinable
    public var secondsRoundedUp: UInt32 {
        let s = self / 1000 + (self % 1000 == 0 ? 0 : 1)
        return s >= SimTime(UInt32.max) ? UInt32.max : UInt32(s)
    }
}

/// Millisecond constants for building durations: `3 * Ms.day + 12 * Ms.hour`.
public enum Ms {
    public static let millisecond: SimTime = 1
    public static let second: SimTime = 1_000
    public static let minute: SimTime = 60_000
    public static let hour: SimTime = 3_600_000
    public static let day: SimTime = 86_400_000
}

/// Parsing and printing of durations in the scenario language: `250ms`, `10s`, `15m`,
/// `6h`, `30d`, and sums such as `1d12h` or `2m30s`.
public enum DurationText {
    /// The units, largest first; printing uses them in this order.
    public static let units: [(suffix: String, ms: SimTime)] = [
        ("d", Ms.day), ("h", Ms.hour), ("m", Ms.minute), ("s", Ms.second), ("ms", Ms.millisecond),
    ]

    /// The duration that `text` spells, or nil when it is not a duration or overflows.
    /// Each part is digits followed by a unit; parts add up (`1d12h` = 36 h).
    /// - Complexity: O(n) in the length of `text`.
    public static func parse<S: StringProtocol>(_ text: S) -> SimTime? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return nil }
        var total: SimTime = 0
        var i = 0
        while i < bytes.count {
            var value: SimTime = 0
            let digitsStart = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(SimTime(bytes[i] - 0x30))
                if o1 || o2 { return nil }
                value = a
                i += 1
            }
            guard i > digitsStart, i < bytes.count else { return nil }
            let unit: SimTime
            switch bytes[i] {
            case UInt8(ascii: "d"): unit = Ms.day; i += 1
            case UInt8(ascii: "h"): unit = Ms.hour; i += 1
            case UInt8(ascii: "s"): unit = Ms.second; i += 1
            case UInt8(ascii: "m"):
                if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "s") { unit = Ms.millisecond; i += 2 }
                else { unit = Ms.minute; i += 1 }
            default: return nil
            }
            let (part, o3) = value.multipliedReportingOverflow(by: unit)
            let (sum, o4) = total.addingReportingOverflow(part)
            if o3 || o4 { return nil }
            total = sum
        }
        return total
    }

    /// The canonical spelling of `ms`: largest unit first, each part below its carry
    /// (`1d12h`, `2m30s`, `250ms`); zero prints as `0s`. `parse` also accepts sums in any order.
    public static func format(_ ms: SimTime) -> String {
        if ms == 0 { return "0s" }
        var rest = ms
        var out = ""
        for (suffix, size) in units where rest >= size {
            out += String(rest / size) + suffix
            rest %= size
        }
        return out
    }

    /// A fixed-width clock reading for reports and traces: `3d02h15m07.250s`.
    public static func clock(_ ms: SimTime) -> String {
        let d = ms / Ms.day, h = (ms % Ms.day) / Ms.hour, m = (ms % Ms.hour) / Ms.minute
        let s = (ms % Ms.minute) / Ms.second, milli = ms % Ms.second
        func two(_ v: SimTime) -> String { v < 10 ? "0\(v)" : "\(v)" }
        func three(_ v: SimTime) -> String { v < 10 ? "00\(v)" : v < 100 ? "0\(v)" : "\(v)" }
        return "\(d)d\(two(h))h\(two(m))m\(two(s)).\(three(milli))s"
    }
}
