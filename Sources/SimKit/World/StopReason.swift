/// Why a run stopped before the end of its duration. A run that stopped early tested only
/// part of its scenario: its verdict is "incomplete", never a pass.
public enum StopReason: Equatable, Sendable, CustomStringConvertible {
    /// The event budget (`WorldSetup.eventBudget`) was used up at `atMs`.
    case eventBudget(events: UInt64, atMs: SimTime)
    /// More events were pending than the queue's bound (`WorldSetup.queueLimit`): the
    /// schedule runs away.
    case queueBound(events: Int, atMs: SimTime)
    /// More events were pending than fit in the memory budget (`WorldSetup.memoryBudgetBytes`).
    case memoryBound(events: Int, budgetBytes: UInt64, atMs: SimTime)
    /// Stopped from outside (Ctrl-C) at `atMs`; for callers that stop runs themselves.
    case interrupted(atMs: SimTime)

    /// The reason's short name: `event budget`, `queue bound`, `memory bound` or `interrupted`.
    public var name: String {
        switch self {
        case .eventBudget: "event budget"
        case .queueBound: "queue bound"
        case .memoryBound: "memory bound"
        case .interrupted: "interrupted"
        }
    }

    /// The virtual time at which the run stopped.
    public var atMs: SimTime {
        switch self {
        case let .eventBudget(_, at), let .queueBound(_, at), let .memoryBound(_, _, at), let .interrupted(at): at
        }
    }

    /// One lowercase sentence: the reason's name, then what was reached and when.
    public var description: String {
        let at = DurationText.clock(atMs)
        switch self {
        case let .eventBudget(events, _):
            return "event budget: the budget of \(events) events was reached at \(at)"
        case let .queueBound(events, _):
            return "queue bound: more than \(events) events were pending at \(at); the schedule runs away"
        case let .memoryBound(events, budget, _):
            return "memory bound: more than \(events) events were pending at \(at), more than fit in \(StopReason.bytes(budget))"
        case .interrupted:
            return "interrupted at \(at)"
        }
    }

    /// `4 GiB`, `512 MiB` or `N bytes`.
    static func bytes(_ n: UInt64) -> String {
        if n >= 1 << 30, n % (1 << 30) == 0 { return "\(n >> 30) GiB" }
        if n >= 1 << 20, n % (1 << 20) == 0 { return "\(n >> 20) MiB" }
        return "\(n) bytes"
    }
}
