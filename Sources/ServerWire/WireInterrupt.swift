import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SimKit was asked to stop (SIGINT or SIGTERM, set by the command's signal handler): every
/// wait on a server on the wire ends within `WireInterrupt.sliceSeconds`, no server process
/// is started, and the world in progress ends as not run (the campaign does not count it).
/// A server that answers slowly, but within the reply bound, cannot hold a stop for longer.
package enum WireInterrupt {
    /// Set once, from a signal handler (a lock-free store), never cleared in a process.
    package static let flag = Atomic<Bool>(false)
    /// The longest a wait runs before it looks at `flag` again.
    static let sliceSeconds = 0.1

    /// Whether a stop was asked for.
    package static var requested: Bool { flag.load(ordering: .relaxed) }
}

/// How a wait on a server's socket ended.
enum SocketWait {
    case ready
    case timedOut
    case interrupted

    /// Waits until `fd` is ready for `events`, `deadline` (monotonic seconds) passes, or a
    /// stop is asked for (`WireInterrupt`): each poll waits at most a slice of the time left.
    static func wait(_ fd: Int32, for events: Int16, until deadline: Double) -> SocketWait {
        // Bounded: each poll waits at most the time left, and time only moves on.
        while true {
            if WireInterrupt.requested { return .interrupted }
            let left = deadline - monotonicSeconds()
            if left <= 0 { return .timedOut }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let r = poll(&p, 1, Int32((min(left, WireInterrupt.sliceSeconds) * 1000).rounded(.up)))
            if r > 0 { return .ready }
            if r < 0, errno != EINTR { return .ready }   // let the read or write say what is wrong
        }
    }
}

/// Seconds on the monotonic clock: the reply bound's only clock, never the trace's.
func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
