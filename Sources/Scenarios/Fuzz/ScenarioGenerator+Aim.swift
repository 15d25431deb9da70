import SimKit
import ScenarioLanguage

/// Probes aimed at the true boundaries and rare situations of the rules.
///
/// The generator knows, from the script it writes, when access stops, when a check is
/// sent and (within the latency bounds) answered, and every grace deadline. A probe puts
/// requests at such a boundary ± {1 ms, 1 s, 1 min, 1 h}, counting the network's latency:
/// a request sent at t reaches the server between t + min/2 and t + max/2, and its answer
/// is back between t + min and t + max + 1 (`World.sendRequest`). Half the probed seeds pin
/// the latency (`network latency L..L`), which makes the boundary exact to the millisecond.
///
/// Probes are drawn from their own random stream (`aimStream`) and appended after the
/// rest of the script, so the statements that earlier versions of the generator wrote for
/// a seed are still written (pinning the latency changes their timing for those seeds).
extension ScenarioGenerator {
    /// The situations a probe builds.
    enum Probe: CaseIterable {
        /// D5: requests judged at 30 days after a disable, ± a delta (purge off by one, late).
        case purgeEdge
        /// D1: an activation 24 h ± a delta after the last check was answered.
        case activationEdge
        /// D1: a background run within a minute after a launch's check was answered.
        case backgroundAfterLaunch
        /// S3: requests judged at an old key's grace deadline ± a delta.
        case graceEdge
        /// S3: a request judged in the very millisecond of a `stop-old now` rotation.
        case stopNowEdge
        /// D2: access stops while the first run's model or place-data download is in flight.
        case stopDuringDownload
        /// D4, D9: a lock error answered late, a newer 200, then a request failing offline
        /// before the late answer arrives.
        case staleAfterPartition
        /// S4: Rollup revokes and restores an app that the developer disabled.
        case restoreWhileDisabled
        /// S5: Rollup revokes an app and its account, then restores the account only.
        case accountRestoreOverAppRevoke
        /// S4: a disable while an old key is in its grace.
        case disableDuringGrace
    }

    /// Deltas around an exact boundary: ± 1 ms, 1 s, 1 min, 1 h, and the boundary itself.
    static let aimDeltas: [Int64] = [0, -1, 1, -Int64(Ms.second), Int64(Ms.second), -Int64(Ms.minute), Int64(Ms.minute),
                                     -Int64(Ms.hour), Int64(Ms.hour)]

    /// The probes a draw picks from: each once, and twice those whose situation other
    /// statements of the script most often spoil (a check in between, an enable).
    static let probeDraw: [Probe] = Probe.allCases + [.activationEdge, .purgeEdge]

    /// Probes that need the latency pinned to hit their boundary to the millisecond.
    static let exactProbes: Set<Probe> = [.purgeEdge, .activationEdge, .graceEdge, .stopNowEdge, .stopDuringDownload]

    /// Half the seeds get one to three probes. The latency is pinned first on most seeds
    /// with a probe that needs exactness (to 1 ms for a stop-now probe: a request then
    /// reaches the server in the millisecond it is sent), and on a quarter of the others.
    mutating func aim() {
        guard aimStream.chance(1, outOf: 2) else { return }
        let probes = (0..<(1 + aimStream.below(3))).map { _ in ScenarioGenerator.probeDraw[Int(aimStream.below(UInt64(ScenarioGenerator.probeDraw.count)))] }
        let exact = probes.contains { ScenarioGenerator.exactProbes.contains($0) }
        if !has(.verdictRace), exact ? aimStream.chance(9, outOf: 10) : aimStream.chance(1, outOf: 4) {
            let pin = probes.contains(.stopNowEdge) ? 1 : [2, 20, 100][Int(aimStream.below(3))] as SimTime
            s.network.latencyMin = pin
            s.network.latencyMax = pin
        }
        for probe in probes { self.probe(probe) }
    }

    /// The shortest time from sending a request to its reaching the server.
    var forwardMin: SimTime { s.network.latencyMin / 2 }
    /// The longest time from sending a request to its answer being back.
    var answerMax: SimTime { max(s.network.latencyMin, s.network.latencyMax) + 1 }
    var pinned: Bool { s.network.latencyMin == s.network.latencyMax }

    /// The time to send a request so that it reaches the server at `boundary + delta`
    /// (exactly when the latency is pinned, at the earliest otherwise).
    func sendTime(judgedAt boundary: SimTime, _ delta: Int64) -> SimTime {
        let t = shifted(boundary, delta)
        return t - min(t, forwardMin)
    }

