extension ServerModel {
    /// Checks that keys and apps agree: every app's current key is `.current(app)`, each
    /// app has exactly one current key, and every issued key names an existing app and
    /// every app an existing account. Nil when all hold; for tests and debug builds.
    /// - Complexity: O(apps + keyCount).
    package func checkInvariants() -> String? {
        for (index, record) in apps.enumerated() {
            if Int(record.account) >= accounts.count {
                return "app \(index): account \(record.account) out of range (\(accounts.count) accounts)"
            }
            if Int(record.currentKey) >= keys.count || keys[Int(record.currentKey)] != .current(AppID(index)) {
                return "app \(index): current key \(record.currentKey) is not current for it"
            }
        }
        for (index, state) in keys.enumerated() {
            guard let app = state.app else { continue }
            if Int(app) >= apps.count { return "key \(index): app \(app) out of range (\(apps.count) apps)" }
            if case .current = state, apps[Int(app)].currentKey != KeyID(index) {
                return "key \(index) is current for app \(app), whose current key is \(apps[Int(app)].currentKey)"
            }
        }
        return nil
    }
}
