import Testing
import Invariants
import Scenarios
import SimKitTesting
import SimKit

@Suite("FailureStory: a violation in a few sentences")
struct StoryTests {
    @Test("a lock after a 5xx reads as what the device did, what the server said, which rule broke")
    func lockAfter5xx() throws {
        // The first seed that catches the mutant (the generator decides which one it is).
        let v = try #require((0..<300 as Range<UInt64>).lazy.compactMap { seed in
            SimKitTest.seed(seed, sdk: .mutant("lock-on-5xx")).violations.first { $0.invariant == .neverLockOnTransient }
        }.first)
        let story = FailureStory(v)
        #expect((2...5).contains(story.sentences.count))
        #expect(story.sentences[0].hasPrefix("Device \(v.deviceName) locked at "), "\(story.sentences[0])")
        #expect(story.sentences[0].hasSuffix(" after a 5xx from the server (D6: a server error, timeout, offline or app_pending never locks)."), "\(story.sentences[0])")
        // The request that drew the 5xx, as the device's own last records show it.
        let kinds = v.lastEvents.compactMap { r -> RequestKind? in
            if case .delivered(_, let kind, .serverError, false, _, _, _) = r.event { return kind } else { return nil }
        }
        let kind = try #require(kinds.last)
        #expect(story.text.contains("sent a \(kind) request"), "\(story.text)")
        #expect(story.text.contains("The server answered the \(kind) with a 5xx"), "\(story.text)")
        #expect(story.text.contains(v.message))
        for line in story.wrapped(width: 60, indent: "  ").split(separator: "\n") { #expect(line.count <= 60 || !line.dropFirst(2).contains(" ")) }
    }

    @Test("every kept violation of a mutant campaign gets 2 to 5 sentences that name the device and rule")
    func everyViolationTold() {
        for seed in [27, 47, 55, 64, 94] as [UInt64] {
            for v in SimKitTest.seed(seed, sdk: .mutant("lock-on-5xx")).violations {
                let story = FailureStory(v)
                #expect((2...5).contains(story.sentences.count), "\(story.sentences)")
                #expect(story.sentences[0].contains(v.deviceName))
                #expect(story.sentences[0].contains(v.invariant.rules))
            }
        }
    }

    @Test("a violation without events still says who, when and which rule")
    func noEvents() {
        let v = Violation(invariant: .rotationGrace, time: 3 * Ms.day + 2 * Ms.hour, device: Event.world,
                          deviceName: "world", message: "key rk_live_A served after its deadline", lastEvents: [])
        let story = FailureStory(v)
        #expect(story.sentences.count == 3)
        #expect(story.sentences[0] == "The server broke rotation-grace at 3d02h (S3: an old key works until its grace deadline).")
        #expect(story.sentences[2].hasPrefix("Rule S3:"))
    }

    @Test("times read as days, hours and minutes")
    func times() {
        #expect(FailureStory.time(0) == "0d00h")
        #expect(FailureStory.time(3 * Ms.day + 2 * Ms.hour) == "3d02h")
        #expect(FailureStory.time(3 * Ms.day + 2 * Ms.hour + 5 * Ms.minute + 999) == "3d02h05m")
    }

    /// Three devices launch during a full 503 outage: a mutant that locks on 5xx locks.
    static let outage = """
    scenario "launch during an outage"
    seed 1
    duration 2d
    account acme
    app photos account acme key rk_live_A
    devices 3 app photos
    at 0s launch all
    at 1d server errors 100% status 503 for 2h
    at 1d1h launch all

    """

    @Test("simkit run tells the story before the raw events")
    func reportHasStory() throws {
        let run = try SimKitTest.scenario(source: Self.outage, sdk: .mutant("lock-on-5xx"))
        #expect(!run.passed)
        let v = try #require(run.outcome.unexpectedViolations.first)
        #expect(run.story.hasPrefix("Device \(v.deviceName) locked at 1d01h"), "\(run.story)")
        let report = ScenarioReport.block(run.outcome)
        let story = try #require(report.range(of: "Device \(v.deviceName)"))
        let events = try #require(report.range(of: "last events:"))
        #expect(story.lowerBound < events.lowerBound)
        #expect(try SimKitTest.scenario(source: Self.outage).passed)
    }
}
