import Foundation

/// A file or directory that cannot be written, in plain words: `cannot write
/// simkit-out/x.json: permission denied`. Printed as `simkit CMD: error: …` with exit 2.
/// Raw Foundation errors (`NSCocoaErrorDomain …`) never reach the user: every write of the
/// command line goes through the POSIX calls below, whose `errno` maps to words.
struct FileError: Error, CustomStringConvertible {
    /// `permission denied`, `no such directory`, …
    var reason: String
    var description: String
    init(_ what: String, _ path: String, errno code: Int32) {
        reason = plainReason(code)
        description = "cannot \(what) \(path): \(reason)"
    }
    init(path: String, reason: String) {
        self.reason = reason
        description = "cannot write \(path): \(reason)"
    }
}

/// Short words for the `errno` values a write meets; `strerror` for the rest.
func plainReason(_ code: Int32) -> String {
    switch code {
    case EACCES, EPERM: "permission denied"
    case ENOENT: "no such directory"
    case ENOTDIR: "a part of the path is a file, not a directory"
    case EISDIR: "it is a directory"
    case EROFS: "read-only file system"
    case ENOSPC, EDQUOT: "no space left on the device"
    case ENAMETOOLONG: "the name is too long"
    case EEXIST: "a file is in the way"
    default: String(cString: strerror(code)).lowercased()
    }
}

/// Creates `dir` and any missing parents (like `mkdir -p`); returns the directories it
/// created, outermost first, so a probe can remove them again.
@discardableResult
func makeDirectories(_ dir: String) throws -> [String] {
    var created: [String] = []
    var prefix = dir.hasPrefix("/") ? "/" : ""
    for part in dir.split(separator: "/", omittingEmptySubsequences: true) {
        prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + part
        var st = stat()
        if stat(prefix, &st) == 0 {
            if (st.st_mode & S_IFMT) != S_IFDIR { throw FileError("create the directory", dir, errno: ENOTDIR) }
            continue
        }
        if mkdir(prefix, 0o755) != 0, errno != EEXIST { throw FileError("create the directory", prefix, errno: errno) }
        created.append(prefix)
    }
    return created
}

/// Checks, before any seed runs, that files can be written into `dir`: creates it (and its
/// parents) if missing, writes and deletes a probe file, then removes the directories it
/// created, so a run that finds nothing leaves nothing behind.
func checkWritableDirectory(_ dir: String) throws {
    let created = try makeDirectories(dir)
    defer { for d in created.reversed() { rmdir(d) } }
    let probe = (dir as NSString).appendingPathComponent(".simkit-probe-\(getpid())")
    let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0o644)
    if fd < 0 { throw FileError("write", dir, errno: errno) }
    close(fd)
    unlink(probe)
}

/// Checks, before any seed runs, that `path` can be written later by `writeAtomically`:
/// it is not a directory, and its directory takes new files.
func checkWritableFile(_ path: String) throws {
    var st = stat()
    if stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { throw FileError("write", path, errno: EISDIR) }
    let parent = (path as NSString).deletingLastPathComponent
    do { try checkWritableDirectory(parent.isEmpty ? "." : parent) } catch let error as FileError {
        // Name the file asked for, with the reason its directory gave.
        throw FileError(path: path, reason: error.reason)
    }
}

/// Writes `text` to `path` atomically: a temporary file beside it, then a rename, so a
/// reader (or a second Ctrl-C) never sees half a file.
func writeAtomically(_ text: String, to path: String) throws {
    let parent = (path as NSString).deletingLastPathComponent
    if !parent.isEmpty { try makeDirectories(parent) }
    let name = (path as NSString).lastPathComponent
    let tmp = ((parent.isEmpty ? "." : parent) as NSString).appendingPathComponent(".\(name).tmp-\(getpid())")
    let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    if fd < 0 { throw FileError("write", path, errno: errno) }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
        let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            let code = errno
            close(fd); unlink(tmp)
            throw FileError("write", path, errno: code)
        }
        written += n
    }
    close(fd)
    if rename(tmp, path) != 0 {
        let code = errno
        unlink(tmp)
        throw FileError("write", path, errno: code)
    }
}
