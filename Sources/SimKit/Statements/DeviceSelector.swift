/// A share of devices or requests, in integer basis points: 10000 = 100%, 50 = 0.5%.
package struct Share: Equatable, Hashable, Sendable, Comparable {
    /// Basis points; the source allows at most two decimals of a percent.
    package var basisPoints: UInt32
    /// A share of `basisPoints` / 10000.
    package init(basisPoints: UInt32) { self.basisPoints = basisPoints }
    /// A share of whole percent.
    package init(percent: UInt32) { self.basisPoints = percent * 100 }
    /// 100%.
    package static let all = Share(basisPoints: 10_000)
    /// How many of `total` this share selects: floor(total × bp / 10000).
    package func count(of total: UInt64) -> UInt64 {
        let wide = total.multipliedFullWidth(by: UInt64(basisPoints))
        if wide.high >= 10_000 { return UInt64.max }   // only for shares over 100%
        return UInt64(10_000).dividingFullWidth(wide).quotient
    }
    /// The source spelling without `%`: `60`, `0.5`, `12.25`.
    package var text: String {
        let whole = basisPoints / 100, frac = basisPoints % 100
        if frac == 0 { return "\(whole)" }
        if frac % 10 == 0 { return "\(whole).\(frac / 10)" }
        return "\(whole).\(frac < 10 ? "0" : "")\(frac)"
    }
    /// Orders by size.
    package static func < (a: Share, b: Share) -> Bool { a.basisPoints < b.basisPoints }
}

/// Which devices an action applies to. A group named `all` means every device, so
/// `10% of all` and `3 of all` work (`all` is reserved as a group name).
package enum DeviceSelector: Equatable, Sendable {
    /// Every device, clones included.
    case all
    /// Every device of a group.
    case group(String)
    /// `N of GROUP`: N devices drawn from the seed.
    case count(UInt64, of: String)
    /// `N% of GROUP`: floor(size × N%) devices drawn from the seed.
    case share(Share, of: String)
    /// `device GROUP#I`: the I-th device of the group, counting from 1.
    case device(group: String, index: UInt64)
}

extension DeviceSelector {
    /// The selector as a statement writes it: `all`, `GROUP`, `N of GROUP`, `N% of GROUP`, `device GROUP#I`.
    package var text: String {
        switch self {
        case .all: return "all"
        case let .group(g): return g
        case let .count(n, of: g): return "\(n) of \(g)"
        case let .share(sh, of: g): return "\(sh.text)% of \(g)"
        case let .device(group: g, index: i): return "device \(g)#\(i)"
        }
    }
}

extension Share {
    /// The share as a rate in basis points of the engine, at most 100%.
    package var rateBp: UInt16 { UInt16(min(basisPoints, 10_000)) }
}
