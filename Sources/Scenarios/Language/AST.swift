import SimKit

/// A parsed scenario file: header, declarations, the timeline and the expected violations.
///
/// Value type; `==` compares meaning only (source marks never take part), so
/// `ScenarioParser.parse(ScenarioPrinter.print(s)).scenario == s` for every valid `s`.
public struct ScenarioFile: Equatable, Sendable {
    /// The `scenario "…"` title; empty when the file has none.
    package var name: String = ""
    /// The `seed N` line; 0 when absent.
    package var seed: UInt64 = 0
    /// The `duration D` line; 30 days when absent.
    package var duration: SimTime = 30 * Ms.day
    /// The system under test (`sdk …`); the reference SDK when absent.
    package var sdk: SDKChoice = .reference
    /// The server core (`server …`); the reference server, `ServerModel`, when absent.
    package var server: ServerChoice = .reference
    /// Developer accounts, in file order.
    package var accounts: [AccountDecl] = []
    /// Apps, in file order.
    package var apps: [AppDecl] = []
    /// Device groups (genuine and clones), in file order; devices are numbered in this order.
    package var groups: [DeviceGroupDecl] = []
    /// The network line; defaults when absent.
    package var network: NetworkDecl = NetworkDecl()
    /// Timed actions and timed expectations in file order (equal times run in this order).
    package var timeline: [TimedStatement] = []
    /// The `expect violation NAME` lines, in file order.
    package var expectedViolations: [ExpectedViolation] = []
    /// The `pin` lines (requests whose network fate is chosen, not drawn), in file order.
    package var pins: [PinDecl] = []
    /// The `schedule seed N` line: an async SDK's step runs the jobs ready at once in an
    /// order drawn from N (`SDKConfig.jobPickSeed`); 0 (`schedule fifo`, or no line): in
    /// the order they became ready. A sans-IO SDK is not touched by it.
    package var schedule: UInt32 = 0
    /// The `storage latency D` line: an async SDK's wait for its writes (`SimDevice.synchronize`)
    /// returns after a time drawn from 0 to D (`SDKConfig.storageLatencyMaxMs`); 0 (no line): at once.
    package var storageLatency: SimTime = 0

    /// An empty scenario with every default.
    package init() {}
}

/// Which SDK core runs on the devices.
public enum SDKChoice: Equatable, Sendable {
    /// The reference SDK, which implements every D rule.
    case reference
    /// A deliberately wrong variant of the reference SDK, by name.
    case mutant(String)
    /// A core the user plugged in, by the name it was registered under.
    case custom(String)
}

/// Which server core judges the devices' requests.
public enum ServerChoice: Equatable, Sendable {
    /// The reference server, `ServerModel`, which implements every S rule (with a mutant's
    /// server flaws when the `sdk` line names a mutant).
    case reference
    /// A server core the user plugged in (`ServerCores`), by the name it was registered under.
    case custom(String)
    /// A server in any language speaking the wire protocol (docs/server-protocol.md) on
    /// its standard input and output: a process SimKit starts with this shell command
    /// (`server process "python3 server.py"`, `--server process:CMD`).
    case process(String)
    /// A server already running that speaks the wire protocol over HTTP at this base URL
    /// (`server http "http://127.0.0.1:8035"`, `--server http://127.0.0.1:8035`).
    case http(String)
}

/// `account NAME [unapproved]`.
package struct AccountDecl: Equatable, Sendable {
    /// The account's name.
    package var name: String
    /// False when declared `unapproved`.
    package var approved: Bool
    /// Where it was declared.
    package var mark: SourceMark
    /// An account declaration.
    package init(name: String, approved: Bool = true, mark: SourceMark = .synthetic) {
        self.name = name; self.approved = approved; self.mark = mark
    }
}

