/// A 128-bit digest of a value's contents, by reflection: what `Explorer` keeps of each
/// world state it has searched from, to prune a path that reaches one again.
///
/// It walks `Mirror` children depth first: integers and booleans by their bits, strings by
/// their bytes, enum cases by name and payload, structs, tuples and arrays by their
/// members in order. It is the same in every process (no `Hasher` seed) and reads no
/// addresses: a class instance or raw pointer met on the way is counted in
/// `references` and not followed (the parts `World.stateParts()` and
/// `InvariantChecker.stateParts()` list hold none; a test keeps it so). Dictionaries and
/// sets are not expected either (their order is not canonical) and are refused the same way.
public struct StateDigest: Hashable, Sendable, CustomStringConvertible {
    public private(set) var high: UInt64 = 0x6A09_E667_F3BC_C908
    public private(set) var low: UInt64 = 0xBB67_AE85_84CA_A73B
    /// Class instances, raw pointers, dictionaries and sets met and not followed.
    public private(set) var references = 0
    /// Words mixed in so far (the digest's input size, for tests and tuning).
    public private(set) var words = 0

    /// An empty digest.
    public init() {}

    /// Bytes a digest takes in a state store, with the store's own overhead: 16 for the
    /// digest, 16 more for the hash table's slack and the depth kept beside it.
    public static let storedBytes: UInt64 = 32

    /// Mixes one word in (two independent multiply-rotate lanes).
    public mutating func add(_ word: UInt64) {
        words &+= 1
        high = (high ^ word) &* 0x9E37_79B9_7F4A_7C15
        high = (high << 29) | (high >> 35)
        low = (low ^ (word &+ 0x632B_E59B_D9B4_E019)) &* 0xD6E8_FEB8_6659_FD93
        low = (low << 31) | (low >> 33)
    }

    /// Mixes a string in: its length, then its UTF-8 bytes.
    public mutating func add(_ text: String) {
        add(UInt64(text.utf8.count) | 0x5300_0000_0000_0000)
        var word: UInt64 = 0, n = 0
        for b in text.utf8 {
            word = word << 8 | UInt64(b); n += 1
            if n == 8 { add(word); word = 0; n = 0 }
        }
        if n > 0 { add(word) }
    }

    /// Mixes in `value`'s contents, by reflection (see the type's note).
    public mutating func add(any value: Any) {
        // One existential cast for every integer type: a cast is a runtime call, and
        // trying each type in turn made the casts most of a digest's cost.
        if let v = value as? any BinaryInteger { add(UInt64(truncatingIfNeeded: v)); return }
        if let v = value as? Bool { add(v ? 0xB1 : 0xB0); return }
        if let v = value as? String { add(v); return }
        if let v = value as? Double { add(v.bitPattern); return }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .class?, .dictionary?, .set?:
            references += 1
            return
        case .enum?:
            // A case without payload has no children: its name is its description.
            if let payload = mirror.children.first {
                add(payload.label ?? "")
                add(any: payload.value)
            } else {
                // A case without payload is its tag: a byte or two (its description, the
                // case name, costs a call into the runtime that took a fifth of a digest).
                func tag<T>(_ v: T) -> UInt64 {
                    withUnsafeBytes(of: v) { b in b.reduce(UInt64(b.count)) { $0 << 8 | UInt64($1) } }
                }
                add(_openExistential(value, do: tag) | 0xE000_0000_0000_0000)
            }
            return
        case .optional?:
            if let wrapped = mirror.children.first { add(0x0F); add(any: wrapped.value) } else { add(0x0E) }
            return
        default:
            break
        }
        let typeName = String(describing: type(of: value))
        if typeName.hasPrefix("Unsafe") || typeName.hasPrefix("OpaquePointer") {
            references += 1
            return
        }
        if mirror.displayStyle == .collection { add(UInt64(mirror.children.count) | 0xC000_0000_0000_0000) }
        for child in mirror.children { add(any: child.value) }
    }

    /// Mixes in labelled parts, label first.
    public mutating func add(parts: [(label: String, value: Any)]) {
        for p in parts { add(p.label); add(any: p.value) }
    }

    /// 32 hex digits.
    public var description: String {
        func hex(_ v: UInt64) -> String { let s = String(v, radix: 16); return String(repeating: "0", count: 16 - s.count) + s }
        return hex(high) + hex(low)
    }

    /// Equal when both lanes are (the reference count takes no part).
    public static func == (a: StateDigest, b: StateDigest) -> Bool { a.high == b.high && a.low == b.low }
    /// Hashes both lanes.
    public func hash(into hasher: inout Hasher) { hasher.combine(high); hasher.combine(low) }
}
