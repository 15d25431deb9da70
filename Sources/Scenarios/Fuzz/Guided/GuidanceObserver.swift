import SimKit

/// What one run reached, for coverage-guided fuzzing: a set of features, each a small tuple
/// hashed into a 2¹⁶-bit map (as AFL's edge map): a device's (state, input), (state →
/// state), (state, request kind, answer) transitions; the server's (request kind, answer)
/// under each combination of rules in force at once (an app disabled, revoked by Rollup,
/// an account revoked, an old key in its grace, a fault window); and how far from a true
/// boundary a verdict or an activation fell (30 days of stoppage, 24 h since the last
/// answered check, a grace deadline), in buckets that shrink toward the boundary.
///
/// Some features are also kept apart as *edges* (`edges`): the rare situations where rules
/// meet, which one corpus script should reach many of (`CorpusCompounder`): a verdict, an
/// activation or a request within a minute of a true boundary (30 days of stoppage, 24 h
/// since the last answered check, a grace deadline or a `stop-old now` rotation); an
/// activation within a minute after an answered check; a request served under two rules at
/// once, or under one rule just after another was lifted; a lock error answering a
/// download; a verdict delivered after a newer one (stale), and whether a request failed
/// offline in between. They are defined by the rules (SPEC's D and S sections), not by any
/// mutant.
///
/// It reads only the trace, so it works for any SDK or server core, and it never changes
/// the run: the trace is the same with it or without it.
package struct GuidanceObserver: TraceObserver {
    /// The features reached, one bit each.
    package private(set) var features = FeatureMap()
    /// The edge features reached (each is in `features` too).
    package private(set) var edges = FeatureMap()
    var state: [UInt8] = []
    var lastCheckOkAt: [SimTime] = []
    var appDisabled: [Bool] = []
    var appRevoked: [Bool] = []
    var accountRevoked = false
    var graceUntil: SimTime = 0
    var lastDeadline: SimTime?
    var faultUntil: SimTime = 0
    /// The rules in force before the last dashboard change that changed them.
    var previousRules: UInt32 = 0
    /// Per device: the newest `servedAt` of a verdict delivered to it, and whether a
    /// request of it failed offline since.
    var newestVerdict: [SimTime] = []
    var offlineSinceVerdict: [Bool] = []
    /// A boundary is an edge within this distance of it.
    static let edgeReach = Int64(Ms.minute)

    package init() {}

    package mutating func begin(_ facts: WorldFacts) {
        let n = facts.deviceApp.count
        state = Array(repeating: SDKState.unconfigured.rawValue, count: n)
        lastCheckOkAt = Array(repeating: .max, count: n)
        appDisabled = Array(repeating: false, count: facts.setup.apps.count)
        appRevoked = appDisabled
        newestVerdict = Array(repeating: 0, count: n)
        offlineSinceVerdict = Array(repeating: false, count: n)
    }

    /// Inserts a feature that is also an edge.
    mutating func insertEdge(_ tag: UInt32, _ a: UInt32 = 0, _ b: UInt32 = 0, _ c: UInt32 = 0) {
        features.insert(tag, a, b, c)
        edges.insert(tag, a, b, c)
    }

    /// Inserts a boundary-distance feature, an edge when within `edgeReach` of the boundary.
    mutating func insertDistance(_ tag: UInt32, _ a: UInt32, _ b: UInt32, _ distanceMs: Int64) {
        if distanceMs.magnitude <= Self.edgeReach.magnitude { insertEdge(tag, a, b, Self.bucket(distanceMs)) }
        else { features.insert(tag, a, b, Self.bucket(distanceMs)) }
    }

    /// The rules in force now, as bits: which refusal reasons and faults overlap.
    func rules(at now: SimTime) -> UInt32 {
        var m: UInt32 = 0
        if appDisabled.contains(true) { m |= 1 }
        if appRevoked.contains(true) { m |= 2 }
        if accountRevoked { m |= 4 }
        if now < graceUntil { m |= 8 }
        if now < faultUntil { m |= 16 }
        return m
    }

    package mutating func observe(_ r: TraceRecord) {
        let d = Int(r.device)
        let inWorld = d < state.count
        let s = inWorld ? UInt32(state[d]) : 7
        switch r.event {
        case .input(let input):
            features.insert(1, s, UInt32(input.rawValue))
            if inWorld, lastCheckOkAt[d] != .max, input == .launch || input == .becameActive || input == .backgroundRun {
                let age = Int64(r.time) - Int64(lastCheckOkAt[d])
                insertDistance(6, s, UInt32(input.rawValue), age - Int64(Ms.day))
                if age <= Self.edgeReach { insertEdge(12, s, UInt32(input.rawValue), Self.bucket(age)) }
            }
        case .state(let new):
            features.insert(2, s, UInt32(new.rawValue))
            if inWorld { state[d] = new.rawValue }
        case .delivered(_, let kind, let answer, let viaTimer, _, let servedAt, let stoppedSince):
            observeDelivered(r, s, kind: kind, answer: answer, viaTimer: viaTimer, servedAt: servedAt, stoppedSince: stoppedSince)
        case .served(_, let kind, _, _, let reply, _):
            let m = rules(at: r.time)
            if (m & 15).nonzeroBitCount >= 2 { insertEdge(4, UInt32(kind.rawValue), UInt32(reply.answer.rawValue), m) }
            else { features.insert(4, UInt32(kind.rawValue), UInt32(reply.answer.rawValue), m) }
            features.insert(8, m)
            // A rule lifted while another stays in force (a restore over a disable, an
            // account restored over an app's revocation).
            if m != 0, previousRules & ~m & 7 != 0 { insertEdge(15, UInt32(kind.rawValue), UInt32(reply.answer.rawValue), m << 8 | previousRules) }
            if let deadline = lastDeadline {
                insertDistance(7, UInt32(reply.answer.rawValue), 0, Int64(r.time) - Int64(deadline))
            }
        case .dashboard(let action, let applied): observeDashboard(action, applied: applied, at: r.time)
        case .fault(let f):
            if let until = Faults.window(of: f)?.until { faultUntil = max(faultUntil, until) }
        case .callResult(let call, let outcome):
            features.insert(10, s, UInt32(call.rawValue), UInt32(outcome.rawValue))
        default:
            break
        }
    }

    /// An answer delivered to device `r.device` (in state `s`): its kind and answer, how
    /// near a lock error came to the 30-day purge boundary, and stale verdicts (D4, D9).
    mutating func observeDelivered(_ r: TraceRecord, _ s: UInt32, kind: RequestKind, answer: Answer, viaTimer: Bool,
                                   servedAt: SimTime, stoppedSince: SimTime) {
        let d = Int(r.device)
        let inWorld = d < state.count
        features.insert(3, s, UInt32(kind.rawValue), UInt32(answer.rawValue) << 1 | (viaTimer ? 1 : 0))
        if answer.isLockError, stoppedSince != ServerReply.none, servedAt != ServerReply.none, servedAt >= stoppedSince {
            insertDistance(5, UInt32(answer.rawValue), 0, Int64(servedAt - stoppedSince) - Int64(30 * Ms.day))
        }
        if answer.isLockError, kind == .modelDownload || kind == .placeData { insertEdge(13, s, UInt32(kind.rawValue), UInt32(answer.rawValue)) }
        if inWorld {
            if answer == .offline { offlineSinceVerdict[d] = true }
            if servedAt != ServerReply.none, answer == .ok || answer.isLockError {
                if servedAt < newestVerdict[d] {
                    // A stale verdict (D4, D9): served before one already delivered.
                    insertEdge(14, UInt32(answer.rawValue), offlineSinceVerdict[d] ? 1 : 0, UInt32(kind.rawValue))
                } else {
                    newestVerdict[d] = servedAt
                    offlineSinceVerdict[d] = false
                }
            }
        }
        if inWorld, answer == .ok, kind == .check || kind == .register { lastCheckOkAt[d] = servedAt == ServerReply.none ? r.time : servedAt }
    }

    /// A dashboard or Rollup action at `time`: the rules in force it changes, and the
    /// rules before it when it changed them.
    mutating func observeDashboard(_ action: DashboardAction, applied: Bool, at time: SimTime) {
        guard applied else { features.insert(9, 0); return }
        let before = rules(at: time)
        defer { let after = rules(at: time); if after != before { previousRules = before } }
        switch action {
        case .disable(let app): if Int(app) < appDisabled.count { appDisabled[Int(app)] = true }
        case .enable(let app): if Int(app) < appDisabled.count { appDisabled[Int(app)] = false }
        case .rollupApp(let a, let app):
            if Int(app) < appRevoked.count { appRevoked[Int(app)] = a == .revoke || a == .reject }
        case .rollupAccount(let a, _): accountRevoked = a == .revoke
        case .rotate(_, _, let grace):
            if let grace {
                graceUntil = time.saturatingAdd(grace)
                lastDeadline = graceUntil
            } else {
                // `stop-old now`: the old key's deadline is the rotation itself.
                lastDeadline = time
            }
        case .stopOldKey: graceUntil = 0
        }
    }

    /// A signed distance in milliseconds as a bucket: 0 for exactly on the boundary, then
    /// one bucket per power of two on each side (1 ms, 2–3 ms, …, about 35 days).
    static func bucket(_ distanceMs: Int64) -> UInt32 {
        if distanceMs == 0 { return 0 }
        let magnitude = UInt64(distanceMs.magnitude)
        let log = UInt32(64 - magnitude.leadingZeroBitCount)   // 1 for 1 ms, 2 for 2–3 ms, …
        return (distanceMs < 0 ? 64 : 0) + min(log, 63)
    }
}

