import Foundation
import SimKitCommand
#if canImport(Glibc)
import Glibc
#endif

/// What the host's process holds, measured at every world's end (`SimLoop.endWorld`):
/// resident memory and open file handles. What an async SDK's libraries keep after its
/// process ends (a stream pipeline still waiting, a URLSession never invalidated) piles up
/// across a campaign of thousands of processes, outside anything SimKit simulates; this
/// makes the growth a warning that names it, in the campaign's summary and `--json`
/// (`CampaignNotes`), and stops the campaign cleanly (INCOMPLETE, with its results
/// written) before the process would run out of file handles (at half the limit) or memory
/// (at half the machine's) and die with no summary at all.
///
/// determinism: reads the process's state, never a world's; nothing it measures reaches a trace.
final class ResourceWatch: @unchecked Sendable {
    static let shared = ResourceWatch()

    struct Sample: Equatable { var residentBytes: Int; var openFiles: Int }

    /// Worlds ended so far, and the sample after `baselineWorlds` of them (libraries loaded, caches warm).
    private(set) var worlds = 0
    private(set) var baseline: Sample?
    private(set) var latest = Sample(residentBytes: 0, openFiles: 0)
    private(set) var peak = Sample(residentBytes: 0, openFiles: 0)
    var warnedFiles = false, warnedMemory = false, stopped = false

    static let baselineWorlds = 3
    /// Open file handles above the baseline that make a warning: no world needs them.
    static let fileGrowthWarning = 128
    /// Resident memory that makes a warning: twice the baseline and at least this much more.
    static let memoryGrowthWarningBytes = 128 << 20

    /// The soft limit on open files, and the physical memory.
    let fileLimit: Int = {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0, limit.rlim_cur < UInt64(Int.max) else { return 1 << 20 }
        return Int(limit.rlim_cur)
    }()
    let physicalBytes: Int = Int(sysconf(Int32(_SC_PHYS_PAGES))) * Int(sysconf(Int32(_SC_PAGESIZE)))

    /// The process now.
    static func sample() -> Sample {
        Sample(residentBytes: residentBytes(), openFiles: openFiles())
    }

    /// Resident memory, from /proc/self/statm (pages).
    static func residentBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = read(fd, &buffer, 127)
        guard n > 0 else { return 0 }
        let fields = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Open file descriptors, from /proc/self/fd (not counting the one that reads it).
    static func openFiles() -> Int {
        guard let dir = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(dir) }
        var n = 0
        while let entry = readdir(dir) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { n += 1 }
        }
        return max(0, n - 1)
    }

    /// A world ended: measure, warn once about each kind of growth, and stop the campaign
    /// when the next worlds would exhaust the process.
    func worldEnded() {
        worlds += 1
        let s = Self.sample()
        latest = s
        peak = Sample(residentBytes: max(peak.residentBytes, s.residentBytes), openFiles: max(peak.openFiles, s.openFiles))
        if worlds == Self.baselineWorlds { baseline = s }
        guard let b = baseline, worlds > Self.baselineWorlds else {
            // Before the baseline too: never let the process run out of file handles.
            if !stopped, s.openFiles >= fileLimit / 2 {
                stopped = true
                CampaignNotes.stop("the async host: \(s.openFiles) open file handles after \(worlds) worlds, half the limit of \(fileLimit)")
            }
            return
        }
        let perWorld = { (grew: Int) in String(format: "%.1f", Double(grew) / Double(self.worlds - Self.baselineWorlds)) }
        if !warnedFiles, s.openFiles >= b.openFiles + Self.fileGrowthWarning {
            warnedFiles = true
            warn("open file handles grew from \(b.openFiles) after \(Self.baselineWorlds) worlds to \(s.openFiles) after \(worlds) "
                 + "(about \(perWorld(s.openFiles - b.openFiles)) a world): something each app process opens is never closed "
                 + "(a URLSession never invalidated?); end it in the harness's tearDown (docs/async.md)")
        }
        let mb = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1_048_576) }
        if !warnedMemory, s.residentBytes >= 2 * b.residentBytes, s.residentBytes - b.residentBytes >= Self.memoryGrowthWarningBytes {
            warnedMemory = true
            warn("resident memory grew from \(mb(b.residentBytes)) after \(Self.baselineWorlds) worlds to \(mb(s.residentBytes)) after "
                 + "\(worlds) (about \(String(format: "%.1f", Double(s.residentBytes - b.residentBytes) / 1024 / Double(worlds - Self.baselineWorlds))) KB a world): "
                 + "something each app process leaves behind is never freed (a stream pipeline still waiting?); end it in the "
                 + "harness's tearDown (docs/async.md)")
        }
        guard !stopped else { return }
        if s.openFiles >= fileLimit / 2 {
            // Half the limit: one more world of many processes could take the rest.
            stopped = true
            CampaignNotes.stop("the async host: \(s.openFiles) open file handles after \(worlds) worlds, half the limit of \(fileLimit) "
                               + "(\(b.openFiles) after \(Self.baselineWorlds) worlds)")
        } else if physicalBytes > 0, s.residentBytes >= physicalBytes / 2 {
            stopped = true
            CampaignNotes.stop("the async host: resident memory \(mb(s.residentBytes)), half the machine's (\(mb(b.residentBytes)) after \(Self.baselineWorlds) worlds)")
        }
    }

    func warn(_ text: String) {
        printError("simkit-async: warning: \(text)\n")
        CampaignNotes.warn(text)
    }
}

#if canImport(Glibc)
let RLIMIT_NOFILE_VALUE = Int32(RLIMIT_NOFILE.rawValue)
#endif
