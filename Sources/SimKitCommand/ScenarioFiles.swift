import Foundation
import ScenarioLanguage
import SimKit

/// The scenario files named on the command line: files as given, directories walked for
/// every `*.scenario` inside (sorted by path). Unreadable paths are bad input.
enum ScenarioFiles {
    /// One file's path and text.
    struct Source { var path: String; var text: String }

    /// Expands `paths` into files; throws `UsageError` for a missing path or an empty list.
    static func expand(_ paths: [String]) throws -> [String] {
        guard !paths.isEmpty else { throw UsageError("no scenario files given") }
        var files: [String] = []
        let fm = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw UsageError("cannot read '\(path)': no such file or directory")
            }
            if isDirectory.boolValue {
                guard let walker = fm.enumerator(atPath: path) else { throw UsageError("cannot read directory '\(path)'") }
                var found: [String] = []
                for case let relative as String in walker where relative.hasSuffix(".scenario") {
                    found.append((path as NSString).appendingPathComponent(relative))
                }
                files += found.sorted()
            } else {
                files.append(path)
            }
        }
        return files
    }

    /// Why a file was not read: `FILE: error: …` (printed as is; the command exits 2).
    struct ReadError: Error { var message: String }

    /// Reads a file as bytes. A file larger than `ScenarioLimits.maxFileBytes` is refused
    /// from its size, before any of it is read.
    static func read(_ path: String) -> Result<[UInt8], ReadError> {
        let limit = ScenarioLimits.maxFileBytes
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber,
           size.uint64Value > UInt64(limit) {
            return .failure(ReadError(message: "\(path): error: file is larger than \(limit) bytes"))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(ReadError(message: "\(path): error: cannot read '\(path)'"))
        }
        return .success(Array(data))
    }
}
