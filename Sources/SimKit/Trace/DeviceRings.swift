/// The last few trace records of every device, for failure reports: one flat array of
/// `depth` slots a device, written round-robin, so memory is fixed up front.
///
/// Each device has one 32-bit word: the slot written next (low 16 bits) and how many
/// slots are filled (high 16 bits), so a push needs no division.
public struct DeviceRings: Sendable {
    public let depth: Int
    @usableFromInline var slots: [TraceRecord]
    @usableFromInline var cursors: [UInt32]

    /// Rings for `devices` devices, `depth` records each (0 keeps nothing).
    public init(devices: Int, depth: Int) {
        precondition(depth >= 0 && depth <= 256, "ring depth \(depth) is out of 0...256")
        self.depth = depth
        let placeholder = TraceRecord(time: 0, device: 0, event: .stepEnd)
        slots = Array(repeating: placeholder, count: depth == 0 ? 0 : devices * depth)
        cursors = Array(repeating: 0, count: depth == 0 ? 0 : devices)
    }

    /// Keeps `record` in its device's ring; world records are not kept.
    /// - Complexity: O(1).
    @inlinable
    public mutating func push(_ record: TraceRecord) {
        let d = Int(record.device)
        guard d < cursors.count else { return }   // also when depth is 0 (no cursors)
        let c = cursors[d]
        let next = c & 0xFFFF
        slots[d * depth + Int(next)] = record
        let filled = c >> 16
        let wrapped: UInt32 = next + 1 == UInt32(depth) ? 0 : next + 1
        cursors[d] = (filled < UInt32(depth) ? filled + 1 : filled) << 16 | wrapped
    }

    /// The device's kept records, oldest first.
    /// - Complexity: O(depth).
    public func last(of device: DeviceIndex) -> [TraceRecord] {
        guard Int(device) < cursors.count else { return [] }
        let d = Int(device)
        let next = Int(cursors[d] & 0xFFFF), filled = Int(cursors[d] >> 16)
        let oldest = filled < depth ? 0 : next
        return (0..<filled).map { slots[d * depth + (oldest + $0) % depth] }
    }
}