/// `app NAME account ACC key rk_live_X [pending]`.
package struct AppDecl: Equatable, Sendable {
    /// The app's name.
    package var name: String
    /// The owning account's name.
    package var account: String
    /// The app's first publishable key.
    package var key: String
    /// True when declared `pending` (waiting for Rollup's approval).
    package var pending: Bool
    /// Where it was declared.
    package var mark: SourceMark
    /// An app declaration.
    package init(name: String, account: String, key: String, pending: Bool = false, mark: SourceMark = .synthetic) {
        self.name = name; self.account = account; self.key = key; self.pending = pending; self.mark = mark
    }
}

/// `devices N app APP [as GROUP]` or `clones N app APP [as GROUP] [copying GROUP]`.
package struct DeviceGroupDecl: Equatable, Sendable {
    /// Genuine installs or clones.
    package enum Kind: Equatable, Sendable {
        /// Genuine installs that pass App Attest.
        case devices
        /// Non-genuine installs sending a copied key.
        case clones
    }
    /// Genuine installs or clones.
    package var kind: Kind
    /// Number of devices in the group.
    package var count: UInt64
    /// The app installed on them.
    package var app: String
    /// The group's name: as given, else the app's name (devices) or `APP-clones` (clones).
    package var name: String
    /// Clones only: the group of genuine devices whose credentials and keys they copy at
    /// each launch (S6), or nil.
    package var copying: String?
    /// The group's own link (SPEC §1.4: per-device links with latency ranges): the smallest
    /// and largest round trip of its devices' requests, or nil for the `network` line's range.
    package var latency: ClosedRange<SimTime>?
    /// Where it was declared.
    package var mark: SourceMark
    /// A group declaration; `name` nil takes the default for `kind`.
    package init(kind: Kind, count: UInt64, app: String, name: String? = nil, copying: String? = nil,
                mark: SourceMark = .synthetic) {
        self.kind = kind; self.count = count; self.app = app; self.mark = mark; self.copying = copying
        self.name = name ?? DeviceGroupDecl.defaultName(kind: kind, app: app)
    }
    /// The group name used when `as GROUP` is left out.
    package static func defaultName(kind: Kind, app: String) -> String {
        kind == .devices ? app : app + "-clones"
    }
}

/// `network [latency A..B] [timeout T]`.
package struct NetworkDecl: Equatable, Sendable {
    /// Smallest one-way latency (default 20 ms).
    package var latencyMin: SimTime = 20
    /// Largest one-way latency (default 800 ms).
    package var latencyMax: SimTime = 800
    /// Request timeout (default 30 s).
    package var timeout: SimTime = 30 * Ms.second
    /// Where it was declared (synthetic when absent).
    package var mark: SourceMark = .synthetic
    /// The defaults: latency 20ms..800ms, timeout 30s.
    package init() {}
    /// A network with the given values.
    package init(latencyMin: SimTime, latencyMax: SimTime, timeout: SimTime, mark: SourceMark = .synthetic) {
        self.latencyMin = latencyMin; self.latencyMax = latencyMax; self.timeout = timeout; self.mark = mark
    }
}

/// `expect violation NAME`: this run must break the invariant NAME.
package struct ExpectedViolation: Equatable, Sendable {
    /// The invariant's kebab-case name.
    package var invariant: String
    /// Where it was written.
    package var mark: SourceMark
    /// An expected violation.
    package init(invariant: String, mark: SourceMark = .synthetic) { self.invariant = invariant; self.mark = mark }
}

/// `pin device GROUP#I request N FATE` (an extension): the device's N-th request
/// (from 1, over all its processes) meets `fate` instead of what the seed would draw for
/// it (`RequestFate`: `late`, `after-timeout`, `error`, `lost`, `offline`). `simkit explore`
/// writes these to pin the network's choices of a counterexample.
package struct PinDecl: Equatable, Sendable {
    /// The device's group and its number in the group (from 1).
    package var group: String
    package var index: UInt64
    /// The device's N-th request, from 1.
    package var request: UInt64
    package var fate: RequestFate
    /// Where it was written.
    package var mark: SourceMark
    /// A pin.
    package init(group: String, index: UInt64, request: UInt64, fate: RequestFate, mark: SourceMark = .synthetic) {
        self.group = group; self.index = index; self.request = request; self.fate = fate; self.mark = mark
    }
}

