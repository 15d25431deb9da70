import SimKit

/// What `simkit explore` hashes of the checkers: the ground truth they judge by, which
/// decides what a later record breaks. The violations already counted are part of it; the
/// trace rings and coverage counts (a record of the past) are not.
extension InvariantChecker {
    /// The checkers' state, labelled, in a fixed order; values with no references.
    /// - Complexity: O(devices).
    package func stateParts() -> [(label: String, value: Any)] {
        // Typed, not `[Any]`: the digest reads a typed element's members from its bytes.
        var truths: [DeviceTruth] = []
        for i in 0..<devices.count { truths.append(devices[i]) }
        return [("truth", truths), ("server-truth", server), ("step", step), ("checker-now", now),
                ("next-deadline", nextDeadline), ("counts", counts), ("timeout", timeoutMs),
                ("owed-resets", owedResets), ("offline-until", offlineUntil),
                ("server-windows", [serverDownUntil, serverErrorsUntil])]
    }
}
