/// One piece of the world's work, as the world's code speaks of it: a case a kind, with
/// its payload typed. The queue stores it packed (`Event`, 32 bytes, whose layout the
/// queue's speed rests on); `packed(time:)` and `init(_:)` below are the only places that
/// know how the payload sits in `target`, `arg`, `sub` and `aux`.
///
/// Each event names its target itself (a device, or `Event.world`): a device index that
/// is part of the payload is the event's target, so the two cannot disagree.
@usableFromInline enum WorldEvent: Sendable, Equatable {
    /// The next moment of the scripted schedule (`fireDueStatements`).
    case statement
    /// Statement `statement`'s jittered person action reaches `device`.
    case personAction(device: DeviceIndex, statement: UInt32)
    /// The request in pool slot `slot`, sent by `device`, reaches the server.
    case requestArrives(device: DeviceIndex, slot: UInt32)
    /// The answer in pool slot `slot` reaches `device`.
    case responseArrives(device: DeviceIndex, slot: UInt32)
    /// A timer of `device`'s SDK fires. `stamp` is the process epoch it was set in, plus
    /// (for a cancellable kind) its generation times 256: stale unless it is still current.
    case timer(TimerKind, device: DeviceIndex, arg: UInt32, stamp: UInt16)
    /// A fault window may end: which kind's and whose (one event kind for all of them keeps
    /// the hot switch short; `Faults/Faults.swift` hands it to its kind).
    case faultEnds(FaultEnd)

    /// The packed kinds: what `Event.kind` holds. The numbers are part of the explorer's
    /// state digest (`stateParts`); do not renumber.
    @usableFromInline enum Code {
        @usableFromInline static let statement: UInt8 = 1
        @usableFromInline static let personAction: UInt8 = 2
        @usableFromInline static let requestArrives: UInt8 = 3
        @usableFromInline static let responseArrives: UInt8 = 4
        @usableFromInline static let timer: UInt8 = 5
        // 6 was a partition's end, now a `faultEnds` of the offline kind.
        @usableFromInline static let faultEnds: UInt8 = 7
    }

    /// Who handles the event: the device it names, or `Event.world`.
    @inline(__always)
    @inlinable var target: UInt32 {
        switch self {
        case .statement: Event.world
        case .personAction(let d, _), .requestArrives(let d, _), .responseArrives(let d, _),
             .timer(_, let d, _, _):
            d
        case .faultEnds(let end): end.target
        }
    }

    /// The event as the queue stores it, due at `time` (the queue sets `seq`).
    @inline(__always)
    @inlinable func packed(time: SimTime) -> Event {
        switch self {
        case .statement:
            Event(time: time, target: Event.world, kind: Code.statement)
        case .personAction(let d, let statement):
            Event(time: time, target: d, kind: Code.personAction, arg: statement)
        case .requestArrives(let d, let slot):
            Event(time: time, target: d, kind: Code.requestArrives, arg: slot)
        case .responseArrives(let d, let slot):
            Event(time: time, target: d, kind: Code.responseArrives, arg: slot)
        case .timer(let kind, let d, let arg, let stamp):
            Event(time: time, target: d, kind: Code.timer, arg: arg, sub: kind.rawValue, aux: stamp)
        case .faultEnds(let end):
            Event(time: time, target: end.target, kind: Code.faultEnds, sub: end.kind)
        }
    }

    /// The event `e` packs (see `packed(time:)`).
    @inline(__always)
    @inlinable init(_ e: Event) {
        switch e.kind {
        case Code.statement: self = .statement
        case Code.personAction: self = .personAction(device: e.target, statement: e.arg)
        case Code.requestArrives: self = .requestArrives(device: e.target, slot: e.arg)
        case Code.responseArrives: self = .responseArrives(device: e.target, slot: e.arg)
        case Code.timer:
            // Only `packed` writes `sub`, from a `TimerKind`.
            self = .timer(TimerKind(rawValue: e.sub).unsafelyUnwrapped, device: e.target, arg: e.arg, stamp: e.aux)
        case Code.faultEnds: self = .faultEnds(FaultEnd(kind: e.sub, target: e.target))
        default: preconditionFailure("unknown event kind \(e.kind)")
        }
    }

    /// The request slot a packed request or response event carries, else nil: for hints
    /// about the next event, which look at it without unpacking it.
    @inline(__always)
    @inlinable static func requestSlot(of e: Event) -> UInt32? {
        e.kind == Code.requestArrives || e.kind == Code.responseArrives ? e.arg : nil
    }
}
