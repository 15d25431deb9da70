import Foundation
import Testing

// The test tiers, shared by every test target (`Package.swift`: SimKitTestSupport).

extension Tag {
    /// The slow tier: package builds, the browser, fuzz and guided campaigns, corpus
    /// replay, scale runs and cross-process sweeps. `swift test` skips them;
    /// `SIMKIT_SLOW=1 swift test` runs them with the rest (as `.ci/run` does).
    @Tag public static var slow: Tag
}

extension Trait where Self == ConditionTrait {
    /// Runs only with `SIMKIT_SLOW=1`; goes with `.tags(.slow)`.
    public static var slowTier: Self {
        .enabled(if: ProcessInfo.processInfo.environment["SIMKIT_SLOW"] == "1",
                 "the slow tier: run with SIMKIT_SLOW=1 swift test")
    }
}
