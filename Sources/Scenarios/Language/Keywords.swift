import SimKit

/// Keywords, for did-you-mean hints.
enum Keywords {
    /// Words that can start a statement.
    static let statements = ["scenario", "seed", "duration", "sdk", "server", "account", "app", "devices", "clones",
                             "network", "schedule", "storage", "at", "every", "expect", "pin"]
    /// Words that can start an action.
    static let actions = PersonAction.allCases.map(\.rawValue) + ["update", "add-photos"] + faults + [
        "rotate", "stop-old-key", "disable", "enable", "rollup", "forget-device",
    ]
    /// Words that start a fault statement, in the kinds' order (`server` once for all of its kinds).
    static let faults: [String] = Faults.kinds.reduce(into: []) { words, kind in
        if !words.contains(kind.keyword[0]) { words.append(kind.keyword[0]) }
    }
    /// How a selector may look.
    static let selectorHint = Cursor.selectorHint
    /// Group names that would make selectors ambiguous.
    static let reservedGroups = ["all", "device", "none"]
}

