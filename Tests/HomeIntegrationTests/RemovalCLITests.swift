import Foundation
import Testing

/// Removing what is gone: `homectl remove`, `homes remove` and `providers forget`
/// ask on a terminal, want --yes elsewhere, and remove nothing unless told.
@Suite("homectl removals ask first", .serialized, .timeLimit(.safetyNet))
struct RemovalCLITests {
    /// homectl on a terminal (a pty from `script`) that answers `answer`.
    private func onTerminal(_ daemon: DaemonProcess, answer: String, _ command: String) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        var environment = daemon.environment
        environment["HOMECTL"] = builtExecutable("homectl")
        return try run(
            "/bin/bash", ["-c", "printf '\(answer)\\n' | script -qec \"$HOMECTL \(command)\" /dev/null"],
            environment: environment)
    }

    @Test(
        "remove asks on a terminal (no: nothing removed, exit 1), wants --yes in a script (exit 64), and removes with it",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func removeAccessory() throws {
        let daemon = try DaemonProcess()
        let declined = try onTerminal(daemon, answer: "n", "remove 'Living Room/Lamp'")
        #expect(declined.status == 1, "\(declined)")
        #expect(
            declined.stdout.contains("Remove accessory \"Lamp\" in Living Room (id "), "\(declined.stdout)")
        #expect(declined.stdout.contains("homectl: nothing removed"), "\(declined.stdout)")
        let piped = try daemon.homectl("remove", "Living Room/Lamp")
        #expect(piped.status == 64, "\(piped.stderr)")
        #expect(piped.stderr.contains("give --yes to confirm (stdin is not a terminal to ask on)"), "\(piped.stderr)")
        #expect(try daemon.homectl("get", "Living Room/Lamp/On").status == 0)

        let accepted = try onTerminal(daemon, answer: "y", "remove 'Living Room/Lamp'")
        #expect(accepted.status == 0, "\(accepted)")
        #expect(accepted.stdout.contains("removed accessory \"Lamp\""), "\(accepted.stdout)")
        #expect(try daemon.homectl("get", "Living Room/Lamp/On").status == 5)
        let scripted = try daemon.homectl("remove", "Bedroom/Temperature Sensor", "--yes")
        #expect(scripted.status == 0, "\(scripted.stderr)")
        #expect(try daemon.homectl("remove", "Bedroom/Temperature Sensor", "--yes").status == 5)
    }

    @Test("homes remove names what goes with the home and wants --yes when nobody can answer")
    func removeHome() throws {
        let daemon = try DaemonProcess()
        let piped = try daemon.homectl("homes", "remove", "Demo Home")
        #expect(piped.status == 64, "\(piped.stderr)")
        #expect(
            piped.stderr.contains("Remove home \"Demo Home\" (id 1) and everything in it: "), "\(piped.stderr)")
        #expect(piped.stderr.contains(" accessories, "), "\(piped.stderr)")
        #expect(try daemon.homectl("homes").stdout.contains("Demo Home"))
        #expect(try daemon.homectl("homes", "remove", "Demo Home", "-y").status == 0)
        #expect(try !daemon.homectl("homes").stdout.contains("Demo Home"))
    }

    @Test("providers forget: refused while connected, then removes every accessory of the gone provider")
    func forgetProvider() throws {
        let daemon = try DaemonProcess(arguments: ["--demo", "--no-simulator", "--in-memory"])
        let file = daemon.directory + "/shed.yaml"
        try """
        provider: shed
        rooms: [Shed]
        accessories:
          - {key: shed-lamp, name: Shed Lamp, room: Shed, category: lightbulb,
             services: [{type: Lightbulb, characteristics: {On: true}}]}
          - {key: shed-plug, name: Shed Plug, room: Shed, category: outlet,
             services: [{type: Outlet, characteristics: {On: false, OutletInUse: false}}]}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let simulator = try ChildProcess(
            builtExecutable("homed-sim"), [file, "--socket", daemon.socketPath, "--log-level", "warning"])
        var listed = ""
        for _ in 0..<200 where !listed.contains("\"provider\":\"shed\",\"connected\":true") {
            listed = try daemon.homectl("providers", "--json").stdout
            usleep(50_000)
        }
        #expect(listed.contains("\"provider\":\"shed\",\"connected\":true"), "\(listed)")
        let connected = try daemon.homectl("providers", "forget", "shed", "--yes")
        #expect(connected.status == 9, "\(connected.stderr)")
        #expect(connected.stderr.contains("provider \"shed\" is connected (connection "), "\(connected.stderr)")
        // Nor is one of its accessories removed while it is connected: it would report it
        // again and be refused, the device dead in homed until the provider restarted.
        let served = try daemon.homectl("remove", "Shed/Shed Lamp", "--yes")
        #expect(served.status == 9, "\(served.stderr)")
        let refusal = "(\"Shed Lamp\") is served by provider \"shed\", which is connected: remove the device"
        #expect(served.stderr.contains(refusal), "\(served.stderr)")
        #expect(try daemon.homectl("accessories").stdout.contains("Shed Lamp"), "the refused remove changed something")
        simulator.signal(SIGKILL)
        simulator.wait()
        for _ in 0..<200 where !listed.contains("\"provider\":\"shed\",\"connected\":false") {
            listed = try daemon.homectl("providers", "--json").stdout
            usleep(50_000)
        }
        let unknown = try daemon.homectl("providers", "forget", "barn", "--yes")
        #expect(unknown.status == 5)
        #expect(unknown.stderr.contains("no provider \"barn\"; homed knows "), "\(unknown.stderr)")
        let piped = try daemon.homectl("providers", "forget", "shed")
        #expect(piped.status == 64)
        #expect(
            piped.stderr.contains("Forget provider \"shed\" and remove its 2 accessories (Shed Lamp, Shed Plug)"),
            "\(piped.stderr)")
        let forgotten = try daemon.homectl("providers", "forget", "shed", "--yes")
        #expect(forgotten.status == 0, "\(forgotten.stderr)")
        #expect(forgotten.stdout.contains("removed accessory \"Shed Lamp\""), "\(forgotten.stdout)")
        #expect(forgotten.stdout.contains("removed accessory \"Shed Plug\""), "\(forgotten.stdout)")
        let accessories = try daemon.homectl("accessories").stdout
        #expect(!accessories.contains("Shed Lamp") && !accessories.contains("Shed Plug"), "\(accessories)")
    }
}
