/// What `simkit explore` hashes to recognise a world state it has already searched from.
///
/// Everything that decides how a world goes on, as values with no references: the clock,
/// every device's state and SDK process, the server, the fault windows in force (every
/// kind's state, `FaultWindows`), each app's current key, and the pending
/// events in the order they will run, each request event with the request it carries
/// (its slot number, which depends on the pool's past, is left out, as is the queue's
/// insertion counter), and each device's count of requests sent when fates are pinned or
/// counted (a pin names a device's n-th request), and the answers held for a device's next
/// verdict (`RequestFate.overtaken`). Left out on purpose: the trace fingerprint, the trace rings and
/// the event count, which record the past, not the state.
/// The schedule is not listed: an explored prefix has fired all of its statements.
extension World {
    /// The parts of this world's state, labelled, in a fixed order (see the type's note).
    /// The observer's state is not included; a checker adds its own.
    /// - Complexity: O(devices + pending events), and a copy of the queue.
    package func stateParts() -> [(label: String, value: Any)] {
        var parts: [(label: String, value: Any)] = [
            ("now", now),
            ("devices", Array(devices)),
            ("sdks", Array(sdks)),
            ("server", server),
            ("faults", faults),
            ("current-keys", currentKey),
            ("requests-sent", fates.sent),
        ]
        // An answer held for its device's next verdict (`overtaken`) has no event queued:
        // its request, by device (the slot number left out, as for queued ones).
        if fates.holds {
            parts.append(("held-answers", fates.held.enumerated().map { d, h in h == 0 ? nil : (d, requests[h &- 1]) } as [Any?]))
        }
        var pending: [Any] = []
        for e in pendingEvents() {
            let base: [UInt64] = [e.time, UInt64(e.target), UInt64(e.kind), UInt64(e.sub), UInt64(e.aux)]
            if let slot = WorldEvent.requestSlot(of: e) {
                pending.append((base, requests[slot]))
            } else {
                pending.append((base, e.arg))
            }
        }
        parts.append(("pending", pending))
        return parts
    }

    /// The pending events in the order they will run, from a copy of the queue.
    /// - Complexity: O(pending events) plus copying the queue's buffers.
    package func pendingEvents() -> [Event] {
        var q = queue
        q.makeUnique()
        var out: [Event] = []
        while let e = q.pop() { out.append(e) }
        return out
    }
}
