import SimKit

/// Every invariant of SPEC §3, checked online as the trace streams by: one pass, memory
/// bounded per device. A run goes on after a violation; the first `maxPerInvariant`
/// violations of each invariant are kept with the device's last records, the rest counted.
public struct InvariantChecker: TraceObserver {
    public let maxPerInvariant: Int
    public private(set) var violations: [Violation] = []
    /// Violations per invariant (`InvariantID.allCases` order), kept or not.
    public private(set) var counts: [Int] = Array(repeating: 0, count: InvariantID.allCases.count)
    public private(set) var coverage = CoverageCounts()
    public private(set) var facts: WorldFacts?

    public init(maxPerInvariant: Int = 10, ringDepth: Int = 12) {
        self.maxPerInvariant = maxPerInvariant
    }

    /// How many times `invariant` was broken.
    public func count(of invariant: InvariantID) -> Int { counts[InvariantID.allCases.firstIndex(of: invariant)!] }
    /// The invariants broken at least once, by name.
    public var broken: [InvariantID] { InvariantID.allCases.filter { count(of: $0) > 0 }.sorted() }

    public mutating func begin(_ facts: WorldFacts) { self.facts = facts }
    public mutating func observe(_ record: TraceRecord) {}
    public mutating func finish(at time: SimTime) {}
}
