import SimKit
#if canImport(Glibc)
import Glibc
#endif

/// One simulated app process of an async core: its device, the harness over it (the
/// subclass, `AsyncCore.Box`, knows its type), and its end. The loop keeps the processes
/// of the world running now (`SimLoop.live`), so that the world's end ends them all.
class SimProcess: @unchecked Sendable {
    let device = SimDevice()
    let serial: UInt64
    private(set) var ended = false

    init() {
        let loop = SimLoop.shared
        loop.processesMade &+= 1
        serial = loop.processesMade
        loop.live[serial] = WeakProcess(self)
    }

    /// The harness, handed over once, at the process's end.
    func takeHarness() -> (any AsyncSDKHarness)? { nil }

    /// Ends the process, once: the device dies (its services throw `CancellationError`,
    /// and a task that awaited one, or calls one, is cancelled: `Task.isCancelled` is true
    /// from then on, and its child tasks are cancelled too), the harness's `tearDown` runs,
    /// and the loop runs what that made runnable, within `Bounds.jobsPerStep` jobs. `when`
    /// names the moment in a verdict: the process's end, or the world's.
    func end(_ when: String) {
        guard !ended else { return }
        ended = true
        let loop = SimLoop.shared
        let device = self.device
        loop.asOwner {
            device.kill()
            if let harness = takeHarness() { Task { await harness.tearDown() } }
            if case .exceeded(let bound) = loop.drain(maxJobs: Bounds.jobsPerStep) {
                AsyncVerdict.fail(.stepNeverSettles, device: device, input: when,
                                  "its tasks were still running after \(bound) jobs once the process died (a loop that ignores cancellation)")
                loop.parkReady()   // never into the next step; at the world's end they run once more
            }
        }
        AsyncVerdict.checkEscapes(device: device, input: when)
    }

    deinit { SimLoop.shared.live.removeValue(forKey: serial) }
}

/// A process the loop knows without keeping it alive.
struct WeakProcess {
    weak var process: SimProcess?
    init(_ process: SimProcess) { self.process = process }
}

extension SimLoop {
    /// A world begins: the last one ends, if nothing asked for its verdict (`endWorld`),
    /// and nothing of it (its verdict, its escapes, the work it handed to other threads)
    /// reaches the new one.
    func worldBegins() {
        endWorld()
        verdict = nil
        parkReady()
        _ = takeEscapes()
        _ = ClockInterposer.takeReads()
        _ = HandOff.newEpoch()
        worldsBegun &+= 1
        worldEnded = false
        disks.removeAll()
    }

    /// The world's end, once: every process still running ends (`SimProcess.end`, in the
    /// order they were made); the work the world handed to other threads is waited for
    /// (within `Bounds.handOffWaitMs`) and what came back unseen is judged; then the jobs
    /// set aside (`parked`, `handedBack`) run, with every process dead, so that their tasks
    /// end instead of waiting forever; last, the process's memory and open files are
    /// measured (`ResourceWatch`).
    func endWorld() {
        guard !worldEnded, worldsBegun > 0 else { return }
        worldEnded = true
        for serial in live.keys.sorted() { live[serial]?.process?.end("the world's end") }
        var waitedMs = 0
        func waitForHandOffs() {
            while HandOff.pending > 0, waitedMs < Bounds.handOffWaitMs { usleep(1000); waitedMs += 1 }
        }
        waitForHandOffs()
        AsyncVerdict.checkEscapes(device: nil, input: "at the world's end")
        for _ in 0..<4 {
            guard runSetAside() else { break }
            waitForHandOffs()
        }
        // What the clean-up did is not the world's.
        _ = takeEscapes()
        _ = ClockInterposer.takeReads()
        if HandOff.pending > 0 { handOffsStillOut &+= 1 }
        ResourceWatch.shared.worldEnded()
    }
}
