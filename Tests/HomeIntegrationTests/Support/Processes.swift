import Foundation
import Glibc
import HomeServer
@_spi(Wire) import HomeTesting

/// The repository's root, found from this file's path (works from any clone).
let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// A built executable of this package (`swift build` puts them in .build/debug).
func builtExecutable(_ name: String) -> String {
    if let override = ProcessInfo.processInfo.environment["HOMED_BUILD_DIR"] {
        return override + "/" + name
    }
    return repositoryRoot.appendingPathComponent(".build/debug/\(name)").path
}

/// A child process with pipes for stdout and stderr, killed if the test forgets.
///
/// Its `STATE_DIRECTORY` and `CONFIGURATION_DIRECTORY` are a directory of its own
/// (unless the test sets them), removed with it: a homed started without --db keeps
/// its database there, a program without --state-dir its state, and no child reads
/// the machine's configuration or writes to its state (as root, /etc/homed and
/// /var/lib/homed).
///
/// Started with posix_spawn (the daemon's `SpawnedProcess`), not Foundation's
/// `Process`: on this toolchain `Process.run()` now and then over-reads
/// `/proc/self/fd` and crashes the whole test run.
final class ChildProcess: @unchecked Sendable {
    let process: SpawnedProcess
    let stdout: ReadEnd
    let stderr: ReadEnd
    private var stdoutBuffer: [UInt8] = []
    private let ownDirectory: String

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        ownDirectory = TestServer.makeTemporaryDirectory("homed-child")
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HOMED_SOCKET")
        env["STATE_DIRECTORY"] = ownDirectory
        env["CONFIGURATION_DIRECTORY"] = ownDirectory
        for (key, value) in environment { env[key] = value }
        let out = try ReadEnd.pipe()
        let err = try ReadEnd.pipe()
        defer {
            close(out.writeEnd)
            close(err.writeEnd)
        }
        stdout = out.read
        stderr = err.read
        do throws(SpawnedProcess.StartFailure) {
            process = try SpawnedProcess(
                executable, arguments, environment: env, stdout: out.writeEnd, stderr: err.writeEnd)
        } catch {
            throw RawError("\(error)")
        }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: ownDirectory)
    }

    /// Waits for the process to exit (killing it after `seconds`, -1); returns its status.
    @discardableResult
    func wait(seconds: Double = patience) -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// The next line of stdout, waiting at most `seconds`; nil at end of output or timeout.
    func readLine(seconds: Double = patience) -> String? {
        let fd = stdout.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let newline = stdoutBuffer.firstIndex(of: 10) {
                let line = String(decoding: stdoutBuffer[..<newline], as: UTF8.self)
                stdoutBuffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(remaining * 1000)) > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            stdoutBuffer += chunk[..<count]
        }
    }

    /// Lines of stdout up to and including the first that satisfies `done` (all of
    /// them if the output ends first, or the wait for a line runs out).
    func readLines(until done: (String) -> Bool) -> [String] {
        var lines: [String] = []
        while let line = readLine() {
            lines.append(line)
            if done(line) { break }
        }
        return lines
    }

    var standardError: String {
        String(decoding: stderr.fileHandleForReading.availableData, as: UTF8.self)
    }

    var standardOutputToEnd: String {
        String(decoding: stdoutBuffer + stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}

/// The read end of a child's output pipe.
final class ReadEnd: Sendable {
    let fileHandleForReading: FileHandle

    private init(_ descriptor: Int32) {
        fileHandleForReading = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// A pipe whose ends are closed on exec: a child gets only what it is given.
    static func pipe() throws -> (read: ReadEnd, writeEnd: Int32) {
        var ends: [Int32] = [0, 0]
        guard Glibc.pipe(&ends) == 0 else { throw RawError("pipe: \(String(cString: strerror(errno)))") }
        // Children spawned here close every descriptor above 2 anyway; this is for exec elsewhere.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ReadEnd(ends[0]), ends[1])
    }
}

/// Runs a command to completion and returns (status, stdout, stderr).
func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:],
    seconds: Double = patience
) throws -> (status: Int32, stdout: String, stderr: String) {
    let child = try ChildProcess(executable, arguments, environment: environment)
    // The pipes are read to their end before waiting (a chatty child never blocks on
    // a full pipe), so the deadline is a watchdog: a child that never ends (a watch
    // waiting for an event that never comes) is killed, and the test fails on its
    // status (-1) instead of hanging the suite.
    let killed = KilledFlag()
    let watchdog = DispatchWorkItem { [process = child.process] in
        guard process.isRunning else { return }
        killed.set()
        kill(process.processIdentifier, SIGKILL)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
    let output = child.standardOutputToEnd
    let errors = String(decoding: child.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    watchdog.cancel()
    let status = child.wait(seconds: seconds)
    return (killed.isSet ? -1 : status, output, errors)
}

/// Whether `run`'s watchdog killed its child.
private final class KilledFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// A real `homed` process on a temporary socket, stopped (SIGKILL if need be) at the end.
final class DaemonProcess: @unchecked Sendable {
    let child: ChildProcess
    let directory: String
    let socketPath: String
    /// The directory was made for this daemon alone, so it goes when the daemon does.
    private let ownsDirectory: Bool

    /// - Parameter command: what runs in homed's place, with homed's arguments
    ///   after it (nil: the built homed).
    init(arguments: [String] = ["--demo", "--no-simulator"], directory: String? = nil, command: [String]? = nil)
        throws
    {
        self.ownsDirectory = directory == nil
        self.directory = directory ?? TestServer.makeTemporaryDirectory("homed-proc")
        socketPath = self.directory + "/homed.sock"
        let command = command ?? [builtExecutable("homed")]
        child = try ChildProcess(
            command[0],
            Array(command.dropFirst()) + ["--socket", socketPath, "--log-level", "warning"]
                + (arguments.contains("--db") || arguments.contains("--in-memory")
                    ? [] : ["--db", self.directory + "/homed.sqlite"]) + arguments)
        // Until it serves or exits; the bound is only against a hang.
        let deadline = Date().addingTimeInterval(patience)
        while access(socketPath, F_OK) != 0 || !canConnect() {
            guard Date() < deadline, child.process.isRunning else {
                throw RawError("homed did not start on \(socketPath): \(child.standardError)")
            }
            usleep(20_000)
        }
    }

    private func canConnect() -> Bool { (try? RawConnection(path: socketPath)) != nil }

    var environment: [String: String] { ["HOMED_SOCKET": socketPath] }

    /// How many subscriptions the daemon holds now (`homectl status`).
    func subscriptionCount() throws -> Int {
        let status = try homectl("status", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        guard let count = object?["subscriptions"] as? Int else {
            throw RawError("homectl status --json gave no subscription count: \(status.stdout) \(status.stderr)")
        }
        return count
    }

    /// Waits until the daemon holds at least `count` subscriptions: a watch started
    /// before is subscribed, so the change the test makes next is one it must see.
    func waitForSubscriptions(_ count: Int) throws {
        let deadline = Date().addingTimeInterval(patience)
        while try subscriptionCount() < count {
            guard Date() < deadline else { throw RawError("the daemon never held \(count) subscriptions") }
            usleep(20_000)
        }
    }

    func homectl(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(builtExecutable("homectl"), arguments, environment: environment)
    }

    /// What `homectl watch --snapshot` (JSON lines) with these further arguments prints
    /// up to the snapshot's end marker, then the watch is stopped: it ends when the
    /// snapshot is out, however long that takes (not after a time, as -W would).
    func watchSnapshot(_ arguments: String...) throws -> [String] {
        let watch = try ChildProcess(
            builtExecutable("homectl"), ["watch", "--snapshot", "--json"] + arguments, environment: environment)
        defer {
            watch.signal(SIGKILL)
            watch.wait()
        }
        return watch.readLines { $0.contains("\"kind\":\"snapshot-end\"") }
    }

    deinit {
        if child.process.isRunning {
            child.signal(SIGKILL)
            child.wait(seconds: 5)
        }
        if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }
}
