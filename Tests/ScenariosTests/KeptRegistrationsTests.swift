import Foundation
import Testing
import SimKit
import Invariants
import Scenarios
import SimKitTesting
import SimKitCommand

/// A server that lets a new registration supersede the device's earlier ones, as SimKit's
/// reference did before issue 46, part 4: after a served register it deletes every earlier
/// record of the device, so it never holds more than one and lists none. S8 allows it.
struct SupersedingServer: WrapsReference {
    var inner: ServerModel
    init(setup: ServerSetup) { inner = ServerModel(setup: setup) }
    mutating func handle(_ request: Request, now: SimTime) -> ServerReply {
        let reply = inner.handle(request, now: now)
        if request.kind == .register, reply.answer == .ok {
            var earlier: [DeviceRecord] = []
            inner.forEachEarlierRecord(of: request.device) { earlier.append($0) }
            for r in earlier {   // the install's own delete of each: it holds the assertion
                let credential = Credential(device: request.device, generation: r.generation)
                _ = inner.handle(Request(kind: .reset, key: request.key, credential: credential, device: request.device,
                                         attestedApp: request.attestedApp, build: request.build), now: now)
            }
        }
        return reply
    }
    func forEachEarlierRecord(of device: DeviceIndex, _ body: (DeviceRecord) -> Void) {}
}

/// A server that keeps every registration, as the reference does, but says nothing of the
/// earlier ones (it lists none): S8 allows that too.
struct SilentKeepingServer: WrapsReference {
    var inner: ServerModel
    init(setup: ServerSetup) { inner = ServerModel(setup: setup) }
    func forEachEarlierRecord(of device: DeviceIndex, _ body: (DeviceRecord) -> Void) {}
}

/// A keeping server with an S8 bug: a reset naming one of the device's earlier records is
/// answered 200 and deletes nothing, and the server goes on listing that record.
struct KeepsEarlierOnResetServer: WrapsReference {
    var inner: ServerModel
    init(setup: ServerSetup) { inner = ServerModel(setup: setup) }
    mutating func handle(_ request: Request, now: SimTime) -> ServerReply {
        if request.kind == .reset, !request.credential.isNone {
            var named = false
            inner.forEachEarlierRecord(of: request.credential.device) { named = named || $0.generation == request.credential.generation }
            if named { return ServerReply(.ok, servedAt: now) }   // the bug
        }
        return inner.handle(request, now: now)
    }
}

/// Issue 46, part 4: every registration a server keeps is server state and the checkers'
/// truth. A registration supersedes nothing in the reference server; a record a reset
/// leaves behind (one it did not name) is a violation of D7; servers that supersede, or
/// keep without saying, pass as S8 allows.
@Suite struct KeptRegistrationsTests {
    static let cores = SDKCores([:], servers: ["superseding": SupersedingServer.self, "silent-keeping": SilentKeepingServer.self,
                                              "keeps-earlier-on-reset": KeepsEarlierOnResetServer.self])

    /// Runs `file` (with `sdk`, on `server`) and returns its exit status and text trace.
    static func traced(_ file: String, sdk: String? = nil, server: String? = nil) throws -> (status: Int32, trace: [Substring]) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simkit-kept-\(ProcessInfo.processInfo.processIdentifier)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let trace = dir + "/\(UUID().uuidString).trace"
        var args = ["run", "--quiet", "--trace", trace]
        if let sdk { args += ["--sdk", sdk] }
        if let server { args += ["--server", server] }
        let status = SimKitCommand.run(args + [file], cores: cores)
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        return (status, text.split(separator: "\n"))
    }

    @Test func aDeleteOwedAcrossARegistrationDeletesTheOldRecordAndListsIt() throws {
        let (status, trace) = try Self.traced("scenarios/reset-owed-across-a-registration.scenario")
        #expect(status == 0)
        // The registration made while the delete is owed is served beside generation 1 …
        let held = trace.indices.filter { trace[$0].hasSuffix("the server still holds the device's registration 1") }
        #expect(held.count == 1, "\(trace.filter { $0.contains("holds") })")
        if let h = held.first {
            #expect(trace[h + 1].contains("server answered register #6: 200"), "\(trace[h + 1])")
        }
        // … and the retry names generation 1, which goes; no record is listed after it.
        #expect(trace.contains { $0.contains("sent reset #9 key #0 credential cred(0.1)") })
        #expect(!trace.contains { $0.contains("still holds the device's registration 2") })
    }

    @Test func aResetRetryNamingTheNewRegistrationLeavesTheOldOneBehind() throws {
        let file = "scenarios/mutant-reset-retry-current-credential.scenario"
        let mutant = try SimKitTest.scenario(file: file)
        #expect(mutant.passed, "\(mutant)")   // it expects the violation
        // Besides the retry's own name, the record it left behind is the violation: the
        // server still holds registration 1 when D7's bound has passed.
        let left = mutant.violations.filter { $0.invariant == .resetDeletesEverything && $0.message.contains("registration 1, left behind beside the newer") }
        #expect(left.count == 1, "\(mutant.violations.map(\.message))")
        // A server that lets the new registration supersede the old record has none to leave.
        let superseding = try SimKitTest.scenario(file: file, server: .custom("superseding"), cores: Self.cores)
        #expect(!superseding.violations.contains { $0.message.contains("left behind") }, "\(superseding.violations.map(\.message))")
        #expect(superseding.broken == [.resetDeletesEverything])   // the retry's name alone
    }

    @Test func aServerThatKeepsANamedEarlierRecordIsCaught() throws {
        let (status, _) = try Self.traced("scenarios/reset-owed-across-a-registration.scenario", server: "custom:keeps-earlier-on-reset")
        #expect(status == 1)
        let run = try SimKitTest.scenario(file: "scenarios/reset-owed-across-a-registration.scenario",
                                          server: .custom("keeps-earlier-on-reset"), cores: Self.cores)
        #expect(run.violations.contains { $0.invariant == .resetDeletesEverything && $0.message.contains("reset of registration 1 200 but kept its record") },
                "\(run.violations.map(\.message))")
    }

    /// S8 leaves the choice to the server: one that supersedes and one that keeps without
    /// saying pass what the reference passes, the scenario above and a fuzz sweep.
    @Test(arguments: ["superseding", "silent-keeping"])
    func serversThatSupersedeOrKeepUnsaidPass(server: String) throws {
        let file = try SimKitTest.scenario(file: "scenarios/reset-owed-across-a-registration.scenario", server: .custom(server), cores: Self.cores)
        #expect(file.passed, "\(file)")
        for seed in 0..<60 as Range<UInt64> {
            let run = SimKitTest.seed(seed, server: .custom(server), cores: Self.cores)
            #expect(run.passed, "\(run)")
        }
    }
}
