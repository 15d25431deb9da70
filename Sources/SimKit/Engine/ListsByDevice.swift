/// A short list of values per device, oldest first, for state that few devices have (the
/// earlier records a server keeps, S8): one array of nodes chained by index, a head per
/// device allocated at the first value, and freed nodes reused. A value type with no
/// hashing, so its order is the same in every process and a state digest can read it;
/// every operation costs the length of one device's list, never the others'.
public struct ListsByDevice<Element: Sendable & Equatable>: Sendable, Equatable {
    struct Node: Sendable, Equatable {
        var element: Element
        /// The next node of the same device, plus one; 0 ends the list.
        var next: UInt32
    }
    var nodes: [Node] = []
    /// Per device, its first node plus one (0: none); empty until the first value.
    var heads: [UInt32] = []
    /// The first freed node plus one, chained through `next`.
    var freeHead: UInt32 = 0
    /// Values held, over every device.
    public private(set) var count = 0

    public init() {}

    /// Whether no device has a value: the one test on a path that most calls take.
    @inlinable public var isEmpty: Bool { count == 0 }

    /// Calls `body` with each value of `device`, oldest first.
    public func forEach(of device: DeviceIndex, _ body: (Element) -> Void) {
        guard Int(device) < heads.count else { return }
        var n = heads[Int(device)]
        while n != 0 {
            body(nodes[Int(n - 1)].element)
            n = nodes[Int(n - 1)].next
        }
    }

    /// The first value of `device` that `match` accepts.
    public func first(of device: DeviceIndex, where match: (Element) -> Bool) -> Element? {
        guard Int(device) < heads.count else { return nil }
        var n = heads[Int(device)]
        while n != 0 {
            if match(nodes[Int(n - 1)].element) { return nodes[Int(n - 1)].element }
            n = nodes[Int(n - 1)].next
        }
        return nil
    }

    /// The last value of `device`, if any.
    public func last(of device: DeviceIndex) -> Element? {
        var last: Element?
        forEach(of: device) { last = $0 }
        return last
    }

    /// Appends `element` to the end of `device`'s list.
    public mutating func append(_ element: Element, to device: DeviceIndex) {
        if heads.count <= Int(device) { heads += repeatElement(0, count: Int(device) + 1 - heads.count) }
        let node: UInt32
        if freeHead != 0 {
            node = freeHead
            freeHead = nodes[Int(node - 1)].next
            nodes[Int(node - 1)] = Node(element: element, next: 0)
        } else {
            precondition(nodes.count < Int(UInt32.max - 1), "ListsByDevice: node indices exhausted")
            nodes.append(Node(element: element, next: 0))
            node = UInt32(nodes.count)
        }
        count += 1
        guard heads[Int(device)] != 0 else { heads[Int(device)] = node; return }
        var n = heads[Int(device)]
        while nodes[Int(n - 1)].next != 0 { n = nodes[Int(n - 1)].next }
        nodes[Int(n - 1)].next = node
    }

    /// Changes the values of `device` that `match` accepts, in place.
    public mutating func update(of device: DeviceIndex, where match: (Element) -> Bool, _ change: (inout Element) -> Void) {
        guard Int(device) < heads.count else { return }
        var n = heads[Int(device)]
        while n != 0 {
            if match(nodes[Int(n - 1)].element) { change(&nodes[Int(n - 1)].element) }
            n = nodes[Int(n - 1)].next
        }
    }

    /// Removes the values of `device` that `match` accepts (every one by default).
    public mutating func removeAll(of device: DeviceIndex, where match: (Element) -> Bool = { _ in true }) {
        guard Int(device) < heads.count else { return }
        var previous: UInt32 = 0
        var n = heads[Int(device)]
        while n != 0 {
            let next = nodes[Int(n - 1)].next
            if match(nodes[Int(n - 1)].element) {
                if previous == 0 { heads[Int(device)] = next } else { nodes[Int(previous - 1)].next = next }
                nodes[Int(n - 1)].next = freeHead
                freeHead = n
                count -= 1
            } else {
                previous = n
            }
            n = next
        }
    }
}
