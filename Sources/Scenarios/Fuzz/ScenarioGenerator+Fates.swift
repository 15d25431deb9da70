import SimKit
import ScenarioLanguage

/// Answers aimed at races: pinned fates (`pin` lines) in a share of seeds.
///
/// The fault windows lose, slow and fail answers at random; a race needs one answer held
/// back past another of the same device. So a quarter of the seeds pin the fates of one
/// to three requests of the main group's first devices, most of them `overtaken` (the
/// answer waits for the device's next verdict and arrives in that same millisecond, just
/// after it: a stale 200 or refusal behind a newer verdict, two verdicts in one
/// millisecond), the rest `late` or `after-timeout` (an answer that races its timeout).
/// Pins are lines of the script, so a seed's fates replay and shrink with it.
///
/// Drawn from their own stream (`fateStream`) and added after everything else, so the
/// seeds without pins keep their scripts, and those with pins keep every other line.
extension ScenarioGenerator {
    /// The fates a pin draws from, `overtaken` four times in six.
    static let aimedFates: [RequestFate] = [.overtaken, .overtaken, .overtaken, .overtaken, .late, .afterTimeout]

    mutating func aimAnswers() {
        guard fateStream.chance(1, outOf: 4), let main = s.groups.first(where: { $0.name == "photos" }) else { return }
        let devices = min(main.count, 3)
        for _ in 0..<(1 + fateStream.below(3)) {
            let index = 1 + fateStream.below(devices)
            // Early requests (the launch's registration and downloads) half the time, any
            // of a device's first 160 the rest (its later checks, runs, reports and calls).
            let request = 1 + fateStream.below(fateStream.chance(1, outOf: 2) ? 12 : 160)
            guard !s.pins.contains(where: { $0.index == index && $0.request == request }) else { continue }
            let fate = Self.aimedFates[Int(fateStream.below(UInt64(Self.aimedFates.count)))]
            s.pins.append(PinDecl(group: main.name, index: index, request: request, fate: fate))
        }
    }
}

/// The async schedule: in half the seeds, a step of an async SDK runs the jobs ready at
/// once in an order drawn from the seed (`schedule seed N`), so fuzzing explores the
/// interleavings of tasks inside a step (two tasks awaiting one actor, a task group's
/// children) and replay and shrinking keep the one that failed. The other half keep FIFO,
/// the order a step's jobs became ready. Independently, half the seeds give awaited
/// writes time (`storage latency D`, 1 ms to 2 s), so the next input meets a task
/// suspended in one. A sans-IO SDK is touched by neither.
extension ScenarioGenerator {
    static let storageLatencies: [SimTime] = [1, 5, 20, 200, 2 * Ms.second]

    mutating func drawSchedule() {
        if scheduleStream.chance(1, outOf: 2) {
            s.schedule = UInt32(1 + scheduleStream.below(UInt64(UInt32.max)))
        }
        if scheduleStream.chance(1, outOf: 2) {
            s.storageLatency = Self.storageLatencies[Int(scheduleStream.below(UInt64(Self.storageLatencies.count)))]
        }
    }
}
