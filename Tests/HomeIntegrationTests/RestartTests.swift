import Foundation
@_spi(Wire) import HomeTesting
import Testing

/// Real `homed` processes stopped hard or gracefully and started again on the same
/// database and socket.
@Suite("restarts", .serialized, .timeLimit(.safetyNet))
struct RestartTests {
    @Test("layout changes acknowledged before kill -9 are all there after a restart, ids included")
    func killNine() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-kill")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var roomIDs: [String] = []
        do {
            let daemon = try DaemonProcess(directory: directory)
            for name in ["Attic", "Cellar", "Garage"] {
                let added = try daemon.homectl("rooms", "add", name, "--json")
                #expect(added.status == 0, "\(added.stderr)")
                roomIDs.append(name)
            }
            #expect(try daemon.homectl("rename", "Living Room/Lamp", "Reading Lamp").status == 0)
            #expect(try daemon.homectl("assign", "Living Room/Reading Lamp", "Attic").status == 0)
            daemon.child.signal(SIGKILL)
            daemon.child.wait()
        }
        let restarted = try DaemonProcess(directory: directory)
        let rooms = try restarted.homectl("rooms", "--json")
        for name in roomIDs { #expect(rooms.stdout.contains("\"\(name)\""), "room \(name) survived kill -9") }
        let lamp = try restarted.homectl("get", "Attic/Reading Lamp/On")
        #expect(lamp.status == 0, "the renamed lamp is in the room it was moved to: \(lamp.stderr)")
    }

    /// A daemon that keeps no history: every start begins a new journal.
    static let noHistory = ["--demo", "--no-simulator", "--history-retention", "off"]

    @Test(
        "watch reconnects after a restart of a daemon without history and resyncs: a marker, a fresh snapshot, then changes"
    )
    func watchAcrossRestart() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-restart")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var daemon: DaemonProcess? = try DaemonProcess(arguments: Self.noHistory, directory: directory)
        let watch = try ChildProcess(
            builtExecutable("homectl"),
            ["watch", "--markers", "--characteristic", "Living Room/Lamp/On"],
            environment: ["HOMED_SOCKET": daemon!.socketPath])
        #expect(watch.readLine()?.contains("\"kind\":\"subscribed\"") == true)
        daemon!.child.signal(SIGTERM)
        #expect(daemon!.child.wait() == 0)
        daemon = nil
        daemon = try DaemonProcess(arguments: Self.noHistory, directory: directory)
        var lines: [String] = []
        while let line = watch.readLine() {
            lines.append(line)
            if line.contains("\"kind\":\"snapshot-end\"") { break }
        }
        #expect(lines.first?.contains("\"kind\":\"subscribed\"") == true, "\(lines)")
        #expect(lines.dropFirst().first?.contains("\"kind\":\"resync\"") == true, "\(lines)")
        #expect(lines.contains { $0.contains("\"kind\":\"snapshot\"") && $0.contains("\"characteristic\":\"On\"") })
        // The note on stderr says what happened: no resume claimed when a resync follows.
        let note = watch.standardError
        #expect(note.contains("homectl: reconnected to homed, which could not resume this watch ("), "\(note)")
        #expect(note.contains("a fresh snapshot follows") && !note.contains("resumes where it stood"), "\(note)")
        #expect(try daemon!.homectl("set", "Living Room/Lamp/On", "off").status == 0)
        let change = watch.readLine()
        #expect(change?.contains("\"kind\":\"value\"") == true && change?.contains("\"value\":false") == true)
        watch.signal(SIGTERM)
        watch.wait()
    }

    @Test("watch resumes across a restart of a daemon that keeps history: the changes made meanwhile, no resync")
    func watchResumesAcrossRestart() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-resume")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var daemon: DaemonProcess? = try DaemonProcess(directory: directory)
        let watch = try ChildProcess(
            builtExecutable("homectl"), ["watch", "--markers", "--characteristic", "Living Room/Lamp/Brightness"],
            environment: ["HOMED_SOCKET": daemon!.socketPath])
        #expect(watch.readLine()?.contains("\"kind\":\"subscribed\"") == true)
        #expect(try daemon!.homectl("set", "Living Room/Lamp/Brightness", "71").status == 0)
        #expect(watch.readLine()?.contains("\"value\":71") == true)
        daemon!.child.signal(SIGKILL)
        daemon!.child.wait()
        daemon = nil
        daemon = try DaemonProcess(directory: directory)
        #expect(try daemon!.homectl("set", "Living Room/Lamp/Brightness", "72").status == 0)
        var lines: [String] = []
        while let line = watch.readLine() {
            lines.append(line)
            if line.contains("\"kind\":\"value\"") { break }
        }
        // After the reconnection's own marker, the change made while the watch was
        // away, and nothing that says it had to start over.
        #expect(lines.last?.contains("\"value\":72") == true, "\(lines)")
        #expect(!lines.contains { $0.contains("resync") || $0.contains("snapshot") }, "\(lines)")
        watch.signal(SIGTERM)
        watch.wait()
        #expect(watch.standardError.contains("homectl: reconnected to homed; the watch resumes where it stood"))
    }

    @Test("watch --no-resync exits 15 when the daemon it followed restarted without history")
    func noResync() throws {
        let directory = TestServer.makeTemporaryDirectory("homed-noresync")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var daemon: DaemonProcess? = try DaemonProcess(arguments: Self.noHistory, directory: directory)
        let watch = try ChildProcess(
            builtExecutable("homectl"), ["watch", "--markers", "--no-resync"],
            environment: ["HOMED_SOCKET": daemon!.socketPath])
        #expect(watch.readLine() != nil)
        daemon!.child.signal(SIGTERM)
        daemon!.child.wait()
        daemon = nil
        daemon = try DaemonProcess(arguments: Self.noHistory, directory: directory)
        #expect(watch.wait() == 15)
        #expect(watch.standardError.contains("resync required"))
    }

    @Test("homectl stats shows each subscription's queue, sent, merged and dropped counts")
    func stats() throws {
        let daemon = try DaemonProcess()
        let watch = try ChildProcess(
            builtExecutable("homectl"), ["watch", "--markers", "--characteristic", "Living Room/Lamp/On"],
            environment: daemon.environment)
        #expect(watch.readLine() != nil)
        #expect(try daemon.homectl("set", "Living Room/Lamp/On", "off").status == 0)
        #expect(watch.readLine() != nil)
        let stats = try daemon.homectl("stats", "--json")
        let json = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        let connections = json?["connections"] as? [[String: Any]] ?? []
        let watcher = connections.first { ($0["subscriptions"] as? [[String: Any]])?.isEmpty == false }
        let subscription = (watcher?["subscriptions"] as? [[String: Any]])?.first
        #expect(watcher?["client"] as? String == "homectl")
        #expect(subscription?["sent"] as? Int == 1)
        #expect(subscription?["queue_depth"] as? Int == 0)
        #expect(subscription?["policy"] as? String == "coalesce")
        let table = try daemon.homectl("stats")
        #expect(table.stdout.contains("MERGED"))
        watch.signal(SIGTERM)
        watch.wait()
    }
}
