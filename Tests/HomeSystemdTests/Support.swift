import Foundation
import Testing

/// A fresh directory, removed with everything in it when the value goes.
final class TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/homed-systemd-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ProbeError("mkdtemp failed: \(errno)") }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// How long, in seconds, a test waits for a process to exit or listen before it calls
/// it a hang: only a safety net, since every wait ends as soon as its condition holds;
/// minutes, since on a busy machine a step may wait long for a core.
let patience: Double = 300

struct ProbeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A Unix socket of `type` bound at `path`, listening if asked; close-on-exec, so that
/// no process other tests start inherits it.
func unixSocket(_ type: __socket_type, at path: String, listening: Bool = false) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw ProbeError("socket: \(errno)") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard bound == 0 else { throw ProbeError("bind \(path): \(errno)") }
    if listening { guard listen(fd, 8) == 0 else { throw ProbeError("listen: \(errno)") } }
    return fd
}

/// A UDP socket on the loopback address, bound to a port the kernel picks.
func udpSocket() throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw ProbeError("socket: \(errno)") }
    return fd
}

/// The built `systemd-probe` (Tests/SystemdProbe): `$HOMED_BUILD_DIR`, else this
/// repository's .build/debug.
let probeExecutable: String = {
    if let directory = ProcessInfo.processInfo.environment["HOMED_BUILD_DIR"] { return directory + "/systemd-probe" }
    var repository = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { repository.deleteLastPathComponent() }
    return repository.appendingPathComponent(".build/debug/systemd-probe").path
}()

struct ProbeResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Starts `argv` with each of `fds` at 3, 4, … (as systemd passes sockets), and
/// `environment` over this process's own environment (less LISTEN_* and NOTIFY_SOCKET);
/// returns its exit status and output. The parent's own descriptors 3, 4, … are not touched.
func spawn(_ argv: [String], passing fds: [Int32] = [], environment: [String: String] = [:]) throws -> ProbeResult {
    // Above any descriptor the child gets, so no dup2 overwrites a source still to come.
    let sources = fds.map { fcntl($0, F_DUPFD_CLOEXEC, 100) }
    defer { for fd in sources { close(fd) } }
    var output: [Int32] = [0, 0]
    var errors: [Int32] = [0, 0]
    // Socket pairs rather than pipes: made close-on-exec at once (Glibc's module lacks
    // pipe2), so no child another test starts meanwhile holds them open.
    let pairType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    guard socketpair(AF_UNIX, pairType, 0, &output) == 0, socketpair(AF_UNIX, pairType, 0, &errors) == 0 else {
        throw ProbeError("socketpair: \(errno)")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, output[1], 1)
    posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
    for (index, fd) in sources.enumerated() { posix_spawn_file_actions_adddup2(&actions, fd, 3 + Int32(index)) }

    var merged = ProcessInfo.processInfo.environment.filter {
        !$0.key.hasPrefix("LISTEN_") && $0.key != "NOTIFY_SOCKET"
    }
    merged.merge(environment) { _, new in new }
    let cArguments = argv.map { strdup($0) } + [nil]
    let cEnvironment = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in cArguments { free(pointer) }
        for pointer in cEnvironment { free(pointer) }
    }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, cEnvironment)
    close(output[1])
    close(errors[1])
    defer {
        close(output[0])
        close(errors[0])
    }
    guard spawned == 0 else { throw ProbeError("posix_spawn \(argv[0]): \(spawned)") }
    let stdout = readToEnd(output[0])
    let stderr = readToEnd(errors[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return ProbeResult(status: BackgroundProcess.code(status), stdout: stdout, stderr: stderr)
}

/// `systemd-probe` started the way systemd starts a socket-activated service: `fds` at
/// 3, 4, …, LISTEN_FDS, LISTEN_FDNAMES and LISTEN_PID (the probe's own pid, unless
/// `otherPID`: then the variables are for another process).
func runProbe(passing fds: [Int32], names: [String]? = nil, otherPID: Bool = false) throws -> ProbeResult {
    // sh learns its own pid ($$) and exec keeps it: LISTEN_PID names the probe.
    let script = "LISTEN_PID=\(otherPID ? "1" : "$$"); export LISTEN_PID; exec \"$0\" \"$@\""
    var environment = ["LISTEN_FDS": "\(fds.count)"]
    if let names { environment["LISTEN_FDNAMES"] = names.joined(separator: ":") }
    return try spawn(["/bin/sh", "-c", script, probeExecutable, "listen"], passing: fds, environment: environment)
}

/// A process running while the test goes on, its stdout and stderr in files of
/// `directory`. Not Foundation's Process: that takes a child for exited as soon as a
/// descriptor it passed is closed, which systemd-socket-activate does to every
/// descriptor it does not pass on.
final class BackgroundProcess {
    let pid: pid_t
    private let stdoutPath: String
    private let stderrPath: String
    private var exitStatus: Int32?

    init(_ argv: [String], outputIn directory: String) throws {
        stdoutPath = directory + "/stdout"
        stderrPath = directory + "/stderr"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let environment = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("LISTEN_") && $0.key != "NOTIFY_SOCKET"
        }
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, cEnvironment)
        guard spawned == 0 else { throw ProbeError("posix_spawn \(argv[0]): \(spawned)") }
        self.pid = pid
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = finish()
        }
    }

    var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return true }
        exitStatus = Self.code(status)
        return false
    }

    /// Waits for the process to exit (killing it after `patience` s); its status and output.
    func finish() -> ProbeResult {
        let deadline = Date().addingTimeInterval(patience)
        while isRunning {
            if Date() >= deadline { kill(pid, SIGKILL) }
            usleep(10_000)
        }
        let stdout = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return ProbeResult(status: exitStatus ?? -1, stdout: stdout, stderr: stderr)
    }

    /// WEXITSTATUS, or 128 + the signal that ended it.
    static func code(_ status: Int32) -> Int32 {
        (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

private func readToEnd(_ fd: Int32) -> String {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
