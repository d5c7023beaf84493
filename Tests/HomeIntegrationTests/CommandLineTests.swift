import Foundation
import HomeServer
@_spi(Wire) import HomeTesting
import HomeWire
import Testing

/// The real `homectl` and `homed` binaries, as separate processes.
@Suite("homectl and homed as processes", .serialized)
struct CommandLineTests {
    @Test("with no daemon, homectl names the socket it tried and exits 14 (UNAVAILABLE)")
    func noDaemon() throws {
        let directory = TestServer.makeTemporaryDirectory("homectl")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/missing.sock"
        let result = try run(builtExecutable("homectl"), ["status", "--socket", path])
        #expect(result.status == 14)
        #expect(result.stderr.contains("no daemon is listening on \(path)"))
        let viaEnvironment = try run(builtExecutable("homectl"), ["get", "1"], environment: ["HOMED_SOCKET": path])
        #expect(viaEnvironment.status == 14)
        #expect(viaEnvironment.stderr.contains(path))
    }

    @Test("homectl --version prints the version and needs no daemon")
    func version() throws {
        let result = try run(builtExecutable("homectl"), ["--version"], environment: ["HOMED_SOCKET": "/nonexistent"])
        #expect(result.status == 0)
        #expect(result.stdout == HomedVersion.current + "\n")
    }

    @Test("homed --version prints the version, exits 0, and starts nothing")
    func daemonVersion() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-version")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/homed.sock"
        let result = try run(
            builtExecutable("homed"), ["--version", "--socket", socket, "--db", directory + "/homed.sqlite"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == HomedVersion.current + "\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty, "no socket, no database")
    }

    @Test("status, accessories by room and by category, get and set, as text and JSON")
    func basics() throws {
        let daemon = try DaemonProcess()
        let status = try daemon.homectl("status", "--json")
        #expect(status.status == 0)
        #expect(status.stdout.contains("\"homes\":1"))

        let byRoom = try daemon.homectl("accessories")
        #expect(byRoom.stdout.contains("Living Room\n  Lamp"))
        let byCategory = try daemon.homectl("accessories", "--by", "category")
        #expect(byCategory.stdout.contains("lightbulb\n  Lamp"))
        let json = try daemon.homectl("accessories", "--json")
        let accessories = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(
            accessories?.contains { $0["name"] as? String == "Lamp" && $0["room"] as? String == "Living Room" } == true)

        let set = try daemon.homectl("set", "Living Room/Lamp/Brightness", "42")
        #expect(set.status == 0)
        #expect(set.stdout.contains("Brightness = 42% (seq "))
        let get = try daemon.homectl("get", "Living Room/Lamp/Brightness", "--json")
        let reads = try JSONSerialization.jsonObject(with: Data(get.stdout.utf8)) as? [[String: Any]]
        #expect(reads?.first?["value"] as? Int == 42)
        #expect(reads?.first?["path"] as? String == "Demo Home/Living Room/Lamp/Lightbulb/Brightness")
    }

    @Test("a rejected set prints the daemon's reason and exits with its status code")
    func rejectedSet() throws {
        let daemon = try DaemonProcess()
        let tooBright = try daemon.homectl("set", "Living Room/Lamp/Brightness", "150")
        #expect(tooBright.status == 3)
        #expect(tooBright.stderr.contains("150 is above the maximum 100"))
        let missing = try daemon.homectl("get", "Attic/Lamp/On")
        #expect(missing.status == 5)
        #expect(missing.stderr.contains("Attic"))
    }

    @Test("watch sees a change made by homectl set from another process, as one JSON line")
    func watchSeesSet() throws {
        let daemon = try DaemonProcess()
        let watch = try ChildProcess(
            builtExecutable("homectl"),
            ["watch", "--markers", "-C", "1", "--characteristic", "Living Room/Lamp/On"],
            environment: daemon.environment)
        let subscribed = try #require(watch.readLine())
        #expect(subscribed.contains("\"kind\":\"subscribed\""))
        let set = try daemon.homectl("set", "Living Room/Lamp/On", "off")
        #expect(set.status == 0)
        let line = try #require(watch.readLine())
        let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(event?["kind"] as? String == "value")
        #expect(event?["accessory"] as? String == "Lamp")
        #expect(event?["characteristic"] as? String == "On")
        #expect(event?["value"] as? Bool == false)
        let origin = event?["origin"] as? [String: Any]
        #expect(origin?["name"] as? String == "homectl")
        #expect(origin?["local"] as? Bool == false)
        #expect(watch.wait() == 0, "-C 1 exits after one event")
    }

    @Test("watch exits 0 when the reading side of its pipe closes, even while nothing happens")
    func watchPipeClosed() throws {
        let daemon = try DaemonProcess()
        let watch = try ChildProcess(
            builtExecutable("homectl"), ["watch", "--markers"], environment: daemon.environment)
        #expect(watch.readLine() != nil)
        try watch.stdout.fileHandleForReading.close()
        #expect(watch.wait() == 0)
    }

    @Test("watch --min-interval-ms prints a burst's first change at once and holds the rest back")
    func watchMinimumInterval() throws {
        let daemon = try DaemonProcess()
        // Two events and it exits: the burst's first change and On's, made after the
        // burst. Were 42 or 43 not held back, they would come before On's (in seq order).
        let watch = try ChildProcess(
            builtExecutable("homectl"),
            [
                "watch", "--markers", "--min-interval-ms", "60000", "-C", "2",
                "--characteristic", "Living Room/Lamp/Brightness", "--characteristic", "Living Room/Lamp/On",
            ],
            environment: daemon.environment)
        let subscribed = try #require(watch.readLine())
        #expect(subscribed.contains("\"kind\":\"subscribed\""))
        for value in ["41", "42", "43"] {
            #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", value).status == 0)
        }
        #expect(try daemon.homectl("set", "Living Room/Lamp/On", "off").status == 0)
        var values: [String] = []
        while let line = watch.readLine() {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard object?["kind"] as? String == "value", let name = object?["characteristic"] as? String else {
                continue
            }
            let value =
                name == "On"
                ? (object?["value"] as? Bool).map(String.init) : (object?["value"] as? Int).map(String.init)
            values.append("\(name) \(value ?? "?")")
        }
        #expect(values == ["Brightness 41", "On false"], "42 and 43 are held for a minute")
        #expect(watch.wait() == 0, "-C 2 exits after two events")
    }

    @Test("watch -W exits 4 when the time is up")
    func watchTimeout() throws {
        let daemon = try DaemonProcess()
        let result = try daemon.homectl("watch", "-W", "0.3", "--characteristic", "Living Room/Lamp/Hue")
        #expect(result.status == 4)
        #expect(result.stdout.isEmpty)
    }

    @Test("SIGTERM stops homed gracefully: exit 0 and the socket file removed")
    func sigterm() throws {
        let daemon = try DaemonProcess()
        daemon.child.signal(SIGTERM)
        #expect(daemon.child.wait() == 0)
        #expect(access(daemon.socketPath, F_OK) != 0)
    }

    @Test("a second homed on the same socket refuses to start and the first keeps serving")
    func secondDaemon() throws {
        let daemon = try DaemonProcess()
        let rival = try run(
            builtExecutable("homed"),
            ["--demo", "--no-simulator", "--socket", daemon.socketPath, "--db", daemon.directory + "/rival.sqlite"])
        #expect(rival.status == 6)
        #expect(
            rival.stderr.contains(
                "another homed (pid \(daemon.child.process.processIdentifier)) is running on \(daemon.socketPath)"),
            "\(rival.stderr)")
        #expect(try daemon.homectl("status").status == 0)
    }
}
