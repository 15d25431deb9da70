/// Deliberate server bugs, for mutants that prove the invariants catch real faults.
/// `[]` is the reference server. Each flaw bends one rule at a named decision point of
/// `ServerModel` (its bend is in `ServerModel+Mutants.swift`).
@usableFromInline package struct ServerFlaws: OptionSet, Sendable, Hashable {
    @usableFromInline package let rawValue: UInt32
    /// Creates a set from its raw bits.
    @usableFromInline package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Breaks S1: the verdict of rules S2.1–S2.3 for a key is cached for `keyCacheMs`
    /// of virtual time, so dashboard and Rollup changes take effect late.
    @usableFromInline package static let cachesKeyChecks = ServerFlaws(rawValue: 1 << 0)
    /// Breaks S3: a previous key keeps working one extra day past its deadline.
    @usableFromInline package static let graceOneDayLate = ServerFlaws(rawValue: 1 << 1)
    /// Breaks S4/S5: the developer's `enable` also lifts a Rollup rejection or revocation
    /// of the app.
    @usableFromInline package static let enableLiftsRollup = ServerFlaws(rawValue: 1 << 2)
    /// Breaks S6: rule S2.5 is never applied, so a device answers to any app's key.
    @usableFromInline package static let skipsDeviceAppCheck = ServerFlaws(rawValue: 1 << 3)
    /// Breaks S8: a reset answers 200 but keeps the device's record.
    @usableFromInline package static let resetKeepsRecord = ServerFlaws(rawValue: 1 << 4)
    /// Breaks S6: registration skips App Attest, so a clone gets a credential.
    @usableFromInline package static let skipsAttestation = ServerFlaws(rawValue: 1 << 5)
    /// Breaks S8: a reset is judged by S2.1–S2.3 first, so while the key, app or account is
    /// stopped the reset is refused and the record survives.
    @usableFromInline package static let resetJudgesKey = ServerFlaws(rawValue: 1 << 6)
    /// Breaks S6: the App Attest assertion is checked only at registration, so a clone
    /// with a copy of a genuine device's credential is served.
    @usableFromInline package static let assertionOnlyAtRegistration = ServerFlaws(rawValue: 1 << 7)
    /// Breaks S2: `stoppedSince` counts from the first stop ever of the key or its app,
    /// not from the start of the unbroken stop (too early: unsound).
    @usableFromInline package static let stoppedSinceFromFirstStop = ServerFlaws(rawValue: 1 << 8)
    /// Breaks S3 at one millisecond: a previous key still works at its grace deadline
    /// itself (`>` for `>=`: invalid only after it).
    @usableFromInline package static let graceDeadlineInclusive = ServerFlaws(rawValue: 1 << 9)
    /// Breaks S3 at one millisecond: `stop-old now` gives the old key a grace of 1 ms, so a
    /// request in the very millisecond of the rotation is still served with it.
    @usableFromInline package static let stopNowOneMsLate = ServerFlaws(rawValue: 1 << 10)
    /// Breaks S4: Rollup's `restore` of an app also clears the developer's disable.
    @usableFromInline package static let restoreLiftsDisable = ServerFlaws(rawValue: 1 << 11)
    /// Breaks S5: restoring an account also restores its apps that Rollup revoked.
    @usableFromInline package static let accountRestoreLiftsAppRevoke = ServerFlaws(rawValue: 1 << 12)
    /// Breaks S4: a previous key in its grace is judged by its deadline alone, so it keeps
    /// working while the app is disabled.
    @usableFromInline package static let disableSparesGraceKeys = ServerFlaws(rawValue: 1 << 13)
    /// Breaks S2's tightness: an install seen on a new build (one skipped, or another key)
    /// is dated from that build's first request, as if the server could not know what
    /// the builds in between carried, even when its app has refused every key since earlier.
    @usableFromInline package static let datesUpdateFromItsFirstRequest = ServerFlaws(rawValue: 1 << 14)
    /// Breaks S6 on one path only: a reset deletes the record its credential names without
    /// checking the App Attest assertion (S8's "whatever the state" read as coming first),
    /// so a clone with a live copy of a genuine device's credential deletes its record.
    @usableFromInline package static let resetSkipsAssertion = ServerFlaws(rawValue: 1 << 15)
    /// Breaks S8: a reset deletes the device's newest live record whatever generation its
    /// credential names, so a late reset (retried after its 200 was lost) deletes the
    /// registration made since. (Bit 20: bits 16-19 are left to faults of the server.)
    @usableFromInline package static let resetIgnoresGeneration = ServerFlaws(rawValue: 1 << 20)
    /// Breaks S2's tightness for a device of which the server holds no live record (lost by
    /// `forget-device`, deleted by a reset, or never made): its stop is dated from the
    /// refusal itself, as if the server knew nothing of the device, though a cause that
    /// refuses every key of the app (a disable, Rollup's revoke, the account) has its own
    /// start, which S2 dates such a stop from whatever the server remembers.
    @usableFromInline package static let datesForgottenFromRefusal = ServerFlaws(rawValue: 1 << 21)
    /// Breaks S10: the dashboard and Rollup state (keys, apps, accounts and the history of
    /// their stops) is kept in memory only, so a restart brings back the state the server was
    /// declared with, as if no action had been acknowledged.
    @usableFromInline package static let restartForgets = ServerFlaws(rawValue: 1 << 16)

    /// Every flaw, with its stable kebab-case name (for scenario files and reports).
    @usableFromInline package static let named: [(name: String, flaw: ServerFlaws)] = [
        ("caches-key-checks", .cachesKeyChecks),
        ("grace-one-day-late", .graceOneDayLate),
        ("enable-lifts-rollup", .enableLiftsRollup),
        ("skips-device-app-check", .skipsDeviceAppCheck),
        ("reset-keeps-record", .resetKeepsRecord),
        ("skips-attestation", .skipsAttestation),
        ("reset-judges-key", .resetJudgesKey),
        ("assertion-only-at-registration", .assertionOnlyAtRegistration),
        ("stopped-since-from-first-stop", .stoppedSinceFromFirstStop),
        ("grace-deadline-inclusive", .graceDeadlineInclusive),
        ("stop-now-one-ms-late", .stopNowOneMsLate),
        ("restore-lifts-disable", .restoreLiftsDisable),
        ("account-restore-lifts-app-revoke", .accountRestoreLiftsAppRevoke),
        ("disable-spares-grace-keys", .disableSparesGraceKeys),
        ("dates-update-from-its-first-request", .datesUpdateFromItsFirstRequest),
        ("reset-skips-assertion", .resetSkipsAssertion),
        ("reset-ignores-generation", .resetIgnoresGeneration),
        ("dates-forgotten-from-refusal", .datesForgottenFromRefusal),
        ("restart-forgets", .restartForgets),
    ]
}
