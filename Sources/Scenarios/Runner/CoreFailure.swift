import SimKit
import ServerWire

/// A seed's verdict that no invariant gives, from one of its cores: a server on the wire
/// that left the protocol (`WireFailure`: `server-protocol`, `server-unresponsive`,
/// `server-exited`), or an SDK core's own (`SDKVerdict`: an async SDK's
/// `escape-foreign-thread`, `escape-unsimulated-clock`, `step-never-settles`,
/// `call-never-returns`). Its name is the seed's one broken name, never a pass; what the
/// checkers saw after it is not kept (the world went on without that core).
public struct CoreFailure: Error, Equatable, Sendable {
    /// The verdict's name, as `broken` lists it.
    public var name: String
    /// One line: the name and what went wrong.
    public var headline: String
    /// The headline and its evidence, each line ending in a newline.
    public var text: String
    /// The server's failure, when it is one.
    public var wire: WireFailure?

    /// The server's (the environment's, not the scenario's): a fuzz campaign does not
    /// shrink it and counts it for `--max-server-failures`. An SDK core's verdict is a
    /// property of the scenario: shrinking keeps a candidate when the same verdict recurs.
    public var isServer: Bool { wire != nil }

    package init(_ failure: WireFailure) {
        name = failure.kind.rawValue; headline = failure.headline; text = failure.text; wire = failure
    }

    package init(_ verdict: SDKVerdict) {
        name = verdict.name; headline = "\(verdict.name): \(verdict.report)"; text = headline + "\n"; wire = nil
    }

    /// The failure of the world that just ran on `sdk` and `server`: the server's first
    /// (after it, the SDK saw only 5xx), else the SDK core's own verdict.
    package static func of<SDK: SDKCore, Server: ServerCore>(_ sdk: SDK.Type, _ server: Server) -> CoreFailure? {
        if let failure = WireFailure.of(server) { return CoreFailure(failure) }
        if let verdict = SDK.verdict { return CoreFailure(verdict) }
        return nil
    }

    /// `of(_:_:)` for a finished world.
    package static func of<SDK: SDKCore, Server: ServerCore, Observer: TraceObserver>(_ world: SimWorld<SDK, Server, Observer>) -> CoreFailure? {
        of(SDK.self, world.server)
    }
}

extension WireFailure {
    /// The failure of `server` when it is a server on the wire that left the protocol.
    package static func of<Server: ServerCore>(_ server: Server) -> WireFailure? {
        (server as? WireServer)?.failure
    }
}
