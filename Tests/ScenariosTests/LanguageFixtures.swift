/// Scenario texts shared by the language tests.
enum LanguageFixtures {
    /// The example block of SPEC §4, verbatim.
    static let specExample = #"""
scenario "Leaked key is stopped at once"
seed 42
duration 45d
sdk reference                      # or: sdk mutant lock-on-5xx

account acme                       # approved unless: account acme unapproved
app photos account acme key rk_live_A          # approved unless: pending
devices 2000 app photos            # group "photos"; or: ... as early
clones 5 app photos                # non-genuine installs with a copied key
network latency 20ms..800ms timeout 30s

every 8h jitter 2h open 60% of photos
every 1d background all
at 0s launch all

at 2d offline 20% of photos for 6h
at 3d server errors 50% status 503 for 2h
at 3d12h server down for 1h
at 4d timeouts 10% for 1d
at 5d rotate photos key rk_live_B stop-old now     # or: keep-old 30d (default)
at 6d update 30% of photos
at 7d stop-old-key photos rk_live_A
at 10d disable photos
at 12d enable photos
at 15d rollup revoke photos        # approve | reject | revoke | restore
at 16d rollup revoke-account acme  # approve-account | revoke-account | restore-account
at 20d query 10% of photos         # search | query | profile
at 21d revoke-photos device photos#17        # grant-photos, add-photos 200 <sel>
at 22d reset 1% of photos
at 23d forget-device 5 of photos   # the server loses these devices' records

at 11d expect all photos locked    # quantifier: all | none | N | >=N | <=N | N%
at 44d expect none photos purged   # states: unconfigured indexing idle locked purged
expect violation never-lock-on-transient       # this run must break exactly these
"""#

    /// A small valid header for diagnostic tests; lines 1–6; a test's own lines start at line 7.
    static let header = """
    duration 30d
    account acme
    app photos account acme key rk_live_A
    devices 100 app photos
    devices 10 app photos as early
    clones 5 app photos

    """
}
