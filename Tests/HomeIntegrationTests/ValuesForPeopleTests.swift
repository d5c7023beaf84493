import Foundation
import Testing

/// Enumerated values by the names people use, wherever a person reads them; JSON
/// keeps the number and adds the name.
@Suite("values for people", .serialized, .timeLimit(.safetyNet))
struct ValuesForPeopleTests {
    /// The demo with its simulator (the garage door, the back door's contact), which
    /// changes nothing by itself within a test.
    private func demo() throws -> DaemonProcess {
        try DaemonProcess(arguments: ["--demo", "--in-memory", "--simulator-interval-ms", "600000"])
    }

    @Test("get, set's echo and the accessories' state column name enumerated values; JSON adds value_name")
    func getSetAndState() throws {
        let daemon = try demo()
        let get = try daemon.homectl(
            "get", "Garage/Garage Door/CurrentDoorState", "Kitchen/Back Door/ContactSensorState",
            "Hallway/Front Door Lock/LockCurrentState")
        #expect(get.status == 0, "\(get.stderr)")
        let lines = get.stdout.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) }
        #expect(lines == ["Closed", "Closed", "Locked"], "\(get.stdout)")
        let json = try daemon.homectl("get", "Kitchen/Back Door/ContactSensorState", "--json").stdout
        #expect(json.contains("\"value\":0,\"value_name\":\"Closed\",\"reachable\":true"), "\(json)")

        // A person's word or the catalog's, in any case.
        let open = try daemon.homectl("set", "Garage/Garage Door/TargetDoorState", "open")
        #expect(open.status == 0, "\(open.stderr)")
        #expect(open.stdout.contains("TargetDoorState = Open (seq "), "\(open.stdout)")
        let locked = try daemon.homectl("set", "Hallway/Front Door Lock/LockTargetState", "Unsecured")
        #expect(locked.stdout.contains("LockTargetState = Unlocked (seq "), "\(locked.stdout)")
        // A name the characteristic does not have: its names are listed.
        let jammed = try daemon.homectl("set", "Hallway/Front Door Lock/LockTargetState", "Jammed")
        #expect(jammed.status == 3)
        #expect(
            jammed.stderr.contains("(LockTargetState) takes one of Unlocked (0), Locked (1), not 'Jammed'"),
            "\(jammed.stderr)")

        let accessories = try daemon.homectl("accessories").stdout
        let backDoor = accessories.split(separator: "\n").first { $0.contains("Back Door") } ?? ""
        #expect(backDoor.contains(" Closed "), "\(accessories)")
        #expect(!accessories.contains("ContactDetected"), "\(accessories)")
    }

    @Test("watch -o text is text in a pipe; watch JSON adds value_name; scene and trigger events carry their names")
    func watchAndTriggers() throws {
        let daemon = try demo()
        #expect(try daemon.homectl("scenes", "create", "Leave").status == 0)
        #expect(
            try daemon.homectl("scenes", "add-action", "Leave", "Garage/Garage Door/TargetDoorState", "closed").status
                == 0)
        let trigger = try daemon.homectl(
            "triggers", "create", "Door left open", "--when", "Kitchen/Back Door/ContactSensorState", "--equals",
            "open",
            "--scene", "Leave")
        #expect(trigger.status == 0, "\(trigger.stderr)")
        let listed = try daemon.homectl("triggers").stdout
        #expect(
            listed.contains("when Demo Home/Kitchen/Back Door/ContactSensor/ContactSensorState = Open"), "\(listed)")

        let before = try daemon.subscriptionCount()
        let text = try ChildProcess(
            builtExecutable("homectl"),
            ["watch", "-o", "text", "--kind", "value", "--accessory", "Garage/Garage Door"],
            environment: daemon.environment)
        let json = try ChildProcess(builtExecutable("homectl"), ["watch"], environment: daemon.environment)
        defer {
            text.signal(SIGKILL)
            json.signal(SIGKILL)
            text.wait()
            json.wait()
        }
        try daemon.waitForSubscriptions(before + 2)  // both watches subscribed before the changes
        #expect(try daemon.homectl("set", "Garage/Garage Door/TargetDoorState", "0").status == 0)
        let line = text.readLine() ?? ""
        #expect(line.contains("Garage/Garage Door/TargetDoorState = Open"), "\(line)")
        #expect(try daemon.homectl("scenes", "run", "Leave").status == 0)
        #expect(!line.hasPrefix("{"), "\(line)")
        var sawValueName = false
        var sawScene = false
        while !(sawValueName && sawScene), let next = json.readLine() {
            if next.contains("\"characteristic\":\"TargetDoorState\"") {
                sawValueName = sawValueName || next.contains("\"value\":1,\"value_name\":\"Closed\"")
            }
            if next.contains("\"kind\":\"action-set\"") {
                sawScene = next.contains("\"action_set\":\"Leave\"")
            }
        }
        #expect(sawValueName && sawScene)
    }
}
