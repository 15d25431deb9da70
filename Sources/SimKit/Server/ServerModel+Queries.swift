/// Read-only views of the server's state for checkers, tests and reports. They never
/// consult the `cachesKeyChecks` cache: they say what the reference rules say now.
extension ServerModel {
    /// The number of accounts.
    @inlinable public var accountCount: Int { accounts.count }
    /// The number of apps.
    @inlinable public var appCount: Int { apps.count }
    /// The number of interned key names.
    @inlinable public var keyCount: Int { keys.count }
    /// The number of devices.
    @inlinable public var deviceCount: Int { devices.count }

    /// The status of `account`.
    /// - Complexity: O(1).
    public func accountStatus(_ account: AccountID) -> AccountStatus { accounts[checkedAccount(account)] }

    /// The dashboard record of `app`.
    /// - Complexity: O(1).
    public func app(_ app: AppID) -> AppRecord { apps[checkedApp(app)] }

    /// Rules S2.2–S2.3 for `app` at this moment: `.ok`, `.appDisabled` or `.appPending`.
    /// - Complexity: O(1).
    public func access(of app: AppID) -> Answer { appAnswer(AppID(checkedApp(app))) }

    /// The stored state of `key` (a previous key carries its deadline).
    /// - Complexity: O(1).
    public func keyState(_ key: KeyID) -> KeyState { keys[checkedKey(key)] }

    /// Rules S2.1–S2.3 for a request carrying `key` at `now`, checked afresh: `.ok` or the
    /// error every request with this key gets, whatever its device.
    /// - Complexity: O(1).
    public func keyAnswer(_ key: KeyID, now: SimTime) -> Answer { keyVerdict(checkedKey(key), now: now).answer }

    /// A hint: a request of `device` is coming (see `Prefetch`).
    @inlinable
    public func prefetch(device: DeviceIndex) { Prefetch.element(of: devices, at: Int(device)) }

    /// The newest record of `device` the server holds, or nil when it holds none.
    /// - Complexity: O(1).
    @inlinable public func deviceRecord(_ device: DeviceIndex) -> DeviceRecord? {
        let slot = devices[checkedDevice(device)]
        return slot.isLive ? DeviceRecord(owner: slot.owner, generation: slot.generation) : nil
    }

    /// The records of `device` the server holds besides its newest (`deviceRecord`), oldest
    /// first: registrations made before it that no reset has named yet (S8).
    public func forEachEarlierRecord(of device: DeviceIndex, _ body: (DeviceRecord) -> Void) {
        guard !earlierRecords.isEmpty else { return }
        earlierRecords.forEach(of: device, body)
    }

    /// Whether `credential` names a registration the server holds (S2.4).
    /// - Complexity: O(1), but for a credential older than its device's newest.
    public func knows(_ credential: Credential) -> Bool { owner(of: credential) != nil }

    @usableFromInline func checkedApp(_ app: AppID) -> Int {
        precondition(Int(app) < apps.count, "app \(app) out of range (\(apps.count) apps)")
        return Int(app)
    }
    @usableFromInline func checkedAccount(_ account: AccountID) -> Int {
        precondition(Int(account) < accounts.count, "account \(account) out of range (\(accounts.count) accounts)")
        return Int(account)
    }
    @usableFromInline func checkedKey(_ key: KeyID) -> Int {
        precondition(Int(key) < keys.count, "key \(key) out of range (keyCount \(keys.count))")
        return Int(key)
    }
    @inlinable func checkedDevice(_ device: DeviceIndex) -> Int {
        precondition(Int(device) < devices.count, "device \(device) out of range (deviceCount \(devices.count))")
        return Int(device)
    }
}
