/// Named bounds of the scenario language; every loop in the front end is bounded by one.
@usableFromInline package enum ScenarioLimits {
    /// Longest line accepted, in bytes.
    @usableFromInline package static let maxLineBytes = 4_096
    /// Most tokens on one line.
    @usableFromInline package static let maxTokensPerLine = 64
    /// Most statements (declarations, timed statements and expectations) in a file.
    @usableFromInline package static let maxStatements = 100_000
    /// Largest file accepted, in bytes.
    @usableFromInline package static let maxFileBytes = 64 * 1_024 * 1_024
    /// Most diagnostics reported for one file; parsing stops after that.
    @usableFromInline package static let maxDiagnostics = 100
    /// Most devices in a scenario, clones included.
    @usableFromInline package static let maxDevices: UInt64 = 1_000_000
    /// Longest scenario duration (3650 days). Also the bound of every other span in a
    /// file: `at`, `from` and `until` (which must also be within the scenario's duration),
    /// a period (`every D`), a `jitter`, a fault's `for D` and a rotation's `keep-old D`.
    /// With times and spans at most this, the engine's sums of them stay far below
    /// `SimTime.max` (2 × 3650 days is about 2^39 ms).
    @usableFromInline package static let maxDuration: SimTime = 3_650 * Ms.day
    /// Longest request timeout (`network timeout T`): one hour.
    @usableFromInline package static let maxTimeoutMs: SimTime = Ms.hour
    /// Largest one-way latency bound (`network latency A..B`): one hour.
    @usableFromInline package static let maxLatencyMs: SimTime = Ms.hour
    /// Most photos one `add-photos N` adds to each selected library.
    @usableFromInline package static let maxPhotosPerAdd: UInt64 = 1_000_000
}
