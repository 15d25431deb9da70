// The SPI canary: installs SimKit's executors first thing, then runs a little of every
// kind of async code and prints the order its jobs ran in. SimKitAsyncTests runs it twice
// as a child process: both runs must print the same lines, every job must have gone
// through SimKit's loop, and a sleep on ContinuousClock must be seen as an escape.
// When the toolchain changes the custom-executor SPI, this stops building or says
// "CANARY FAILED" and exits 2.
import Dispatch
import SimKitAsync
#if canImport(Glibc)
import Glibc
#endif

// `--async-first`: a task runs on the runtime's own executor before the install, as in a
// host that forgot to call SimKitAsyncHost.main first. Measured on 6.3: the install still
// takes every later job (the workload below checks it); work started before it that comes
// back later does so from a Dispatch thread, which the loop reports as a foreign enqueue.
if CommandLine.arguments.contains("--async-first") {
    let started = Task { 1 }
    _ = started
    usleep(50_000)
    print("a task ran before the install")
}

guard SimKitExecutors.install() else {
    print("CANARY FAILED: _createExecutors(factory:) did not route jobs to SimKit's loop\n", terminator: "")
    exit(2)
}

// `--pick SEED`: the seeded pick among ready jobs instead of FIFO.
if let i = CommandLine.arguments.firstIndex(of: "--pick"), i + 1 < CommandLine.arguments.count, let seed = UInt64(CommandLine.arguments[i + 1]) {
    SimLoop.shared.pickSeed = seed
    SimLoop.shared.pickState = seed
}

nonisolated(unsafe) var lines: [String] = []
func note(_ s: String) { lines.append(s) }

actor Counter {
    var n = 0
    func bump(_ who: String) async -> Int { n += 1; let k = n; await Task.yield(); note("\(who) \(k)"); return k }
}

@MainActor func onMain(_ i: Int) { note("main \(i)") }

let loop = SimLoop.shared
let counter = Counter()
loop.asOwner {
    Task {
        async let a = counter.bump("async-let-a")
        async let b = counter.bump("async-let-b")
        _ = await (a, b)
        await withTaskGroup(of: Int.self) { group in
            for i in 0..<4 { group.addTask { await counter.bump("group-\(i)") } }
            for await _ in group {}
        }
        await onMain(1)
        _ = await Task.detached { await counter.bump("detached") }.value
        for i in 0..<3 { await Task.yield(); note("yield \(i)") }
        await onMain(2)
        note("done")
    }
}
let first = loop.drain(maxJobs: 10_000)
note("drain \(first)")
// A sleep on a clock that is not SimKit's is an escape during a step, and still does not hang.
loop.asOwner { Task { try? await Task.sleep(for: .seconds(3600)); note("slept on ContinuousClock") } }
loop.inStep = true
let second = loop.drain(maxJobs: 10_000)   // stops at the escape: it is the step's verdict
loop.inStep = false
note("drain \(second)")
note("drain \(loop.drain(maxJobs: 10_000))")   // what is left still runs: nothing hangs
let escapes = loop.takeEscapes()
note("escapes \(escapes.map { "\($0.kind.rawValue)" })")
// Work handed to Dispatch during a step is seen where it is made: this executable's
// dispatch_async stands in for libdispatch's (the host's interposition, see HandOffInterposer).
HandOff.following = HandOff.isInterposed
note("hand-offs interposed \(HandOff.following)")
loop.asOwner { Task { DispatchQueue.global().async {}; note("handed off") } }
loop.inStep = true
note("drain \(loop.drain(maxJobs: 100))")
loop.inStep = false
let handOffs = loop.takeEscapes()
note("hand-off \(handOffs.map { "\($0.kind.rawValue)" })")
for l in lines { print(l) }
print("jobs \(loop.jobsRun)")
let ok = lines.contains("done") && escapes.map(\.kind) == [.unsimulatedClock] && handOffs.map(\.kind) == [.foreignThread] && loop.jobsRun > 20
if !ok { print("CANARY FAILED: the workload did not run as expected on SimKit's loop\n", terminator: ""); exit(2) }
print("canary ok")
