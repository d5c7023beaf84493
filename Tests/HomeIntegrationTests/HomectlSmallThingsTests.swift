import Foundation
import Testing

/// homectl's smaller rough edges, each as a user meets it.
@Suite("homectl's small things", .serialized, .timeLimit(.safetyNet))
struct HomectlSmallThingsTests {
    @Test("set GROUP/Type writes that characteristic of every service in the group")
    func groupWrite() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.homectl("groups", "create", "Everything").status == 0)
        #expect(try daemon.homectl("groups", "add", "Everything", "Living Room/Lamp").status == 0)
        #expect(try daemon.homectl("groups", "add", "Everything", "Kitchen/Coffee Maker").status == 0)
        #expect(try daemon.homectl("set", "Kitchen/Coffee Maker/On", "false").status == 0)
        let set = try daemon.homectl("set", "Everything/On", "true")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("Living Room/Lamp/Lightbulb/On = true"), "\(set.stdout)")
        #expect(set.stdout.contains("Kitchen/Coffee Maker/Outlet/On = true"), "\(set.stdout)")
        #expect(try daemon.homectl("get", "Kitchen/Coffee Maker/On").stdout.hasSuffix("true\n"))
        let none = try daemon.homectl("set", "Everything/TargetDoorState", "open")
        #expect(none.status == 5)
        #expect(
            none.stderr.contains("no service of group \"Everything\" has a characteristic TargetDoorState"),
            "\(none.stderr)")
    }

    @Test(
        "-o table or wide on a command that lists nothing says so (64); scenes and triggers -o wide say what text says")
    func tablesWhereThereAreNone() throws {
        let daemon = try DaemonProcess()
        let status = try daemon.homectl("status", "-o", "table")
        #expect(status.status == 64)
        #expect(
            status.stderr.contains(
                "-o table is for the commands that list: homes, rooms, zones, accessories, groups, "),
            "\(status.stderr)")
        #expect(try daemon.homectl("--output=wide", "get", "Living Room/Lamp/On").status == 64)
        #expect(try daemon.homectl("rooms", "-o", "table").status == 0)

        #expect(try daemon.homectl("scenes", "create", "Evening").status == 0)
        #expect(try daemon.homectl("scenes", "add-action", "Evening", "Living Room/Lamp/Brightness", "30").status == 0)
        let scenes = try daemon.homectl("scenes", "-o", "wide").stdout
        #expect(
            scenes.contains("1 action") && scenes.contains("Living Room/Lamp/Lightbulb/Brightness = 30%"), "\(scenes)")
        #expect(
            try daemon.homectl(
                "triggers", "create", "Dusk", "--when", "Hallway/Front Door Lock/LockCurrentState", "--equals",
                "unlocked",
                "--scene", "Evening"
            ).status == 0)
        let triggers = try daemon.homectl("triggers", "-o", "wide").stdout
        #expect(triggers.contains("LockCurrentState = Unlocked") && triggers.contains("Evening"), "\(triggers)")
    }

    @Test("renaming an accessory renames its AccessoryInformation Name; its provider registering again keeps it")
    func renameName() throws {
        let daemon = try DaemonProcess(arguments: ["--demo", "--in-memory", "--simulator-interval-ms", "600000"])
        #expect(try daemon.homectl("rename", "Living Room/Lamp", "Reading Lamp").status == 0)
        let name = try daemon.homectl("get", "Living Room/Reading Lamp/AccessoryInformation/Name").stdout
        #expect(name.hasSuffix("Reading Lamp\n"), "\(name)")
        // Name has no event notification (HAP's `pr` only): a subscriber learns the
        // new name from the layout event (`updated accessory "Reading Lamp"`).
    }

    @Test("a command that never ends is killed at its deadline (status -1), not left to hang the suite")
    func runHasADeadline() throws {
        let never = try run("/bin/sleep", ["60"], seconds: 0.5)
        #expect(never.status == -1)
        let done = try run("/bin/sh", ["-c", "exit 3"])
        #expect(done.status == 3)
    }

    @Test("watch --kind takes a list (value,reachability)")
    func kindList() throws {
        let daemon = try DaemonProcess()
        let watch = try ChildProcess(
            builtExecutable("homectl"), ["watch", "--kind", "layout,value", "-C", "2"], environment: daemon.environment)
        try daemon.waitForSubscriptions(1)  // subscribed before the changes it is to print
        #expect(try daemon.homectl("rooms", "add", "Porch").status == 0)
        #expect(try daemon.homectl("set", "Living Room/Lamp/Brightness", "12").status == 0)
        let first = watch.readLine() ?? ""
        let second = watch.readLine() ?? ""
        #expect(first.contains("\"kind\":\"layout\""), "\(first)")
        #expect(second.contains("\"kind\":\"value\""), "\(second)")
        let bad = try daemon.homectl("watch", "--kind", "value,weather")
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("unknown event kind 'weather'"), "\(bad.stderr)")
    }
}
