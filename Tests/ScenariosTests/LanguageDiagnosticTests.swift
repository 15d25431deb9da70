import Testing
import SimKit
@testable import ScenarioLanguage
@testable import Scenarios

/// The exact text of the main diagnostics: location, message, source line, caret, hint.
@Suite("Language: diagnostics")
struct LanguageDiagnosticTests {
    /// Parses the shared header followed by `body` (whose first line is line 7).
    /// The errors for the fixture header plus `body`, rendered (warnings are tested on their own).
    func render(_ body: String, context: ValidationContext = .init()) -> String {
        Diagnostic.render(ScenarioParser.parse(LanguageFixtures.header + body, file: "t.scenario", context: context)
            .diagnostics.filter { $0.severity == .error })
    }

    /// A long source line is shown as a window around the column, cut with `…`, and the
    /// caret still stands under the column's character.
    @Test func longLineIsCutAroundTheColumn() {
        let line = String(repeating: "a", count: 5_000) + "é" + "XYZ" + String(repeating: "b", count: 5_000)
        let column = 5_000 + 2 + 1   // 'X', after the two bytes of 'é'
        let text = Diagnostic(location: SourceLocation(file: "t.scenario", line: 3, column: column),
                              message: "bad", sourceLine: line).rendered
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "t.scenario:3:\(column): error: bad")
        #expect(lines[1].hasPrefix("…") && lines[1].hasSuffix("…"))
        #expect(lines[1].utf8.count <= Diagnostic.excerptBytes + 2 * "…".utf8.count + 6)   // whole characters at the cuts
        let caret = lines[2].count - 1
        #expect(lines[2].last == "^")
        #expect(Array(lines[1])[caret] == "X", "the caret stands under \(Array(lines[1])[caret]), not X")
        // A short line is shown whole.
        let short = Diagnostic(location: SourceLocation(file: "t.scenario", line: 1, column: 4), message: "bad", sourceLine: "at 5d x").rendered
        #expect(short == "t.scenario:1:4: error: bad\nat 5d x\n   ^\n")
    }

    @Test func expectOfOneDeviceSaysItTakesAGroup() {
        let text = render("at 1d expect all device photos#1 idle\n")
        #expect(text.hasPrefix("""
        t.scenario:7:18: error: 'expect' takes a group, not a device
        at 1d expect all device photos#1 idle
                         ^
        """), "\(text)")
    }

    @Test func unknownActionSuggestsKeyword() {
        #expect(render("at 5d rotat photos key rk_live_B\n") == """
        t.scenario:7:7: error: unknown action 'rotat'
        at 5d rotat photos key rk_live_B
              ^
        hint: did you mean 'rotate'?

        """)
    }

    /// A clone group's name may come before or after what it copies; both mean the same.
    @Test func clonesNameBeforeOrAfterCopying() throws {
        let before = ScenarioParser.parse(LanguageFixtures.header + "clones 2 app photos as fakes copying early\n", file: "a.scenario")
        let after = ScenarioParser.parse(LanguageFixtures.header + "clones 2 app photos copying early as fakes\n", file: "b.scenario")
        let a = try #require(before.scenario, "\(before.diagnostics)")
        let b = try #require(after.scenario, "\(after.diagnostics)")
        #expect(a.groups.last?.name == "fakes" && a.groups.last?.copying == "early")
        #expect(a.groups.map(\.name) == b.groups.map(\.name) && a.groups.map(\.copying) == b.groups.map(\.copying))
    }

    @Test func ofAfterTheQuantifierIsNamed() {
        #expect(render("at 1h expect 3 of photos locked\n") == """
        t.scenario:7:16: error: unexpected 'of' after the quantifier
        at 1h expect 3 of photos locked
                       ^
        hint: the group follows the quantifier: 'photos locked'

        """)
    }

    @Test func unknownStatementSuggestsKeyword() {
        #expect(render("evry 1d open all\n") == """
        t.scenario:7:1: error: unknown statement 'evry'
        evry 1d open all
        ^
        hint: did you mean 'every'?

        """)
    }

    @Test func unknownGroupListsGroups() {
        #expect(render("at 1d open 10% of photo\n") == """
        t.scenario:7:19: error: unknown group 'photo'; groups are: photos, early, photos-clones
        at 1d open 10% of photo
                          ^
        hint: did you mean 'photos'?

        """)
    }

    @Test func shareOver100() {
        #expect(render("at 1d timeouts 150% for 1h\n") == """
        t.scenario:7:16: error: share '150%' is over 100%
        at 1d timeouts 150% for 1h
                       ^

        """)
    }

    @Test func timePastDuration() {
        #expect(render("at 31d launch all\n") == """
        t.scenario:7:4: error: time '31d' is past the scenario's duration '30d'
        at 31d launch all
           ^

        """)
    }

    @Test func badDuration() {
        #expect(render("at 3x launch all\n") == """
        t.scenario:7:4: error: invalid time '3x'
        at 3x launch all
           ^
        hint: durations look like 250ms, 10s, 15m, 6h, 30d or 1d12h

        """)
    }

    @Test func hugeDuration() {
        #expect(render("at 99999999999999999999d launch all\n") == """
        t.scenario:7:4: error: time '99999999999999999999d' is too large
        at 99999999999999999999d launch all
           ^

        """)
    }

    @Test func missingDurationAtEndOfLine() {
        #expect(render("at 1d offline photos for\n") == """
        t.scenario:7:25: error: expected duration after 'for'
        at 1d offline photos for
                                ^
        hint: durations look like 250ms, 10s, 15m, 6h, 30d or 1d12h

        """)
    }

    /// `slow-responses SEL by D for W` (issue 22): a missing `by`, a zero delay and one
    /// past the latency limit are located like the other faults' errors.
    @Test func slowResponsesErrors() {
        #expect(render("at 1d slow-responses photos for 1h\n") == """
        t.scenario:7:29: error: expected 'by' after 'photos', found 'for'
        at 1d slow-responses photos for 1h
                                    ^

        """)
        #expect(render("at 1d slow-responses device photos#1 by 0s for 1h\n") == """
        t.scenario:7:41: error: 'slow-responses' must delay by more than 0s
        at 1d slow-responses device photos#1 by 0s for 1h
                                                ^

        """)
        #expect(render("at 1d slow-responses photos by 2h for 1h\n") == """
        t.scenario:7:32: error: 'slow-responses' by '2h' is longer than the limit of 1h
        at 1d slow-responses photos by 2h for 1h
                                       ^

        """)
    }

    @Test func countLargerThanGroup() {
        #expect(render("at 1d reset 11 of early\n") == """
        t.scenario:7:13: error: cannot select 11 of group 'early', which has 10 devices
        at 1d reset 11 of early
                    ^

        """)
    }

    @Test func deviceOutOfRange() {
        #expect(render("at 1d open device early#11\n") == """
        t.scenario:7:25: error: device 'early#11' is out of range; group 'early' has devices 1 to 10
        at 1d open device early#11
                                ^

        """)
    }

    @Test func stopOldKeyNeedsAPreviousKey() {
        let text = render("at 5d rotate photos key rk_live_B\nat 4d stop-old-key photos rk_live_A\n")
        #expect(text == """
        t.scenario:8:27: error: 'rk_live_A' is the current key of app 'photos' at 4d, not a previous one
        at 4d stop-old-key photos rk_live_A
                                  ^
        note: app 'photos' has no previous key at 4d; its key is 'rk_live_A'

        """)
        #expect(render("at 5d rotate photos key rk_live_B\nat 6d stop-old-key photos rk_live_A\n") == "")
    }

    @Test func untilBeforeFrom() {
        #expect(render("every 1h from 2d until 1d open all\n") == """
        t.scenario:7:24: error: 'until' '1d' is before 'from' '2d'
        every 1h from 2d until 1d open all
                               ^

        """)
    }

    @Test func statusOutOfRange() {
        #expect(render("at 1d server errors 5% status 404 for 1h\n") == """
        t.scenario:7:31: error: status '404' is not between 500 and 599
        at 1d server errors 5% status 404 for 1h
                                      ^

        """)
    }

    @Test func unknownMutantWithHint() {
        let ctx = ValidationContext(knownMutants: ["lock-on-5xx", "no-purge"])
        #expect(render("sdk mutant lock-on-5x\n", context: ctx) == """
        t.scenario:7:12: error: unknown mutant 'lock-on-5x'
        sdk mutant lock-on-5x
                   ^
        hint: did you mean 'lock-on-5xx'?
        note: mutants are: lock-on-5xx, no-purge

        """)
    }

    @Test func severalErrorsOneFile() {
        let r = ScenarioParser.parse(LanguageFixtures.header + "at 1d lunch all\nat 2d open al\nat x\nat 1d open all\n", file: "t.scenario")
        #expect(r.scenario == nil)
        #expect(r.diagnostics.map(\.location.line) == [7, 9])
        let r2 = ScenarioParser.parse(LanguageFixtures.header + "at 1d lunch all\nevery 0s open nobody\nat 1d open all\n", file: "t.scenario")
        #expect(r2.diagnostics.count == 1)   // meaning is checked only once the syntax is clean
    }

    @Test func invalidUTF8IsLocated() {
        var bytes = Array("seed 1\nscenario \"a".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array("\"\n".utf8)
        let r = ScenarioParser.parse(bytes: bytes, file: "bad.scenario")
        #expect(r.rendered == """
        bad.scenario:2:12: error: invalid UTF-8 byte 0xC3
        scenario "a\u{FFFD}("
                   ^

        """)
    }
}

@Suite("Language: meaning checks")
struct LanguageValidationTests {
    /// The error messages for the fixture header plus `body`.
    func messages(_ body: String) -> [String] {
        ScenarioParser.parse(LanguageFixtures.header + body, file: "t.scenario").diagnostics
            .filter { $0.severity == .error }.map(\.message)
    }

    @Test func acceptsAllAsAGroup() {
        #expect(messages("at 1d reset 10% of all\nat 2d expect <=115 all locked\nat 1d open device all#115\n") == [])
        #expect(messages("at 2d expect 116 all locked\n") == ["expected count 116 is larger than group 'all' (115 devices)"])
    }

    @Test func duplicatesAndReserved() {
        #expect(messages("devices 3 app photos as early\n") == ["duplicate group 'early'"])
        #expect(messages("account acme\n") == ["duplicate account 'acme'"])
        #expect(messages("devices 3 app photos as all\n") == ["group name 'all' is reserved"])
        #expect(messages("at 1d rotate photos key rk_live_A\n") == ["key 'rk_live_A' is already used"])
        #expect(messages("seed 1\nseed 2\n") == ["duplicate 'seed' line"])
    }

    @Test func timingRules() {
        #expect(messages("every 0s open all\n") == ["'every' needs a period longer than 0s"])
        #expect(messages("every 1d until 1h open all\n") == ["'until' '1h' is before the first firing at '1d'"])
        #expect(messages("every 1d from 31d open all\n") == ["time '31d' is past the scenario's duration '30d'"])
        #expect(messages("every 1d rotate photos key rk_live_Z\n") == ["'rotate' can only be used with 'at'"])
        #expect(messages("every 1d expect all photos locked\n") == ["'expect' needs 'at', not 'every'"])
        #expect(messages("at 1d offline photos for 0s\n") == ["'offline' must last longer than 0s"])
    }

    @Test func unknownNames() {
        #expect(messages("at 1d disable foto\n") == ["unknown app 'foto'; apps are: photos"])
        #expect(messages("at 1d rollup revoke-account acm\n") == ["unknown account 'acm'; accounts are: acme"])
        #expect(messages("at 1d stop-old-key photos rk_live_Q\n") == ["'rk_live_Q' is not a previous key of app 'photos' at 1d"])
        #expect(messages("at 1d rollup revok photos\n") == ["unknown rollup verb 'revok'"])
    }

    @Test func validatesASTsBuiltInCode() {
        var s = ScenarioFile()
        s.timeline = [TimedStatement(schedule: .at(31 * Ms.day), body: .action(.fault(ServerDown(forMs: Ms.hour))))]
        let d = ScenarioValidator.validate(s)
        #expect(d.map(\.message) == ["time '31d' is past the scenario's duration '30d'"])
        #expect(d.first?.rendered == "<generated>:0:0: error: time '31d' is past the scenario's duration '30d'\n")
    }
}

/// `pin device GROUP#I request N FATE` (issue 22's chooser): its errors are located like
/// the others', and a pin compiles to the device's index and the request's number.
@Suite("Language: pins")
struct LanguagePinTests {
    func render(_ body: String) -> String {
        Diagnostic.render(ScenarioParser.parse(LanguageFixtures.header + body, file: "t.scenario")
            .diagnostics.filter { $0.severity == .error })
    }

    @Test func unknownFateSuggestsOne() {
        #expect(render("pin device photos#1 request 3 los\n") == """
        t.scenario:7:31: error: unknown fate 'los'
        pin device photos#1 request 3 los
                                      ^
        hint: did you mean 'lost'?
        note: fates are: late, after-timeout, error, lost, offline, overtaken

        """)
    }

    @Test func aPinNamesOneDeviceAndARequestFromOne() {
        #expect(render("pin photos request 3 lost\n").contains("error: expected 'device'"))
        #expect(render("pin device photos#0 request 3 lost\n").contains("device 'photos#0' is out of range"))
        #expect(render("pin device nobody#1 request 3 lost\n").contains("unknown group 'nobody'"))
        #expect(render("pin device photos#1 request 0 lost\n").contains("request number 0 is out of range"))
        #expect(render("pin device photos#2 request 2 lost\npin device photos#2 request 2 late\n") == """
        t.scenario:8:29: error: request 2 of device 'photos#2' is pinned twice
        pin device photos#2 request 2 late
                                    ^

        """)
        #expect(render("pin device photos#1 request 2 lost\npin device photos#2 request 2 late\n") == "")
    }

    @Test func pinsCompileToDeviceAndRequest() throws {
        let text = LanguageFixtures.header + "pin device early#2 request 5 after-timeout\nat 0s launch all\n"
        let parsed = try #require(ScenarioParser.parse(text, file: "t.scenario").scenario)
        #expect(parsed.pins.map(\.fate) == [.afterTimeout])
        #expect(ScenarioPrinter.print(parsed).contains("pin device early#2 request 5 after-timeout\n"))
        let setup = try ScenarioCompiler.compile(parsed).setup
        let early = try #require(setup.groups.firstIndex { $0.name == "early" })
        let start = setup.groups[..<early].reduce(0) { $0 + Int($1.count) }
        #expect(setup.pinnedFates == [PinnedFate(device: DeviceIndex(start + 1), request: 5, fate: .afterTimeout)])
    }
}

/// `server restart [for D]` (S10): parsed in `at` and `every`, printed back equal, its
/// mistakes located like any other statement's.
@Suite("Language: server restart")
struct ServerRestartLanguageTests {
    func parse(_ body: String) -> ParseResult {
        ScenarioParser.parse(LanguageFixtures.header + body, file: "t.scenario")
    }

    @Test func parsesInAtAndEveryAndPrintsBack() throws {
        let s = try #require(parse("at 29d server restart\nevery 1d from 2d server restart for 30s\n").scenario)
        #expect(s.timeline.count == 2)
        #expect(s.timeline[0].body == .action(.fault(AnyFaultStatement(ServerRestart()))))
        #expect(s.timeline[1].body == .action(.fault(AnyFaultStatement(ServerRestart(forMs: 30 * Ms.second)))))
        let printed = ScenarioPrinter.print(s)
        #expect(printed.contains("at 29d server restart\n") && printed.contains("server restart for 30s\n"), "\(printed)")
        let again = try #require(ScenarioParser.parse(printed, file: "p.scenario").scenario)
        #expect(ScenarioPrinter.print(again) == printed)
    }

    @Test func mistakesAreLocated() {
        let errors = { (body: String) in
            Diagnostic.render(self.parse(body).diagnostics.filter { $0.severity == .error })
        }
        #expect(errors("at 1d server restart now\n").hasPrefix("t.scenario:7:22: error: unexpected 'now' at the end of the statement"), "\(errors("at 1d server restart now\n"))")
        #expect(errors("at 1d server restart for\n").hasPrefix("t.scenario:7:"), "\(errors("at 1d server restart for\n"))")
        #expect(errors("at 1d server restart for 0s\n").contains("'server restart'"), "\(errors("at 1d server restart for 0s\n"))")
        #expect(errors("at 1d server restarts\n").hasPrefix("t.scenario:7:14: error:"), "\(errors("at 1d server restarts\n"))")
    }
}

/// `portal SEL [answers FORM] for D` (P6): parsed in `at` and `every`, printed back equal,
/// its mistakes located like any other statement's.
@Suite("Language: portal")
struct PortalLanguageTests {
    func parse(_ body: String) -> ParseResult {
        ScenarioParser.parse(LanguageFixtures.header + body, file: "t.scenario")
    }

    @Test func parsesInAtAndEveryAndPrintsBack() throws {
        let s = try #require(parse("at 2h portal all answers 403 for 1h\nevery 1d portal 20% of photos for 6h\nat 3h portal device photos#2 answers login-page for 10m\n").scenario)
        #expect(s.timeline.count == 3)
        #expect(s.timeline[0].body == .action(.fault(AnyFaultStatement(Portal(devices: .all, answers: .forbidden, forMs: Ms.hour)))))
        let printed = ScenarioPrinter.print(s)
        #expect(printed.contains("at 2h portal all answers 403 for 1h\n") && printed.contains("portal 20% of photos for 6h\n")
                && printed.contains("portal device photos#2 answers login-page for 10m\n"), "\(printed)")
        let again = try #require(ScenarioParser.parse(printed, file: "p.scenario").scenario)
        #expect(ScenarioPrinter.print(again) == printed)
    }

    @Test func mistakesAreLocated() {
        let errors = { (body: String) in
            Diagnostic.render(self.parse(body).diagnostics.filter { $0.severity == .error })
        }
        let badForm = errors("at 1d portal all answers 404 for 1h\n")
        #expect(badForm.hasPrefix("t.scenario:7:26: error: a portal does not answer '404': it answers one of 'login-page', 'redirect', '401', '403', '407', 'cut-short'"), "\(badForm)")
        #expect(errors("at 1d portal all answers for 1h\n").hasPrefix("t.scenario:7:26: error: a portal does not answer 'for'"), "\(errors("at 1d portal all answers for 1h\n"))")
        #expect(errors("at 1d portal all answers\n").hasPrefix("t.scenario:7:"), "\(errors("at 1d portal all answers\n"))")
        #expect(errors("at 1d portal all for 0s\n").contains("'portal'"), "\(errors("at 1d portal all for 0s\n"))")
        #expect(errors("at 1d portal nosuch for 1h\n").hasPrefix("t.scenario:7:14: error:"), "\(errors("at 1d portal nosuch for 1h\n"))")
    }
}

/// `schedule fifo` or `schedule seed N` (issue 46 part 2): the order of an async step's
/// ready jobs is a line of the script, so a seed's interleavings replay and shrink with it.
@Suite("Language: schedule")
struct LanguageScheduleTests {
    func parse(_ body: String) -> (scenario: ScenarioFile?, errors: String) {
        let r = ScenarioParser.parse(LanguageFixtures.header + body, file: "t.scenario")
        return (r.scenario, Diagnostic.render(r.diagnostics.filter { $0.severity == .error }))
    }

    @Test func aSeedIsPrintedAndCompiledFifoIsTheDefault() throws {
        let seeded = try #require(parse("schedule seed 4294967295\nat 0s launch all\n").scenario)
        #expect(seeded.schedule == UInt32.max)
        #expect(ScenarioPrinter.print(seeded).contains("\nschedule seed 4294967295\n"))
        #expect(try ScenarioCompiler.compile(seeded).setup.sdk.jobPickSeed == UInt32.max)
        let fifo = try #require(parse("schedule fifo\nat 0s launch all\n").scenario)
        let none = try #require(parse("at 0s launch all\n").scenario)
        #expect(fifo.schedule == 0 && fifo == none)
        #expect(!ScenarioPrinter.print(fifo).contains("schedule"))
        #expect(try ScenarioCompiler.compile(none).setup.sdk.jobPickSeed == 0)
    }

    @Test func badSchedulesAreLocated() {
        #expect(parse("schedule seed 0\n").errors == """
        t.scenario:7:15: error: schedule seed 0 is out of range
        schedule seed 0
                      ^
        hint: use 1 to 4294967295, or 'schedule fifo' for the order jobs became ready

        """)
        #expect(parse("schedule seed 4294967296\n").errors.contains("t.scenario:7:15: error: schedule seed 4294967296 is out of range"))
        #expect(parse("schedule sead 3\n").errors.contains("t.scenario:7:10: error: unknown schedule 'sead'"))
        #expect(parse("schedule sead 3\n").errors.contains("did you mean 'seed'?"))
        #expect(parse("schedule\n").errors.contains("expected 'fifo' or 'seed N'"))
        #expect(parse("schedule seed\n").errors.contains("expected schedule seed"))
        #expect(parse("schedule seed 2 3\n").errors.contains("error:"))
        #expect(parse("schedule fifo\nschedule seed 2\n").errors.contains("t.scenario:8:1: error: duplicate 'schedule' line"))
    }

    @Test func storageLatencyIsPrintedAndCompiled() throws {
        let slow = try #require(parse("storage latency 2s\nat 0s launch all\n").scenario)
        #expect(slow.storageLatency == 2_000)
        #expect(ScenarioPrinter.print(slow).contains("\nstorage latency 2s\n"))
        #expect(try ScenarioCompiler.compile(slow).setup.sdk.storageLatencyMaxMs == 2_000)
        let longest = try #require(parse("storage latency 65535ms\n").scenario)
        #expect(try ScenarioCompiler.compile(longest).setup.sdk.storageLatencyMaxMs == UInt16.max)
        let none = try #require(parse("at 0s launch all\n").scenario)
        #expect(none.storageLatency == 0 && !ScenarioPrinter.print(none).contains("storage"))
        #expect(try ScenarioCompiler.compile(none).setup.sdk.storageLatencyMaxMs == 0)
    }

    @Test func badStorageLinesAreLocated() {
        #expect(parse("storage latency 65536ms\n").errors == """
        t.scenario:7:17: error: storage latency '1m5s536ms' is too long
        storage latency 65536ms
                        ^
        hint: at most 1m5s535ms: a write that takes longer is a failing disk, not a slow one

        """)
        #expect(parse("storage latency 0ms\n").errors.contains("t.scenario:7:17: error: storage latency must be more than 0"))
        #expect(parse("storage 20ms\n").errors.contains("t.scenario:7:9: error: expected 'latency'"))
        #expect(parse("storage latency\n").errors.contains("expected storage latency"))
        #expect(parse("storage latency 20ms\nstorage latency 5ms\n").errors.contains("t.scenario:8:1: error: duplicate 'storage' line"))
    }
}
