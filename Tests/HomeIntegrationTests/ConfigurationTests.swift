import Foundation
import HomeServer
@_spi(Wire) import HomeTesting
import Testing

/// homed's configuration file, as homed reads it at start and at SIGHUP.
@Suite("the configuration file, in a real homed", .timeLimit(.safetyNet))
struct ConfigurationTests {
    static let other = SocketSecurityTests.otherUID

    private func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// homectl as uid and gid 65534, with no supplementary groups.
    private func asOther(_ socket: String, _ arguments: String...) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try run(
            "/usr/bin/setpriv",
            ["--reuid", Self.other, "--regid", Self.other, "--clear-groups", builtExecutable("homectl")] + arguments,
            environment: ["HOMED_SOCKET": socket])
    }

    @Test("the file's settings apply, and a flag wins over the file", .enabled(if: SocketSecurityTests.canSwitchUser))
    func settingsApply() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-config")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o755)
        let config = directory + "/homed.yaml"
        try write(
            """
            socket: {mode: "0666"}
            roles: {viewers: ["\(Self.other)"], default: none}
            journal: {capacity: 7}
            """, to: config)
        let daemon = try DaemonProcess(
            arguments: ["--in-memory", "--demo", "--no-simulator", "--config", config], directory: directory)
        var info = stat()
        #expect(lstat(daemon.socketPath, &info) == 0 && info.st_mode & 0o777 == 0o666)
        let status = try asOther(daemon.socketPath, "status")
        #expect(status.stdout.contains("viewer (uid \(Self.other)"), "\(status.stdout) \(status.stderr)")

        let flagged = TestServer.makeTemporaryDirectory("homed-config-flag")
        defer { try? FileManager.default.removeItem(atPath: flagged) }
        let withFlag = try DaemonProcess(
            arguments: ["--in-memory", "--config", config, "--socket-mode", "0600"], directory: flagged)
        #expect(lstat(withFlag.socketPath, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test("a bad file is refused at start with its line and key, and nothing is made on disk")
    func badFileRefused() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-bad-config")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/homed.yaml"
        let data = directory + "/data"
        mkdir(data, 0o700)
        func start() throws -> (status: Int32, stdout: String, stderr: String) {
            try run(
                builtExecutable("homed"),
                ["--socket", data + "/homed.sock", "--db", data + "/homed.sqlite", "--config", config])
        }
        try write("socket:\n  mode: \"0660\"\n  gruop: homed\n", to: config)
        var result = try start()
        #expect(result.status == 3)
        #expect(
            result.stderr.contains("\(config):3: unknown key 'socket.gruop'; socket holds group, mode, path"),
            "\(result.stderr)")

        try write("journal:\n  capacity: many\n", to: config)
        result = try start()
        #expect(result.status == 3)
        #expect(result.stderr.contains("\(config):2: journal.capacity must be a whole number"), "\(result.stderr)")

        try write("roles:\n  viewers: [nosuchuser-h2]\n", to: config)
        result = try start()
        #expect(result.status == 3)
        #expect(
            result.stderr.contains("\(config):2 (roles.viewers): no user named 'nosuchuser-h2' on this system"),
            "\(result.stderr)")

        try write("journal: {capacity: 0}\n", to: config)
        result = try start()
        #expect(result.status == 3)
        #expect(result.stderr.contains("\(config):1 (journal.capacity) must be positive, not 0"), "\(result.stderr)")

        result = try run(
            builtExecutable("homed"), ["--socket", data + "/homed.sock", "--config", directory + "/missing.yaml"])
        #expect(result.status == 5)
        #expect(result.stderr.contains("the configuration file \(directory)/missing.yaml does not exist"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: data).isEmpty)
    }

    @Test(
        "SIGHUP reads the file again: new roles and limits apply to the next call; a bad file is refused and the old one kept",
        .enabled(if: SocketSecurityTests.canSwitchUser))
    func reload() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-reload-config")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o755)
        let config = directory + "/homed.yaml"
        let socket = directory + "/homed.sock"
        try write("socket: {mode: \"0666\"}\nroles: {default: none}\n", to: config)
        let daemon = try ChildProcess(
            builtExecutable("homed"),
            ["--in-memory", "--demo", "--no-simulator", "--socket", socket, "--config", config])
        defer {
            daemon.signal(SIGKILL)
            daemon.wait(seconds: 5)
        }
        let deadline = Date().addingTimeInterval(patience)
        while access(socket, F_OK) != 0 && Date() < deadline { usleep(10_000) }
        #expect(try asOther(socket, "status").status == 7)

        try write(
            """
            socket: {mode: "0666"}
            roles: {users: ["\(Self.other)"], default: none}
            journal: {capacity: 9}
            subscriptions: {queue_limit: 7}
            log: {level: debug}

            """,
            to: config)
        daemon.signal(SIGHUP)
        var status = try asOther(socket, "status")
        while status.status != 0 && Date() < deadline {
            usleep(20_000)
            status = try asOther(socket, "status")
        }
        #expect(status.stdout.contains("user (uid \(Self.other)"), "\(status.stdout) \(status.stderr)")

        // The new default queue limit applies to the next subscription, on a connection opened before or after.
        let watch = try ChildProcess(builtExecutable("homectl"), ["watch"], environment: ["HOMED_SOCKET": socket])
        defer {
            watch.signal(SIGKILL)
            watch.wait(seconds: 5)
        }
        var stats = ""
        while !stats.contains("queue_limit") && Date() < deadline {
            usleep(20_000)
            stats = try run(builtExecutable("homectl"), ["stats", "--json"], environment: ["HOMED_SOCKET": socket])
                .stdout.filter { !$0.isWhitespace }
        }
        #expect(stats.contains("\"queue_limit\":7,"), "\(stats)")

        // A file that does not load changes nothing: the roles in force stay.
        try write("roles: {users: [\"\(Self.other)\"\n", to: config)
        daemon.signal(SIGHUP)
        // Until homed has read it and said so (its log, read as it comes: each read
        // waits for more).
        var log = ""
        while !log.contains("reload refused") && daemon.process.isRunning { log += daemon.standardError }
        #expect(try asOther(socket, "set", "Living Room/Lamp/Brightness", "9").status == 0)

        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        log += daemon.standardError
        #expect(log.contains("reload: roles: default none → user: uid \(Self.other); default none"), "\(log)")
        #expect(log.contains("reload: journal.capacity: 100000 → 9 (takes effect at the next start)"), "\(log)")
        #expect(log.contains("reload: subscriptions.queue_limit: 1024 → 7\n"), "\(log)")
        #expect(log.contains("reload: log.level: info → debug\n"), "\(log)")
        #expect(log.contains("reload refused; the configuration in force is kept"), "\(log)")
    }
}
