import Testing
@testable import SimKit
@testable import ScenarioLanguage
@testable import Scenarios
@testable import ScenarioSearch

/// The faults' registry (issue 47): every kind in `Faults.kinds` is reached by the language,
/// the runner and the search tools through the table alone, so these hold for any kind a
/// file adds, with no test to write for it: its keyword, end code and explore name are its
/// own, and whatever its draws and changes make prints, parses back equal, validates and
/// compiles.
@Suite("Faults: the registry")
struct FaultKindsTests {
    @Test("keywords, end codes and explore names are each a kind's own; kinds that share a first word have a second")
    func namesAreOwn() {
        let kinds = Faults.kinds
        var keywords: [[String]] = [], codes: [UInt8] = [], names: [String] = []
        for kind in kinds {
            #expect(!keywords.contains(kind.keyword), "\(kind.keyword) twice")
            #expect((1...2).contains(kind.keyword.count))
            let sharing = kinds.filter { $0.keyword[0] == kind.keyword[0] }
            if sharing.count > 1 { #expect(sharing.allSatisfy { $0.keyword.count == 2 }, "\(kind.keyword)") }
            keywords.append(kind.keyword)
            #expect(!codes.contains(kind.endCode), "end code \(kind.endCode) twice")
            codes.append(kind.endCode)
            if let name = kind.exploreName {
                #expect(!names.contains(name), "explore name \(name) twice")
                names.append(name)
            }
            #expect(Faults.recordOwners.contains { ObjectIdentifier($0) == ObjectIdentifier(kind) })
        }
        #expect(ExploreFault.allCases.map(\.rawValue) == names)
    }

    /// A script with one group of three devices and `line` at 1h.
    static func file(_ line: String) -> String {
        """
        account acme
        app photos account acme key rk_live_a
        devices 3 app photos
        at 1h \(line)
        at 2d expect all photos idle
        """
    }

    /// Parses `statement`'s text in a file, checks the file, and compiles it.
    static func roundTrip(_ statement: AnyFaultStatement, _ comment: Comment) throws {
        let parsed = ScenarioParser.parse(file(statement.base.text), file: "kind.scenario")
        #expect(!parsed.hasErrors, "\(comment): \(parsed.rendered)")
        let s = try #require(parsed.scenario, comment)
        #expect(s.timeline[0].body == .action(.fault(statement)), comment)
        #expect(ScenarioPrinter.action(s.timeline[0].body.actionOrNil!) == statement.base.text)
        _ = try ScenarioCompiler.compile(s)
    }

    @Test("what every kind draws and changes prints, parses back equal, validates and compiles")
    func drawsRoundTrip() throws {
        for kind in Faults.kinds {
            for seed in 0..<40 as Range<UInt64> {
                var draws = RecordingDraws(r: SimRandom(seed: seed))
                kind.draw(at: Ms.hour, &draws)
                #expect(!draws.statements.isEmpty, "\(kind) drew nothing")
                for statement in draws.statements {
                    try Self.roundTrip(statement, "\(kind), seed \(seed)")
                    var change = RecordingChange(r: SimRandom(seed: seed &+ 1000))
                    try Self.roundTrip(AnyFaultStatement(statement.base.mutated(&change)), "\(kind) changed, seed \(seed)")
                    if let devices = statement.base.selectedDevices {
                        #expect(statement.base.selecting(devices).isEqual(to: statement.base))
                    }
                }
            }
            let alphabet = FaultAlphabet(devices: [.device(group: "photos", index: 1), .device(group: "photos", index: 2)],
                                         windowMs: 2 * Ms.minute, shortWindowMs: Ms.second, delayMs: 10 * Ms.second)
            for f in kind.explored(alphabet) { try Self.roundTrip(AnyFaultStatement(f), "\(kind) explored") }
        }
    }
}

/// A generator's draws for one statement: a three-device main group, no traffic written.
struct RecordingDraws: FaultDraws {
    var r: SimRandom
    var statements: [AnyFaultStatement] = []
    mutating func below(_ n: UInt64) -> UInt64 { r.below(n) }
    mutating func chance(_ k: UInt64, outOf n: UInt64) -> Bool { r.chance(k, outOf: n) }
    mutating func someDevices() -> DeviceSelector {
        [.all, .group("photos"), .share(Share(percent: 50), of: "photos"), .device(group: "photos", index: 1 + r.below(3))][Int(r.below(4))]
    }
    mutating func someShare() -> Share { Share(percent: [10, 25, 50, 75, 100][Int(r.below(5))]) }
    mutating func faultLength() -> SimTime { [Ms.minute, Ms.hour, 6 * Ms.hour, 2 * Ms.day, 40 * Ms.day][Int(r.below(5))] }
    var mainGroup: (name: String, count: UInt64) { ("photos", 3) }
    mutating func add(_ statement: some FaultKind, at t: SimTime) { statements.append(AnyFaultStatement(statement)) }
    mutating func poke(_ t: SimTime) {}
    mutating func everyone(_ action: SimKit.PersonAction, at t: SimTime) {}
    mutating func mainAppAccess(stopped: Bool, at t: SimTime) {}
}

/// A guided mutator's draws for one change.
struct RecordingChange: FaultMutations {
    var r: SimRandom
    var lengthMs: SimTime { Ms.hour }
    var share: Share { Share(percent: 10) }
    mutating func below(_ n: UInt64) -> UInt64 { r.below(n) }
    mutating func chance(_ k: UInt64, outOf n: UInt64) -> Bool { r.chance(k, outOf: n) }
    mutating func someDevices() -> DeviceSelector { .device(group: "photos", index: 1 + r.below(3)) }
}

extension StatementBody {
    /// The action, or nil for an expectation.
    var actionOrNil: Action? { if case .action(let a) = self { a } else { nil } }
}
