import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a transport gave no reply line.
package enum TransportFailure: Error, Equatable, Sendable {
    /// No whole line came back within the bound (wall-clock seconds).
    case timedOut(seconds: Double, partial: String)
    /// The other side closed the connection (the process exited); `status` when known.
    case closed(partial: String, status: Int32?)
    /// A line longer than `ProcessTransport.lineLimit`.
    case tooLong(bytes: Int)
    /// The transport could not be started or written: the reason.
    case broken(String)
    /// HTTP: the server answered a status other than 200.
    case httpStatus(Int, body: String)
    /// HTTP: an answer SimKit cannot read as HTTP/1.x (why; the transport's
    /// `answerEvidence` shows what came).
    case unreadable(String)
    /// SimKit was asked to stop while it waited (`WireInterrupt`).
    case interrupted
}

/// Something that carries one message line to a server and one reply line back.
package protocol WireTransport: AnyObject {
    /// Sends `line` (no newline) and waits at most `timeout` seconds of wall time for one
    /// reply line (returned without its newline).
    func exchange(_ line: String, timeout: Double) -> Result<[UInt8], TransportFailure>
    /// Sends `line` (no newline) without waiting for its reply (a batch in flight while
    /// the world runs on); nil when it was written, or why not.
    func sendLine(_ line: String, timeout: Double) -> TransportFailure?
    /// Waits at most `timeout` seconds for the reply line to what `sendLine` sent.
    func receiveLine(timeout: Double) -> Result<[UInt8], TransportFailure>
    /// The last error the server wrote to its standard error (a process), for reports:
    /// bounded, but whole enough to show the exception's message (`StderrTail.lastError`).
    func stderrLastError() -> [String]
    /// HTTP: the last answer as a report shows it (its status line, headers and the first
    /// bytes of its body); empty for a process.
    func answerEvidence() -> [String]
    /// Ends the connection (and the process).
    func close()
}

/// A server process speaking the protocol on its standard input and output: one process,
/// started with `/bin/sh -c 'exec CMD'`, connected by a socket pair (so that a process
/// that exited makes a write fail with an error, not a SIGPIPE that would kill SimKit),
/// with its standard error read on a thread of its own into a bounded tail.
package final class ProcessTransport: WireTransport, @unchecked Sendable {
    /// The longest reply line read: 1 MiB.
    package static let lineLimit = 1 << 20
    /// The standard error kept for reports: the last 16 KiB.
    static let stderrLimit = 16 << 10

    package let command: String
    let process: Process
    /// SimKit's end of the socket pair (non-blocking).
    let fd: Int32
    var buffer: [UInt8] = []
    /// Where `recv` writes, kept from call to call (no 64 KiB allocated per reply).
    var chunk = [UInt8](repeating: 0, count: 65_536)
    var closed = false
    let tail = StderrTail()

    /// Starts `command` in the current directory, with `environment` added to SimKit's own.
    package init(command: String, environment: [String: String] = [:]) throws(TransportFailure) {
        var fds: [Int32] = [0, 0]
        #if canImport(Glibc)
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let type = SOCK_STREAM
        #endif
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw .broken("socketpair failed: errno \(errno)") }
        let child = FileHandle(fileDescriptor: fds[1], closeOnDealloc: false)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "exec " + command]
        if !environment.isEmpty {
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        p.standardInput = child
        p.standardOutput = child
        let err = Pipe()
        p.standardError = err
        do { try p.run() } catch {
            Glibc.close(fds[0]); Glibc.close(fds[1])
            throw .broken("could not start '\(command)': \(error)")
        }
        Glibc.close(fds[1])
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        self.command = command
        process = p
        fd = fds[0]
        let readEnd = err.fileHandleForReading
        let tail = self.tail
        let thread = Thread {
            // Bounded by the process: read returns 0 when it (and every copy of the pipe) is gone.
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(readEnd.fileDescriptor, $0.baseAddress, 4096) }
                if n <= 0 { break }
                tail.append(chunk[0..<n])
            }
            try? readEnd.close()
        }
        thread.start()
    }

    deinit { close() }

    package func exchange(_ line: String, timeout: Double) -> Result<[UInt8], TransportFailure> {
        if let f = sendLine(line, timeout: timeout) { return .failure(f) }
        return receiveLine(timeout: timeout)
    }

    package func receiveLine(timeout: Double) -> Result<[UInt8], TransportFailure> {
        if closed { return .failure(.closed(partial: "", status: exitStatus())) }
        return readLine(until: monotonicSeconds() + timeout, timeout: timeout)
    }

    package func sendLine(_ line: String, timeout: Double) -> TransportFailure? {
        if closed { return .closed(partial: "", status: exitStatus()) }
        let deadline = monotonicSeconds() + timeout
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                switch SocketWait.wait(fd, for: Int16(POLLOUT), until: deadline) {
                case .ready: continue
                case .timedOut: return .timedOut(seconds: timeout, partial: "")
                case .interrupted: return .interrupted
                }
            }
            return .closed(partial: "", status: exitStatus(wait: true))
        }
        return nil
    }

    /// The first line in the buffer, reading more until one is whole or time is up.
    func readLine(until deadline: Double, timeout: Double) -> Result<[UInt8], TransportFailure> {
        var searched = 0
        while true {
            if let nl = buffer[searched...].firstIndex(of: 0x0A) {
                let line = Array(buffer[..<nl])
                buffer.removeSubrange(...nl)
                return .success(line)
            }
            searched = buffer.count
            if buffer.count > Self.lineLimit { return .failure(.tooLong(bytes: buffer.count)) }
            // Wait first: a reply is never there the moment its message left (one syscall saved).
            switch SocketWait.wait(fd, for: Int16(POLLIN), until: deadline) {
            case .ready: break
            case .timedOut: return .failure(.timedOut(seconds: timeout, partial: String(decoding: buffer.prefix(4096), as: UTF8.self)))
            case .interrupted: return .failure(.interrupted)
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 65_536, Int32(MSG_DONTWAIT)) }
            if n > 0 { buffer.append(contentsOf: chunk[0..<n]); continue }
            if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                let partial = String(decoding: buffer, as: UTF8.self)
                buffer.removeAll()
                return .failure(.closed(partial: partial, status: exitStatus(wait: true)))
            }
        }
    }

    /// The process's exit status once it has exited (waiting up to a second for it when
    /// `wait`), or nil.
    func exitStatus(wait: Bool = false) -> Int32? {
        if wait {
            let until = monotonicSeconds() + 1
            while process.isRunning, monotonicSeconds() < until { usleep(2_000) }
        }
        return process.isRunning ? nil : process.terminationStatus
    }

    package func stderrLastError() -> [String] {
        // Give a dying process's last words a moment to arrive.
        usleep(20_000)
        return tail.lastError()
    }

    package func answerEvidence() -> [String] { [] }

    package func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            let until = monotonicSeconds() + 2
            while process.isRunning, monotonicSeconds() < until { usleep(1_000) }
        }
    }

}
