@_spi(Reflection) import Swift
import Synchronization

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
/// An optional is marked (0x0F and its value, 0x0E for nil). How each type is read is
/// worked out once per type and process (`Kind`), and a struct's integer and Bool members
/// are read from its bytes; the words are those of the plain walk (`addPlain`, tested).
@usableFromInline package struct StateDigest: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline package private(set) var high: UInt64 = 0x6A09_E667_F3BC_C908
    @usableFromInline package private(set) var low: UInt64 = 0xBB67_AE85_84CA_A73B
    /// Class instances, raw pointers, dictionaries and sets met and not followed.
    @usableFromInline package private(set) var references = 0
    /// Words mixed in so far (the digest's input size, for tests and tuning).
    @usableFromInline package private(set) var words = 0

    /// An empty digest.
    @usableFromInline package init() {}

    /// Bytes a digest takes in a state store, with the store's own overhead: 16 for the
    /// digest, 16 more for the hash table's slack and the depth kept beside it.
    @usableFromInline package static let storedBytes: UInt64 = 32

    /// Mixes one word in (two independent multiply-rotate lanes).
    @usableFromInline package mutating func add(_ word: UInt64) {
        words &+= 1
        high = (high ^ word) &* 0x9E37_79B9_7F4A_7C15
        high = (high << 29) | (high >> 35)
        low = (low ^ (word &+ 0x632B_E59B_D9B4_E019)) &* 0xD6E8_FEB8_6659_FD93
        low = (low << 31) | (low >> 33)
    }

    /// Mixes a string in: its length, then its UTF-8 bytes.
    @usableFromInline package mutating func add(_ text: String) {
        add(UInt64(text.utf8.count) | 0x5300_0000_0000_0000)
        var word: UInt64 = 0, n = 0
        for b in text.utf8 {
            word = word << 8 | UInt64(b); n += 1
            if n == 8 { add(word); word = 0; n = 0 }
        }
        if n > 0 { add(word) }
    }

    /// Mixes in `value`'s contents, by reflection (see the type's note).
    @usableFromInline package mutating func add(any value: Any) {
        var kinds = KindCache()
        add(any: value, &kinds)
        kinds.save()
    }

    /// Mixes in labelled parts, label first.
    @usableFromInline package mutating func add(parts: [(label: String, value: Any)]) {
        var kinds = KindCache()
        for p in parts { add(p.label); add(any: p.value, &kinds) }
        kinds.save()
    }

    /// How a type is digested, worked out once per type and digest (`KindCache`): the
    /// dynamic casts and the type's name that decide it would be most of a digest's cost
    /// if asked again for every value. The words mixed in are the same either way.
    enum Kind: Sendable {
        /// A fixed-width integer of `bytes` bytes (at most 8), sign-extended when `signed`:
        /// the word is `UInt64(truncatingIfNeeded:)` of it.
        case integer(signed: Bool, bytes: Int)
        case bool, string, double
        /// A class instance, raw pointer, dictionary or set: counted, not followed.
        case reference
        case enumeration, optional, collection
        /// A struct or tuple: its members in order.
        case aggregate
        /// A struct or tuple whose stored members the runtime lists (`_forEachField`): read
        /// from the value's bytes at their offsets, in the order `Mirror` gives them, so
        /// that an integer or Bool member costs a load, not a `Mirror` child (whose type
        /// the runtime looks up by its mangled name each time).
        /// `owner` is the type's identity: a value is read this way only when it is opened
        /// as that type (an element of an `[Any]` opens as `Any`, an existential whose
        /// bytes are not the value's; it is read by `Mirror` instead).
        case fields(owner: ObjectIdentifier, [Field])
    }

    /// An optional type's wrapped type, for `KindCache.plan`.
    protocol OptionalType { static var wrappedType: Any.Type { get } }

    /// A stored member of a struct or tuple: where it is, its type, and how it is read.
    struct Field: @unchecked Sendable {   // determinism: a metatype, read only
        let offset: Int
        let type: Any.Type
        /// `.integer`, `.bool`, or nil: loaded as a value and digested by its own kind.
        let leaf: Kind?
    }

    /// The kinds of the types met, by type identity (only looked up, never iterated, so
    /// its order cannot reach the digest). A digest starts from the kinds every earlier
    /// digest of the process found (`known`) and adds its own when it ends (`save`): an
    /// exploration digests thousands of states of the same few dozen types.
    struct KindCache {
        var kinds: [ObjectIdentifier: Kind]
        var added = false

        init() { kinds = Self.known.withLock { $0 } }

        /// The kinds found so far in this process (tests digest on several threads).
        static let known = Mutex<[ObjectIdentifier: Kind]>([:])

        /// Adds this digest's new kinds to `known`.
        func save() {
            guard added else { return }
            Self.known.withLock { $0.merge(kinds) { old, _ in old } }
        }

        mutating func kind(of value: Any) -> Kind {
            let id = ObjectIdentifier(type(of: value))
            if let k = kinds[id] { return k }
            let k = Self.work(value)
            kinds[id] = k
            added = true
            return k
        }

        /// The plain decision, by casts and reflection.
        static func work(_ value: Any) -> Kind {
            // First: a cast unwraps an optional, so `UInt16?` would pass for an integer.
            if Mirror(reflecting: value).displayStyle == .optional { return .optional }
            if let v = value as? any BinaryInteger {
                func size<T>(_ x: T) -> Int { MemoryLayout<T>.size }
                let bytes = _openExistential(v, do: size)
                if bytes <= 8 { return .integer(signed: type(of: v).isSigned, bytes: bytes) }
            }
            if value is Bool { return .bool }
            if value is String { return .string }
            if value is Double { return .double }
            let mirror = Mirror(reflecting: value)
            switch mirror.displayStyle {
            case .class?, .dictionary?, .set?: return .reference
            case .enum?: return .enumeration
            case .optional?: return .optional
            default: break
            }
            let typeName = String(describing: type(of: value))
            if typeName.hasPrefix("Unsafe") || typeName.hasPrefix("OpaquePointer") { return .reference }
            if mirror.displayStyle == .collection { return .collection }
            if mirror.displayStyle == .struct || mirror.displayStyle == .tuple, let fields = plan(type(of: value)) {
                return .fields(owner: ObjectIdentifier(type(of: value)), fields)
            }
            return .aggregate
        }

        /// The stored members of `type`, or nil when the runtime cannot list them.
        ///
        /// Only members that are values (structs, enums, tuples, optionals of values) are
        /// read from bytes: a member of a class type, an optional of one, an existential or a
        /// function may be stored `weak` or `unowned`, whose bytes are not a strong reference,
        /// so a type with one is read by `Mirror`, which knows how it is stored.
        static func plan(_ type: Any.Type) -> [Field]? {
            var fields: [Field] = []
            var byValue = true
            let listed = _forEachField(of: type, options: []) { _, offset, fieldType, kind in
                switch kind {
                case .struct, .enum, .tuple: break
                case .optional where isValue(wrapped(fieldType)): break
                default: byValue = false; return false
                }
                fields.append(Field(offset: offset, type: fieldType, leaf: leaf(fieldType)))
                return true
            }
            return listed && byValue ? fields : nil
        }

        /// The type an optional type wraps (`type` itself if it is not one).
        static func wrapped(_ type: Any.Type) -> Any.Type {
            (type as? any OptionalType.Type)?.wrappedType ?? type
        }

        /// Whether `type` is surely a value type (not a class, existential or function),
        /// judged without asking the runtime for its members, which crashes on an existential.
        static func isValue(_ type: Any.Type) -> Bool {
            if type is AnyObject.Type { return false }
            if leaf(type) != nil || type == String.self || type == Double.self { return true }
            let name = String(reflecting: type)
            return !(name.hasPrefix("any ") || name.hasPrefix("Swift.Any") || name.hasPrefix("(") || name.contains("->")
                     || name.hasPrefix("__C.") || name.contains(" & "))
        }

        /// How a member of type `type` is read straight from memory, if it can be.
        static func leaf(_ type: Any.Type) -> Kind? {
            if type == Bool.self { return .bool }
            guard let t = type as? any BinaryInteger.Type else { return nil }
            func size<T>(_: T.Type) -> Int { MemoryLayout<T>.size }
            let bytes = _openExistential(t, do: size)
            return bytes <= 8 ? .integer(signed: t.isSigned, bytes: bytes) : nil
        }
    }

    /// The word of an integer of `bytes` bytes (little-endian) at `raw`, as
    /// `UInt64(truncatingIfNeeded:)` makes it.
    static func integerWord(_ raw: UnsafeRawPointer, bytes: Int, signed: Bool) -> UInt64 {
        var w: UInt64 = 0
        for i in 0..<bytes { w |= UInt64(raw.load(fromByteOffset: i, as: UInt8.self)) << (8 * UInt64(i)) }
        if signed, bytes < 8, w >> (8 * UInt64(bytes) - 1) & 1 == 1 { w |= ~0 << (8 * UInt64(bytes)) }
        return w
    }

    /// The first `bytes` bytes of `value`, little-endian, in a word.
    static func bits(of value: Any, bytes: Int) -> UInt64 {
        func read<T>(_ v: T) -> UInt64 {
            withUnsafeBytes(of: v) { b in
                var w: UInt64 = 0
                for i in 0..<min(bytes, b.count) { w |= UInt64(b[i]) << (8 * UInt64(i)) }
                return w
            }
        }
        return _openExistential(value, do: read)
    }

    mutating func add(any value: Any, _ kinds: inout KindCache) {
        switch kinds.kind(of: value) {
        case .integer(let signed, let bytes):
            var w = Self.bits(of: value, bytes: bytes)
            if signed, bytes < 8, w >> (8 * UInt64(bytes) - 1) & 1 == 1 { w |= ~0 << (8 * UInt64(bytes)) }
            add(w)
        case .bool: add(Self.bits(of: value, bytes: 1) & 1 == 1 ? 0xB1 : 0xB0)
        case .string: add(value as! String)
        case .double: add(Self.bits(of: value, bytes: 8))
        case .reference: references += 1
        case .enumeration:
            let mirror = Mirror(reflecting: value)
            // A case without payload has no children: its name is its description.
            if let payload = mirror.children.first {
                add(payload.label ?? "")
                add(any: payload.value, &kinds)
            } else {
                // A case without payload is its tag: a byte or two (its description, the
                // case name, costs a call into the runtime that took a fifth of a digest).
                func tag<T>(_ v: T) -> UInt64 {
                    withUnsafeBytes(of: v) { b in b.reduce(UInt64(b.count)) { $0 << 8 | UInt64($1) } }
                }
                add(_openExistential(value, do: tag) | 0xE000_0000_0000_0000)
            }
        case .optional:
            if let wrapped = Mirror(reflecting: value).children.first { add(0x0F); add(any: wrapped.value, &kinds) } else { add(0x0E) }
        case .collection:
            // An array's elements are read at their own type, not each opened as `Any`
            // (a box and a `Mirror` an element): the same words, as `addPlain` checks.
            if let array = value as? any DigestedArray {
                array.digestElements(into: &self, &kinds)
                return
            }
            let mirror = Mirror(reflecting: value)
            add(UInt64(mirror.children.count) | 0xC000_0000_0000_0000)
            for child in mirror.children { add(any: child.value, &kinds) }
        case .aggregate:
            for child in Mirror(reflecting: value).children { add(any: child.value, &kinds) }
        case .fields(let owner, let fields):
            func walk<T>(_ v: T) {
                guard ObjectIdentifier(T.self) == owner else {
                    for child in Mirror(reflecting: v).children { add(any: child.value, &kinds) }
                    return
                }
                add(fieldsOf: v, fields, &kinds)
            }
            _openExistential(value, do: walk)
        }
    }

    /// `v`'s members, read from its bytes at the offsets of `fields` (its type's plan).
    mutating func add<T>(fieldsOf v: T, _ fields: [Field], _ kinds: inout KindCache) {
        withUnsafeBytes(of: v) { raw in
            guard let base = raw.baseAddress else {   // a value of no bytes
                for child in Mirror(reflecting: v).children { add(any: child.value, &kinds) }
                return
            }
            for f in fields {
                switch f.leaf {
                case .integer(let signed, let bytes)?: add(Self.integerWord(base + f.offset, bytes: bytes, signed: signed))
                case .bool?: add(base.load(fromByteOffset: f.offset, as: UInt8.self) & 1 == 1 ? 0xB1 : 0xB0)
                default:
                    func load<M>(_: M.Type) { add(typed: base.load(fromByteOffset: f.offset, as: M.self), &kinds) }
                    _openExistential(f.type, do: load)
                }
            }
        }
    }

    /// `add(any: v)`, without opening `v` as `Any` when its type's kind is known and it is
    /// read from its bytes: a struct or tuple with a plan, an integer, a Bool. (The kinds
    /// are keyed by a value's dynamic type, so a static type found there is that type.)
    mutating func add<T>(typed v: T, _ kinds: inout KindCache) {
        let id = ObjectIdentifier(T.self)
        switch kinds.kinds[id] {
        case .fields(let owner, let fields)? where owner == id:
            add(fieldsOf: v, fields, &kinds)
        case .integer(let signed, let bytes)?:
            withUnsafeBytes(of: v) { raw in
                if let base = raw.baseAddress, raw.count >= bytes { add(Self.integerWord(base, bytes: bytes, signed: signed)) } else { add(any: v, &kinds) }
            }
        case .bool?:
            withUnsafeBytes(of: v) { raw in add(raw.first.map { $0 & 1 == 1 } == true ? 0xB1 : 0xB0) }
        default:
            add(any: v, &kinds)
        }
    }

    /// The digest as it was made before `Kind`: casts and reflection for every value. Kept
    /// as the plain version that a test holds `add(any:)` equal to.
    mutating func addPlain(any value: Any) {
        // An optional before the casts, which would unwrap it: a `UInt16?` holding 14 was
        // digested as 14, the same word as nil's marker (0x0E), before this was first.
        let outer = Mirror(reflecting: value)
        if outer.displayStyle == .optional {
            if let wrapped = outer.children.first { add(0x0F); addPlain(any: wrapped.value) } else { add(0x0E) }
            return
        }
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
            if let payload = mirror.children.first {
                add(payload.label ?? "")
                addPlain(any: payload.value)
            } else {
                func tag<T>(_ v: T) -> UInt64 {
                    withUnsafeBytes(of: v) { b in b.reduce(UInt64(b.count)) { $0 << 8 | UInt64($1) } }
                }
                add(_openExistential(value, do: tag) | 0xE000_0000_0000_0000)
            }
            return
        case .optional?:
            if let wrapped = mirror.children.first { add(0x0F); addPlain(any: wrapped.value) } else { add(0x0E) }
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
        for child in mirror.children { addPlain(any: child.value) }
    }

    /// `add(parts:)` by `addPlain`, for the test.
    mutating func addPlain(parts: [(label: String, value: Any)]) {
        for p in parts { add(p.label); addPlain(any: p.value) }
    }

    /// 32 hex digits.
    @usableFromInline package var description: String {
        func hex(_ v: UInt64) -> String { let s = String(v, radix: 16); return String(repeating: "0", count: 16 - s.count) + s }
        return hex(high) + hex(low)
    }

    /// Equal when both lanes are (the reference count takes no part).
    @usableFromInline package static func == (a: StateDigest, b: StateDigest) -> Bool { a.high == b.high && a.low == b.low }
    /// Hashes both lanes.
    @usableFromInline package func hash(into hasher: inout Hasher) { hasher.combine(high); hasher.combine(low) }
}

/// An array whose elements `StateDigest` reads at their own type (`add(typed:)`).
protocol DigestedArray {
    func digestElements(into digest: inout StateDigest, _ kinds: inout StateDigest.KindCache)
}

extension Array: DigestedArray {
    func digestElements(into digest: inout StateDigest, _ kinds: inout StateDigest.KindCache) {
        digest.add(UInt64(count) | 0xC000_0000_0000_0000)
        for e in self { digest.add(typed: e, &kinds) }
    }
}

extension Optional: StateDigest.OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
}
