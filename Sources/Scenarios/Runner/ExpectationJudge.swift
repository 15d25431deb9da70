import SimKit
import ScenarioLanguage

/// The verdict on one timed expectation.
public struct ExpectationResult: Sendable, Equatable {
    /// Which expectation (its probe index).
    public var index: Int
    /// Whether it held.
    public var passed: Bool
    /// How many devices of the group were in each state, in `DeviceStateName.allCases` order.
    public var counts: [UInt64]

    /// `expect all photos locked at 11d: 1873 of 2000 are locked (127 idle)`.
    public var message: String
}

/// Judges a scenario's timed expectations as the trace goes by: it keeps each device's
/// last reported state (from `state` records; `unconfigured` until the first) and, at each
/// `probe(arg:)` record, counts the group's devices in the expected state.
///
/// Memory: one byte per device plus the results. A probe costs O(devices of its group).
package struct ExpectationJudge: TraceObserver {
    /// The expectations, by probe index.
    package let expectations: [TimedExpectation]
    /// One verdict per probe that fired, in trace order.
    package private(set) var results: [ExpectationResult] = []
    /// Each device's last reported state.
    package private(set) var states: [SDKState] = []
    /// Each group's device range (filled at `begin`).
    private var groupRanges: [Range<Int>] = []
    private var groupNames: [String] = []

    /// A judge of `expectations` (index = probe argument).
    package init(expectations: [TimedExpectation]) { self.expectations = expectations }

    /// The verdicts that failed.
    package var failures: [ExpectationResult] { results.filter { !$0.passed } }

    package mutating func begin(_ facts: WorldFacts) {
        states = Array(repeating: .unconfigured, count: facts.deviceCount)
        groupRanges = facts.setup.groups.indices.map { facts.setup.range(ofGroup: $0) }
        groupNames = facts.setup.groups.map(\.name)
        results.reserveCapacity(expectations.count)
    }

    package mutating func observe(_ record: TraceRecord) {
        switch record.event {
        case .state(let s):
            let d = Int(record.device)
            if d < states.count { states[d] = s }
        case .probe(let arg):
            judge(Int(arg))
        default:
            break
        }
    }

    /// Judges expectation `index` against the states now.
    mutating func judge(_ index: Int) {
        precondition(index < expectations.count, "probe \(index) has no expectation (\(expectations.count) known)")
        let e = expectations[index]
        let range = e.group.map { groupRanges[$0] } ?? 0..<states.count
        var bySDKState = Array(repeating: UInt64(0), count: SDKState.allCases.count)
        for d in range { bySDKState[Int(states[d].rawValue)] += 1 }
        let counts = DeviceStateName.allCases.map { bySDKState[Int($0.sdkState.rawValue)] }
        let wanted = DeviceStateName.allCases.firstIndex(of: e.expectation.state)!
        let size = UInt64(range.count)
        let passed = e.expectation.quantifier.holds(matching: counts[wanted], of: size)
        results.append(ExpectationResult(index: index, passed: passed, counts: counts,
                                         message: Self.message(e, counts: counts, wanted: wanted, size: size)))
    }


    /// `expect all photos locked at 11d: 1873 of 2000 are locked (127 idle)`.
    static func message(_ e: TimedExpectation, counts: [UInt64], wanted: Int, size: UInt64) -> String {
        let names = DeviceStateName.allCases
        var s = "\(e.text): \(counts[wanted]) of \(size) \(counts[wanted] == 1 ? "is" : "are") \(names[wanted].rawValue)"
        let others = names.indices.filter { $0 != wanted && counts[$0] > 0 }.map { "\(counts[$0]) \(names[$0].rawValue)" }
        if !others.isEmpty { s += " (" + others.joined(separator: ", ") + ")" }
        return s
    }
}

extension DeviceStateName {
    /// The SDK state this scenario state name stands for.
    var sdkState: SDKState {
        switch self {
        case .unconfigured: .unconfigured
        case .indexing: .indexing
        case .idle: .idle
        case .locked: .locked
        case .purged: .purged
        }
    }
}
