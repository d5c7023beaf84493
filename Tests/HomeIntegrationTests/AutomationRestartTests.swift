import Foundation
@_spi(Wire) import HomeTesting
import Testing

/// Automations a real `homed` had started, across a kill -9 and a start on the
/// same database.
@Suite("automations across a restart", .serialized, .timeLimit(.safetyNet))
struct AutomationRestartTests {
    @Test("an undo pending at kill -9 happens after the restart; the command the firing ran is noted as interrupted")
    func endSurvivesKillNine() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-end")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (clock, start, arguments) = try TestClockFile.started(in: directory)
        do {
            let daemon = try DaemonProcess(arguments: arguments, directory: directory)
            try Self.prepareLampAndDim(daemon)
            let created = try daemon.homectl(
                "triggers", "create", "Pulse", "--when", "Living Room/Lamp/On", "--equals", "true", "--scene", "Dim",
                "--undo-after", "3m", "--run", "/bin/sleep", "--arg", "60")
            #expect(created.status == 0, "\(created.stderr)")
            #expect(try daemon.homectl("set", "Living Room/Lamp/On", "true").status == 0)
            try Self.waitFor(daemon, brightness: 10, "the scene never ran")
            daemon.child.signal(SIGKILL)
            daemon.child.wait()
        }
        // Back after its undo was due: it happens at start (automation.missed_ends: run).
        try clock.set(start + 4 * 60_000)
        let restarted = try DaemonProcess(arguments: arguments, directory: directory)
        // Without reading back the firing, the restarted daemon would leave the lamp dimmed.
        try Self.waitFor(restarted, brightness: 80, "the undo pending at kill -9 never happened")
        let notes = try restarted.homectl("history", "--kind", "audit", "--json")
        #expect(notes.stdout.contains("undo after 3m (begun before homed restarted)"), "\(notes.stdout)")
        #expect(notes.stdout.contains("/bin/sleep 60 was interrupted: homed stopped while it ran"), "\(notes.stdout)")
        // The trace, read back from the stored journal, tells the whole run.
        let trace = try restarted.homectl("triggers", "trace", "Pulse")
        #expect(trace.stdout.contains("fired: Demo Home/Living Room/Lamp/Lightbulb/On true (event "), "\(trace.stdout)")
        for step in [
            "changed: Demo Home/Living Room/Lamp/Lightbulb/Brightness 10%",
            "command: /bin/sleep 60 was interrupted", "changed: Demo Home/Living Room/Lamp/Lightbulb/Brightness 80%",
            "ended: undo after 3m (begun before homed restarted): restored",
        ] {
            #expect(trace.stdout.contains(step), "\(step): \(trace.stdout)")
        }
    }

    @Test(
        "by the daemon's test clock: a hold killed half-way fires at exactly its time, and its undo killed before its time happens at it"
    )
    func killedAtChosenMoments() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-clock")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (clock, start, arguments) = try TestClockFile.started(in: directory)
        let minute: Int64 = 60_000
        do {
            let daemon = try DaemonProcess(arguments: arguments, directory: directory)
            try Self.prepareLampAndDim(daemon)
            let created = try daemon.homectl(
                "triggers", "create", "Left on", "--when", "Living Room/Lamp/On", "--equals", "true", "--for", "10m",
                "--scene", "Dim", "--undo-after", "30m")
            #expect(created.status == 0, "\(created.stderr)")
            #expect(try daemon.homectl("set", "Living Room/Lamp/On", "true").status == 0)
            // Killed half-way through the hold.
            try clock.set(start + 5 * minute)
            daemon.child.signal(SIGKILL)
            daemon.child.wait()
        }
        try clock.set(start + 9 * minute)
        do {
            let restarted = try DaemonProcess(arguments: arguments, directory: directory)
            let test = try restarted.homectl("triggers", "test", "Left on")
            #expect(test.stdout.contains("now: holding since"), "\(test.stdout)")
            #expect(try Self.brightness(restarted) == 80)
            try clock.set(start + 10 * minute)
            try Self.waitFor(restarted, brightness: 10, "the hold begun before kill -9 never fired")
            // Stamped by the clock: it fired when the hold was over, not at the restart.
            #expect(try Self.times(restarted, kind: "trigger") == [start + 10 * minute])
            let fired = try Self.events(restarted, kind: "audit").filter { $0["action"] as? String == "trigger-fired" }
            #expect(
                (fired.first?["detail"] as? String)?.contains("held for its duration across a restart of homed")
                    == true,
                "\(fired)")
            // The note carries what the undo restores: the brightness before the firing.
            let values = fired.first?["values"] as? [[String: Any]]
            #expect(values?.count == 1 && values?.first?["value"] as? Int == 80, "\(fired)")
            // Killed with its undo (30 minutes after the firing) still to come.
            try clock.set(start + 25 * minute)
            restarted.child.signal(SIGKILL)
            restarted.child.wait()
        }
        try clock.set(start + 38 * minute)
        let again = try DaemonProcess(arguments: arguments, directory: directory)
        #expect(try Self.brightness(again) == 10)
        try clock.set(start + 40 * minute)
        try Self.waitFor(again, brightness: 80, "the undo pending at kill -9 never happened")
        // At its time, not at the restart.
        let ended = try Self.events(again, kind: "audit").filter { $0["action"] as? String == "trigger-ended" }
        #expect(ended.count == 1, "\(ended)")
        #expect(
            (ended.first?["detail"] as? String)?.contains("undo after 30m (begun before homed restarted)") == true,
            "\(ended)")
        #expect(try ended.map(Self.timeMs) == [start + 40 * minute])
        // The daemon's own times go by the same clock: started at +38m, up for 2 minutes at +40m.
        let status = try again.homectl("status", "--json")
        #expect(status.stdout.contains("\"uptime_ms\":120000"), "\(status.stdout)")
    }

    @Test("a test clock file that holds no time is refused at start, naming the file")
    func badClockFile() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-badclock")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "soon\n".write(toFile: directory + "/clock", atomically: true, encoding: .utf8)
        let result = try run(
            builtExecutable("homed"),
            ["--in-memory", "--socket", directory + "/homed.sock", "--test-clock-file", directory + "/clock"])
        #expect(result.status != 0)
        #expect(
            result.stderr.contains(
                "homed: --test-clock-file \(directory)/clock: the file must hold a time in milliseconds since the epoch"
            ),
            "\(result.stderr)")
        #expect(access(directory + "/homed.sock", F_OK) != 0, "no socket is made")
    }

    /// The lamp off at 80 % and a scene "Dim" to 10 %. The 80 % is the demo's seed,
    /// never written, so no change of it is in the history: what an undo restores
    /// comes from the firing's note.
    private static func prepareLampAndDim(_ daemon: DaemonProcess) throws {
        for arguments in [
            ["set", "Living Room/Lamp/On", "false"], ["scenes", "create", "Dim"],
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

    /// The history's events of `kind` (`homectl history --json`), oldest first.
    private static func events(_ daemon: DaemonProcess, kind: String) throws -> [[String: Any]] {
        let history = try daemon.homectl("history", "--kind", kind, "--json")
        guard let events = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]] else {
            throw RawError("homectl history --json gave no list: \(history.stdout) \(history.stderr)")
        }
        return events
    }

    /// The times of the history's events of `kind`, oldest first.
    private static func times(_ daemon: DaemonProcess, kind: String) throws -> [Int64] {
        try events(daemon, kind: kind).map(timeMs)
    }

    /// An event line's `time`, in milliseconds since the epoch.
    private static func timeMs(_ event: [String: Any]) throws -> Int64 {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let time = (event["time"] as? String).flatMap(formatter.date(from:)) else {
            throw RawError("no time in \(event)")
        }
        return Int64((time.timeIntervalSince1970 * 1000).rounded())
    }

    private static func brightness(_ daemon: DaemonProcess) throws -> Int? {
        let get = try daemon.homectl("get", "Living Room/Lamp/Brightness", "--json")
        let reads = try JSONSerialization.jsonObject(with: Data(get.stdout.utf8)) as? [[String: Any]]
        return reads?.first?["value"] as? Int
    }
}

/// The file a daemon started with `--test-clock-file` reads the time from.
struct TestClockFile {
    let path: String

    /// A clock file in `directory` set to a whole second just ahead of now, and the
    /// arguments of a demo homed that runs by it.
    static func started(in directory: String) throws -> (clock: TestClockFile, start: Int64, arguments: [String]) {
        let clock = TestClockFile(path: directory + "/clock")
        let start = (Int64(Date().timeIntervalSince1970) + 60) * 1000
        try clock.set(start)
        return (clock, start, ["--demo", "--no-simulator", "--test-clock-file", clock.path])
    }

    /// Sets the time: written whole to a new file renamed over the old, so the
    /// daemon never reads half a number.
    func set(_ ms: Int64) throws {
        try "\(ms)\n".write(toFile: path + ".new", atomically: false, encoding: .utf8)
        guard rename(path + ".new", path) == 0 else { throw RawError("cannot rename \(path).new: errno \(errno)") }
    }
}
