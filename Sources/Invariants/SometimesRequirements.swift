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
    /// generator's aimed probes, its interleaving probes, per-device links and the rest of
    /// the language's surface.
    public static let table: [(fromSeeds: Int, name: String)] = [
        (   120, "lock-by-app_key_invalid"),     // 33.77%
        (    40, "lock-by-app_disabled"),        // 81.22%
        (   640, "lock-by-app_key_mismatch"),    // 6.39%
        (    70, "lock-from-check"),             // 52.73%
        (    60, "lock-from-register"),          // 61.93%
        (   140, "lock-from-query"),             // 27.85%
        (  1800, "lock-from-profile"),           // 2.42%
        (  2800, "lock-from-place-data"),        // 1.52%
        (  2400, "lock-from-model-download"),    // 1.79%
        (   810, "lock-from-run-report"),        // 5.08%
        (    80, "unlock"),                      // 46.95%
        (   460, "unlock-after-29-days"),        // 8.87%
        (    90, "purge"),                       // 44.58%
        (   460, "re-registration"),             // 8.82%
        (   150, "old-key-refused-after-grace"), // 26.79%
        (   300, "old-key-served-in-grace"),     // 13.66%
        (   230, "check-while-offline"),         // 17.35%
        (   330, "check-answered-5xx"),          // 12.49%
        (   170, "check-timed-out"),             // 23.95%
        (   160, "app_pending-answered"),        // 24.73%
        (    70, "stale-response-ignored"),      // 53.21%
        (   130, "clone-refused"),               // 31.60%
        (   820, "reset-while-request-in-flight"), // 5.04%
        (  1700, "reset-retried"),               // 2.44%
        (   550, "photos-revoked-while-locked"), // 7.43%
        (   570, "photos-revoked-index-deleted"), // 7.24%
        (    40, "locked-threw-on-call"),        // 84.10%
        (    90, "background-run"),              // 43.93%
        (   280, "report-uploaded-after-failure"), // 14.70%
        (   170, "response-lost"),               // 23.77%
        (    50, "dashboard-disable"),           // 76.96%
        (   150, "rollup-revoke"),               // 26.12%
        (   390, "enable-while-rollup-revoked"), // 10.35%
        (  1900, "unlock-in-background"),        // 2.27%
        (  1400, "stale-refusal-after-unlock"),  // 3.08%
        (  2100, "purge-due-from-non-check"),    // 2.01%
        (  2300, "clone-reset-refused"),         // 1.85%
        (  1600, "report-upload-device_unknown"), // 2.61%
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
