/// What an SDK states about itself where SPEC lets it choose within a limit, as a team
/// writes it in its README: the checkers judge its liveness by these numbers, never by
/// the reference's. A core states them with `SDKCore.statement`; the world hands them to
/// the observer in `WorldFacts.sdkStatement`.
public struct SDKStatement: Sendable, Equatable {
    /// D10: the longest back-off after a failed run-report upload before the SDK uploads
    /// again at a launch, an activation or a run's end (SPEC allows at most 6 h).
    public var reportRetryBackoffMaxMs: SimTime
    /// D7: the longest back-off between tries of a reset's server-side delete (at most 6 h).
    public var resetRetryBackoffMaxMs: SimTime
    /// D3: whether the SDK keeps `lockedSince` where SimKit sees it (`StoreOp.setLockedSince`
    /// or its disk mapping). One that keeps none is judged by the server's word on the stop
    /// alone (D5), as SPEC does; its `lockedSince` is not compared.
    public var recordsLockedSince: Bool

    /// SPEC's limit for both back-offs (D7, D10): 6 h.
    public static let backoffLimitMs: SimTime = 6 * Ms.hour

    /// Back-offs of at most 6 h each; a larger value is taken as 6 h, SPEC's limit.
    public init(reportRetryBackoffMaxMs: SimTime = SDKStatement.backoffLimitMs,
                resetRetryBackoffMaxMs: SimTime = SDKStatement.backoffLimitMs,
                recordsLockedSince: Bool = true) {
        self.reportRetryBackoffMaxMs = min(reportRetryBackoffMaxMs, SDKStatement.backoffLimitMs)
        self.resetRetryBackoffMaxMs = min(resetRetryBackoffMaxMs, SDKStatement.backoffLimitMs)
        self.recordsLockedSince = recordsLockedSince
    }

    /// What an SDK that states nothing is held to: SPEC's limits.
    public static let specLimits = SDKStatement()
}
