import Synchronization

/// What a host tells a running campaign besides its seeds' results: warnings about the
/// process that runs it (the async host's resource watch: memory or open files that grow
/// seed after seed), and a stop before the process would die of it. A stop ends the
/// campaign as a signal does (no new seed starts; the summary, `--json` and `--junit` are
/// written, INCOMPLETE, stopped by its reason); the warnings are printed in the summary
/// and listed in `--json`.
package enum CampaignNotes {
    struct State { var warnings: [String] = []; var stop: String?; var failing: [UInt64] = [] }
    static let state = Mutex(State())

    /// A warning for the summary of the campaign running now.
    package static func warn(_ text: String) {
        state.withLock { if $0.warnings.count < 16 { $0.warnings.append(text) } }
    }

    /// Stops the campaign running now: no new seed starts.
    package static func stop(_ reason: String) {
        state.withLock { if $0.stop == nil { $0.stop = reason } }
        stopRequested.store(true, ordering: .relaxed)
    }

    /// The seeds that failed in the campaign that ran last in this process (for a host's
    /// bench, which runs campaigns in process and counts their failures).
    package static var lastFailing: [UInt64] { state.withLock { $0.failing } }
    static func finished(failing: [UInt64]) { state.withLock { $0.failing = failing } }

    static var warnings: [String] { state.withLock { $0.warnings } }
    static var stopReason: String? { state.withLock { $0.stop } }

    /// A campaign starts: nothing said to an earlier one carries over.
    static func reset() { state.withLock { $0 = State() } }
}
