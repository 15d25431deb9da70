/// The declaration a server is built from: accounts, apps with their first key, and the
/// sizes of the key-name and device tables. Ids are positions in these arrays.
public struct ServerSetup: Sendable, Equatable {
    /// A developer account at the start.
    public struct Account: Sendable, Equatable {
        /// Approved by Rollup, or waiting (`unapproved`).
        public var approved: Bool
        /// An account declaration.
        public init(approved: Bool = true) { self.approved = approved }
    }

    /// An app at the start. Its team ID and bundle ID are the `AppID` itself: App Attest
    /// passes for an install whose `attestedApp` is this app.
    public struct App: Sendable, Equatable {
        /// The owning account.
        public var account: AccountID
        /// The app's first key; it is issued and current from the start.
        public var key: KeyID
        /// Approved by Rollup, or `pending`.
        public var approved: Bool
        /// An app declaration.
        public init(account: AccountID, key: KeyID, approved: Bool = true) {
            self.account = account; self.key = key; self.approved = approved
        }
    }

    /// The accounts; an `AccountID` is an index here.
    public var accounts: [Account]
    /// The apps; an `AppID` is an index here.
    public var apps: [App]
    /// How many key names are interned: every `KeyID` below it exists as a name, but
    /// only keys of `apps` (and later rotations) are issued.
    public var keyCount: Int
    /// How many devices the world has, clones included; a `DeviceIndex` is below it.
    public var deviceCount: Int
    /// The key names, by `KeyID`, when the setup has them (a world's does): what a server on
    /// the wire receives (`rk_live_…`). The reference judges by id and never reads them.
    public var keyNames: [String] = []

    /// A declaration; `keyCount` and `deviceCount` may grow later with `addApp`.
    public init(accounts: [Account] = [], apps: [App] = [], keyCount: Int = 0, deviceCount: Int = 0) {
        self.accounts = accounts; self.apps = apps
        self.keyCount = keyCount; self.deviceCount = deviceCount
    }

    /// Appends an account and returns its id.
    @discardableResult
    public mutating func addAccount(approved: Bool = true) -> AccountID {
        precondition(accounts.count <= Int(AccountID.max), "too many accounts: \(accounts.count) do not fit AccountID")
        accounts.append(Account(approved: approved))
        return AccountID(accounts.count - 1)
    }

    /// Appends an app and returns its id; grows `keyCount` to cover its key.
    @discardableResult
    public mutating func addApp(account: AccountID, key: KeyID, approved: Bool = true) -> AppID {
        precondition(apps.count <= Int(AppID.max), "too many apps: \(apps.count) do not fit AppID")
        apps.append(App(account: account, key: key, approved: approved))
        keyCount = Swift.max(keyCount, Int(key) + 1)
        return AppID(apps.count - 1)
    }
}
