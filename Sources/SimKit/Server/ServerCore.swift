/// The Rollup server as a sans-IO state machine: a request and the current virtual time
/// in, a reply out; dashboard and Rollup actions and the scenario's `forget-device` fault
/// in, whether they applied out. It never does I/O, reads clocks, or draws randomness:
/// every call takes `now`, and the same calls in the same order give the same answers.
///
/// `ServerModel` is the reference. Plug in your own server's rules by conforming to this
/// protocol and running the world as `SimWorld<SDK, MyServer, Observer>` (or registering
/// the type in `ServerCores`, for `server custom NAME` in scenarios and `--server
/// custom:NAME` on the command line). The engine is generic over it, so calls cost no
/// existential dispatch per request.
///
/// A wrong server is caught like a wrong SDK: the checkers never ask the server anything.
/// They judge it from the trace alone (every `served` record with its reply and the
/// record's generation after it, every `dashboard` record with whether it applied, every
/// `forgotDevice` record) against their own model of the S rules. So what a core returns
/// here must be what it did: a `dashboard` record that says `applied: false` tells the
/// checkers the server state did not change.
///
/// Ids are positions in the `ServerSetup` the core was built from: accounts, apps, key
/// names and devices are dense, `0..<count`. The world never passes an id out of range but
/// for the device of a credential, which is what the request claims (S2.4: a credential
/// naming a device outside the table is unknown).
///
/// A core must behave as a value, as an `SDKCore` must: `SimWorld.fork()` copies it.
public protocol ServerCore: Sendable {
    /// The server `setup` declares at time 0: its accounts and apps as declared (approved
    /// or not), each app's first key issued and current, no device registered.
    init(setup: ServerSetup)

    /// Judges `request` at `now` (S1, S2, S6, S8) and applies it: a served `register`
    /// creates the device's record with a new generation and answers its credential; a
    /// `reset` deletes the record its credential names (S8).
    ///
    /// The reply is a verdict of S2 (the first rule that applies, checked afresh on every
    /// request, S1) or `attestation_failed` (S6), with `servedAt == now`; a lock error also
    /// carries `stoppedSince` (S2: sound, never earlier than the install's unbroken stop
    /// began, and tight when the install kept one key). Injected faults (S9) never reach
    /// this call: the world answers 5xx and outages itself.
    mutating func handle(_ request: Request, now: SimTime) -> ServerReply

    /// The device's live record (its owner app and the generation of its registration,
    /// S2.4–S2.5), or nil when the server has none. The world traces its generation after
    /// each request (`served … recordAfter`), so the checkers see what a request did to it.
    func deviceRecord(_ device: DeviceIndex) -> DeviceRecord?

    /// The device's other records the server still holds, oldest first, besides its newest
    /// (`deviceRecord`): a server that keeps each registration until a reset names it (S8)
    /// lists the earlier ones here, and the world traces them after every registration and
    /// reset answered 200, so the checkers see a record a reset left behind (D7). A server
    /// whose new registration supersedes the old holds none: the default.
    func forEachEarlierRecord(of device: DeviceIndex, _ body: (DeviceRecord) -> Void)

    /// The dashboard rotates `app` to `newKey` (S3): `newKey` becomes current; the old
    /// current key keeps working until `now + graceMs` (`.keep`) or stops now (`.stopNow`).
    /// Refused (`.newKeyAlreadyIssued`, nothing changes) when `newKey` was ever issued.
    mutating func rotate(app: AppID, newKey: KeyID, oldKey: OldKeyPolicy, now: SimTime) -> RotateOutcome

    /// The dashboard stops `key`, a previous key of `app` in its grace, now (S3). False
    /// (nothing changes) when it is not a previous key of that app.
    mutating func stopOldKey(app: AppID, key: KeyID, now: SimTime) -> Bool

    /// The developer disables `app`: every install of it is refused at once (S4). False
    /// when it was already disabled by the developer.
    mutating func disable(app: AppID, now: SimTime) -> Bool

    /// The developer enables `app` again: lifts only their own disable, never what Rollup
    /// did (S4, S5). False when the app was not disabled by the developer.
    mutating func enable(app: AppID, now: SimTime) -> Bool

    /// Rollup acts on `app` (S5): approve (from pending or rejected), reject (from pending
    /// or approved), revoke (from pending, approved or rejected), restore (from revoked).
    /// False, and nothing changes, for any other transition.
    mutating func rollup(_ action: RollupAppAction, app: AppID, now: SimTime) -> Bool

    /// Rollup acts on a developer account (S5): approve (from unapproved), revoke (from
    /// unapproved or approved), restore (from revoked). False for any other transition.
    mutating func rollup(_ action: RollupAccountAction, account: AccountID, now: SimTime) -> Bool

    /// The scenario's `forget-device` fault: the server loses `device`'s record, so its
    /// credential becomes unknown (S2.4). False when it had no live record.
    mutating func forgetDevice(_ device: DeviceIndex, now: SimTime) -> Bool

    /// The server's process restarts at `now` (S10, `server restart`): what the core kept
    /// only in memory is gone (caches, bookkeeping of requests in flight), and it comes back
    /// from its durable state, which holds everything it acknowledged: every dashboard and
    /// Rollup action, every registration and reset answered 200, the history behind every
    /// `stoppedSince`. The world itself answers the requests that reach the process while it
    /// is away. The default does nothing: a core with no memory-only state loses nothing.
    mutating func restart(now: SimTime)

    /// A hint that a request of `device` comes soon: start loading its record. Only a
    /// matter of speed, never of behaviour; the default does nothing.
    func prefetch(device: DeviceIndex)
}

extension ServerCore {
    @inlinable public func prefetch(device: DeviceIndex) {}
    @inlinable public func forEachEarlierRecord(of device: DeviceIndex, _ body: (DeviceRecord) -> Void) {}
    @inlinable public mutating func restart(now: SimTime) {}
}

/// The reference server: every S rule, and the planted bugs of `ServerFlaws` on request.
extension ServerModel: ServerCore {}
