import SimKit
import ScenarioLanguage

/// The scenario's names and their ids, built while compiling: accounts, apps and groups
/// in file order, keys interned in order of first appearance.
struct NameTable {
    let accounts: [String]
    let apps: [String]
    let groups: [String]
    /// Every key seen so far; a `KeyID` indexes this table.
    private(set) var keys: [String] = []

    /// The tables of `scenario`; every key it names is interned up front, in file order.
    init(_ scenario: ScenarioFile) {
        accounts = scenario.accounts.map(\.name)
        apps = scenario.apps.map(\.name)
        groups = scenario.groups.map(\.name)
        for app in scenario.apps { _ = key(app.key) }
        for statement in scenario.timeline {
            guard case .action(let a) = statement.body else { continue }
            switch a {
            case .rotate(_, let k, _), .stopOldKey(_, let k): _ = key(k)
            case .update(_, let k?): _ = key(k)
            default: break
            }
        }
    }

    /// The id of key `name`, interning it when new.
    mutating func key(_ name: String) -> KeyID {
        if let i = keys.firstIndex(of: name) { return KeyID(i) }
        precondition(keys.count < Int(KeyID.max), "too many keys")
        keys.append(name)
        return KeyID(keys.count - 1)
    }

    func account(_ name: String) throws(CompileError) -> AccountID {
        guard let i = accounts.firstIndex(of: name) else { throw CompileError("unknown account '\(name)'") }
        return AccountID(i)
    }

    func app(_ name: String) throws(CompileError) -> AppID {
        guard let i = apps.firstIndex(of: name) else { throw CompileError("unknown app '\(name)'") }
        return AppID(i)
    }

    func group(_ name: String) throws(CompileError) -> Int {
        guard let i = groups.firstIndex(of: name) else { throw CompileError("unknown group '\(name)'") }
        return i
    }

    /// `all` → every device; `GROUP`; `N of`; `N%`; `device GROUP#I` → the (I-1)-th device.
    func selection(_ s: DeviceSelector) throws(CompileError) -> DeviceSelection {
        func within(_ name: String) throws(CompileError) -> Int? { name == "all" ? nil : try group(name) }
        switch s {
        case .all: return .all
        case .group(let g): return DeviceSelection(group: try within(g), mode: .every)
        case .count(let n, let g): return DeviceSelection(group: try within(g), mode: .count(UInt32(min(n, UInt64(UInt32.max)))))
        case .share(let share, let g): return DeviceSelection(group: try within(g), mode: .shareBp(share.basisPoints))
        case .device(let g, let index):
            guard index >= 1, index <= UInt64(UInt32.max) else { throw CompileError("device \(g)#\(index) is out of range") }
            return DeviceSelection(group: try within(g), mode: .single(UInt32(index - 1)))
        }
    }

    /// The engine's action for a scenario action.
    mutating func worldAction(_ a: Action) throws(CompileError) -> WorldAction {
        switch a {
        case .person(let p, let sel): return .person(Self.person(p), try selection(sel), arg: 0)
        case .update(let sel, let k): return .person(.update, try selection(sel), arg: k.map { UInt32(key($0)) + 1 } ?? 0)
        case .addPhotos(let n, let sel): return .person(.addPhotos, try selection(sel), arg: UInt32(min(n, UInt64(UInt32.max))))
        case .fault(let f): return .fault(try f.base.lowered { s throws(CompileError) in try selection(s) })
        case .rotate(let app, let k, let old):
            let grace: SimTime? = switch old { case .stopNow: nil; case .keep(let d): d }
            return .dashboard(.rotate(app: try self.app(app), newKey: key(k), graceMs: grace))
        case .stopOldKey(let app, let k): return .dashboard(.stopOldKey(app: try self.app(app), key: key(k)))
        case .disable(let app): return .dashboard(.disable(app: try self.app(app)))
        case .enable(let app): return .dashboard(.enable(app: try self.app(app)))
        case .rollupApp(let verb, let app): return .dashboard(.rollupApp(Self.rollup(verb), app: try self.app(app)))
        case .rollupAccount(let verb, let acc): return .dashboard(.rollupAccount(Self.rollup(verb), account: try account(acc)))
        case .forgetDevice(let sel): return .forgetDevice(try selection(sel))
        }
    }

    static func person(_ p: ScenarioLanguage.PersonAction) -> SimKit.PersonAction {
        switch p {
        case .launch: .launch
        case .open: .open
        case .close: .close
        case .background: .background
        case .search: .search
        case .query: .query
        case .profile: .profile
        case .reset: .reset
        case .revokePhotos: .revokePhotos
        case .grantPhotos: .grantPhotos
        }
    }

    static func rollup(_ v: RollupAppVerb) -> RollupAppAction {
        switch v { case .approve: .approve; case .reject: .reject; case .revoke: .revoke; case .restore: .restore }
    }

    static func rollup(_ v: RollupAccountVerb) -> RollupAccountAction {
        switch v { case .approve: .approve; case .revoke: .revoke; case .restore: .restore }
    }
}