/// One timed line: when it fires and what it does.
package struct TimedStatement: Equatable, Sendable {
    /// When it fires.
    package var schedule: Schedule
    /// What it does.
    package var body: StatementBody
    /// Where it was written (the runner reports this line).
    package var mark: SourceMark
    /// A timed statement.
    package init(schedule: Schedule, body: StatementBody, mark: SourceMark = .synthetic) {
        self.schedule = schedule; self.body = body; self.mark = mark
    }
}

/// When a timed statement fires.
package enum Schedule: Equatable, Sendable {
    /// `at T`: once, at T since the start.
    case at(SimTime)
    /// `every D [jitter J] [from T] [until T]`.
    case every(Repeat)
}

/// `every D [jitter J] [from T] [until T]`: first at `from` (default D), then every D,
/// up to and including `until` (default: the end); each firing moved by 0…J per device.
package struct Repeat: Equatable, Sendable {
    /// The period D (> 0).
    package var period: SimTime
    /// The jitter J, or nil when not given.
    package var jitter: SimTime?
    /// The first firing, or nil for one period after the start.
    package var from: SimTime?
    /// The last possible firing, or nil for the end of the scenario.
    package var until: SimTime?
    /// A repeat.
    package init(period: SimTime, jitter: SimTime? = nil, from: SimTime? = nil, until: SimTime? = nil) {
        self.period = period; self.jitter = jitter; self.from = from; self.until = until
    }
    /// The time of the first firing: `from`, else one period after the start.
    package var firstFiring: SimTime { from ?? period }
}

/// What a timed statement does.
package enum StatementBody: Equatable, Sendable {
    /// Something happens in the world.
    case action(Action)
    /// `expect QUANT GROUP STATE` is checked (only with `at`).
    case expect(Expectation)
}

/// The person's actions that take only a selector.
package enum PersonAction: String, Equatable, Sendable, CaseIterable {
    /// Cold start: the process starts and calls `configure`.
    case launch
    /// The app comes to the foreground (becomes active).
    case open
    /// The app goes to the background.
    case close
    /// The OS fires a background indexing run.
    case background
    /// The app calls `search`.
    case search
    /// The app calls `query`.
    case query
    /// The app calls `profile`.
    case profile
    /// The app calls `reset()`.
    case reset
    /// The person revokes Photos access.
    case revokePhotos = "revoke-photos"
    /// The person grants Photos access.
    case grantPhotos = "grant-photos"
}

/// What happens to the old key when a key is rotated.
package enum OldKeyPolicy: Equatable, Sendable {
    /// `stop-old now`: the old key is invalid at once.
    case stopNow
    /// `keep-old D`: the old key works for D more (default 30 days).
    case keep(SimTime)
    /// The default policy, `keep-old 30d`.
    package static let `default` = OldKeyPolicy.keep(30 * Ms.day)
}

/// Rollup's verbs on an app.
package enum RollupAppVerb: String, Equatable, Sendable, CaseIterable {
    /// Approve a pending app.
    case approve
    /// Reject the app.
    case reject
    /// Revoke the app.
    case revoke
    /// Lift a revocation or rejection.
    case restore
}

/// Rollup's verbs on a developer account.
package enum RollupAccountVerb: String, Equatable, Sendable, CaseIterable {
    /// Approve the account.
    case approve = "approve-account"
    /// Revoke the account.
    case revoke = "revoke-account"
    /// Lift a revocation.
    case restore = "restore-account"
}

