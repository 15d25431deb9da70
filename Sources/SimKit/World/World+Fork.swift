#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Forking a world mid-run: `simkit explore` runs a path's prefix once and tries each next
/// action on a copy of the world, instead of running every path from the start.
///
/// A world is a value, but its tables, queue and request pool keep their storage in
/// objects that the event loop writes without a uniqueness check per write. A plain copy
/// is made safe by the loop (it makes each table its own before it starts); `fork()` also
/// gives the observer storage of its own (`TraceObserver.forked()`). The SDK and server
/// cores must be values (or copy themselves), as `SDKCore` and `ServerCore` ask.
///
/// **Fork points.** A world forked and given one more statement must go on exactly as a
/// fresh world built with that statement would, byte for byte, so that a path found by
/// forking is replayed by `simkit run` the same way. A fresh world queues the event that
/// fires the next statement right after the previous statement fired (one `statement`
/// event is pending at a time), so its place among the events due at that moment depends
/// on when it was queued. `runToForkPoint` stops a run at exactly that point, right after
/// the event that fired the last pending statement; `extend(as:)` then queues the new
/// statements' event there, as the fresh world would have. `ForkTests` holds a forked
/// world equal to a fresh one: trace fingerprint, events, violations and state digest.
extension SimWorld {
    /// A copy of this world that runs on by itself: its tables and queue are copied when
    /// it (or this world) next runs, and its observer is `observer.forked()`.
    ///
    /// A world whose server core is a connection (`UnforkableServer`, a server on the wire)
    /// is refused: the copy would share the process, and two worlds' messages would
    /// interleave on it. The tool stops with the core's reason and exit status 2.
    @inlinable package func fork() -> Self {
        if let core = Server.self as? any UnforkableServer.Type { refuseFork(core.forkRefusal) }
        var copy = self
        copy.observer = observer.forked()
        return copy
    }

    /// Runs like `run()` until the event that fires the last pending statement has been
    /// handled, and stops there, mid-moment (the world's *fork point*): other events due
    /// at the same time are still pending. A world with no pending statement does not run
    /// on (a fresh one has begun its observer's run). Then `extend(as:)` adds statements,
    /// and `runToForkPoint` or `resume(to:)` goes on.
    @inlinable package mutating func runToForkPoint() {
        if !observerBegun {
            observer.begin(facts)
            observerBegun = true
        }
        guard atForkPoint, !statementsDue.isEmpty, stop == nil else { return }
        haltAfterLastStatement = true
        runEvents(to: setup.durationMs)
        haltAfterLastStatement = false
        atForkPoint = haltLoop && !queueFull
    }

    /// Goes on from where the world stopped (a fork point, or the end of an earlier run)
    /// to `end`, then tells the observer the run is over at `end`.
    @inlinable package mutating func resume(to end: SimTime) {
        if !observerBegun {
            observer.begin(facts)
            observerBegun = true
        }
        if stop == nil { runEvents(to: end) }
        finishRun(at: end)
    }

    /// Whether `extend(as: newSetup)` can take this world on: it is at a fork point (a new
    /// world, or one stopped by `runToForkPoint` after its last statement; not one that ran
    /// on past it, where events of later moments were queued before the new statements'), no
    /// statement is pending and none is periodic, and `newSetup` is its setup with statements
    /// added at the end, each after now, and perhaps another duration.
    @usableFromInline package func canExtend(as newSetup: WorldSetup) -> Bool {
        let old = setup
        guard atForkPoint, statementsDue.isEmpty, stop == nil, newSetup.schedule.count >= old.schedule.count,
              newSetup.schedule.count < 1 << Self.statementBits else { return false }
        // A periodic statement's next firing depends on the duration (`fireStatement`).
        guard !old.schedule.contains(where: { $0.periodMs > 0 }) else { return false }
        guard Array(newSetup.schedule.prefix(old.schedule.count)) == old.schedule,
              newSetup.schedule.dropFirst(old.schedule.count).allSatisfy({ $0.firstAtMs > now }) else { return false }
        return newSetup.seed == old.seed && newSetup.keyNames == old.keyNames && newSetup.accounts == old.accounts
            && newSetup.apps == old.apps && newSetup.groups == old.groups && newSetup.network == old.network
            && newSetup.sdk == old.sdk && newSetup.serverFlaws == old.serverFlaws && newSetup.eventBudget == old.eventBudget
            && newSetup.ringDepth == old.ringDepth && newSetup.queueLimit == old.queueLimit
            && newSetup.memoryBudgetBytes == old.memoryBudgetBytes
            && newSetup.pinnedFates == old.pinnedFates && newSetup.countsRequests == old.countsRequests
    }

    /// Takes this world, at a fork point, on as a world built from `newSetup` (see
    /// `canExtend(as:)`): the new statements are queued as a fresh world would have queued
    /// them at this point, and the run ends at `newSetup.durationMs`.
    /// - Returns: false, changing nothing, when `canExtend(as:)` is false.
    @inlinable package mutating func extend(as newSetup: WorldSetup) -> Bool {
        guard canExtend(as: newSetup) else { return false }
        let first = setup.schedule.count
        queue.makeUnique()   // a fork shares its queue's storage until now
        _setup = newSetup
        _facts.durationMs = newSetup.durationMs
        firings.append(contentsOf: repeatElement(0, count: newSetup.schedule.count - first))
        for i in first..<newSetup.schedule.count {
            let s = newSetup.schedule[i]
            if s.firstAtMs <= min(s.untilMs, newSetup.durationMs) { statementsDue.push(s.firstAtMs << Self.statementBits | UInt64(i)) }
        }
        // What `fireDueStatements` does after the statements of a moment have fired.
        if let next = statementsDue.min {
            schedule(.statement, at: next >> Self.statementBits)
        }
        return true
    }
}

/// A server core that is a connection to a server elsewhere, not a value (a server on the
/// wire: a process or a service holds the state). A world on it cannot be forked.
@usableFromInline package protocol UnforkableServer {
    /// Why a world on this core cannot be forked, one sentence (printed as the error).
    static var forkRefusal: String { get }
}

/// Stops the tool: `SimWorld.fork()` of a world whose server is a connection. Bad input to
/// the tool (a command asked for a fork it cannot make), so exit status 2, as for every
/// bad input, after `error: REASON` on standard error.
@usableFromInline @inline(never)
func refuseFork(_ reason: String) -> Never {
    let line = Array("error: cannot fork this world: \(reason)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}
