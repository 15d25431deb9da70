import Foundation
import SimKit
import ScenarioLanguage
import Scenarios

/// The corpus of `simkit fuzz --guided --corpus DIR` on disk: one `.scenario` file per
/// script, named by a hash of its text, read in name order at the start and added to at
/// the end, so a CI job builds on the scripts the last ones found (as Hypothesis's example
/// database does). Any scenario file a person writes may go in too.
enum GuidedCorpus {
    /// The most files read from a corpus folder (a bound on start-up time and memory).
    static let maxFiles = 4_096

    /// The folder's scripts, in file-name order; a missing folder is created and empty.
    /// A file that does not parse is bad input (its diagnostics, then exit 2). At most
    /// `limit` files are read (more is bad input).
    static func load(_ dir: String, cores: SDKCores, limit: Int = maxFiles) throws -> [ScenarioFile] {
        try loadNamed(dir, cores: cores, limit: limit).map(\.scenario)
    }

    /// `load`, with each script's file name.
    static func loadNamed(_ dir: String, cores: SDKCores, limit: Int = maxFiles) throws -> [(name: String, scenario: ScenarioFile)] {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if !fm.fileExists(atPath: dir, isDirectory: &isDir) {
            try checkWritableDirectory(dir)
            return []
        }
        guard isDir.boolValue else { throw UsageError("--corpus \(dir) is not a folder") }
        try checkWritableDirectory(dir)
        let names = try fm.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".scenario") }.sorted()
        guard names.count <= limit else {
            throw UsageError("--corpus \(dir) has \(grouped(names.count)) scenario files; at most \(grouped(limit)) are read "
                             + "(remove some, or make it small with 'simkit corpus distill \(dir)')")
        }
        var scripts: [(name: String, scenario: ScenarioFile)] = []
        for name in names {
            let path = (dir as NSString).appendingPathComponent(name)
            // Errors only: a corpus script expects nothing, and says so in a warning each.
            let bytes: [UInt8]
            switch ScenarioFiles.read(path) {
            case .success(let b): bytes = b
            case .failure(let e): throw UsageError(e.message)
            }
            let parsed = ScenarioParser.parse(bytes: bytes, file: path, context: ScenarioRunner.standardContext(cores: cores))
            guard let scenario = parsed.scenario, !parsed.hasErrors else {
                let errors = parsed.diagnostics.filter { $0.severity == .error }
                FileHandle.standardError.write(Data(Diagnostic.render(errors).utf8))
                throw UsageError("--corpus: \(path) is not a valid scenario (errors above)")
            }
            scripts.append((name, scenario))
        }
        return scripts
    }

    /// Writes `scripts` into `dir`, one file each, skipping those already there; the
    /// number of files written.
    static func save(_ scripts: [ScenarioFile], to dir: String) throws -> Int {
        var written = 0
        for s in scripts {
            let text = ScenarioPrinter.print(s)
            let path = (dir as NSString).appendingPathComponent("g-\(hash(text)).scenario")
            if FileManager.default.fileExists(atPath: path) { continue }
            try writeAtomically(text, to: path)
            written += 1
        }
        return written
    }

    /// Sixteen hex digits of FNV-1a over the text: a stable name for a script.
    static func hash(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return String(h, radix: 16).leftPadded(to: 16)
    }
}

private extension String {
    func leftPadded(to n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
