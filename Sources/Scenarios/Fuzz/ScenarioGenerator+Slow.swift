import SimKit
import ScenarioLanguage

/// Slow answers (`slow-responses`): one seed in eight gets a window in which the
/// server's answers to some devices come back late, and a verdict race across it, so an
/// older verdict arrives after a newer one (D4, D9).
///
/// Drawn from a stream of its own (the seed's fork 4) and appended after everything else,
/// so the other seven seeds in eight keep exactly the script they had before this
/// statement existed, and these seeds keep every earlier statement (and its index, which
/// keys the world's draws for shares and jitters).
extension ScenarioGenerator {
    /// The fork of the seed's stream that decides the slow-answer race.
    static let slowStream: UInt64 = 4

    /// Appends the race of slow answers of `seed`, if it has one.
    mutating func slowRace(seed: UInt64) {
        var g = SimRandom(seed: seed).fork(ScenarioGenerator.slowStream)
        guard g.chance(1, outOf: 8), durationMs > 3 * Ms.hour else { return }
        let t = Ms.hour + g.below(durationMs - 2 * Ms.hour)
        let window = [Ms.second, 10 * Ms.second, Ms.minute][Int(g.below(3))]
        // Some delays pass the timeout (5 s to 30 s): those answers are late and ignored (D9).
        let delay = [2 * Ms.second, 20 * Ms.second, 40 * Ms.second, 2 * Ms.minute][Int(g.below(4))]
        let n = s.groups[0].count
        let selector: DeviceSelector
        switch g.below(4) {
        case 0: selector = .all
        case 1: selector = .group("photos")
        case 2: selector = .share(Share(percent: [25, 50, 100][Int(g.below(3))]), of: "photos")
        default: selector = .device(group: "photos", index: 1 + g.below(n))
        }
        at(t, .slowResponses(selector, by: delay, for: window))
        if g.chance(1, outOf: 2) {
            // A check served 200 inside the window, access stopped, a query refused just
            // after it: the 200 comes back last (it must not unlock).
            at(t, .person(.launch, .all))
            at(t + window, .disable(app: "photos"))
            at(t + window + 1, .person(.query, .all))
            at(t + window + 10 * Ms.minute, .enable(app: "photos"))
        } else {
            // A query refused inside the window, access back, a run's check served 200 just
            // after it: the refusal comes back last (it must not lock).
            at(t, .disable(app: "photos"))
            at(t, .person(.query, .all))
            at(t + window, .enable(app: "photos"))
            at(t + window + 1, .person(.background, .all))
            at(t + window + 2, .person(.query, .all))
        }
    }
}
