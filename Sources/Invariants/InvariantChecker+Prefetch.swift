import SimKit

extension InvariantChecker {
    /// A hint from the engine: `device`'s records come next; starts loading its truth and
    /// its ring into cache. Changes nothing.
    @inlinable
    public func prefetch(device: DeviceIndex) {
        devices.prefetch(Int(device))
        rings.prefetch(device: device)
    }
}
