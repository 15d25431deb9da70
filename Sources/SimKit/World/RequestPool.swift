/// Requests on the wire, in a pool of reusable slots so that a request costs no
/// allocation: an event carries only its slot number.
struct RequestPool: Sendable {
    struct Slot: Sendable {
        var request: Request
        var reply = ServerReply(.ok)
        var sentAt: SimTime
        var id: UInt32
        var epoch: UInt16
        /// The timeout fault picked this request: its response comes only after the timeout.
        var late = false
    }

    private(set) var slots: [Slot] = []
    private var free: [UInt32] = []
    /// The most requests on the wire at once (a runaway is a bug).
    static let limit = 1 << 26

    /// Room for `count` requests without growing: a burst (every device launching at once)
    /// then fills reserved pages instead of doubling the array, whose copy would double
    /// the resident peak. Reserved pages cost nothing until written.
    mutating func reserve(_ count: Int) {
        slots.reserveCapacity(min(count, RequestPool.limit))
        free.reserveCapacity(min(count, RequestPool.limit))
    }

    mutating func add(_ slot: Slot) -> UInt32 {
        if let i = free.popLast() { slots[Int(i)] = slot; return i }
        precondition(slots.count < RequestPool.limit, "more than \(RequestPool.limit) requests on the wire")
        slots.append(slot)
        return UInt32(slots.count - 1)
    }

    subscript(i: UInt32) -> Slot {
        get { slots[Int(i)] }
        set { slots[Int(i)] = newValue }
    }

    /// Records the server's answer to request `i` (one field, not the whole slot).
    mutating func setReply(_ reply: ServerReply, of i: UInt32) { slots[Int(i)].reply = reply }

    mutating func release(_ i: UInt32) { free.append(i) }

    /// Requests on the wire now.
    var inUse: Int { slots.count - free.count }
}
