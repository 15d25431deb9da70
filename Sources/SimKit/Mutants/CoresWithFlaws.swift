/// An SDK core that can run as a mutant, with deliberate bugs (`SDKFlaws`): the reference.
/// The world makes each of its processes with the setup's `sdkFlaws` when there are any.
@usableFromInline protocol SDKCoreWithFlaws: SDKCore {
    init(flaws: SDKFlaws)
}

/// A server core that can run as a mutant (`ServerFlaws`): the reference. The world builds
/// it with the setup's `serverFlaws` when there are any.
@usableFromInline protocol ServerCoreWithFlaws: ServerCore {
    init(setup: ServerSetup, flaws: ServerFlaws)
}

extension ReferenceSDK: SDKCoreWithFlaws {}
extension ServerModel: ServerCoreWithFlaws {}

extension SimWorld {
    /// A fresh app process of `SDK` (a cold launch): `SDK()`, or the mutant's when there
    /// are `flaws` and the core can run with them.
    @inlinable
    static func freshProcess(flaws: SDKFlaws) -> SDK {
        guard !flaws.isEmpty, let core = SDK.self as? any SDKCoreWithFlaws.Type else { return SDK() }
        return core.init(flaws: flaws) as! SDK
    }

    /// The server at time 0 (`ServerCore.init(setup:)`), or the mutant's when the setup
    /// names flaws and the core can run with them.
    @inlinable
    static func freshServer(_ serverSetup: ServerSetup, _ setup: WorldSetup) -> Server {
        guard !setup.serverFlaws.isEmpty, let core = Server.self as? any ServerCoreWithFlaws.Type else {
            return Server(setup: serverSetup)
        }
        return core.init(setup: serverSetup, flaws: setup.serverFlaws) as! Server
    }
}
