import Foundation

/// Progress of a long command on standard error, outside every simulation (it reads the
/// wall clock, which no simulation may): on a terminal one line redrawn five times a
/// second; elsewhere (a CI log, a pipe) a plain line after the first item and then every
/// `interval` seconds, so a log shows the run is alive. `--quiet` makes it silent. Not
/// thread-safe: callers hold their own lock.
struct ProgressLine {
    /// `fuzz` or `run`: the line's first word.
    let label: String
    /// `seed` or `file`: what is counted.
    let noun: String
    let total: Int
    let enabled: Bool
    let interactive: Bool
    /// Seconds between plain lines when standard error is not a terminal.
    static let interval = 5.0
    private var lastPrinted: Double?

    init(label: String, noun: String, total: Int, quiet: Bool) {
        self.label = label; self.noun = noun; self.total = total
        enabled = !quiet
        interactive = stderrIsTerminal
    }

    /// The line's text: `fuzz: 12,345/160,000 seeds, 0 failures, 3,250 seeds/s, ETA 45s`.
    func text(done: Int, failures: Int, elapsed: Double) -> String {
        let rate = Double(done) / max(elapsed, 1e-6)
        let eta = Double(total - done) / max(rate, 1e-6)
        return "\(label): \(grouped(done))/\(grouped(total)) \(noun)s, \(plural(failures, "failure")), "
            + "\(grouped(Int(rate.rounded()))) \(noun)s/s, ETA \(shortSpan(eta))"
    }

    /// Prints the line if it is due; call after each item.
    mutating func update(done: Int, failures: Int, started: Double) {
        guard enabled else { return }
        let now = monotonicSeconds()
        if interactive {
            if let last = lastPrinted, now - last < 0.2, done < total { return }
            lastPrinted = now
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + text(done: done, failures: failures, elapsed: now - started)).utf8))
        } else {
            if let last = lastPrinted, now - last < Self.interval { return }
            if done == total { return }   // the summary follows at once
            lastPrinted = now
            FileHandle.standardError.write(Data((text(done: done, failures: failures, elapsed: now - started) + "\n").utf8))
        }
    }

    /// For one long run: prints `timeline: day 12 of 90, 1m05s` when it is due.
    mutating func update(virtualDays: Int, of totalDays: Int, started: Double) {
        guard enabled else { return }
        let now = monotonicSeconds()
        let text = "\(label): day \(grouped(virtualDays)) of \(grouped(totalDays)), \(shortSpan(now - started))"
        if interactive {
            if let last = lastPrinted, now - last < 0.2 { return }
            lastPrinted = now
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
        } else {
            if let last = lastPrinted, now - last < Self.interval { return }
            if lastPrinted == nil, now - started < Self.interval { return }   // short runs stay quiet
            lastPrinted = now
            FileHandle.standardError.write(Data((text + "\n").utf8))
        }
    }

    /// Clears a redrawn line before other output (a FAIL block, the summary).
    func clear() {
        if enabled, interactive, lastPrinted != nil { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
