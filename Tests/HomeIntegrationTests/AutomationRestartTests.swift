import Foundation
@_spi(Wire) import HomeTesting
import Testing

/// Automations a real `homed` had started, across a kill -9 and a start on the
/// same database.
@Suite("automations across a restart", .serialized, .timeLimit(.safetyNet))
struct AutomationRestartTests {
    @Test("a hold begun before kill -9 fires after the restart, at its time or later, noted as carried over")
    func holdSurvivesKillNine() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-hold")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let daemon = try DaemonProcess(directory: directory)
            try Self.prepareLampAndDim(daemon)
            let created = try daemon.homectl(
                "triggers", "create", "Left on", "--when", "Living Room/Lamp/On", "--equals", "true", "--for", "5s",
                "--scene", "Dim")
            #expect(created.status == 0, "\(created.stderr)")
            #expect(try daemon.homectl("set", "Living Room/Lamp/On", "true").status == 0)
            daemon.child.signal(SIGKILL)
            daemon.child.wait()
        }
        let restarted = try DaemonProcess(directory: directory)
        // Without the journal's hold the restarted daemon would wait for the next change and never fire.
        try Self.waitFor(restarted, brightness: 10, "the hold begun before kill -9 never fired")
        let notes = try restarted.homectl("history", "--kind", "audit", "--json")
        #expect(notes.stdout.contains("held for its duration across a restart of homed"), "\(notes.stdout)")
    }

    @Test("an undo pending at kill -9 happens after the restart; the command the firing ran is noted as interrupted")
    func endSurvivesKillNine() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-end")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let daemon = try DaemonProcess(directory: directory)
            try Self.prepareLampAndDim(daemon)
            let created = try daemon.homectl(
                "triggers", "create", "Pulse", "--when", "Living Room/Lamp/On", "--equals", "true", "--scene", "Dim",
                "--undo-after", "3s", "--run", "/bin/sleep", "--arg", "60")
            #expect(created.status == 0, "\(created.stderr)")
            #expect(try daemon.homectl("set", "Living Room/Lamp/On", "true").status == 0)
            try Self.waitFor(daemon, brightness: 10, "the scene never ran")
            daemon.child.signal(SIGKILL)
            daemon.child.wait()
        }
        let restarted = try DaemonProcess(directory: directory)
        // Without reading back the firing, the restarted daemon would leave the lamp dimmed.
        try Self.waitFor(restarted, brightness: 80, "the undo pending at kill -9 never happened")
        let notes = try restarted.homectl("history", "--kind", "audit", "--json")
        #expect(notes.stdout.contains("undo after 3s (begun before homed restarted)"), "\(notes.stdout)")
        #expect(notes.stdout.contains("/bin/sleep 60 was interrupted: homed stopped while it ran"), "\(notes.stdout)")
        // The trace, read back from the stored journal, tells the whole run.
        let trace = try restarted.homectl("triggers", "trace", "Pulse")
        #expect(trace.stdout.contains("fired: Demo Home/Living Room/Lamp/Lightbulb/On true (event "), "\(trace.stdout)")
        for step in [
            "changed: Demo Home/Living Room/Lamp/Lightbulb/Brightness 10%",
            "command: /bin/sleep 60 was interrupted", "changed: Demo Home/Living Room/Lamp/Lightbulb/Brightness 80%",
            "ended: undo after 3s (begun before homed restarted): restored",
        ] {
            #expect(trace.stdout.contains(step), "\(step): \(trace.stdout)")
        }
    }

    /// The lamp off at 80 % and a scene "Dim" to 10 %. The value an undo restores
    /// is the history's from before the firing: a change, not the demo's seed.
    private static func prepareLampAndDim(_ daemon: DaemonProcess) throws {
        for arguments in [
            ["set", "Living Room/Lamp/On", "false"], ["set", "Living Room/Lamp/Brightness", "60"],
            ["set", "Living Room/Lamp/Brightness", "80"], ["scenes", "create", "Dim"],
            ["scenes", "add-action", "Dim", "Living Room/Lamp/Brightness", "10"],
        ] {
            let result = try run(builtExecutable("homectl"), arguments, environment: daemon.environment)
            guard result.status == 0 else { throw RawError("homectl \(arguments): \(result.stderr)") }
        }
    }

    private static func waitFor(_ daemon: DaemonProcess, brightness: Int, _ failure: String) throws {
        let deadline = Date().addingTimeInterval(patience)
        while try Self.brightness(daemon) != brightness {
            guard Date() < deadline else { throw RawError(failure) }
            usleep(50_000)
        }
    }

    private static func brightness(_ daemon: DaemonProcess) throws -> Int? {
        let get = try daemon.homectl("get", "Living Room/Lamp/Brightness", "--json")
        let reads = try JSONSerialization.jsonObject(with: Data(get.stdout.utf8)) as? [[String: Any]]
        return reads?.first?["value"] as? Int
    }
}
