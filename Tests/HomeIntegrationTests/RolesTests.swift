import Foundation
import HomeServer
@_spi(Wire) import HomeTesting
import Testing

/// Roles from the peer's credentials, with homectl run as another uid (`setpriv`,
/// as root: CI runs the tests as root).
@Suite("roles from peer credentials", .timeLimit(.safetyNet), .enabled(if: SocketSecurityTests.canSwitchUser))
struct RolesTests {
    static let other = SocketSecurityTests.otherUID

    /// A daemon whose socket anyone may open, so that the roles alone decide.
    private func daemon(_ arguments: [String]) throws -> DaemonProcess {
        let daemon = try DaemonProcess(
            arguments: ["--in-memory", "--demo", "--no-simulator", "--socket-mode", "0666"] + arguments)
        chmod(daemon.directory, 0o755)
        return daemon
    }

    /// homectl as uid and gid 65534 (nobody, nogroup), with no supplementary groups.
    private func asOther(_ daemon: DaemonProcess, _ arguments: String...) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try run(
            "/usr/bin/setpriv",
            ["--reuid", Self.other, "--regid", Self.other, "--clear-groups", builtExecutable("homectl")] + arguments,
            environment: daemon.environment)
    }

    @Test("a viewer reads; a write needs user and a layout change admin, each refused naming the role and the uid")
    func viewer() throws {
        let daemon = try daemon(["--viewers", Self.other])
        let read = try asOther(daemon, "get", "Living Room/Lamp/Brightness")
        #expect(read.status == 0, "\(read.stderr)")
        let before = try daemon.homectl("get", "Living Room/Lamp/Brightness").stdout

        let write = try asOther(daemon, "set", "Living Room/Lamp/Brightness", "7")
        // Said in the command line's terms: what was asked, the role it needs, who
        // the user is and how an admin grants it.
        #expect(write.status == 7)
        #expect(
            write.stderr.contains(
                "homectl: setting values needs the user role; you (nobody, uid \(Self.other)) are a viewer; an admin "
                    + "adds you under `roles.users` in homed's configuration file, then "), "\(write.stderr)")
        let layout = try asOther(daemon, "rooms", "add", "Intruder")
        #expect(layout.status == 7)
        #expect(
            layout.stderr.contains(
                "changing the home (homes, rooms, zones, names, groups, scenes, triggers) needs the "
                    + "admin role; you (nobody, uid \(Self.other)) are a viewer; an admin adds you under `roles.admins`"
            ),
            "\(layout.stderr)")
        // Refused is refused: nothing changed.
        #expect(try daemon.homectl("get", "Living Room/Lamp/Brightness").stdout == before)
        #expect(try !daemon.homectl("rooms").stdout.contains("Intruder"))

        // Each refusal is in the audit (once per method per connection: each homectl
        // is a connection of its own), with the uid that was refused.
        _ = try asOther(daemon, "set", "Living Room/Lamp/Brightness", "8")
        let audit = try daemon.homectl("history", "--kind", "audit", "-o", "json")
        let notes = (try JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [[String: Any]]) ?? []
        let denials = notes.filter { $0["action"] as? String == "permission-denied" }
        #expect(denials.count == 3, "\(audit.stdout)")  // two writes, one layout change
        #expect(denials.allSatisfy { ($0["origin"] as? [String: Any])?["uid"] as? Int == Int(Self.other) })
        #expect(denials.contains { ($0["detail"] as? String)?.contains("WriteCharacteristics") == true })

        let status = try asOther(daemon, "status")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("viewer (uid \(Self.other), pid "), "\(status.stdout)")
        let own = try daemon.homectl("status", "--json")
        #expect(own.stdout.contains("\"role\":\"admin\""), "\(own.stdout)")
        #expect(own.stdout.contains("\"uid\":\(getuid())"), "\(own.stdout)")
    }

    @Test("a user writes values and runs scenes, but may not change the layout")
    func user() throws {
        let daemon = try daemon(["--users", Self.other, "--default-role", "none"])
        let write = try asOther(daemon, "set", "Living Room/Lamp/Brightness", "7")
        #expect(write.status == 0, "\(write.stderr)")
        #expect(try daemon.homectl("get", "Living Room/Lamp/Brightness").stdout.contains("7"))
        let layout = try asOther(daemon, "rooms", "add", "Intruder")
        #expect(layout.status == 7)
        #expect(
            layout.stderr.contains("needs the admin role; you (nobody, uid \(Self.other)) are a user"),
            "\(layout.stderr)")
    }

    @Test("a group's role reaches its members; with no role at all every call is refused")
    func groupsAndNone() throws {
        let byGroup = try daemon(["--viewers", "@\(Self.other)", "--default-role", "none"])
        let status = try asOther(byGroup, "status")
        #expect(status.stdout.contains("viewer (uid \(Self.other)"), "\(status.stdout) \(status.stderr)")

        let nobody = try daemon(["--default-role", "none"])
        let refused = try asOther(nobody, "status")
        #expect(refused.status == 7)
        #expect(
            refused.stderr.contains(
                "talking to homed needs the viewer role; you (nobody, uid \(Self.other)) have no role"),
            "\(refused.stderr)")
        // Anyone else who may open the socket gets the default role, user unless set.
        let household = try daemon([])
        #expect(try asOther(household, "status").stdout.contains("user (uid \(Self.other)"))
    }

    @Test("stats show every connection's uid, pid and role")
    func stats() throws {
        let daemon = try daemon(["--viewers", Self.other])
        let watcher = try ChildProcess(
            "/usr/bin/setpriv",
            [
                "--reuid", Self.other, "--regid", Self.other, "--clear-groups", builtExecutable("homectl"), "watch",
            ], environment: daemon.environment)
        defer {
            watcher.signal(SIGKILL)
            watcher.wait(seconds: 5)
        }
        let deadline = Date().addingTimeInterval(patience)
        var stats = ""
        while Date() < deadline {
            stats = try daemon.homectl("stats", "--json").stdout
            if stats.contains("\"uid\":\(Self.other)") { break }
            usleep(50_000)
        }
        #expect(stats.contains("\"uid\":\(Self.other)"), "\(stats)")
        #expect(stats.contains("\"pid\":\(watcher.process.processIdentifier)"), "\(stats)")
        #expect(stats.contains("\"role\":\"viewer\""), "\(stats)")
        let table = try daemon.homectl("stats").stdout
        #expect(table.contains("UID") && table.contains("ROLE"), "\(table)")
        // Other connections' figures are the admin's to see.
        let denied = try asOther(daemon, "stats")
        #expect(denied.stderr.contains("the daemon's statistics needs the admin role"), "\(denied.stderr)")
    }

    @Test("a role naming a user or group that does not exist, or an unknown role, is refused at start")
    func badRoles() throws {
        let unknownUser = try run(
            builtExecutable("homed"), ["--in-memory", "--socket", "/tmp/unused.sock", "--viewers", "nosuchuser-h1"])
        #expect(unknownUser.status == 3)
        #expect(
            unknownUser.stderr.contains("--viewers: no user named 'nosuchuser-h1' on this system"),
            "\(unknownUser.stderr)")
        let unknownGroup = try run(
            builtExecutable("homed"), ["--in-memory", "--socket", "/tmp/unused.sock", "--admins", "@nosuchgroup-h1"])
        #expect(unknownGroup.status == 3)
        #expect(unknownGroup.stderr.contains("--admins: no group named 'nosuchgroup-h1'"), "\(unknownGroup.stderr)")
        let unknownRole = try run(
            builtExecutable("homed"), ["--in-memory", "--socket", "/tmp/unused.sock", "--default-role", "boss"])
        #expect(unknownRole.status != 0)
        #expect(unknownRole.stderr.contains("unknown role 'boss'"), "\(unknownRole.stderr)")
        #expect(access("/tmp/unused.sock", F_OK) != 0)
    }

    @Test("--socket-mode and --socket-group set the socket's mode and group")
    func socketModeAndGroup() throws {
        let daemon = try DaemonProcess(
            arguments: ["--in-memory", "--socket-mode", "0640", "--socket-group", Self.other])
        var info = stat()
        #expect(lstat(daemon.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o640)
        #expect(info.st_gid == UInt32(Self.other)!)
    }
}
