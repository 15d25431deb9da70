#if canImport(Glibc)
import Glibc
import Synchronization

/// `clock_gettime`, interposed: the host executable defines the symbol (linked with
/// `-Xlinker --export-dynamic`, it takes precedence over libc's for every library in the
/// process: `Date()`, `ContinuousClock.now`, `DispatchTime.now()`), and passes every call
/// through to libc's, except while an SDK step runs on the simulation thread: then the read
/// is an escape (the SDK read a clock that is not its injected `SimClock`), and it gets
/// the world's virtual time instead, so the run stays reproducible until the verdict.
enum ClockInterposer {
    typealias Real = @convention(c) (clockid_t, UnsafeMutablePointer<timespec>?) -> Int32
    nonisolated(unsafe) static var real: Real? = {
        guard let p = dlsym(UnsafeMutableRawPointer(bitPattern: -1), "clock_gettime") else { return nil }
        return unsafeBitCast(p, to: Real.self)
    }()
    /// The virtual time of the step running now, in ms (read only on the simulation thread).
    nonisolated(unsafe) static var virtualNowMs: UInt64 = 0
    /// Whether reads during steps get the virtual time (set during steps, when interposed).
    nonisolated(unsafe) static var trapping = false
    /// Whether such a read is an escape (not under `SIMKIT_ASYNC_ALLOW_CLOCK=1`).
    nonisolated(unsafe) static var reporting = true
    /// Reads trapped since the last `takeReads()`, and the first one's clock id.
    nonisolated(unsafe) static var reads = 0
    nonisolated(unsafe) static var firstClock: clockid_t = 0

    static func takeReads() -> (count: Int, clock: clockid_t) {
        defer { reads = 0 }
        return (reads, firstClock)
    }

    /// Whether this process's `clock_gettime` is this one (the host exported it).
    static var isInterposed: Bool {
        guard let found = dlsym(nil, "clock_gettime") else { return false }
        let mine = unsafeBitCast(simkitInterposedClockGettime as @convention(c) (clockid_t, UnsafeMutablePointer<timespec>?) -> Int32,
                                 to: UnsafeMutableRawPointer.self)
        return found == mine
    }
}

@_cdecl("clock_gettime")
public func simkitInterposedClockGettime(_ clock: clockid_t, _ ts: UnsafeMutablePointer<timespec>?) -> Int32 {
    if ClockInterposer.trapping, SimLoop.shared.isDrainingOnThisThread, let ts {
        if ClockInterposer.reporting {
            if ClockInterposer.reads == 0 { ClockInterposer.firstClock = clock }
            ClockInterposer.reads += 1
            SimLoop.shared.escapeSeen = true
        }
        let ms = ClockInterposer.virtualNowMs
        ts.pointee = timespec(tv_sec: Int(ms / 1000), tv_nsec: Int(ms % 1000) * 1_000_000)
        return 0
    }
    guard let real = ClockInterposer.real else { return -1 }
    return real(clock, ts)
}
#endif
