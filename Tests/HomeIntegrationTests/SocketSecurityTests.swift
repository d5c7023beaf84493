import Foundation
@_spi(Wire) import HomeTesting
import Testing

/// The socket's mode and directory: nobody else reaches the daemon or takes its place.
@Suite("socket mode and directory", .timeLimit(.safetyNet))
struct SocketSecurityTests {
    /// An unprivileged uid for clients run with `setpriv` (tests run as root in CI).
    static let otherUID = "65534"
    static let canSwitchUser = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    @Test("under umask 000 the socket never appears with a wider mode than 0600, in 10 starts")
    func neverWider() async throws {
        try await onDedicatedThread { try Self.starts() }
    }

    static func starts() throws {
        for start in 0..<10 {
            let directory = TestServer.makeTemporaryDirectory("homed-umask")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let socket = directory + "/homed.sock"
            let watching = ModeWatcher(path: socket)
            let daemon = try ChildProcess(
                "/bin/sh",
                [
                    "-c", "umask 000; exec \"$0\" \"$@\"", builtExecutable("homed"), "--socket", socket, "--in-memory",
                    "--log-level", "warning",
                ])
            let deadline = Date().addingTimeInterval(patience)
            while access(socket, F_OK) != 0 && Date() < deadline { usleep(1_000) }
            // Under load the watcher's thread may not have run yet: give it the chance
            // to see the socket before the daemon removes it.
            watching.waitUntilSeen(before: deadline)
            daemon.signal(SIGTERM)
            #expect(daemon.wait() == 0)
            let seen = watching.stop()
            #expect(!seen.isEmpty, "start \(start): the socket was never seen")
            #expect(seen == [0o600], "start \(start): modes seen \(seen.map { String($0, radix: 8) })")
        }
    }

    @Test("another uid cannot connect to the socket", .enabled(if: canSwitchUser))
    func otherUserRefused() throws {
        let daemon = try DaemonProcess(arguments: ["--in-memory", "--demo", "--no-simulator"])
        // The test's directory must be reachable for the other uid to try at all.
        chmod(daemon.directory, 0o755)
        let attempt = try run(
            "/usr/bin/setpriv",
            [
                "--reuid", Self.otherUID, "--regid", Self.otherUID, "--clear-groups", builtExecutable("homectl"),
                "rooms", "add", "Intruder",
            ], environment: ["HOMED_SOCKET": daemon.socketPath])
        // Told it is a matter of permission (exit 7, PERMISSION_DENIED), not that no daemon runs (14).
        #expect(attempt.status == 7, "\(attempt.stderr)")
        #expect(
            attempt.stderr.contains(
                "homectl: permission denied on \(daemon.socketPath) (mode 0600, owner root, group root); it admits "
                    + "only its owner, root; to share it, give it a group and mode 0660"), "\(attempt.stderr)")
        #expect(try !daemon.homectl("rooms").stdout.contains("Intruder"))
    }

    @Test("a user outside the socket's group is told to join it, with the command", .enabled(if: canSwitchUser))
    func outsideTheGroup() throws {
        // A group nobody is not in: the daemon's socket is mode 0660, group "adm"-like gid 4 or root's 0.
        let daemon = try DaemonProcess(
            arguments: ["--in-memory", "--demo", "--no-simulator", "--socket-mode", "0660", "--socket-group", "0"])
        chmod(daemon.directory, 0o755)
        let attempt = try run(
            "/usr/bin/setpriv",
            [
                "--reuid", Self.otherUID, "--regid", Self.otherUID, "--clear-groups", builtExecutable("homectl"),
                "status",
            ],
            environment: ["HOMED_SOCKET": daemon.socketPath])
        #expect(attempt.status == 7, "\(attempt.stderr)")
        #expect(
            attempt.stderr.contains(
                "permission denied on \(daemon.socketPath) (mode 0660, owner root, group root); you (nobody, uid 65534) "
                    + "are not in group root: `sudo usermod -aG root nobody`, then log in again"), "\(attempt.stderr)")
    }

    @Test("a socket directory writable by everyone without the sticky bit is refused, and nothing is made in it")
    func worldWritableDirectory() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-open-dir")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o777)
        let result = try run(
            builtExecutable("homed"), ["--socket", directory + "/homed.sock", "--db", directory + "/homed.sqlite"])
        #expect(result.status == 9)
        #expect(
            result.stderr.contains(
                "socket directory \(directory) is writable by everyone (mode 777) without the sticky bit"),
            "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test("a socket directory owned by another uid is refused", .enabled(if: canSwitchUser))
    func foreignDirectory() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-foreign-dir")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chown(directory, UInt32(Self.otherUID)!, UInt32(Self.otherUID)!)
        let result = try run(builtExecutable("homed"), ["--socket", directory + "/homed.sock", "--in-memory"])
        #expect(result.status == 9)
        #expect(result.stderr.contains("belongs to uid \(Self.otherUID)"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }
}

/// Polls a path's mode as fast as it can on a thread of its own, recording every
/// distinct mode a socket there had.
final class ModeWatcher: @unchecked Sendable {
    private let lock = NSLock()
    private var modes = Set<UInt32>()
    private var running = true
    private let finished = DispatchSemaphore(value: 0)

    init(path: String) {
        Thread.detachNewThread { [self] in
            var info = stat()
            while lock.withLock({ running }) {
                if lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK {
                    let mode = UInt32(info.st_mode & 0o7777)
                    lock.withLock { _ = modes.insert(mode) }
                }
            }
            finished.signal()
        }
    }

    func waitUntilSeen(before deadline: Date) {
        while lock.withLock({ modes.isEmpty }) && Date() < deadline { usleep(1_000) }
    }

    func stop() -> Set<UInt32> {
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { modes }
    }
}
