/// The last few trace records of every device, for failure reports: one flat array of
/// `depth` slots a device, written round-robin, so memory is fixed up front.
public struct DeviceRings: Sendable {
    public let depth: Int
    @usableFromInline var slots: [TraceRecord]
    @usableFromInline var written: [UInt32]

    /// Rings for `devices` devices, `depth` records each (0 keeps nothing).
    public init(devices: Int, depth: Int) {
        precondition(depth >= 0 && depth <= 256, "ring depth \(depth) is out of 0...256")
        self.depth = depth
        let placeholder = TraceRecord(time: 0, device: 0, event: .stepEnd)
        slots = Array(repeating: placeholder, count: depth == 0 ? 0 : devices * depth)
        written = Array(repeating: 0, count: depth == 0 ? 0 : devices)
    }

    /// Keeps `record` in its device's ring; world records are not kept.
    /// - Complexity: O(1).
    @inlinable
    public mutating func push(_ record: TraceRecord) {
        guard depth > 0, Int(record.device) < written.count else { return }
        let d = Int(record.device)
        let n = Int(written[d])
        slots[d * depth + n % depth] = record
        written[d] = UInt32(truncatingIfNeeded: n &+ 1)
    }

    /// The device's kept records, oldest first.
    public func last(of device: DeviceIndex) -> [TraceRecord] {
        guard depth > 0, Int(device) < written.count else { return [] }
        let d = Int(device), n = Int(written[d])
        let count = min(n, depth)
        return (0..<count).map { slots[d * depth + (n - count + $0) % depth] }
    }
}
