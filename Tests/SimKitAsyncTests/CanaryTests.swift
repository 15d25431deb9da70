import Foundation
import Testing

/// The SPI canary (Tests/AsyncCanary): SimKit's executors install, every kind of async job
/// goes through its loop, in the same order in two processes. If this fails after a
/// toolchain upgrade, the `_Concurrency` custom-executor SPI changed: see docs/async.md.
@Suite struct CanaryTests {
    static func runCanary(_ args: [String] = []) throws -> (status: Int32, out: String, err: String) {
        let exe = Bundle.main.bundleURL.appendingPathComponent("simkit-async-canary")
        let p = Process()
        p.executableURL = exe
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out; p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    @Test func executorsInstallAndRouteEveryJob() throws {
        let a = try Self.runCanary(), b = try Self.runCanary()
        #expect(a.status == 0, "the custom-executor SPI changed? \(a.err)\n\(a.out)")
        #expect(a.out.contains("canary ok"))
        for line in ["async-let-a 1", "group-3", "detached", "main 1", "main 2", "yield 2", "done",
                     "escapes [\"escape-unsimulated-clock\"]", "drain escaped", "slept on ContinuousClock",
                     "hand-offs interposed true", "handed off", "hand-off [\"escape-foreign-thread\"]"] {
            #expect(a.out.contains(line), "missing '\(line)' in\n\(a.out)")
        }
        #expect(a.out == b.out, "two processes ran the jobs in different orders:\n\(a.out)\n---\n\(b.out)")
    }

    /// The canary's own `dispatch_async` is the process's (an executable that links
    /// SimKitAsync exports it; the example's host adds `--export-dynamic`), and work handed
    /// to Dispatch during a step is the escape at that step. If a toolchain stops letting
    /// an executable stand in for libdispatch's functions, this fails.
    @Test func aHandOffToDispatchIsSeenWhereItIsMade() throws {
        let r = try Self.runCanary()
        #expect(r.out.contains("hand-offs interposed true"), "\(r.out)")
        #expect(r.out.contains("hand-off [\"escape-foreign-thread\"]"), "\(r.out)")
    }

    /// Installed after a task already ran on the runtime's own executor, SimKit's executors
    /// still take every later job (measured on Swift 6.3; if a toolchain refuses a late
    /// install, `install()` returns false and the host exits 2).
    @Test func aLateInstallStillRoutesLaterJobs() throws {
        let r = try Self.runCanary(["--async-first"])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(r.out.contains("a task ran before the install") && r.out.contains("canary ok"), "\(r.out)\(r.err)")
    }

    /// A pick seed runs ready jobs in another order than FIFO, and the same order again
    /// for the same seed in another process.
    @Test func aPickSeedInterleavesOtherwiseAndReproduces() throws {
        let fifo = try Self.runCanary(), a = try Self.runCanary(["--pick", "1"]), b = try Self.runCanary(["--pick", "1"])
        #expect(a.status == 0 && b.status == 0, "\(a.err)\(b.err)")
        #expect(a.out == b.out, "the same pick seed gave two orders:\n\(a.out)\n---\n\(b.out)")
        #expect(a.out != fifo.out, "the pick seed changed nothing:\n\(a.out)")
    }
}
