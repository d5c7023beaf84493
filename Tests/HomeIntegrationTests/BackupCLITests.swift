import Foundation
@_spi(Wire) import HomeTesting
import Testing

@Suite("homectl backup", .timeLimit(.safetyNet))
struct BackupCLITests {
    /// The names in a directory, sorted.
    private func listing(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test("a backup of a running daemon is mode 0600, opens with homed --db, and holds the same home")
    func roundTrip() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", "33").status == 0)
        #expect(try daemon.homectl("rooms", "add", "Attic").status == 0)
        let rooms = try daemon.homectl("rooms", "--json").stdout
        let copy = daemon.directory + "/copy.sqlite"
        let backup = try daemon.homectl("backup", copy)
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stdout.hasPrefix("Backed up "))
        #expect(backup.stdout.contains(" bytes to \(copy) (every change up to seq "))
        let attributes = try FileManager.default.attributesOfItem(atPath: copy)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(!listing(daemon.directory).contains { $0.contains("partial") || $0.contains("backup-") })
        // The daemon goes on; the copy is a home of its own.
        #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", "34").status == 0)
        let restored = try DaemonProcess(arguments: ["--db", copy], directory: daemon.directory + "/restored")
        let get = try restored.homectl("get", "Living Room/Lamp/Brightness", "--json")
        let reads = try JSONSerialization.jsonObject(with: Data(get.stdout.utf8)) as? [[String: Any]]
        #expect(reads?.first?["value"] as? Int == 33)
        #expect(try restored.homectl("rooms", "--json").stdout == rooms)
    }

    @Test("a daemon in memory: exit 9 saying so, and no file")
    func inMemory() throws {
        let daemon = try DaemonProcess(arguments: ["--in-memory", "--demo", "--no-simulator"])
        let copy = daemon.directory + "/copy.sqlite"
        let backup = try daemon.homectl("backup", copy)
        #expect(backup.status == 9)
        #expect(backup.stderr.contains("keeps its home in memory (--in-memory): there is no database to back up"))
        #expect(!listing(daemon.directory).contains { $0.contains("copy") })
    }

    @Test("a path homectl cannot write: exit 73 naming it and why, nothing left behind")
    func unwritable() throws {
        let daemon = try DaemonProcess()
        let missing = daemon.directory + "/missing/copy.sqlite"
        let backup = try daemon.homectl("backup", missing)
        #expect(backup.status == 73)
        #expect(backup.stderr.contains("homectl: cannot write the backup to \(missing): No such file or directory"))
        let directory = try daemon.homectl("backup", daemon.directory)
        #expect(directory.status == 73)
        #expect(directory.stderr.contains("it is a directory"))
        let before = listing(daemon.directory)
        #expect(!before.contains { $0.contains("partial") || $0.contains("backup-") })
    }

    @Test(
        "a user who is not an admin: exit 7, PERMISSION_DENIED, and the partial file removed",
        .enabled(if: SocketSecurityTests.canSwitchUser))
    func notAdmin() throws {
        let daemon = try DaemonProcess(
            arguments: ["--demo", "--no-simulator", "--socket-mode", "0666", "--users", SocketSecurityTests.otherUID])
        chmod(daemon.directory, 0o755)
        let out = TestServer.makeTemporaryDirectory("homed-backup-out")
        defer { try? FileManager.default.removeItem(atPath: out) }
        chmod(out, 0o777)
        let backup = try run(
            "/usr/bin/setpriv",
            [
                "--reuid", SocketSecurityTests.otherUID, "--regid", SocketSecurityTests.otherUID, "--clear-groups",
                builtExecutable("homectl"), "backup", out + "/copy.sqlite",
            ],
            environment: daemon.environment)
        #expect(backup.status == 7, "\(backup.stderr)")
        #expect(backup.stderr.contains("admin role"), "\(backup.stderr)")
        #expect(listing(out) == [])
    }
}
