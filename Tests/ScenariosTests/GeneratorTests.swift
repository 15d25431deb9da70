import Testing
import SimKit
@testable import ScenarioLanguage
@testable import ScenarioSearch

@Suite("Scenario generator")
struct GeneratorTests {
    @Test("a seed generates the same script twice")
    func sameSeedSameScript() {
        for seed in [0, 1, 42, 9_999] as [UInt64] {
            let a = ScenarioGenerator.generate(seed: seed)
            let b = ScenarioGenerator.generate(seed: seed)
            #expect(a == b)
            #expect(ScenarioPrinter.print(a) == ScenarioPrinter.print(b))
        }
        #expect(ScenarioGenerator.generate(seed: 1) != ScenarioGenerator.generate(seed: 2))
    }

    @Test("every generated scenario is valid and survives printing and parsing")
    func generatedScenariosAreValid() {
        for seed in 0..<1_500 as Range<UInt64> {
            let scenario = ScenarioGenerator.generate(seed: seed)
            let problems = ScenarioValidator.validate(scenario, context: .init())
            #expect(problems.isEmpty, "seed \(seed): \(problems.map(\.message))\n\(ScenarioPrinter.print(scenario))")
            let text = ScenarioPrinter.print(scenario)
            let reparsed = ScenarioParser.parse(text, file: "seed-\(seed).scenario")
            #expect(reparsed.scenario == scenario, "seed \(seed) does not round-trip:\n\(reparsed.rendered)")
            if !problems.isEmpty { break }
        }
    }

    @Test("a quarter of the seeds aim answers: pins on the main group's first devices, most of them overtaken; the rest of the script is the seed's")
    func someSeedsPinFates() {
        var pinned = 0, overtaken = 0, pins = 0
        for seed in 0..<400 as Range<UInt64> {
            let full = ScenarioGenerator.generate(seed: seed)
            guard !full.pins.isEmpty else { continue }
            pinned += 1
            for p in full.pins {
                pins += 1
                if p.fate == .overtaken { overtaken += 1 }
                #expect(p.group == "photos" && (1...3).contains(p.index) && (1...160).contains(p.request), "seed \(seed): \(p)")
                #expect(ScenarioGenerator.aimedFates.contains(p.fate))
            }
            var withoutPins = full
            withoutPins.pins = []
            var g = ScenarioGenerator(seed: seed, options: .init())
            let unaimed = g.make(seed: seed, answers: false)
            #expect(unaimed.pins.isEmpty)
            #expect(unaimed == withoutPins, "seed \(seed): the pins are added, nothing else moves")
        }
        // 1 in 4 seeds: about 100 of 400; 60 and 140 are wide margins.
        #expect((60...140).contains(pinned), "\(pinned) of 400 seeds pin fates")
        #expect(overtaken * 2 > pins, "\(overtaken) of \(pins) pins hold an answer for the next verdict")
    }

    @Test("half the seeds draw an async schedule (schedule seed N), half slow storage; the rest of the script is the seed's")
    func halfTheSeedsDrawASchedule() {
        var seeded = 0, slow = 0, both = 0
        var seen: Set<UInt32> = []
        for seed in 0..<400 as Range<UInt64> {
            let full = ScenarioGenerator.generate(seed: seed)
            var g = ScenarioGenerator(seed: seed, options: .init())
            let fifo = g.make(seed: seed, schedules: false)
            #expect(fifo.schedule == 0 && fifo.storageLatency == 0)
            var withoutSchedule = full
            withoutSchedule.schedule = 0
            withoutSchedule.storageLatency = 0
            #expect(withoutSchedule == fifo, "seed \(seed): the schedule is added, nothing else moves")
            if full.schedule != 0 { seeded += 1; seen.insert(full.schedule) }
            if full.storageLatency != 0 {
                slow += 1
                #expect(ScenarioGenerator.storageLatencies.contains(full.storageLatency))
                if full.schedule != 0 { both += 1 }
            }
        }
        // 1 in 2 each: about 200 of 400; 150 and 250 are wide margins. The pick seeds differ,
        // and the two draws are independent (about 100 seeds have both).
        #expect((150...250).contains(seeded), "\(seeded) of 400 seeds draw a schedule")
        #expect(seen.count == seeded, "two seeds drew the same schedule seed")
        #expect((150...250).contains(slow), "\(slow) of 400 seeds draw slow storage")
        #expect((60...140).contains(both), "\(both) of 400 seeds draw both")
    }

    @Test("swarm testing reaches every feature within a few hundred seeds")
    func swarmReachesEveryFeature() {
        var seen = Set<Int>()
        for seed in 0..<300 as Range<UInt64> {
            var g = ScenarioGenerator(seed: seed, options: .init())
            _ = g.make(seed: seed)
            for f in ScenarioGenerator.Feature.allCases where g.has(f) { seen.insert(f.rawValue) }
        }
        #expect(seen.count == ScenarioGenerator.Feature.allCases.count)
    }
}
