/// One scheduled piece of work: a small value, 32 bytes, no references.
///
/// `target` names who handles it (a device index, or `Event.world` for the world's own
/// schedule); `kind`, `arg`, `sub` and `aux` are interpreted by the handler (the last two
/// fit in what would otherwise be padding); the world's are a `WorldEvent`, packed. `seq` is the insertion
/// order, set by the queue, which breaks ties so equal times run first-in first-out.
@usableFromInline package struct Event: Sendable, Equatable {
    @usableFromInline package var time: SimTime
    @usableFromInline package var seq: UInt64
    @usableFromInline package var target: UInt32
    @usableFromInline package var arg: UInt32
    @usableFromInline package var kind: UInt8
    @usableFromInline package var sub: UInt8
    @usableFromInline package var aux: UInt16

    /// The target of events that belong to the world rather than to one device.
    @usableFromInline package static let world: UInt32 = .max

    @inlinable
    package init(time: SimTime, seq: UInt64 = 0, target: UInt32, kind: UInt8, arg: UInt32 = 0, sub: UInt8 = 0, aux: UInt16 = 0) {
        self.time = time; self.seq = seq; self.target = target; self.arg = arg
        self.kind = kind; self.sub = sub; self.aux = aux
    }

    /// The queue's order: earlier time first, then earlier insertion.
    @inlinable
    package static func precedes(_ a: Event, _ b: Event) -> Bool {
        a.time < b.time || (a.time == b.time && a.seq < b.seq)
    }
}
