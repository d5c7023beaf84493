import Foundation
import HomeClient
import HomeModel
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Testing

@testable import HomeServer

@Suite("triggers that run a command", .timeLimit(.safetyNet))
struct TriggerCommandTests {
    /// The next `trigger-command` note in the history.
    private func commandNote(_ log: inout EventLog) async throws -> String {
        let events = try await log.events {
            if case .audit(let note) = $0.body { note.action == "trigger-command" } else { false }
        }
        guard case .audit(let note)? = events.last?.body else { throw HomeError(.internal, "no note") }
        return note.detail
    }

    @Test("the program runs with the firing in its environment; its exit and output are in the history")
    func runsWithEnvironment() async throws {
        try await withAutomation { server, _ in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.bool(false), to: home.on)
            // In /, with nothing of the daemon's open but stdin, stdout and stderr (ls opens 3 itself).
            let script =
                "echo \"$HOMED_TRIGGER|$HOMED_CHARACTERISTIC|$HOMED_VALUE|$HOMED_HOME\"; "
                + "echo \"cwd=$(pwd) fds=$(ls /proc/self/fd | tr '\\n' ,)\"; echo oops >&2; exit 3"
            let trigger = try await client.addTrigger(
                name: "Lamp watcher", homeID: home.id,
                kind: .event(
                    characteristicID: home.on, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: []),
                command: TriggerCommand(program: "/bin/sh", arguments: ["-c", script])
            ).createdID
            var log = try await EventLog(client, kinds: [.audit])
            _ = try await client.write(.bool(true), to: home.on)
            let detail = try await commandNote(&log)
            #expect(detail.hasPrefix("trigger \(trigger) \"Lamp watcher\": /bin/sh -c "), "\(detail)")
            #expect(detail.contains("exited 3 after "), "\(detail)")
            #expect(
                detail.contains("output: Lamp watcher|Demo Home/Living Room/Lamp/Lightbulb/On|true|Demo Home"),
                "\(detail)")
            #expect(detail.contains("oops"))
            #expect(detail.contains("cwd=/ fds=0,1,2,3,"), "\(detail)")
            await client.close()
        }
    }

    @Test("a program that outlives its timeout is stopped, and the history says so")
    func timeout() async throws {
        try await withAutomation { server, _ in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            _ = try await client.write(.bool(false), to: home.on)
            try await client.addTrigger(
                name: "Slow", homeID: home.id,
                kind: .event(
                    characteristicID: home.on, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: []),
                command: TriggerCommand(program: "/bin/sleep", arguments: ["30"], timeoutMs: 200))
            var log = try await EventLog(client, kinds: [.audit])
            _ = try await client.write(.bool(true), to: home.on)
            let detail = try await commandNote(&log)
            #expect(detail.contains("killed after its timeout of 200 ms"), "\(detail)")
            await client.close()
        }
    }

    @Test("a program that does not exist, is not executable or is not an absolute path is refused; nothing changes")
    func badPrograms() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            let home = try await DemoFixture(client)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("homed-command-\(getpid())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let plain = directory.appendingPathComponent("not-executable").path
            try "echo hi\n".write(toFile: plain, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: plain)
            let before = server.store.snapshot().graph
            for (program, message) in [
                ("/nonexistent/notify", "the command /nonexistent/notify does not exist"),
                (plain, "the command \(plain) is not executable by homed's user"),
                (directory.path, "the command \(directory.path) is not a file"),
                ("notify", "a command is an absolute path such as /usr/local/bin/notify, not \"notify\""),
            ] {
                do {
                    try await client.addTrigger(
                        name: "Bad", homeID: home.id,
                        kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .daily),
                        command: TriggerCommand(program: program))
                    Issue.record("\(program) was taken")
                } catch let error as HomeError {
                    #expect(error.code == .invalidArgument && error.message.contains(message), "\(error.message)")
                }
            }
            #expect(server.store.snapshot().graph == before)
            await client.close()
        }
    }
}
