import SimKit

/// Keywords, for did-you-mean hints.
enum Keywords {
    /// Words that can start a statement.
    static let statements = ["scenario", "seed", "duration", "sdk", "server", "account", "app", "devices", "clones",
                             "network", "at", "every", "expect", "pin"]
    /// Words that can start an action.
    static let actions = PersonAction.allCases.map(\.rawValue) + [
        "update", "add-photos", "offline", "server", "timeouts", "lost-responses", "slow-responses", "rotate", "stop-old-key",
        "disable", "enable", "rollup", "forget-device",
    ]
    /// How a selector may look.
    static let selectorHint = Cursor.selectorHint
    /// Group names that would make selectors ambiguous.
    static let reservedGroups = ["all", "device", "none"]
}

