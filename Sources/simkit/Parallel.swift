import Foundation
import Synchronization

/// Set by Ctrl-C: workers stop taking new work, finish what they hold, and the summary
/// is printed with everything found so far.
let stopRequested = Atomic<Bool>(false)

/// Installs the Ctrl-C handler: the first press asks for a clean stop, the second quits.
func installInterruptHandler() {
    // A parent (a test harness, a CI runner) may have left SIGINT blocked: unblock it.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    signal(SIGINT) { _ in
        if stopRequested.load(ordering: .relaxed) { _exit(130) }
        stopRequested.store(true, ordering: .relaxed)
    }
}

/// Runs `work(i)` for i in 0..<count on `jobs` threads, each taking the next index; each
/// call is an independent simulation, so parallelism never reaches inside one.
/// Stops handing out work once `stopRequested` is set.
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

/// Whether standard error is a terminal (progress lines go there only then).
var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

/// Writes `text` to `path` atomically: a temporary file beside it, then a rename.
func writeAtomically(_ text: String, to path: String) throws {
    let url = URL(fileURLWithPath: path)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    let tmp = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())")
    try Data(text.utf8).write(to: tmp)
    if rename(tmp.path, url.path) != 0 { throw UsageError("cannot write '\(path)': \(String(cString: strerror(errno)))") }
}