    mutating func aimDelta() -> Int64 {
        // The boundary itself and ±1 ms half the time: off-by-one bugs live there.
        aimStream.chance(1, outOf: 2) ? [0, -1, 1][Int(aimStream.below(3))]
            : ScenarioGenerator.aimDeltas[Int(aimStream.below(UInt64(ScenarioGenerator.aimDeltas.count)))]
    }

    /// A time in the run, at least an hour in and `room` before its end, or nil.
    mutating func aimTime(room: SimTime) -> SimTime? {
        guard durationMs > room + 2 * Ms.hour else { return nil }
        return Ms.hour + aimStream.below(durationMs - room - 2 * Ms.hour)
    }

    /// Writes the statements of probe `p`; the longer probes have functions of their own.
    mutating func probe(_ p: Probe) {
        switch p {
        case .purgeEdge: purgeEdgeProbe()
        case .activationEdge: activationEdgeProbe()
        case .backgroundAfterLaunch:
            guard let t = aimTime(room: Ms.hour) else { return }
            at(t, .person(.launch, .all))
            let after = [Ms.second, 30 * Ms.second, 59 * Ms.second, 61 * Ms.second][Int(aimStream.below(4))]
            at(t + answerMax + after, .person(.background, .all))
        case .graceEdge:
            let grace = [Ms.hour, Ms.day, 7 * Ms.day][Int(aimStream.below(3))]
            guard let r = aimRotation(room: grace + Ms.hour, .keep(grace)) else { return }
            at(max(r + 1, sendTime(judgedAt: r + grace, 0)), .person(.launch, .all))
            if aimStream.chance(1, outOf: 2) { at(max(r + 1, sendTime(judgedAt: r + grace, aimDelta())), .person(.launch, .all)) }
        case .stopNowEdge:
            // Same-time statements run in file order, and a request reaches the server in
            // the millisecond it is sent when the round trip is 1 ms: the launch after the
            // rotation is judged in its millisecond.
            guard let r = aimRotation(room: Ms.hour, .stopNow) else { return }
            at(r, .person(.launch, .all))
            at(r + Ms.minute, .person(.launch, .all))
        case .stopDuringDownload: stopDuringDownloadProbe()
        case .staleAfterPartition: staleAfterPartitionProbe()
        case .restoreWhileDisabled:
            guard let t = aimTime(room: 3 * Ms.hour) else { return }
            at(t, .disable(app: "photos"))
            at(t + Ms.minute, .rollupApp(.revoke, app: "photos"))
            at(t + Ms.hour, .rollupApp(.restore, app: "photos"))
            at(t + Ms.hour + Ms.minute, .person(.launch, .all))
            at(t + 2 * Ms.hour, .enable(app: "photos"))
        case .accountRestoreOverAppRevoke:
            guard let t = aimTime(room: Ms.day + Ms.hour) else { return }
            at(t, .rollupApp(.revoke, app: "photos"))
            at(t + Ms.minute, .rollupAccount(.revoke, account: "acme"))
            at(t + Ms.hour, .rollupAccount(.restore, account: "acme"))
            at(t + Ms.hour + Ms.minute, .person(.launch, .all))
            at(t + Ms.day, .rollupApp(.restore, app: "photos"))
        case .disableDuringGrace:
            let grace = [Ms.day, 7 * Ms.day][Int(aimStream.below(2))]
            guard let r = aimRotation(room: 3 * Ms.hour, .keep(grace)) else { return }
            at(r + Ms.hour, .disable(app: "photos"))
            at(r + Ms.hour + Ms.minute, .person(.launch, .all))
            at(r + 2 * Ms.hour, .enable(app: "photos"))
        }
    }

    /// Access stops (a disable, or a rotation that stops the old key now), then launches
    /// judged at the 30-day purge boundary itself and, half the time, around it.
    mutating func purgeEdgeProbe() {
        // The stop: a disable, or (half the time) a rotation that stops the old key
        // now, which nothing but an update lifts. Then the boundary itself, and a delta.
        let t: SimTime
        if aimStream.chance(1, outOf: 2) {
            guard let r = aimRotation(room: 30 * Ms.day + 2 * Ms.hour, .stopNow) else { return }
            t = r
        } else {
            guard let d = aimTime(room: 30 * Ms.day + 2 * Ms.hour) else { return }
            t = d
            at(t, .disable(app: "photos"))
        }
        at(t + Ms.minute, .person(.launch, .all))
        at(sendTime(judgedAt: t + 30 * Ms.day, 0), .person(.launch, .all))
        if aimStream.chance(1, outOf: 2) { at(sendTime(judgedAt: t + 30 * Ms.day, aimDelta()), .person(.launch, .all)) }
    }