/// A set of features as 2¹⁶ bits: what a run reached, or the union of a corpus's runs.
@usableFromInline package struct FeatureMap: Sendable, Equatable {
    package static let bits = 1 << 16
    var words = [UInt64](repeating: 0, count: FeatureMap.bits / 64)
    @usableFromInline package init() {}

    /// Sets the bit of the tuple (tag, a, b, c).
    mutating func insert(_ tag: UInt32, _ a: UInt32 = 0, _ b: UInt32 = 0, _ c: UInt32 = 0) {
        let prime: UInt64 = 0x0000_0100_0000_01b3
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        h = (h ^ UInt64(tag)) &* prime
        h = (h ^ UInt64(a)) &* prime
        h = (h ^ UInt64(b)) &* prime
        h = (h ^ UInt64(c)) &* prime
        h ^= h >> 29
        let bit = Int(h % UInt64(FeatureMap.bits))
        words[bit >> 6] |= 1 << UInt64(bit & 63)
    }

    /// Sets the bit of a "sometimes" situation reached.
    package mutating func insertSituation(_ index: Int) { insert(11, UInt32(index)) }

    /// How many features are set.
    package var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// How many of `other`'s features are not in this map.
    package func newFeatures(in other: FeatureMap) -> Int {
        var n = 0
        for i in words.indices { n += (other.words[i] & ~words[i]).nonzeroBitCount }
        return n
    }

    /// Adds `other`'s features.
    package mutating func formUnion(_ other: FeatureMap) {
        for i in words.indices { words[i] |= other.words[i] }
    }
}
