/// Everything a world is made from: the apps and accounts on the server, the device
/// groups, the network, the SDK settings, and the schedule of actions. The scenario
/// runner builds one from a `.scenario` file; tests and `simkit bench` build them directly.
public struct WorldSetup: Sendable {
    public var seed: UInt64
    /// The run stops after the events due at this time.
    public var durationMs: SimTime
    /// Every key named anywhere, interned: `KeyID` indexes this table.
    public var keyNames: [String]
    public var accounts: [AccountSpec]
    public var apps: [AppSpec]
    /// Device groups, laid out contiguously in this order: group 0 is devices `0..<count0`.
    public var groups: [GroupSpec]
    public var network: NetworkSpec
    public var sdk: SDKConfig
    /// The deliberate bugs of a mutant (`simkit mutants`): they reach the reference SDK
    /// and server only, the cores that can run with them (`SDKCoreWithFlaws`,
    /// `ServerCoreWithFlaws`); another core runs unchanged. None by default.
    @usableFromInline package var sdkFlaws: SDKFlaws = []
    @usableFromInline package var serverFlaws: ServerFlaws = []
    /// Statements in file order; same-time statements run in this order.
    public var schedule: [ScheduledAction]
    /// The run stops after this many events even if time is left (a guard, not a goal).
    public var eventBudget: UInt64
    /// Trace records kept per device for failure reports.
    public var ringDepth: Int
    /// The most events pending at once; nil: 64 per device, at least 2^20. A run that
    /// needs more stops and says so (`World.stopReason`).
    public var queueLimit: Int? = nil
    /// The memory a run may use, in bytes (default 4 GiB): the queue's bound is also
    /// capped so that the devices and the pending events fit in it. A run that needs more
    /// stops with `StopReason.memoryBound` instead of swapping.
    public var memoryBudgetBytes: UInt64 = WorldSetup.defaultMemoryBudgetBytes
    /// 4 GiB.
    public static let defaultMemoryBudgetBytes: UInt64 = 4 << 30
    /// Requests whose network fate is chosen instead of drawn (`RequestFate`); none by default.
    public var pinnedFates: [PinnedFate] = []
    /// Count each device's requests (`World.requestsSent`) even with no fate pinned:
    /// `simkit explore` reads the counts to choose which requests to pin.
    public var countsRequests = false

    public init(seed: UInt64, durationMs: SimTime, keyNames: [String] = [], accounts: [AccountSpec] = [],
                apps: [AppSpec] = [], groups: [GroupSpec] = [], network: NetworkSpec = .init(),
                sdk: SDKConfig = .init(), schedule: [ScheduledAction] = [],
                eventBudget: UInt64 = 2_000_000_000, ringDepth: Int = 8) {
        self.seed = seed; self.durationMs = durationMs; self.keyNames = keyNames
        self.accounts = accounts; self.apps = apps; self.groups = groups; self.network = network
        self.sdk = sdk; self.schedule = schedule
        self.eventBudget = eventBudget; self.ringDepth = ringDepth
    }

    /// Devices in all groups, clones included.
    public var deviceCount: Int { groups.reduce(0) { $0 + Int($1.count) } }

    /// The devices of group `g`.
    public func range(ofGroup g: Int) -> Range<Int> {
        let start = groups[..<g].reduce(0) { $0 + Int($1.count) }
        return start..<(start + Int(groups[g].count))
    }
}

public struct AccountSpec: Sendable, Equatable {
    public var name: String
    public var approved: Bool
    public init(name: String, approved: Bool = true) { self.name = name; self.approved = approved }
}

public struct AppSpec: Sendable, Equatable {
    public var name: String
    public var account: AccountID
    public var initialKey: KeyID
    public var pending: Bool
    public init(name: String, account: AccountID, initialKey: KeyID, pending: Bool = false) {
        self.name = name; self.account = account; self.initialKey = initialKey; self.pending = pending
    }
}

public struct GroupSpec: Sendable, Equatable {
    public var name: String
    public var app: AppID
    public var count: UInt32
    /// Non-genuine installs with a copied key: they fail App Attest (S6).
    public var clones: Bool
    /// For clones: the group whose genuine devices' credentials (and keys) they copy at each
    /// launch, or nil (they carry only the app's first key).
    public var copiesCredentialsOf: Int? = nil
    /// Each device starts with a library of this many photos, drawn per device.
    public var photosMin: UInt32
    public var photosMax: UInt32
    /// The group's own link (SPEC §1.4): its devices' round trips are drawn from this range
    /// instead of the network's; nil for the network's.
    public var latencyMs: ClosedRange<SimTime>? = nil
    public init(name: String, app: AppID, count: UInt32, clones: Bool = false, photosMin: UInt32 = 200, photosMax: UInt32 = 2_000) {
        self.name = name; self.app = app; self.count = count; self.clones = clones
        self.photosMin = photosMin; self.photosMax = photosMax
    }
}

/// The virtual network: each request's round trip is drawn uniformly from the range.
public struct NetworkSpec: Sendable, Equatable {
    public var latencyMinMs: SimTime = 20
    public var latencyMaxMs: SimTime = 800
    public init(latencyMinMs: SimTime = 20, latencyMaxMs: SimTime = 800) {
        self.latencyMinMs = latencyMinMs; self.latencyMaxMs = latencyMaxMs
    }
}