/// Something that happens at a firing.
package enum Action: Equatable, Sendable {
    /// `launch|open|close|background|search|query|profile|reset|revoke-photos|grant-photos SEL`.
    case person(PersonAction, DeviceSelector)
    /// `update SEL [key K]`: install a new version carrying the app's current key, or `key`.
    case update(DeviceSelector, key: String?)
    /// `add-photos N SEL`: N more photos in each selected library.
    case addPhotos(UInt64, DeviceSelector)
    /// An injected fault (SPEC §1.4): `offline SEL for D`, `server errors P% status NNN for D`,
    /// `server down for D`, `timeouts P% for D`, `lost-responses P% for D`, `slow-responses SEL
    /// by D for W`, … Each kind is a type of its own, in its file in `Sources/SimKit/Faults`
    /// (`Faults.kinds`), which parses, checks and prints its statement.
    case fault(AnyFaultStatement)
    /// `rotate APP key K [stop-old now | keep-old D]`.
    case rotate(app: String, key: String, old: OldKeyPolicy)
    /// `stop-old-key APP K`: stop a previous key during its grace.
    case stopOldKey(app: String, key: String)
    /// `disable APP` from the dashboard.
    case disable(app: String)
    /// `enable APP` from the dashboard.
    case enable(app: String)
    /// `rollup approve|reject|revoke|restore APP`.
    case rollupApp(RollupAppVerb, app: String)
    /// `rollup approve-account|revoke-account|restore-account ACC`.
    case rollupAccount(RollupAccountVerb, account: String)
    /// `forget-device SEL`: the server loses these devices' records.
    case forgetDevice(DeviceSelector)
}

extension Action {
    /// The fault statement `statement`, of any kind.
    package static func fault(_ statement: some FaultKind) -> Action { .fault(AnyFaultStatement(statement)) }
}

/// `expect QUANT GROUP STATE` at a time.
package struct Expectation: Equatable, Sendable {
    /// How many devices must be in the state.
    package var quantifier: Quantifier
    /// The group, or `all` for every device (clones included).
    package var group: String
    /// The state they must be in.
    package var state: DeviceStateName
    /// An expectation.
    package init(quantifier: Quantifier, group: String, state: DeviceStateName) {
        self.quantifier = quantifier; self.group = group; self.state = state
    }
}

/// A device state named in expectations.
package enum DeviceStateName: String, Equatable, Sendable, CaseIterable {
    /// Not configured yet.
    case unconfigured
    /// An indexing run is going on.
    case indexing
    /// Configured and not indexing.
    case idle
    /// Access stopped; data kept, locked.
    case locked
    /// Data deleted after 30 days locked.
    case purged
}

/// How a quantifier compares.
package enum Comparison: Equatable, Sendable {
    /// Exactly (`N`, `N%`).
    case exactly
    /// At least (`>=N`, `>=N%`).
    case atLeast
    /// At most (`<=N`, `<=N%`).
    case atMost
}

/// A number of devices or a share of a group.
package enum Quantity: Equatable, Sendable {
    /// A number of devices.
    case count(UInt64)
    /// A share of the group's size.
    case share(Share)
}

/// `all | none | N | >=N | <=N | N% | >=N% | <=N%`.
///
/// `N` and `N%` mean *exactly*: `N` holds when exactly N devices of the group are in the
/// state; `N%` when exactly floor(size × N%) are (the same rounding as selectors).
/// `>=` and `<=` compare the same way.
package enum Quantifier: Equatable, Sendable {
    /// Every device of the group.
    case all
    /// No device of the group.
    case none
    /// A comparison with a count or a share.
    case compare(Comparison, Quantity)

    /// Whether `matching` devices out of `size` satisfy this quantifier.
    package func holds(matching: UInt64, of size: UInt64) -> Bool {
        switch self {
        case .all: return matching == size
        case .none: return matching == 0
        case let .compare(cmp, qty):
            let target: UInt64
            switch qty {
            case let .count(n): target = n
            case let .share(s): target = s.count(of: size)
            }
            switch cmp {
            case .exactly: return matching == target
            case .atLeast: return matching >= target
            case .atMost: return matching <= target
            }
        }
    }
}

/// The size of a scenario as the fuzzer reports it.
extension ScenarioFile {
    /// Declarations and timed statements (header lines not counted).
    public var statementCount: Int {
        accounts.count + apps.count + groups.count + timeline.count + expectedViolations.count + pins.count
            + (network == NetworkDecl() ? 0 : 1)
    }
    /// Devices in all groups, clones included.
    package var deviceCount: UInt64 { groups.reduce(0) { $0 + $1.count } }
}
