import Foundation
import Testing
import ScenarioSearch
@testable import SimKitCommand

/// A fuzz campaign with a seed whose run stopped early (a bound, not a failure) is not a
/// pass: the summary says INCOMPLETE and names the seed, and the exit status is 3.
@Suite struct FuzzIncompleteSeedTests {
    @Test func aSeedThatStoppedEarlyMakesTheCampaignIncomplete() {
        let plan = FuzzPlan(range: .init(from: 0, count: 2), shard: .init(index: 1, count: 1),
                            options: .init(sdk: "reference", devices: 40, durationDays: 90, shrink: false))
        func result(_ json: String) -> SeedResult { try! JSONDecoder().decode(SeedResult.self, from: Data(json.utf8)) }
        let ok = result(#"{"seed":0,"sdk":"reference","fingerprint":"a","events":10,"broken":[],"coverage":[]}"#)
        var early = ok
        early.seed = 1
        early.stopReason = "queue bound: more than 1048576 events were pending"
        let summary = FuzzSummary(results: [ok, early], plan: plan, planned: 2, seconds: 1, stoppedBy: nil)
        #expect(!summary.complete)
        #expect(summary.exitStatus == 3)
        let text = summary.text(jobs: 1)
        #expect(text.contains("INCOMPLETE"), "\(text)")
        #expect(text.contains("1 seed stopped early (first: seed 1, queue bound"), "\(text)")
        let clean = FuzzSummary(results: [ok], plan: FuzzPlan(range: .init(from: 0, count: 1), shard: .init(index: 1, count: 1),
                                                             options: plan.options), planned: 1, seconds: 1, stoppedBy: nil)
        #expect(clean.complete && clean.exitStatus == 0)
    }
}
