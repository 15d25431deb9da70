import Foundation
import Scenarios

/// `simkit check FILE…`: parses and validates scenario files without running them.
enum CheckCommand {
    static let help = """
    usage: simkit check FILE|DIR...

    Parses and validates scenario files (SPEC §4) without running them. A directory
    stands for every *.scenario file inside it, sorted by path.
    Prints 'ok FILE' for each good file; errors go to standard error as
    FILE:LINE:COL: error: ... with the line and a caret.

    exit codes: 0 every file is valid, 2 bad input (an unreadable or invalid file)

    """

    static func run(_ argv: [String]) throws -> Int32 {
        let a = try Arguments(argv, switches: [], options: [])
        if a.has("help") { print(help, terminator: ""); return 0 }
        let files = try ScenarioFiles.expand(a.positionals)
        let context = ScenarioRunner.standardContext
        var bad = false
        for file in files {
            guard let bytes = ScenarioFiles.read(file) else {
                printError("simkit check: error: cannot read '\(file)'"); bad = true; continue
            }
            let parsed = ScenarioParser.parse(bytes: bytes, file: file, context: context)
            if !parsed.diagnostics.isEmpty { FileHandle.standardError.write(Data(parsed.rendered.utf8)) }
            if parsed.hasErrors { bad = true } else { print("ok \(file)") }
        }
        return bad ? 2 : 0
    }
}
