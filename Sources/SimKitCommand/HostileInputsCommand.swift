import Foundation
import SimKit
import ScenarioLanguage
import ScenarioSearch

/// `simkit hostile-inputs` (hidden; used by `scripts/hostile-inputs.sh`): generates
/// hostile scenario files (`HostileInputs`) and checks each in this process: a located
/// error, or a run under an event budget that ends. A trap ends the process, so the
/// script runs it in chunks and counts a chunk that dies file by file.
enum HostileInputsCommand {
    static let help = """
    usage: simkit hostile-inputs [--from N] [--count N] [--budget EVENTS] [--run-devices N] [--slow SECONDS] [--print]

    Checks files --from ..< --from + --count of the hostile-input generator: each must
    give a located error or a run that ends (event budget --budget, default 20000; files
    with more than --run-devices devices, default 10000, are compiled, not run). A file
    that takes longer than --slow seconds (default 10) counts as a hang. --print prints
    the files instead. The last line is machine-readable:
    'hostile-inputs: files=N error=… passed=… failed=… incomplete=… tooLargeToRun=… unlocatedError=… hang=…'

    Exit: 0 every file gave a located error or a run that ended, 1 otherwise, 2 bad input.

    """

    static func run(_ argv: [String]) throws -> Int32 {
        let a = try Arguments(argv, switches: ["print"], options: ["from", "count", "budget", "run-devices", "slow"])
        if a.has("help") { print(help, terminator: ""); return 0 }
        let from = try a.uint("from", default: 0)
        let count = try a.uint("count", default: 1_000, range: 1...10_000_000)
        let budget = try a.uint("budget", default: 20_000, range: 1...2_000_000_000)
        let runDevices = try a.uint("run-devices", default: 10_000, range: 0...ScenarioLimits.maxDevices)
        let slow = Double(try a.uint("slow", default: 10, range: 1...3_600))
        var counts = [HostileInputs.Outcome: Int]()
        var hangs = 0, slowest = 0.0
        for i in from..<(from + count) {
            let text = HostileInputs.file(i)
            if a.has("print") { print("# hostile file \(i)\n" + text); continue }
            let t0 = monotonicSeconds()
            let outcome = HostileInputs.check(text, file: "hostile-\(i).scenario", eventBudget: budget, runDevicesMax: runDevices)
            let seconds = monotonicSeconds() - t0
            slowest = max(slowest, seconds)
            if seconds > slow { hangs += 1; printError("simkit hostile-inputs: file \(i) took \(String(format: "%.1f", seconds)) s") }
            counts[outcome, default: 0] += 1
            if outcome == .unlocatedError { printError("simkit hostile-inputs: file \(i): an error without a location:\n\(text)") }
        }
        if a.has("print") { return 0 }
        let fields = HostileInputs.Outcome.allCases.map { "\($0.rawValue)=\(counts[$0, default: 0])" }.joined(separator: " ")
        print("hostile-inputs: files=\(count) \(fields) hang=\(hangs) slowest=\(String(format: "%.2f", slowest))s")
        return counts[.unlocatedError, default: 0] == 0 && hangs == 0 ? 0 : 1
    }
}
