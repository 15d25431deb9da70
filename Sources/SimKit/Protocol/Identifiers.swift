/// Small integer identifiers, interned when a world is built, so that device state,
/// requests and trace records stay compact and hash-free.

/// A developer account, an index into the world's account table.
public typealias AccountID = UInt16
/// An app in the dashboard, an index into the world's app table.
public typealias AppID = UInt16
/// A publishable key string (`rk_live_…`), an index into the world's key-name table.
/// Every key named anywhere in a scenario is interned, including keys that the server
/// has never issued (those are answered `app_key_invalid`).
public typealias KeyID = UInt16
/// A device in the world, counting from 0; clones are devices too.
public typealias DeviceIndex = UInt32

/// A device credential issued by the server at registration. It names the device record
/// (`device`) and which registration of it this is (`generation`, from 1), so a credential
/// from before a reset or a forget is recognised as unknown. `none` is "no credential".
public struct Credential: Hashable, Sendable, CustomStringConvertible {
    public var device: DeviceIndex
    public var generation: UInt32
    @inlinable public init(device: DeviceIndex, generation: UInt32) {
        self.device = device; self.generation = generation
    }
    /// Computed, not a stored global: another module (the world is specialised in its
    /// caller's) reads a global through an accessor call, and this is read on hot paths.
    @inlinable public static var none: Credential { Credential(device: .max, generation: 0) }
    @inlinable public var isNone: Bool { generation == 0 }
    public var description: String { isNone ? "none" : "cred(\(device).\(generation))" }
}
