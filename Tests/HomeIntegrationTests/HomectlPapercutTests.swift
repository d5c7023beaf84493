import Foundation
import HomeServer
@_spi(Wire) import HomeTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// homectl's papercuts, each as a user meets it: the real homectl against a real
/// `homed --demo`.
@Suite("homectl as its users type it", .serialized, .timeLimit(.safetyNet))
struct HomectlPapercutTests {
    @Test("status shows the database's path and the daemon's pid; in memory says so")
    func statusShowsDatabaseAndPID() throws {
        let daemon = try DaemonProcess()
        let text = try daemon.homectl("status")
        #expect(text.stdout.contains("database         \(daemon.directory)/homed.sqlite"), "\(text.stdout)")
        #expect(text.stdout.contains("pid              \(daemon.child.process.processIdentifier)\n"), "\(text.stdout)")
        let json = try daemon.homectl("status", "--json").stdout
        #expect(json.contains("\"database\":\"\(daemon.directory)/homed.sqlite\""), "\(json)")
        #expect(json.contains("\"daemon_pid\":\(daemon.child.process.processIdentifier)"), "\(json)")

        let inMemory = try DaemonProcess(arguments: ["--in-memory", "--demo", "--no-simulator"])
        #expect(
            try inMemory.homectl("status").stdout.contains("database         in memory (nothing survives a restart)"))
        #expect(try inMemory.homectl("status", "--json").stdout.contains("\"database\":null"))
    }

    @Test("a negative number is a value: set PATH -5, triggers create --below -5")
    func negativeNumbers() throws {
        let daemon = try DaemonProcess()
        // The daemon read -5 as the value: its range check answers, not the argument parser.
        let set = try daemon.homectl("set", "Living Room/Thermostat/TargetTemperature", "-5")
        #expect(set.status == 3, "\(set.stderr)")
        #expect(set.stderr.contains("-5"), "\(set.stderr)")
        #expect(!set.stderr.contains("Missing expected argument"), "\(set.stderr)")
        let two = try daemon.homectl("set", "Living Room/Lamp/Brightness", "5", "6")
        #expect(two.status == 64, "\(two.stderr)")
        #expect(two.stderr.contains("set takes one value, not 2 (5 6)"), "\(two.stderr)")

        let trigger = try daemon.homectl(
            "triggers", "create", "Frost", "--when", "Bedroom/Temperature Sensor/CurrentTemperature", "--below", "-5",
            "--json")
        #expect(trigger.status == 0, "\(trigger.stderr)")
        let show = try daemon.homectl("triggers", "--json")
        #expect(show.stdout.filter { !$0.isWhitespace }.contains("-5"), "\(show.stdout)")
    }

    @Test("connection options work before the subcommand too")
    func optionsBeforeSubcommand() throws {
        let daemon = try DaemonProcess()
        let get = try run(
            builtExecutable("homectl"),
            ["--socket", daemon.socketPath, "--timeout=5", "--json", "get", "Living Room/Lamp/On"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout.hasPrefix("[{\"id\":"), "\(get.stdout)")
        let set = try run(
            builtExecutable("homectl"), ["--socket=\(daemon.socketPath)", "set", "Living Room/Lamp/Brightness", "-5"])
        #expect(set.status == 3, "the value after the moved option is still a value: \(set.stderr)")
    }

    @Test("a socket that accepts and never answers: homectl (watch too) gives up after --timeout with exit code 4")
    func timeout() throws {
        let directory = TestServer.makeTemporaryDirectory("homectl-timeout")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/silent.sock"
        // Listens, never accepts: connecting succeeds (the backlog), no hello ever comes back.
        let listener = try #require(Self.listeningSocket(at: path))
        defer { close(listener) }

        let result = try run(builtExecutable("homectl"), ["status", "--socket", path, "--timeout", "1"])
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("homed on \(path) did not answer within 1 s (--timeout)"), "\(result.stderr)")
        let watch = try run(builtExecutable("homectl"), ["watch", "--socket", path, "--timeout", "0.5"])
        #expect(watch.status == 4, "\(watch.stderr)")
        #expect(watch.stderr.contains("did not answer within 0.5 s (--timeout)"), "\(watch.stderr)")
        let bad = try run(builtExecutable("homectl"), ["status", "--socket", path, "--timeout=-1"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--timeout takes a number of seconds, 0 or more, not -1"), "\(bad.stderr)")
    }

    @Test("output that cannot be written (/dev/full) exits non-zero and says so")
    func unwritableOutput() throws {
        let daemon = try DaemonProcess()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: builtExecutable("homectl"))
        process.arguments = ["show", "Living Room/Lamp"]
        process.environment = daemon.environment
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
        let stderr = Pipe()
        process.standardError = stderr
        try process.run()
        let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1, "\(message)")
        #expect(message.contains("homectl: cannot write the output: No space left on device"), "\(message)")
    }

    @Test("get shows a failed item's error once; --json keeps it as an error object; set --json types the value")
    func failedItemsAndTypedValues() throws {
        let daemon = try DaemonProcess()
        let get = try daemon.homectl("get", "Living Room/Lamp/On", "Living Room/Lamp/Identify")
        #expect(get.status == 3, "\(get.stderr)")
        #expect(get.stdout.contains("Living Room/Lamp/Lightbulb/On"), "\(get.stdout)")
        let lines = get.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(get.stderr)")
        #expect(lines.first?.contains("Identify") == true && lines.first?.contains("is not readable") == true)

        let json = try daemon.homectl("get", "Living Room/Lamp/On", "Living Room/Lamp/Identify", "--json")
        #expect(json.status == 3)
        #expect(json.stderr.isEmpty, "\(json.stderr)")
        let items = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(items.count == 2)
        #expect(items.first?["value"] as? Bool != nil)
        let error = try #require(items.last?["error"] as? [String: Any])
        #expect(error["code"] as? String == "INVALID_ARGUMENT")
        #expect(error["status"] as? Int == 3)
        #expect((error["message"] as? String)?.contains("is not readable") == true)

        let set = try daemon.homectl("set", "Living Room/Lamp/Brightness", "42", "--json")
        #expect(set.status == 0, "\(set.stderr)")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(set.stdout.utf8)) as? [String: Any])
        #expect(written["value"] as? Int == 42, "\(set.stdout)")
        let on = try daemon.homectl("set", "Living Room/Lamp/On", "on", "--json")
        #expect(on.stdout.contains("\"value\":true"), "\(on.stdout)")
    }

    @Test("watch --snapshot: every snapshot line carries the sequence number the snapshot stands at")
    func snapshotSequence() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", "12").status == 0)
        #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", "13").status == 0)
        let output = try daemon.watchSnapshot("--accessory", "Living Room/Lamp")
        let lines = try output.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let end = try #require(lines.first { $0["kind"] as? String == "snapshot-end" })
        let seq = try #require(end["seq"] as? Int)
        #expect(seq >= 2)
        let snapshot = lines.filter { $0["kind"] as? String == "snapshot" }
        #expect(snapshot.count >= 2, "the Lamp's On and Brightness at least: \(output)")
        #expect(snapshot.allSatisfy { $0["seq"] as? Int == seq }, "\(output)")
        #expect(snapshot.contains { $0["characteristic"] as? String == "Brightness" && $0["value"] as? Int == 13 })
        #expect(
            lines.firstIndex { $0["kind"] as? String == "snapshot-end" }! > lines.lastIndex {
                $0["kind"] as? String == "snapshot"
            }!)
    }

    @Test("a name with a slash, or of digits alone, is refused: no PATH could name it")
    func unaddressableNames() throws {
        let daemon = try DaemonProcess()
        let slash = try daemon.homectl("rooms", "add", "Up/Down")
        #expect(slash.status == 3, "\(slash.stderr)")
        #expect(slash.stderr.contains("the room name \"Up/Down\" has a \"/\" at position 3"), "\(slash.stderr)")
        let digits = try daemon.homectl("rename", "Living Room/Lamp", "2024")
        #expect(digits.status == 3, "\(digits.stderr)")
        #expect(digits.stderr.contains("the accessory name \"2024\" is all digits"), "\(digits.stderr)")
        #expect(try daemon.homectl("rooms", "add", "Room 2024").status == 0)
        #expect(try daemon.homectl("rooms").stdout.contains("Room 2024"))
        let empty = try daemon.homectl("get", "Room 2024/Lamp/On")
        #expect(
            empty.stderr.contains("room \"Room 2024\" has no accessory named \"Lamp\"; it has none"), "\(empty.stderr)")
    }

    @Test("help texts say what homectl does: triggers run, --home looks names up in every home unless given")
    func helpTexts() throws {
        // Help is wrapped to the terminal's width: compare words, not lines.
        func words(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        let triggers = words(try run(builtExecutable("homectl"), ["triggers", "--help"]).stdout)
        #expect(triggers.contains("The daemon runs enabled triggers"), "\(triggers)")
        #expect(!triggers.contains("comes later"))
        let rename = words(try run(builtExecutable("homectl"), ["rooms", "rename", "--help"]).stdout)
        #expect(
            rename.contains("where a name is looked up and what a listing shows (default: every home)"), "\(rename)")
    }

    @Test("an accessory's name alone works wherever an accessory is taken: get Lamp/On, watch --accessory Lamp")
    func bareAccessoryNames() throws {
        let daemon = try DaemonProcess()
        let get = try daemon.homectl("get", "Lamp/On", "--json")
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout.contains("\"path\":\"Demo Home/Living Room/Lamp/Lightbulb/On\""), "\(get.stdout)")
        let output = try daemon.watchSnapshot("--accessory", "Lamp")
        let snapshot = output.filter { $0.contains("\"kind\":\"snapshot\"") }
        #expect(!snapshot.isEmpty, "\(output)")
        #expect(snapshot.allSatisfy { $0.contains("\"accessory\":\"Lamp\"") }, "\(output)")
    }

    @Test("connection errors say where the socket path came from; a socket that is not homed's says so")
    func connectionErrors() throws {
        let directory = TestServer.makeTemporaryDirectory("homectl-foreign")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = directory + "/missing.sock"
        let byFlag = try run(builtExecutable("homectl"), ["status", "--socket", missing])
        #expect(byFlag.status == 14)
        #expect(
            byFlag.stderr.contains("the socket path is from --socket; start homed with `homed`"), "\(byFlag.stderr)")
        let byEnvironment = try run(builtExecutable("homectl"), ["watch"], environment: ["HOMED_SOCKET": missing])
        #expect(byEnvironment.status == 14)
        #expect(byEnvironment.stderr.contains("the socket path is from HOMED_SOCKET"), "\(byEnvironment.stderr)")

        // Another program on the socket: it answers the hello with a line of text.
        let path = directory + "/foreign.sock"
        let listener = try #require(Self.listeningSocket(at: path))
        defer { close(listener) }
        let answered = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let connection = accept(listener, nil, nil)
            let reply = Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8)
            _ = reply.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
            answered.wait()
            close(connection)
        }
        let foreign = try run(builtExecutable("homectl"), ["status", "--socket", path, "--timeout", "5"])
        answered.signal()
        #expect(foreign.status == 14, "\(foreign.stderr)")
        #expect(
            foreign.stderr.contains(
                "\(path) is not homed's socket: the program listening there does not speak homed's protocol"),
            "\(foreign.stderr)")
    }

    @Test("scenes run: a failed action's error is shown once; --json keeps it as an error object")
    func sceneFailures() throws {
        let daemon = try DaemonProcess()
        // A provider's lamp, whose provider then dies: writing it fails.
        let file = daemon.directory + "/bench.yaml"
        try """
        provider: bench-sim
        home: Demo Home
        rooms: [Garage]
        accessories:
          - key: lamp-1
            name: Workbench Lamp
            room: Garage
            category: lightbulb
            services:
              - type: Lightbulb
                characteristics: {On: false, Brightness: 20}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let simulator = try ChildProcess(
            builtExecutable("homed-sim"), [file, "--socket", daemon.socketPath, "--log-level", "warning"])
        let deadline = Date().addingTimeInterval(patience)
        while try daemon.homectl("get", "Workbench Lamp/On").status != 0 && Date() < deadline { usleep(20_000) }
        #expect(try daemon.homectl("scenes", "create", "Dim").status == 0)
        let action = try daemon.homectl("scenes", "add-action", "Dim", "Garage/Workbench Lamp/Brightness", "30")
        #expect(action.status == 0, "\(action.stderr)")
        simulator.signal(SIGKILL)
        simulator.wait()

        var text = try daemon.homectl("scenes", "run", "Dim")
        while text.status == 0 && Date() < deadline {
            usleep(20_000)
            text = try daemon.homectl("scenes", "run", "Dim")
        }
        #expect(text.status != 0)
        #expect(text.stdout.contains("0 of 1 actions applied"), "\(text.stdout)")
        let errors = text.stderr.split(separator: "\n")
        #expect(errors.count == 1 && errors[0].contains("Brightness"), "\(text.stderr)")

        let json = try daemon.homectl("scenes", "run", "Dim", "--json")
        #expect(json.status == text.status)
        #expect(json.stderr.isEmpty, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let results = try #require(object["results"] as? [[String: Any]])
        let error = try #require(results.first?["error"] as? [String: Any], "\(json.stdout)")
        #expect(error["status"] as? Int == Int(json.status))
        #expect(error["code"] is String && error["message"] is String)
    }

    @Test("watch on a terminal writes lines for people; with --json, or piped, JSON lines")
    func watchForPeople() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", "33").status == 0)
        // `script` gives homectl a terminal for its stdout. What it prints up to the line
        // that ends the snapshot (then it is stopped: it ends when that is out, not after a time).
        func onTerminal(_ arguments: String, until end: String) throws -> String {
            let watch = try ChildProcess(
                "/usr/bin/script", ["-qfec", "\(builtExecutable("homectl")) \(arguments)", "/dev/null"],
                environment: daemon.environment)
            defer {
                watch.signal(SIGKILL)
                watch.wait()
            }
            return watch.readLines { $0.contains(end) }.map { $0.replacingOccurrences(of: "\r", with: "") + "\n" }
                .joined()
        }
        let text = try onTerminal("watch --snapshot --accessory Lamp", until: "-- the state above is at seq ")
        #expect(text.contains("now           Living Room/Lamp/Brightness = 33%\n"), "\(text)")
        #expect(text.contains("-- the state above is at seq "), "\(text)")
        #expect(!text.contains("{"), "\(text)")
        let json = try onTerminal("watch --snapshot --accessory Lamp --json", until: "\"kind\":\"snapshot-end\"")
        let first = try #require(json.split(separator: "\n").first)
        #expect(first.hasPrefix("{\"seq\":"), "\(json)")
        let piped = try daemon.watchSnapshot("--accessory", "Lamp")
        #expect(piped.first?.hasPrefix("{\"seq\":") == true, "\(piped)")

        // An event: the time, the place, the value with its unit, who made it.
        let watch = try ChildProcess(
            "/usr/bin/script", ["-qfec", "\(builtExecutable("homectl")) watch -C 1 --accessory Lamp", "/dev/null"],
            environment: daemon.environment)
        defer {
            watch.signal(SIGKILL)
            watch.wait(seconds: 5)
        }
        let deadline = Date().addingTimeInterval(patience)
        // Until the watch has subscribed, a write goes unseen: write (a new value
        // each time, or there is no change) until it ends.
        var brightness = 40
        while watch.process.isRunning && Date() < deadline {
            #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", String(brightness)).status == 0)
            brightness += 1
            usleep(100_000)
        }
        if watch.process.isRunning { watch.signal(SIGKILL) }
        let line = watch.standardOutputToEnd.replacingOccurrences(of: "\r", with: "")
        #expect(line.contains("  Living Room/Lamp/Brightness = 4"), "\(line)")
        #expect(line.contains("%  (by homectl, connection "), "\(line)")
    }

    /// A Unix socket listening at `path` that nobody accepts on (the test decides):
    /// another program's socket, as homectl meets it.
    static func listeningSocket(at path: String) -> Int32? {
        guard let listener = boundUnixSocket(at: path, type: Int32(SOCK_STREAM.rawValue)) else { return nil }
        guard listen(listener, 8) == 0 else {
            close(listener)
            return nil
        }
        return listener
    }
}
