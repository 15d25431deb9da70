/// "Sometimes" situations as properties: the situations a fuzz campaign of a given size
/// must reach, or its verdict means little. A situation the reference reaches in a share
/// p of generated seeds is required from the number of seeds at which a correct core
/// misses it by chance less than once in 10⁹ (for a share of p/2, a margin for sampling
/// error and generator changes). An SDK or server that never gets there has lost a path
/// (a retry that never happens, a lock never taken), which is often the only sign of it.
///
/// The one table of which situations are required, and from how many seeds. It was
/// measured with the default generator options (`--devices 40 --duration 90d`) and is
/// applied only to campaigns with those options (fewer days, for one, make a purge
/// impossible). Remeasure after changing the generator:
/// `simkit fuzz --seeds 40000 --no-shrink --json F && scripts/measure-sometimes.py F`.
public enum SometimesRequirements {
    /// Seeds from which each situation is required, in `Coverage` declaration order
    /// (0: never required). Measured from 40,000 seeds of the default campaign, with the
    /// generator's aimed probes, per-device links and the rest of the language's surface.
    public static let table: [(fromSeeds: Int, name: String)] = [
        (   110, "lock-by-app_key_invalid"),        // 34.50%
        (    50, "lock-by-app_disabled"),           // 78.76%
        (   640, "lock-by-app_key_mismatch"),       // 6.38%
        (    80, "lock-from-check"),                // 49.48%
        (    60, "lock-from-register"),             // 61.16%
        (   160, "lock-from-query"),                // 25.77%
        (  3400, "lock-from-profile"),              // 1.24%
        (  2800, "lock-from-place-data"),           // 1.52%
        (  2300, "lock-from-model-download"),       // 1.80%
        (   850, "lock-from-run-report"),           // 4.86%
        (    90, "unlock"),                         // 45.43%
        (   420, "unlock-after-29-days"),           // 9.77%
        (   100, "purge"),                          // 41.03%
        (   640, "re-registration"),                // 6.42%
        (   150, "old-key-refused-after-grace"),    // 26.72%
        (   280, "old-key-served-in-grace"),        // 14.34%
        (   270, "check-while-offline"),            // 15.15%
        (   330, "check-answered-5xx"),             // 12.47%
        (   170, "check-timed-out"),                // 23.64%
        (   160, "app_pending-answered"),           // 24.89%
        (    80, "stale-response-ignored"),         // 47.49%
        (   130, "clone-refused"),                  // 29.52%
        (   940, "reset-while-request-in-flight"),  // 4.39%
        (  7200, "reset-retried"),                  // 0.58%
        (   580, "photos-revoked-while-locked"),    // 7.14%
        (   560, "photos-revoked-index-deleted"),   // 7.29%
        (    40, "locked-threw-on-call"),           // 81.80%
        (   100, "background-run"),                 // 39.91%
        (   320, "report-uploaded-after-failure"),  // 12.62%
        (   180, "response-lost"),                  // 22.67%
        (    50, "dashboard-disable"),              // 73.06%
        (   170, "rollup-revoke"),                  // 23.95%
        (   400, "enable-while-rollup-revoked"),    // 10.33%
    ]

    /// The number of seeds from which `situation` is required, or nil if it never is.
    public static func requiredFrom(_ situation: Coverage) -> Int? {
        let n = table[situation.rawValue].fromSeeds
        return n > 0 ? n : nil
    }

    /// The situations a campaign of `seeds` seeds must reach.
    public static func required(seeds: Int) -> [Coverage] {
        Coverage.allCases.filter { requiredFrom($0).map { seeds >= $0 } ?? false }
    }

    /// The situations a campaign of `seeds` seeds must reach but did not, in declaration order.
    public static func unreached(_ counts: CoverageCounts, seeds: Int) -> [Coverage] {
        required(seeds: seeds).filter { counts[$0] == 0 }
    }
}
