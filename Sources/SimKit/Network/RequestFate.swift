/// What happens to one request on the network, chosen instead of drawn.
///
/// Every network decision of a run (a request's round trip, whether it meets an injected
/// fault, when its answer comes back) is drawn from the seed, the fuzzer's chooser. A
/// pinned fate (`WorldSetup.pinnedFates`, the scenario language's `pin` statement) takes
/// that decision for one request instead: `simkit explore` enumerates fates (`--fates N`)
/// and writes the ones of a counterexample as `pin` lines, so `simkit run` replays it.
///
/// A pin names a device's n-th request (counting from 1, over all its processes), so it
/// is the same request in every run of the same scenario up to that request. The pinned
/// request makes the same draws as an unpinned one (the draws that follow do not move).
public enum RequestFate: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// The server judges it; the answer comes back 1 ms before the request's timeout, so
    /// answers to requests sent after it can arrive first (a verdict overtaken by a newer
    /// one, D4).
    case late = 1
    /// The server judges it; the answer comes back 1 ms after the request's timeout (D9:
    /// the SDK has been told of the timeout, the answer is stale).
    case afterTimeout = 2
    /// The server answers 503 without judging it (S9).
    case serverError = 3
    /// The server judges it and acts; the answer never arrives (S9).
    case lost = 4
    /// The device is offline for this request: it fails at once, the server never sees it.
    case offline = 5
    /// The server judges it; its answer is held until the next verdict of another request
    /// of the same device arrives, and arrives in that same millisecond, just after it:
    /// two verdicts in one millisecond, the older one last (D4, D9), whatever the timeout
    /// (before it or long after). Lost (S9) if no other verdict arrives at the device, or
    /// if another answer of the device's is held before this one is let go.
    case overtaken = 6

    /// The fate's name in the scenario language.
    public var description: String {
        switch self {
        case .late: "late"
        case .afterTimeout: "after-timeout"
        case .serverError: "error"
        case .lost: "lost"
        case .offline: "offline"
        case .overtaken: "overtaken"
        }
    }

    /// The fate named `name` in the scenario language, or nil.
    public init?(name: String) {
        guard let f = RequestFate.allCases.first(where: { $0.description == name }) else { return nil }
        self = f
    }
}

/// One pinned request: device `device`'s `request`-th request (from 1) meets `fate`.
public struct PinnedFate: Equatable, Sendable {
    public var device: DeviceIndex
    /// The device's n-th request, counting from 1 over all its processes.
    public var request: UInt32
    public var fate: RequestFate
    public init(device: DeviceIndex, request: UInt32, fate: RequestFate) {
        self.device = device; self.request = request; self.fate = fate
    }
}

/// The world's side of pinned fates: how many requests each device has sent, and the
/// pins. Inactive (no counting, one test a request) unless the setup pins a fate or asks
/// for the counts (`WorldSetup.countsRequests`, which `simkit explore` sets).
@usableFromInline struct FateTable: Sendable {
    @usableFromInline var active = false
    /// Per device, requests sent so far.
    @usableFromInline var sent: [UInt32] = []
    /// Fate raw values by `device << 32 | request`.
    @usableFromInline var pins: [UInt64: UInt8] = [:]   // determinism: looked up, never iterated
    /// With `WorldSetup.countsRequests`: every request, `device << 32 | request`, in the
    /// order sent (the run's history, not its state: the digest leaves it out).
    @usableFromInline var log: [UInt64] = []
    @usableFromInline var logging = false
    /// Whether a pin holds answers (`overtaken`): the gate of `heldAnswer`, one flag tested
    /// an answer delivered in a world that pins nothing so.
    @usableFromInline var holds = false
    /// Per device (with `holds`), the request slot plus one of the answer held until its
    /// next verdict arrives, or 0.
    @usableFromInline var held: [UInt32] = []

    @inlinable init() {}

    @usableFromInline init(setup: WorldSetup, devices: Int) {
        active = setup.countsRequests || !setup.pinnedFates.isEmpty
        logging = setup.countsRequests
        if active { sent = Array(repeating: 0, count: devices) }
        for p in setup.pinnedFates { pins[UInt64(p.device) << 32 | UInt64(p.request)] = p.fate.rawValue }
        holds = setup.pinnedFates.contains { $0.fate == .overtaken }
        if holds { held = Array(repeating: 0, count: devices) }
    }

    /// Counts device `d`'s next request and returns its pinned fate's raw value, or 0.
    /// - Complexity: O(1).
    @usableFromInline mutating func next(device d: DeviceIndex) -> UInt8 {
        sent[Int(d)] &+= 1
        let key = UInt64(d) << 32 | UInt64(sent[Int(d)])
        if logging { log.append(key) }
        return pins[key] ?? 0
    }
}
