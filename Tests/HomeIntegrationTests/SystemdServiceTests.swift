import Foundation
import HomeServer
@_spi(Wire) import HomeTesting
import Testing

/// Where Debian's systemd package puts it.
private let socketActivate = "/usr/bin/systemd-socket-activate"

/// The real `homed` as systemd runs it: under systemd-socket-activate (the socket
/// opened for it and passed as fd 3, as homed.socket does) and with NOTIFY_SOCKET.
@Suite(
    "homed as a systemd service",
    .serialized,
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: socketActivate), "needs systemd-socket-activate (systemd)"))
struct SystemdServiceTests {
    @Test("homed adopts the socket systemd-socket-activate passes, serves on it, and leaves its file when it stops")
    func socketActivation() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-activate")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/homed.sock"
        // systemd-socket-activate listens on the path, and at the first connection
        // starts homed with that socket as fd 3 (LISTEN_FDS=1, LISTEN_FDNAMES=homed).
        let activator = try SpawnedProcess([
            socketActivate, "-l", path, "--fdname=homed", builtExecutable("homed"), "--in-memory", "--demo",
            "--no-simulator", "--socket", path, "--log-level", "warning",
        ])
        let deadline = Date().addingTimeInterval(patience)
        while access(path, F_OK) != 0 && Date() < deadline { usleep(10_000) }

        // The first connection waits in the socket's queue while homed starts.
        let status = try run(builtExecutable("homectl"), ["status"], environment: ["HOMED_SOCKET": path])
        #expect(status.status == 0, "\(status.stderr)")
        let set = try run(
            builtExecutable("homectl"), ["set", "Living Room/Lamp/Brightness", "42"],
            environment: ["HOMED_SOCKET": path])
        #expect(set.status == 0, "\(set.stderr)")

        activator.signal(SIGTERM)
        #expect(activator.wait() == 0)
        // The socket belongs to whoever opened it (homed.socket): homed leaves it.
        #expect(access(path, F_OK) == 0)
    }

    @Test("homed tells NOTIFY_SOCKET it is ready once it serves, and that it is stopping at SIGTERM")
    func notify() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-notify")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notifyPath = directory + "/notify"
        let notifications = try DatagramSocket(path: notifyPath)
        let socketPath = directory + "/homed.sock"
        let daemon = try ChildProcess(
            builtExecutable("homed"), ["--in-memory", "--demo", "--no-simulator", "--socket", socketPath],
            environment: ["NOTIFY_SOCKET": notifyPath])
        let ready = try #require(notifications.receive(seconds: patience))
        #expect(ready.split(separator: "\n").contains("READY=1"))
        // Ready means serving: a client is answered at once.
        let status = try run(builtExecutable("homectl"), ["status"], environment: ["HOMED_SOCKET": socketPath])
        #expect(status.status == 0)

        daemon.signal(SIGTERM)
        var stopping = false
        while let message = notifications.receive(seconds: patience) {
            if message.split(separator: "\n").contains("STOPPING=1") {
                stopping = true
                break
            }
        }
        #expect(stopping)
        #expect(daemon.wait() == 0)
    }

    @Test("SIGHUP (systemctl reload) leaves homed serving; it says RELOADING=1, then READY=1")
    func reload() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notifyPath = directory + "/notify"
        let notifications = try DatagramSocket(path: notifyPath)
        let socketPath = directory + "/homed.sock"
        let daemon = try ChildProcess(
            builtExecutable("homed"), ["--in-memory", "--demo", "--no-simulator", "--socket", socketPath],
            environment: ["NOTIFY_SOCKET": notifyPath])
        let ready = try #require(notifications.receive(seconds: patience))
        #expect(ready.split(separator: "\n").contains("READY=1"))

        daemon.signal(SIGHUP)
        let reloading = try #require(notifications.receive(seconds: patience))
        #expect(reloading.split(separator: "\n").contains("RELOADING=1"))
        #expect(reloading.split(separator: "\n").contains { $0.hasPrefix("MONOTONIC_USEC=") })
        let readyAgain = try #require(notifications.receive(seconds: patience))
        #expect(readyAgain.split(separator: "\n").contains("READY=1"))
        let status = try run(builtExecutable("homectl"), ["status"], environment: ["HOMED_SOCKET": socketPath])
        #expect(status.status == 0)
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    @Test("--log-format journal writes <N>-prefixed lines without timestamps")
    func journalFormat() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-journal")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/homed.sock"
        let daemon = try ChildProcess(
            builtExecutable("homed"),
            ["--in-memory", "--demo", "--no-simulator", "--socket", socketPath, "--log-format", "journal"])
        let deadline = Date().addingTimeInterval(patience)
        while access(socketPath, F_OK) != 0 && Date() < deadline && daemon.process.isRunning { usleep(10_000) }
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        let lines = daemon.standardError.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(line.hasPrefix("<6>") || line.hasPrefix("<5>") || line.hasPrefix("<4>"), "\(line)")
        }
        #expect(lines.contains { $0.hasPrefix("<6>listening ") })
    }
}

/// A process started with posix_spawn, its output to /dev/null. Foundation's Process
/// takes a child for exited when a descriptor it passed is closed, and
/// systemd-socket-activate closes every descriptor but the ones it passes on.
private final class SpawnedProcess {
    let pid: pid_t

    init(_ argv: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "HOMED_SOCKET")
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, cEnvironment)
        guard spawned == 0 else { throw RawError("posix_spawn \(argv[0]): \(spawned)") }
        self.pid = pid
    }

    deinit {
        if kill(pid, SIGKILL) == 0 { _ = wait(seconds: 5) }
    }

    func signal(_ signal: Int32) { kill(pid, signal) }

    /// Waits for the process to exit (killing it after `seconds`); its exit status, or -1.
    func wait(seconds: Double = patience) -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result < 0 && errno != EINTR { return -1 }
            if Date() >= deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return -1
            }
            usleep(10_000)
        }
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
    }
}

/// A Unix datagram socket bound at a path: what systemd's NOTIFY_SOCKET is.
private final class DatagramSocket {
    let fd: Int32

    init(path: String) throws {
        guard let fd = boundUnixSocket(at: path, type: Int32(SOCK_DGRAM.rawValue)) else {
            throw RawError("bind \(path): \(errno)")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// The next datagram, waiting at most `seconds`; nil if none came.
    func receive(seconds: Double) -> String? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(seconds * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}
