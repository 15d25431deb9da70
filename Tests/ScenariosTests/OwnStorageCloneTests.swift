import Testing
import SimKit
@testable import ScenarioLanguage
@testable import Scenarios

/// A clone group that copies credentials (S6) writes the genuine device's credential onto
/// the clone's disk: a write the SDK never made. A core that keeps its own storage shape
/// (`SDKCore.takesCopiedCredentials == false`: an async SDK seen through a read-only
/// mapping of its files) cannot be handed it, so the world writes none: its clones launch
/// with the copied key alone. Before, the clone's disk said it held a credential its SDK
/// never saw, and D10 owed uploads from it (a reports-not-lost false alarm on BlobSDK).
@Suite("World: clones of a core with its own storage")
struct OwnStorageCloneTests {
    struct OwnStorageSDK: SDKCore {
        var core = ReferenceSDK()
        init() {}
        static var takesCopiedCredentials: Bool { false }
        mutating func handle(_ input: SDKInput, now: SimTime, context: SDKContext, config: SDKConfig, disk: LocalData,
                             effects: inout EffectBuffer) {
            core.handle(input, now: now, context: context, config: config, disk: disk, effects: &effects)
        }
    }

    static let source = """
    scenario "clones copy credentials"
    seed 233
    duration 1d
    sdk reference

    account acme
    app photos account acme key rk_live_a
    devices 2 app photos
    clones 2 app photos copying photos

    at 0s launch photos
    at 1h launch photos-clones

    """

    static func copiedCredentials<SDK: SDKCore>(_ sdk: SDK.Type) throws -> Int {
        let parsed = ScenarioParser.parse(Self.source, file: "clones.scenario")
        let scenario = try #require(parsed.scenario, "\(parsed.rendered)")
        let compiled = try ScenarioCompiler.compile(scenario)
        var world = World<SDK, TraceRecorder>(setup: compiled.setup, observer: TraceRecorder())
        world.run()
        // The clones are devices 2 and 3; the genuine ones never write onto them.
        return world.observer.records.filter { r in
            guard r.device >= 2, case .store(.setCredential) = r.event else { return false }
            return true
        }.count
    }

    @Test("the reference's clones get the copied credential; a core with its own storage gets none")
    func copiedCredentialOnlyWhereItCanLand() throws {
        #expect(try Self.copiedCredentials(ReferenceSDK.self) == 2)
        #expect(try Self.copiedCredentials(OwnStorageSDK.self) == 0)
    }
}
