import SimKit

/// Liveness rules' deadlines: something a device owes by a time (an upload, D10; a reset's
/// delete on the server, D7). A min-heap of (deadline, device, kind); an entry is only a
/// reminder to look again at that time, so one made stale by the device since (the debt
/// paid, or its deadline moved) is dropped when it comes up. Few devices owe anything at
/// once, and the checker tests only the earliest deadline per record (`nextDeadline`).
struct Obligations {
    enum Kind: UInt8 { case upload, resetDelete }
    struct Entry { var deadline: SimTime; var device: DeviceIndex; var kind: Kind }

    private var heap: [Entry] = []

    /// The most reminders kept: each device holds at most two live ones; stale ones are
    /// dropped as they come up, so this bounds a checker that leaks them.
    static let limit = 1 << 24

    var isEmpty: Bool { heap.isEmpty }
    /// The earliest deadline, or `.max`.
    var earliest: SimTime { heap.first?.deadline ?? .max }

    /// Adds a reminder for `device` at `deadline`.
    /// - Complexity: O(log n).
    mutating func add(_ deadline: SimTime, _ device: DeviceIndex, _ kind: Kind) {
        precondition(heap.count < Obligations.limit, "more than \(Obligations.limit) liveness reminders pending")
        heap.append(Entry(deadline: deadline, device: device, kind: kind))
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].deadline < heap[parent].deadline else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    /// Removes and returns the earliest reminder due at or before `t`, if any.
    /// - Complexity: O(log n).
    mutating func popDue(by t: SimTime) -> Entry? {
        guard let first = heap.first, first.deadline <= t else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count, heap[l].deadline < heap[m].deadline { m = l }
                if r < heap.count, heap[r].deadline < heap[m].deadline { m = r }
                guard m != i else { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return first
    }
}

/// D7's liveness for one `reset()`: while the server still holds the record it must
/// delete, the time that counts (the app running, the device online, the server up) is
/// summed; the record must be gone before it reaches the SDK's stated back-off plus one
/// request timeout.
struct OwedReset {
    var device: DeviceIndex
    /// The registration whose record must go: the one a `reset()` named.
    var generation: UInt32
    /// Counting time summed so far, up to `since` (or up to the last change when not counting).
    var countedMs: SimTime = 0
    /// When the current counting interval began, or `never` while time does not count.
    var since: SimTime = LocalData.never
    /// When this debt began (`reset()`), for reports.
    var owedFrom: SimTime
}