    /// A launch and its check; then activations just past the 24 h check age and, half
    /// the time, once more around it.
    mutating func activationEdgeProbe() {
        // The launch's check is answered by t + answerMax; the activation comes 24 h
        // and a little after that (the age then exceeds 24 h by 0 to (max - min) ms
        // plus the delta), or just before.
        guard let t = aimTime(room: Ms.day + 2 * Ms.hour) else { return }
        at(t, .person(.launch, .all))
        at(t + Ms.hour, .person(.close, .all))
        // First just past the boundary (an age of 24 h + 1 ms to 24 h + 999 ms when the
        // latency is pinned), then, half the time, once more around it.
        let first: Int64 = [1, 2, 500, 998][Int(aimStream.below(4))]
        var deltas = [first]
        if aimStream.chance(1, outOf: 2) {
            deltas.append([999, Int64(Ms.second), Int64(Ms.minute), -1, -Int64(Ms.second)][Int(aimStream.below(5))])
        }
        for delta in deltas.sorted() {
            let open = shifted(t + answerMax + Ms.day, delta)
            at(open, .person(.close, .all))
            at(open, .person(.open, .all))
        }
    }

    /// A disable while the first launch downloads its models or place data.
    mutating func stopDuringDownloadProbe() {
        // The first launch registers (judged at min/2 at the earliest, answered by
        // answerMax), then downloads the models, then the place data: a disable between
        // the registration's verdict and the download's catches it in flight.
        let l = s.network.latencyMin
        let stop: SimTime = pinned ? (aimStream.chance(1, outOf: 2) ? l + l / 4 + 1 : 2 * l + l / 4 + 2)
            : l / 2 + 1 + aimStream.below(max(1, 2 * answerMax))
        at(stop, .disable(app: "photos"))
        at(stop + Ms.hour, .enable(app: "photos"))
        at(stop + Ms.hour + Ms.minute, .person(.launch, .all))
    }

    /// A lock error answered late, after a newer 200 and an offline query (D4, D9: the
    /// late lock error is ignored).
    mutating func staleAfterPartitionProbe() {
        // The launch's check is served app_disabled at once but answered late (slow
        // answers while it is served, arriving before its timeout when the timeout
        // leaves room); access comes back and a query is served 200; then a query
        // fails offline; the late lock error, older than that 200, arrives after
        // (D4, D9: ignored).
        guard let t = aimTime(room: Ms.hour) else { return }
        if s.network.timeout > 5 * Ms.second, aimStream.chance(3, outOf: 4) { s.network.timeout = 5 * Ms.second }
        let gap = max(Ms.second, answerMax)
        let earliest = 2 * gap + answerMax
        let late = earliest + aimStream.below(max(1, s.network.timeout - min(s.network.timeout, earliest + answerMax)))
        at(t, .disable(app: "photos"))
        at(t, .fault(SlowResponses(devices: .all, byMs: late, forMs: answerMax)))
        at(t, .person(.launch, .all))
        at(t + gap, .enable(app: "photos"))
        at(t + gap, .person(.query, .all))
        at(t + 2 * gap, .fault(Offline(devices: .all, forMs: Ms.minute)))
        at(t + 2 * gap, .person(.query, .all))
    }

    /// A rotation of the main app with `policy`, after every rotation already written (so
    /// each `stop-old-key` still names a previous key), with `room` left before the end.
    /// Nobody updates: the installs keep the old key. Returns its time, or nil.
    mutating func aimRotation(room: SimTime, _ policy: ScenarioLanguage.OldKeyPolicy) -> SimTime? {
        let earliest = (lastRotationAt ?? 0) + Ms.hour
        guard durationMs > earliest + room + Ms.hour else { return nil }
        let t = earliest + aimStream.below(durationMs - earliest - room - Ms.hour)
        lastRotationAt = t
        let key = "rk_live_p\(keys.count)"
        keys.append(key)
        at(t, .rotate(app: "photos", key: key, old: policy))
        return t
    }
}
