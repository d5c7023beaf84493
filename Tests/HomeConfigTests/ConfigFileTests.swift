import Foundation
import HomeConfig
import HomeModel
import Testing

@Suite("the configuration file")
struct ConfigFileTests {
    @Test("every key is read with its kind; one name is a list of one; an empty file has no settings")
    func readsEveryKey() throws {
        let file = try ConfigFile.parse(
            """
            socket:
              path: /run/homed/homed.sock
              mode: "0660"
              group: homed
            database: {path: /var/lib/homed/homed.sqlite, fold_interval_ms: 250}
            journal: {capacity: 5000}
            history: {retention: 30d, audit_retention: 1y, rollup_retention: 2y, keep: [ContactSensorState=1y, "accessory 12=1d"]}
            subscriptions: {queue_limit: 64}
            providers: {timeout_ms: 2000, ping_interval_ms: 100, ping_timeout_ms: 200, startup_grace_ms: 0}
            roles:
              admins: [alice, "@wheel"]
              users: "@homed"
              viewers: []
              default: viewer
            log: {level: debug, format: journal}
            automation: {missed_triggers: catch-up, missed_ends: skip}
            """, path: "homed.yaml")
        #expect(file.string("socket.path") == "/run/homed/homed.sock")
        #expect(file.string("socket.mode") == "0660")
        #expect(file.integer("database.fold_interval_ms") == 250)
        #expect(file.integer("providers.ping_timeout_ms") == 200)
        #expect(file.integer("providers.startup_grace_ms") == 0)
        #expect(file.list("roles.admins") == ["alice", "@wheel"])
        #expect(file.list("roles.users") == ["@homed"])
        #expect(file.list("roles.viewers") == [])
        #expect(file.string("history.retention") == "30d")
        #expect(file.list("history.keep") == ["ContactSensorState=1y", "accessory 12=1d"])
        #expect(file.string("roles.default") == "viewer")
        #expect(file.string("automation.missed_triggers") == "catch-up")
        #expect(file.string("automation.missed_ends") == "skip")
        #expect(file.source("roles.admins") == "homed.yaml:11 (roles.admins)")
        #expect(file.settings.count == ConfigFile.keys.count)
        #expect(try ConfigFile.parse("", path: "empty.yaml").settings.isEmpty)
        #expect(try ConfigFile.parse("# nothing yet\n", path: "empty.yaml").settings.isEmpty)
    }

    @Test("an unknown key is refused with its line and the keys its section holds")
    func unknownKey() {
        expectRefusal(
            "socket:\n  path: /x\n  pth: /y\n",
            "homed.yaml:3: unknown key 'socket.pth'; socket holds group, mode, path")
        expectRefusal(
            "journal: {capacity: 5}\nsokcet: {path: /x}\n",
            "homed.yaml:2: unknown key 'sokcet'; the sections are automation, database, history, journal, log, providers, roles, socket, subscriptions"
        )
        expectRefusal(
            "roles:\n  admin: [alice]\n", "homed.yaml:2: unknown key 'roles.admin'; roles holds admins, default")
    }

    @Test("a value of the wrong kind is refused with its line and key")
    func wrongKind() {
        expectRefusal(
            "journal:\n  capacity: lots\n",
            "homed.yaml:2: journal.capacity must be a whole number (0 or more), not 'lots'")
        expectRefusal(
            "journal:\n  capacity: -5\n", "homed.yaml:2: journal.capacity must be a whole number (0 or more), not '-5'")
        expectRefusal("socket:\n  path: [a, b]\n", "homed.yaml:2: socket.path must be a string, not a list")
        expectRefusal(
            "roles:\n  admins: {alice: 1}\n", "homed.yaml:2: roles.admins must be a list of names, not a mapping")
        expectRefusal(
            "socket: /run/homed.sock\n",
            "homed.yaml:1: socket is a section holding group, mode, path, not '/run/homed.sock'")
    }

    @Test("YAML that does not parse, or is not a mapping, is refused with where")
    func notYAML() {
        expectRefusal("socket:\n  path: [unclosed\n", "homed.yaml: not valid YAML: ")
        expectRefusal("socket:\n  path: [unclosed\n", "line 3")
        expectRefusal("- a\n- b\n", "homed.yaml:1: the file must be a mapping of keys")
    }

    private func expectRefusal(_ text: String, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try ConfigFile.parse(text, path: "homed.yaml")
            Issue.record("accepted: \(text)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .invalidArgument, sourceLocation: sourceLocation)
            #expect(error.message.contains(message), "\(error.message)", sourceLocation: sourceLocation)
        }
    }
}

@Suite("the example configuration")
struct ExampleConfigurationTests {
    @Test("Packaging/config/homed.yaml parses, and once uncommented sets every key")
    func exampleParses() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Packaging/config/homed.yaml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(try ConfigFile.parse(text, path: path).settings.isEmpty)
        // The settings are the lines "  # key: value" (comments in prose have no colon-space value).
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("  # ") && line.dropFirst(4).first?.isLowercase == true && line.contains(": ")
                ? "  " + line.dropFirst(4) : String(line)
        }.joined(separator: "\n")
        let file = try ConfigFile.parse(uncommented, path: path)
        #expect(Set(file.settings.keys) == Set(ConfigFile.keys.keys))
    }
}
