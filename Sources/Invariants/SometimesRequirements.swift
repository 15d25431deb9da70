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
package enum SometimesRequirements {
    /// Seeds from which each situation is required, in `Coverage` declaration order
    /// (0: never required). Measured from 40,000 seeds of the default campaign, with the
    /// generator's aimed probes, its interleaving probes, per-device links and the rest of
    /// the language's surface.
    package static let table: [(fromSeeds: Int, name: String)] = [
        (   110, "lock-by-app_key_invalid"),     // 35.09%
        (    40, "lock-by-app_disabled"),        // 81.56%
        (   630, "lock-by-app_key_mismatch"),    // 6.48%
        (    70, "lock-from-check"),             // 54.26%
        (    60, "lock-from-register"),          // 62.17%
        (   140, "lock-from-query"),             // 28.12%
        (  1600, "lock-from-profile"),           // 2.67%
        (  2800, "lock-from-place-data"),        // 1.52%
        (  2300, "lock-from-model-download"),    // 1.80%
        (   800, "lock-from-run-report"),        // 5.12%
        (    80, "unlock"),                      // 47.15%
        (   450, "unlock-after-29-days"),        // 9.20%
        (    80, "purge"),                       // 45.82%
        (   450, "re-registration"),             // 9.16%
        (   150, "old-key-refused-after-grace"), // 27.24%
        (   290, "old-key-served-in-grace"),     // 14.09%
        (   230, "check-while-offline"),         // 17.81%
        (   330, "check-answered-5xx"),          // 12.49%
        (   170, "check-timed-out"),             // 24.02%
        (   160, "app_pending-answered"),        // 24.73%
        (    70, "stale-response-ignored"),      // 53.66%
        (   130, "clone-refused"),               // 31.49%
        (   810, "reset-while-request-in-flight"), // 5.09%
        (  1800, "reset-retried"),               // 2.40%
        (   550, "photos-revoked-while-locked"), // 7.42%
        (   560, "photos-revoked-index-deleted"), // 7.27%
        (    40, "locked-threw-on-call"),        // 84.41%
        (    90, "background-run"),              // 44.30%
        (   280, "report-uploaded-after-failure"), // 14.62%
        (   170, "response-lost"),               // 23.83%
        (    50, "dashboard-disable"),           // 77.24%
        (   150, "rollup-revoke"),               // 26.85%
        (   390, "enable-while-rollup-revoked"), // 10.56%
        (  1900, "unlock-in-background"),        // 2.17%
        (  1500, "stale-refusal-after-unlock"),  // 2.94%
        (  2000, "purge-due-from-non-check"),    // 2.17%
        (  2500, "clone-reset-refused"),         // 1.72%
        (  1700, "report-upload-device_unknown"), // 2.46%
        (  1900, "stale-reset-spares-newer-registration"), // 2.23% of 4,000 seeds
        (  4200, "pending-key-on-registered-device"), // 1.03% of 4,000 seeds
        (   250, "server-restart-cut-requests"),   // 16.37% of 3,000 seeds (issue 49)
        (   250, "server-restart-kept-what-it-acknowledged"), // 16.30% of 3,000 seeds
        (   470, "portal-answered-locked-check"),    // 8.72% of 8,000 seeds (issue 49, P6)
        (  1900, "portal-403-reached-unlocked-sdk"),  // 2.19% of 8,000 seeds
        (   750, "clock-set-back-past-check"),   // 5.51% of 8,000 seeds (issue 47)
        (  2300, "run-expired-mid-chunk"),       // 1.80% of 2,000 seeds (issue 47, P5); Examples/BlobSDK, which indexes 1,000 photos in about 2 s and starts its run after its check's answer, 2.25%
        (  1200, "write-failed-with-reports-queued"), // 3.55% of 2,000 seeds (issue 47, P3)
        (   500, "background-read-before-unlock"),   // 8.20% of 2,000 seeds (issue 47, P4)
        (   600, "kill-between-writes"),         // 6.88% of 8,000 seeds (issue 47)
    ]

    /// The number of seeds from which `situation` is required, or nil if it never is.
    package static func requiredFrom(_ situation: Coverage) -> Int? {
        let n = table[situation.rawValue].fromSeeds
        return n > 0 ? n : nil
    }

    /// The situations a campaign of `seeds` seeds must reach.
    package static func required(seeds: Int) -> [Coverage] {
        Coverage.allCases.filter { requiredFrom($0).map { seeds >= $0 } ?? false }
    }

    /// The situations a campaign of `seeds` seeds must reach but did not, in declaration order.
    package static func unreached(_ counts: CoverageCounts, seeds: Int) -> [Coverage] {
        required(seeds: seeds).filter { counts[$0] == 0 }
    }
}
