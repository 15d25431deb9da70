import Foundation

/// Everything the SDK keeps on the phone, in one blob, written whole after every change
/// (one write is atomic, so the disk never holds half a change).
public struct Ledger: Codable, Equatable, Sendable {
    /// The blob's key in the `BlobPort`.
    public static let key = "lumen.ledger"

    /// The enrolled device's id, or nil.
    public var deviceID: UInt64?
    /// Device ids whose server record a reset still has to delete, oldest first.
    public var owedUnenroll: [UInt64] = []
    /// Photos indexed: the index holds photos `0..<indexed` (the library only grows).
    public var indexed: UInt32 = 0
    public var hasModels = false
    public var hasPlaces = false
    /// Access stopped: the SDK is `.failed(.accessRevoked)`.
    public var revoked = false
    /// The server time of the refusal that stopped access.
    public var revokedSince: UInt64?
    /// The data was wiped after 30 days of stopped access.
    public var wiped = false
    /// The server time of the newest refusal that stopped access: only a 200 newer than it unlocks.
    public var stopVerdictAt: UInt64?
    /// The newest server time of a verdict the SDK acted on.
    public var watermark: UInt64?
    /// The phone's time when a key check was last answered with a verdict.
    public var lastCheckAt: UInt64?
    /// The phone's calendar clock then (SPEC P2: D1 is kept by the phone's clock too).
    public var lastCheckWallMs: Int64?
    /// Run reports waiting for upload, by id.
    public var reports: [UInt32] = []
    public var nextReport: UInt32 = 1

    public init() {}

    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(self)
    }

    public static func decode(_ data: Data) -> Ledger? { try? JSONDecoder().decode(Ledger.self, from: data) }
}
