import Testing
import SimKit
@testable import ScenarioLanguage

@Suite("Language: the SPEC §4 example")
struct LanguageSpecExampleTests {
    let result = ScenarioParser.parse(LanguageFixtures.specExample, file: "spec.scenario")

    @Test func parsesWithoutDiagnostics() throws {
        #expect(result.diagnostics.isEmpty, "\(result.rendered)")
        _ = try #require(result.scenario)
    }

    @Test func header() throws {
        let s = try #require(result.scenario)
        #expect(s.name == "Leaked key is stopped at once")
        #expect(s.seed == 42)
        #expect(s.duration == 45 * Ms.day)
        #expect(s.sdk == .reference)
        #expect(s.network == NetworkDecl(latencyMin: 20, latencyMax: 800, timeout: 30 * Ms.second))
    }

    @Test func declarations() throws {
        let s = try #require(result.scenario)
        #expect(s.accounts == [AccountDecl(name: "acme", approved: true)])
        #expect(s.apps == [AppDecl(name: "photos", account: "acme", key: "rk_live_A", pending: false)])
        #expect(s.groups.map(\.name) == ["photos", "photos-clones"])
        #expect(s.groups.map(\.count) == [2000, 5])
        #expect(s.groups[1].kind == .clones)
        #expect(s.expectedViolations.map(\.invariant) == ["never-lock-on-transient"])
        #expect(s.apps[0].mark.line == 7)
    }

    @Test func timelineInFileOrder() throws {
        let s = try #require(result.scenario)
        #expect(s.timeline.count == 20)
        let first = s.timeline[0]
        #expect(first.schedule == .every(Repeat(period: 8 * Ms.hour, jitter: 2 * Ms.hour)))
        #expect(first.body == .action(.person(.open, .share(Share(percent: 60), of: "photos"))))
        #expect(first.mark.line == 12)
        #expect(s.timeline[2] == TimedStatement(schedule: .at(0), body: .action(.person(.launch, .all))))
        #expect(s.timeline[4].body == .action(.fault(ServerErrors(share: Share(percent: 50), status: 503, forMs: 2 * Ms.hour))))
        #expect(s.timeline[5].schedule == .at(3 * Ms.day + 12 * Ms.hour))
        #expect(s.timeline[7].body == .action(.rotate(app: "photos", key: "rk_live_B", old: .stopNow)))
        #expect(s.timeline[9].body == .action(.stopOldKey(app: "photos", key: "rk_live_A")))
        #expect(s.timeline[13].body == .action(.rollupAccount(.revoke, account: "acme")))
        #expect(s.timeline[15].body == .action(.person(.revokePhotos, .device(group: "photos", index: 17))))
        #expect(s.timeline[17].body == .action(.forgetDevice(.count(5, of: "photos"))))
        #expect(s.timeline[18] == TimedStatement(schedule: .at(11 * Ms.day),
                                                 body: .expect(Expectation(quantifier: .all, group: "photos", state: .locked))))
        #expect(s.timeline[19].body == .expect(Expectation(quantifier: .none, group: "photos", state: .purged)))
        #expect(s.timeline[19].mark.line == 33)
        #expect(s.expectedViolations[0].mark.line == 34)
    }

    @Test func printsAndReparsesEqual() throws {
        let s = try #require(result.scenario)
        let text = ScenarioPrinter.print(s)
        let again = ScenarioParser.parse(text, file: "printed")
        #expect(again.diagnostics.isEmpty, "\(again.rendered)")
        #expect(again.scenario == s)
        #expect(ScenarioPrinter.print(try #require(again.scenario)) == text)
    }

    @Test func checksNamesAgainstContext() {
        let ctx = ValidationContext(knownInvariants: ["never-lock-on-transient", "lock-on-revocation"], knownMutants: ["lock-on-5xx"])
        #expect(ScenarioParser.parse(LanguageFixtures.specExample, file: "spec.scenario", context: ctx).diagnostics.isEmpty)
        let bad = LanguageFixtures.specExample.replacing("never-lock-on-transient       #", with: "never-lock-on-transent #")
        let r = ScenarioParser.parse(bad, file: "spec.scenario", context: ctx)
        #expect(r.diagnostics.map(\.message) == ["unknown invariant 'never-lock-on-transent'"])
        #expect(r.diagnostics.first?.hint == "did you mean 'never-lock-on-transient'?")
    }

    @Test func crlfAndTabsReadTheSame() throws {
        let s = try #require(result.scenario)
        let crlf = LanguageFixtures.specExample.replacing("\n", with: "\r\n").replacing("   ", with: "\t")
        let r = ScenarioParser.parse(crlf, file: "crlf.scenario")
        #expect(r.diagnostics.isEmpty, "\(r.rendered)")
        #expect(r.scenario == s)
    }

    @Test func hashIsACommentOnlyAfterSpace() throws {
        let text = LanguageFixtures.header + "at 1d open device early#3 # the third\n#at 2d open all\n"
        let s = try #require(ScenarioParser.parse(text, file: "c.scenario").scenario)
        #expect(s.timeline.map(\.body) == [.action(.person(.open, .device(group: "early", index: 3)))])
    }
}
