import Foundation
import Testing

/// Waits until a homectl command prints something that satisfies `done` (at most
/// `seconds`: only against a hang).
private func eventually(
    _ daemon: DaemonProcess, _ arguments: [String], seconds: Double = patience, until done: (String) -> Bool
) throws -> String {
    let deadline = Date().addingTimeInterval(seconds)
    var last = ""
    while Date() < deadline {
        last = try run(builtExecutable("homectl"), arguments, environment: daemon.environment).stdout
        if done(last) { return last }
        usleep(50_000)
    }
    return last
}

@Suite("homectl with providers: providers, stats, sim, get --fresh", .serialized, .timeLimit(.safetyNet))
struct ProviderCLITests {
    @Test("providers lists the simulator with its accessories; stats shows its requests")
    func providers() throws {
        let daemon = try DaemonProcess(arguments: ["--demo", "--in-memory", "--simulator-interval-ms", "100"])
        // Connected, and done registering: its accessories are reachable (while the
        // registration is under way, those the home already had are listed unreachable).
        let listed = try eventually(daemon, ["providers", "--json"]) {
            $0.contains("\"connected\":true") && !$0.contains("\"reachable\":false")
        }
        #expect(listed.contains("\"provider\":\"simulator\""))
        #expect(listed.contains("\"key\":\"HMD-0007\""))
        let table = try daemon.homectl("providers")
        #expect(table.status == 0)
        #expect(table.stdout.contains("simulator  connected"))
        #expect(table.stdout.contains("Garage Door"))
        let stats = try daemon.homectl("stats")
        #expect(stats.stdout.contains("PROVIDER") && stats.stdout.contains("TIMEOUTS"))
    }

    @Test("sim press rings the doorbell; sim unreachable takes an accessory away and back; a lamp has no button")
    func sim() throws {
        let daemon = try DaemonProcess(arguments: ["--demo", "--in-memory", "--simulator-interval-ms", "100"])
        _ = try eventually(daemon, ["providers", "--json"]) { $0.contains("\"connected\":true") }
        let before = try daemon.subscriptionCount()
        let watch = try ChildProcess(
            builtExecutable("homectl"), ["watch", "--accessory", "Hallway/Front Door Lock"],
            environment: daemon.environment)
        // Subscribed before the lock goes away and comes back, which it is to see.
        try daemon.waitForSubscriptions(before + 1)
        let pressed = try daemon.homectl("sim", "press", "Hallway/Doorbell")
        #expect(pressed.status == 0)
        #expect(pressed.stdout.hasPrefix("Doorbell: pressed (seq "))
        let away = try daemon.homectl("sim", "unreachable", "Hallway/Front Door Lock", "--for", "1")
        #expect(away.status == 0, "\(away.stderr)")
        var lines: [String] = []
        while lines.count < 2, let line = watch.readLine() {
            if line.contains("\"kind\":\"reachability\"") { lines.append(line) }
        }
        #expect(lines.count == 2)
        #expect(lines.first?.contains("\"reachable\":false") == true)
        #expect(lines.last?.contains("\"reachable\":true") == true)
        watch.signal(SIGTERM)
        watch.wait()
        let lamp = try daemon.homectl("sim", "press", "Living Room/Lamp")
        #expect(lamp.status == 9, "\(lamp.stdout) \(lamp.stderr)")
        #expect(lamp.stderr.contains("(\"Lamp\") has no button to press"), "\(lamp.stderr)")
    }

    @Test("get --fresh asks the provider: with the provider gone, the cache still answers and --fresh says UNAVAILABLE")
    func fresh() throws {
        let daemon = try DaemonProcess(arguments: ["--demo", "--no-simulator", "--in-memory"])
        let file = daemon.directory + "/shed.yaml"
        try """
        provider: shed
        rooms: [Shed]
        accessories:
          - {key: shed-lamp, name: Shed Lamp, room: Shed, category: lightbulb,
             services: [{type: Lightbulb, characteristics: {On: true, Brightness: 35}}]}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let simulator = try ChildProcess(
            builtExecutable("homed-sim"), [file, "--socket", daemon.socketPath, "--log-level", "warning"])
        // Connected, and done registering: its accessories are reachable (while the
        // registration is under way, those the home already had are listed unreachable).
        let listed = try eventually(daemon, ["providers", "--json"]) {
            $0.contains("\"connected\":true") && !$0.contains("\"reachable\":false")
        }
        #expect(listed.contains("\"provider\":\"shed\""))
        let fresh = try daemon.homectl("get", "--fresh", "Shed/Shed Lamp/Brightness")
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stdout.contains("35%"))
        simulator.signal(SIGKILL)
        simulator.wait()
        _ = try eventually(daemon, ["providers", "--json"]) { $0.contains("\"connected\":false") }
        // The cache answers with the last known value, marked so; exit 75 tells a
        // script the device does not answer (14 would be homed itself).
        let cached = try daemon.homectl("get", "Shed/Shed Lamp/Brightness")
        #expect(cached.status == 75, "\(cached.stderr)")
        #expect(cached.stdout.contains("35% (unreachable, last updated "), "\(cached.stdout)")
        let cachedJSON = try daemon.homectl("get", "Shed/Shed Lamp/Brightness", "--json")
        #expect(
            cachedJSON.stdout.contains("\"value\":35,\"value_name\":null,\"reachable\":false"), "\(cachedJSON.stdout)")
        let gone = try daemon.homectl("get", "--fresh", "Shed/Shed Lamp/Brightness")
        #expect(gone.status != 0)
        #expect(gone.stdout.contains("UNAVAILABLE") || gone.stderr.contains("not connected"), "\(gone)")
    }
}
