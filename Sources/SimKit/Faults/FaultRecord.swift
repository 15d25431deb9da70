/// A fault's trace record (`TraceEvent.fault`): a window opening or closing, or whatever else
/// a kind records, as the two words its kind writes and the fingerprint folds in as they
/// are (`TraceEncoding`, tag 15). The low byte of `a` says which record it is: each kind
/// owns its tags (`FaultRecords`), makes its records (`FaultRecord.offline(until:)`, …) and
/// reads them back for the trace's text, the timeline and the guided fuzzer.
public struct FaultRecord: Sendable, Equatable, CustomStringConvertible {
    /// The record's tag (low byte) and its kind's fields.
    public let a: UInt64
    /// More of its kind's fields (most kinds: the end of the window it opens).
    public let b: UInt64

    /// A record of the kind that owns tag `UInt8(truncatingIfNeeded: a)`.
    @inlinable package init(a: UInt64, b: UInt64) { self.a = a; self.b = b }

    /// Which record this is; its kind's own numbering, unique over all kinds.
    @inlinable public var tag: UInt8 { UInt8(truncatingIfNeeded: a) }

    /// The record in a few words, as its kind writes it (`fault: offline(until: 7200000)` in
    /// a written trace).
    public var description: String { Faults.text(of: self) }
}

/// What a fault kind's file says about its trace records: which tags are its own, their
/// text, and what a window record means to the tools that read it.
package protocol FaultRecords: Sendable {
    /// The tags of this kind's records (`FaultRecord.tag`); no two kinds share one.
    static var recordTags: [UInt8] { get }
    /// The text of `r`, one of this kind's records: the trace's text of it.
    static func text(of r: FaultRecord) -> String
    /// What `r`, one of this kind's records, opens or closes; nil when it is no window's.
    static func window(of r: FaultRecord) -> FaultWindowRecord?
}

/// What a window's trace record means to the tools that read a trace: the end of the
/// window it opens (the guided fuzzer's "a fault was in force until"), and what a run's
/// timeline draws for it.
package struct FaultWindowRecord: Sendable, Equatable {
    /// The end of the window this record opens (or moves), or nil when it closes one.
    package var until: SimTime?
    /// What the timeline draws, or nil: nothing.
    package var mark: TimelineMark?
    package init(until: SimTime?, mark: TimelineMark?) { self.until = until; self.mark = mark }

    /// What a run's timeline draws for a window record.
    package enum TimelineMark: Sendable, Equatable {
        /// A device's record: its lane's "offline" band starts here.
        case deviceBandOpens
        /// A device's record: the band started by `deviceBandOpens` ends here.
        case deviceBandCloses
        /// A device's record: its lane's "portal" band (P6) starts here.
        case portalBandOpens
        /// A device's record: the band started by `portalBandOpens` ends here.
        case portalBandCloses
        /// A server-wide record: a window labelled `label` (`server errors 50% status 503`)
        /// on the server lane, shaded across every lane, until `until`.
        case serverWindow(label: String, until: SimTime)
        /// A device's record of a moment, not a window (a phone's clock set): a mark
        /// labelled `label` (`clock back 40d`) at its time, across every lane, named for
        /// the device.
        case deviceMoment(label: String)
    }
}

extension Faults {
    /// Each tag's owner, an index in `recordOwners` (-1: none); built once.
    static let ownerOfTag: [Int] = {
        var owners = Array(repeating: -1, count: 256)
        for (i, kind) in recordOwners.enumerated() {
            for tag in kind.recordTags {
                precondition(owners[Int(tag)] == -1, "fault record tag \(tag) has two owners")
                owners[Int(tag)] = i
            }
        }
        return owners
    }()

    /// The kind that owns `r`, or nil for a record no kind wrote.
    static func owner(of r: FaultRecord) -> (any FaultRecords.Type)? {
        let i = ownerOfTag[Int(r.tag)]
        return i < 0 ? nil : recordOwners[i]
    }

    /// The text of `r`, as its kind writes it.
    package static func text(of r: FaultRecord) -> String {
        owner(of: r)?.text(of: r) ?? "unknown fault record (\(r.a), \(r.b))"
    }

    /// What `r` opens or closes, if it is a window's record.
    package static func window(of r: FaultRecord) -> FaultWindowRecord? { owner(of: r)?.window(of: r) }
}

/// Words the kinds' records share.
enum FaultText {
    /// `50%` or `12.5%` from basis points, as the timeline labels a window's rate.
    static func percent(_ bp: UInt16) -> String {
        bp % 100 == 0 ? "\(bp / 100)%" : "\(bp / 100).\(bp % 100 < 10 ? "0" : "")\(bp % 100)%"
    }
}
