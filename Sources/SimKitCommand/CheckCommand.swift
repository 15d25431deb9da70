import Foundation
import Scenarios

/// `simkit check FILE…`: parses and validates scenario files without running them.
enum CheckCommand {
    static let help = """
    usage: simkit check [--strict] FILE|DIR...

    Parses and validates scenario files (SPEC §4) without running them. A directory
    stands for every *.scenario file inside it, sorted by path.
    Prints 'ok FILE' for each good file; errors and warnings go to standard error as
    FILE:LINE:COL: error: ... (or warning: ...) with the line and a caret. A file with
    no devices, no actions, or nothing expected, and a statement that can never fire,
    get a warning.

    options:
      --strict          warnings are errors

    exit codes: 0 every file is valid, 2 bad input (an unreadable, too large or
    invalid file; with --strict, also a file with a warning)

    """

    static func run(_ argv: [String], _ cores: SDKCores = SDKCores()) throws -> Int32 {
        let a = try Arguments(argv, switches: ["strict"], options: [])
        if a.has("help") { print(helpText(help, cores: cores), terminator: ""); return 0 }
        let files = try ScenarioFiles.expand(a.positionals)
        let context = ScenarioRunner.standardContext(cores: cores)
        var bad = false
        for file in files {
            if RunCommand.parseChecked(file, context: context, strict: a.has("strict")) == nil { bad = true } else { print("ok \(file)") }
        }
        return bad ? 2 : 0
    }
}
