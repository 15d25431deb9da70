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
    /// (0: never required). Measured from 40,000 seeds of the default campaign.
    public static let table: [(fromSeeds: Int, name: String)] = [
        (   160, "lock-by-app_key_invalid"),        // 25.44% of seeds
        (    50, "lock-by-app_disabled"),           // 75.47%
        (   570, "lock-by-app_key_mismatch"),       // 7.14%
        (    90, "lock-from-check"),                // 42.30%
        (    60, "lock-from-register"),             // 58.50%
        (   150, "lock-from-query"),                // 27.18%
        (  3700, "lock-from-profile"),              // 1.12%
        (  7900, "lock-from-place-data"),           // 0.53%
        (  6500, "lock-from-model-download"),       // 0.64%
        (  1100, "lock-from-run-report"),           // 3.75%
        (    90, "unlock"),                         // 43.15%
        (   380, "unlock-after-29-days"),           // 10.66%
        (   110, "purge"),                          // 34.68%
        (   580, "re-registration"),                // 7.08%
        (   200, "old-key-refused-after-grace"),    // 19.93%
        (   380, "old-key-served-in-grace"),        // 10.79%
        (   260, "check-while-offline"),            // 15.83%
        (   310, "check-answered-5xx"),             // 12.94%
        (   230, "check-timed-out"),                // 17.90%
        (   160, "app_pending-answered"),           // 25.39%
        (    80, "stale-response-ignored"),         // 50.46%
        (   130, "clone-refused"),                  // 30.33%
        (   890, "reset-while-request-in-flight"),  // 4.62%
        (  5700, "reset-retried"),                  // 0.73%
        (   590, "photos-revoked-while-locked"),    // 7.00%
        (   540, "photos-revoked-index-deleted"),   // 7.60%
        (    50, "locked-threw-on-call"),           // 79.19%
        (   110, "background-run"),                 // 35.22%
        (   350, "report-uploaded-after-failure"),  // 11.68%
        (   220, "response-lost"),                  // 18.29%
        (    60, "dashboard-disable"),              // 63.61%
        (   370, "rollup-revoke"),                  // 10.99%
        (   390, "enable-while-rollup-revoked"),    // 10.54%
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
