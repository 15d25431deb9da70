import Foundation
import Synchronization
import ServerWire

/// Set by SIGINT or SIGTERM (or a `--time-limit`): workers stop taking new work, finish
/// what they hold, and the summary, JSON and JUnit are written with everything found so
/// far, marked as a run that did not finish (exit 3).
let stopRequested = Atomic<Bool>(false)

/// The signal that asked for the stop (SIGINT or SIGTERM), 0 when none did. Read after the
/// workers are done, to say in the summary why the run stopped.
let stopSignal = Atomic<Int32>(0)

/// The exit status of a run that did not finish: interrupted, stopped by a time limit, or
/// merged from shards with shards or seeds missing.
let exitIncomplete: Int32 = 3
/// Exit status of a fuzz campaign that broke nothing but never reached a "sometimes"
/// situation a campaign of its size must reach (`SometimesRequirements`).
let exitBlindSpot: Int32 = 4

/// Installs the SIGINT (Ctrl-C) and SIGTERM (what Kubernetes and CI runners send) handler:
/// the first signal asks for a clean stop; a second one exits at once with status 3.
/// A server on the wire stops being waited for within a tenth of a second
/// (`WireInterrupt`), so a slow server cannot hold the stop: the seed in progress on it
/// ends as not run.
/// Files already written stay whole: reproducers, JSON and JUnit files are written to a
/// temporary file and renamed into place, so an exit between two writes leaves no torn file.
/// The handler only touches lock-free atomics and `_exit`, which are safe in a signal handler.
func installInterruptHandler() {
    // The atomics are made here, not lazily inside the handler.
    _ = stopRequested.load(ordering: .relaxed)
    _ = WireInterrupt.flag.load(ordering: .relaxed)
    // A parent (a test harness, a CI runner) may have left the signals blocked: unblock them.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    for sig in [SIGINT, SIGTERM] {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { received in
            if stopRequested.load(ordering: .relaxed) { _exit(3) }
            stopSignal.store(received, ordering: .relaxed)
            stopRequested.store(true, ordering: .relaxed)
            WireInterrupt.flag.store(true, ordering: .relaxed)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(sig, &action, nil)
    }
}

/// The name of a stop signal, for summaries: `SIGINT`, `SIGTERM`.
func signalName(_ sig: Int32) -> String {
    switch sig {
    case SIGINT: "SIGINT"
    case SIGTERM: "SIGTERM"
    default: "signal \(sig)"
    }
}

/// Runs `work(i)` for i in 0..<count on `jobs` threads, each taking the next index; each
/// call is an independent simulation, so parallelism never reaches inside one.
/// Stops handing out work once `stopRequested` is set; work already started finishes.
func parallelForEach(count: Int, jobs: Int, _ work: @escaping @Sendable (Int) -> Void) {
    let next = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, count))) { _ in
        while !stopRequested.load(ordering: .relaxed) {
            let i = next.add(1, ordering: .relaxed).oldValue
            if i >= count { break }
            work(i)
        }
    }
}

/// Whether standard error is a terminal: progress is a redrawn line there, and a plain
/// line every few seconds elsewhere (a CI log).
var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
