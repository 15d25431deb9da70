/// A 64-bit fingerprint over a canonical encoding of the whole trace: each record is
/// folded in as fixed 64-bit words (time, device, a tag per case, its fields), never via
/// Swift's `Hasher` (seeded per process) or memory layout. Same trace, same fingerprint,
/// on any machine.
///
/// It runs on every record of every run, so a record costs two chained 64×64→128-bit
/// multiply folds (the wyhash mix), not one multiply chain per word. Any change to the mix
/// changes every fingerprint (docs/performance.md lists such changes).
public struct Fingerprint: Sendable, Equatable, CustomStringConvertible {
    public var value: UInt64 = 0xCBF2_9CE4_8422_2325
    public var records: UInt64 = 0
    public init() {}

    /// Folds one word in (order-sensitive); for checksums outside the trace.
    @inlinable
    public mutating func mix(_ word: UInt64) {
        value = Fingerprint.fold(value ^ word, 0x9E37_79B9_7F4A_7C15)
    }

    /// Folds one record in: its time, device, and the three words of its encoding.
    ///
    /// A `stepEnd` is counted but not folded in. A step's records are contiguous (steps
    /// never interleave), each step starts with its input (`input`, `delivered` or
    /// `timerFired`), and the records a step may write (`requestSent`, `store`, `state`,
    /// `callResult`, `runStarted`, `runEnded`) are never written outside one; so where a
    /// step ends follows from the records around it, and folding in a marker per step would
    /// only cost instructions on every step.
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    public mutating func add(_ r: TraceRecord) {
        records &+= 1
        if case .stepEnd = r.event { return }
        let (tag, a, b) = TraceEncoding.words(r.event)
        value = Fingerprint.fold(value ^ r.time, UInt64(r.device) << 8 ^ tag ^ 0xA076_1D64_78BD_642F)
        value = Fingerprint.fold(value ^ a ^ 0xE703_7ED1_A0B4_28DB, b ^ 0x8EBC_6AF0_9C88_C6E3)
    }

    /// The high and low halves of the full product, xored: every input bit reaches
    /// every output bit's neighbourhood in one multiply.
    @inlinable @inline(__always)
    static func fold(_ x: UInt64, _ y: UInt64) -> UInt64 {
        let (high, low) = x.multipliedFullWidth(by: y)
        return high ^ low
    }

    /// Sixteen hex digits.
    public var description: String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// The canonical encoding of a trace event as three words: a stable tag and two payloads.
/// Tags are part of the trace format: never renumber them, only add.
public enum TraceEncoding {
    @inlinable static func cred(_ c: Credential) -> UInt64 { UInt64(c.device) << 32 | UInt64(c.generation) }
    /// A time spread over the word (an odd multiplier), so two times in one word collide rarely.
    @inlinable static func mix(_ t: SimTime) -> UInt64 { t &* 0x9E37_79B9_7F4A_7C15 }

    @inlinable @inline(__always)
    public static func words(_ e: TraceEvent) -> (UInt64, UInt64, UInt64) {
        switch e {
        case .person(let a, let arg): return (1, UInt64(a.rawValue), UInt64(arg))
        case .processStarted(let bg): return (2, bg ? 1 : 0, 0)
        case .processKilled: return (3, 0, 0)
        case .requestSent(let id, let kind, let key, let c):
            return (4, UInt64(id) << 16 | UInt64(kind.rawValue) << 8, UInt64(key) ^ cred(c) << 16)
        case .served(let id, let kind, let key, let c, let reply, let recordAfter):
            return (5, UInt64(id) << 16 | UInt64(kind.rawValue) << 8 | UInt64(reply.answer.rawValue) | UInt64(recordAfter) << 48,
                    UInt64(key) ^ cred(c) << 16 ^ cred(reply.credential) << 1 ^ mix(reply.stoppedSince))
        case .input(let i): return (20, UInt64(i.rawValue), 0)
        case .delivered(let id, let kind, let answer, let viaTimer, let sentAt, let servedAt, let stoppedSince):
            return (6, UInt64(id) << 16 | UInt64(kind.rawValue) << 8 | UInt64(answer.rawValue) ^ mix(servedAt),
                    sentAt << 1 | (viaTimer ? 1 : 0) ^ mix(stoppedSince) << 1)
        case .droppedForDeadProcess(let id): return (7, UInt64(id), 0)
        case .timerFired(let kind, let arg): return (8, UInt64(kind.rawValue), UInt64(arg))
        case .state(let s): return (9, UInt64(s.rawValue), 0)
        case .store(let op): let (a, b) = storeWords(op); return (10, a, b)
        case .callResult(let call, let outcome): return (11, UInt64(call.rawValue), UInt64(outcome.rawValue))
        case .runStarted(let bg): return (12, bg ? 1 : 0, 0)
        case .runEnded: return (13, 0, 0)
        case .backgroundRunSkipped: return (14, 0, 0)
        case .fault(let f): return (15, f.a, f.b)
        case .dashboard(let d, let applied): let (a, b) = dashboardWords(d); return (16, a << 1 | (applied ? 1 : 0), b)
        case .forgotDevice: return (17, 0, 0)
        case .probe(let arg): return (18, UInt64(arg), 0)
        case .stepEnd: return (19, 0, 0)
        case .unsettled: return (21, 0, 0)
        case .carries(let report): return (22, report, 0)
        case .holds(let generation): return (23, UInt64(generation), 0)
        }
    }

    @inlinable @inline(__always) static func storeWords(_ op: StoreOp) -> (UInt64, UInt64) {
        switch op {
        case .indexPhotos(let from, let count): return (1, UInt64(from) << 16 | UInt64(count))
        case .deleteIndex: return (2, 0)
        case .saveModels: return (3, 0)
        case .deleteModels: return (4, 0)
        case .savePlaceData: return (5, 0)
        case .deletePlaceData: return (6, 0)
        case .setCredential(let c): return (7, cred(c))
        case .deleteCredential: return (8, 0)
        case .queueReport: return (9, 0)
        case .reportsUploaded(let n): return (10, UInt64(n))
        case .dropReports: return (11, 0)
        case .lock: return (12, 0)
        case .unlock: return (13, 0)
        case .setLockedSince(let t): return (14, t)
        case .markPurged: return (15, 0)
        case .setLastAnsweredCheck(let t): return (16, t)
        case .setPendingReset(let c): return (17, cred(c))
        case .scheduleBackground: return (18, 0)
        case .cancelBackground: return (19, 0)
        case .reportsRemoved(let n): return (20, UInt64(n))
        case .reportQueued(let id): return (21, id)
        case .reportLeft(let id): return (22, id)
        case .setLastCheckWallOffset(let ms): return (23, UInt64(bitPattern: ms))
        case .setEarlierPendingReset(let g): return (24, UInt64(g))
        }
    }

    @usableFromInline static func dashboardWords(_ d: DashboardAction) -> (UInt64, UInt64) {
        switch d {
        case .rotate(let app, let key, let grace): return (1 | UInt64(app) << 8 | UInt64(key) << 24, grace.map { $0 &+ 1 } ?? 0)
        case .stopOldKey(let app, let key): return (2 | UInt64(app) << 8 | UInt64(key) << 24, 0)
        case .disable(let app): return (3 | UInt64(app) << 8, 0)
        case .enable(let app): return (4 | UInt64(app) << 8, 0)
        case .rollupApp(let a, let app): return (5 | UInt64(app) << 8, UInt64(a.rawValue))
        case .rollupAccount(let a, let acc): return (6 | UInt64(acc) << 8, UInt64(a.rawValue))
        }
    }
}
