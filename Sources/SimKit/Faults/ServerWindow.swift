/// A server-wide fault window (SPEC §1.4, §1.5): `server errors`, `server down`, `timeouts`,
/// `lost-responses` and `server restart` (the process away) each keep one. A new window of a kind replaces the one in force if it
/// ends later (its rate is the new one's either way), and each opening schedules an end
/// event at the window's end; when that comes and no later window of the kind moved the
/// end, the trace says `serverFaultEnded`, the record the five kinds share.
@usableFromInline struct ServerWindow: Sendable, Equatable {
    /// The end of the window in force; 0 before the first.
    @usableFromInline var until: SimTime = 0
    /// The share of requests it acts on, in basis points (0 for `server down`, which acts on all).
    @usableFromInline var rateBp: UInt16 = 0
    @inlinable init() {}

    /// Opens a window of `rateBp` until `until`, or extends the one in force; returns the
    /// window's end.
    @inlinable mutating func open(rateBp: UInt16 = 0, until end: SimTime) -> SimTime {
        self.rateBp = rateBp
        until = max(until, end)
        return until
    }

    /// Whether the window is open at `now`.
    @inline(__always)
    @inlinable func isOpen(at now: SimTime) -> Bool { now < until }
}

extension SimWorld {
    /// A server-wide window's end event: it closes `window` unless a later one extended it.
    @inlinable mutating func serverWindowEnds(_ window: ServerWindow) {
        if window.until == now { trace(Event.world, .fault(.serverFaultEnded)) }
    }
}

extension FaultRecord {
    /// A server-wide window closed (tag 7): the record `server errors`, `server down`,
    /// `timeouts` and `lost-responses` share. Checkers compare a record with it.
    @inlinable public static var serverFaultEnded: FaultRecord { FaultRecord(a: 7, b: 0) }
}

extension ServerWindow: FaultRecords {
    static var recordTags: [UInt8] { [7] }
    static func text(of r: FaultRecord) -> String { "serverFaultEnded" }
    static func window(of r: FaultRecord) -> FaultWindowRecord? { FaultWindowRecord(until: nil, mark: nil) }
}
