import Foundation
import Testing
import Invariants
import SimKitTesting
import SimKit

/// The Swift Testing API as a user's package would use it.
@Suite("SimKitTest: seeds and scenario files from @Test")
struct SimKitTestingTests {
    @Test("the reference SDK keeps every promise", arguments: 0..<50 as Range<UInt64>)
    func referenceKeepsEveryPromise(seed: UInt64) {
        let run = SimKitTest.seed(seed)
        #expect(run.passed, "\(run)")
        #expect(run.broken.isEmpty && run.violations.isEmpty && run.story.isEmpty)
    }

    @Test("a mutant seed fails with a story and a shrunk reproducer that fails the same way")
    func mutantSeedFails() throws {
        let run = SimKitTest.seed(27, sdk: .mutant("lock-on-5xx"))
        #expect(!run.passed)
        #expect(run.broken.contains(.neverLockOnTransient))
        let first = try #require(run.violations.first { $0.invariant == .neverLockOnTransient })
        #expect(run.story.contains("\(first.deviceName) locked at "), "\(run.story)")
        #expect(run.story.contains("after a 5xx from the server (D6:"), "\(run.story)")
        #expect("\(run)".contains("simkit replay 27 --sdk mutant:lock-on-5xx"))
        let reproducer = run.reproducer
        #expect(reproducer.contains("sdk mutant lock-on-5xx"), "\(reproducer)")
        let again = try SimKitTest.scenario(source: reproducer, file: "reproducer.scenario")
        #expect(again.broken.contains(.neverLockOnTransient), "\(again)")
        #expect(!again.passed)
        #expect(again.story.contains("(D6:"))
    }

    @Test("a scenario file runs from a test and passes")
    func scenarioFile() throws {
        let run = try SimKitTest.scenario(file: PackageRoot.path + "/scenarios/leaked-key-stopped-at-once.scenario")
        #expect(run.passed, "\(run)")
        #expect(!run.expectations.isEmpty)
        #expect(run.expectations.allSatisfy { $0.passed })
    }

    @Test("a scenario whose expected violation is broken passes, and reports the violation")
    func expectedViolation() throws {
        let run = try SimKitTest.scenario(file: PackageRoot.path + "/scenarios/mutant-never-purge.scenario")
        #expect(run.passed, "\(run)")
        #expect(!run.broken.isEmpty && !run.violations.isEmpty)
    }

    @Test("bad input throws with the diagnostic; a missing file throws")
    func badInput() {
        #expect(throws: ScenarioRunError.self) { try SimKitTest.scenario(source: "duration 3x\n", file: "bad.scenario") }
        do {
            _ = try SimKitTest.scenario(source: "duration 3x\n", file: "bad.scenario")
        } catch let e as ScenarioRunError {
            #expect(e.message.contains("bad.scenario:1:"), "\(e.message)")
        } catch { Issue.record("unexpected error \(error)") }
        #expect(throws: ScenarioRunError.self) { try SimKitTest.scenario(file: "/nonexistent/x.scenario") }
    }
}
