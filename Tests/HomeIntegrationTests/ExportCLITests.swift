import Foundation
import Testing

@Suite("homectl export", .timeLimit(.safetyNet))
struct ExportCLITests {
    @Test(
        "the layout by name: rooms, zones, accessories by provider key, scenes with their actions, both kinds of trigger"
    )
    func layout() throws {
        let daemon = try DaemonProcess()
        for arguments in [
            ["zones", "add", "Upstairs"], ["zones", "add-room", "Upstairs", "Bedroom"],
            ["scenes", "create", "Evening"], ["scenes", "add-action", "Evening", "Living Room/Lamp/Brightness", "30"],
            [
                "triggers", "create", "Cold Bedroom", "--when", "Bedroom/Temperature Sensor/CurrentTemperature",
                "--below", "16", "--scene", "Evening",
            ],
            [
                "triggers", "create", "Sunrise", "--at", "2027-01-15T07:00", "--time-zone", "Europe/Berlin",
                "--recurrence", "daily", "--disabled",
            ],
        ] {
            let result = try run(builtExecutable("homectl"), arguments, environment: daemon.environment)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let exported = try daemon.homectl("export", "-o", "json")
        #expect(exported.status == 0, "\(exported.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(exported.stdout.utf8)) as? [String: Any])
        #expect(root["version"] as? Int == 1)
        let home = try #require((root["homes"] as? [[String: Any]])?.first)
        #expect(home["name"] as? String == "Demo Home")
        #expect(home["rooms"] as? [String] == ["Living Room", "Kitchen", "Bedroom", "Hallway"])
        #expect((home["zones"] as? [[String: Any]])?.first?["rooms"] as? [String] == ["Bedroom"])
        let lamp = try #require((home["accessories"] as? [[String: Any]])?.first { $0["name"] as? String == "Lamp" })
        #expect(lamp["provider"] as? String == "simulator" && lamp["key"] as? String == "HMD-0001")
        #expect(lamp["room"] as? String == "Living Room")
        let scene = try #require((home["scenes"] as? [[String: Any]])?.first)
        let action = try #require((scene["actions"] as? [[String: Any]])?.first)
        #expect(action["characteristic"] as? String == "Living Room/Lamp/Lightbulb/Brightness")
        #expect(action["value"] as? Int == 30)
        let triggers = try #require(home["triggers"] as? [[String: Any]])
        let event = try #require(triggers.first { $0["name"] as? String == "Cold Bedroom" })
        #expect(event["scenes"] as? [String] == ["Evening"])
        #expect((event["event"] as? [String: Any])?["below"] as? Double == 16)
        let timer = try #require(triggers.first { $0["name"] as? String == "Sunrise" })
        #expect(timer["enabled"] as? Bool == false)
        let schedule = try #require(timer["timer"] as? [String: Any])
        #expect(schedule["fire_date"] as? String == "2027-01-15T06:00:00.000Z")
        #expect(schedule["time_zone"] as? String == "Europe/Berlin" && schedule["recurrence"] as? String == "daily")
        // For people by default: YAML.
        let yaml = try daemon.homectl("export")
        #expect(yaml.stdout.hasPrefix("version: 1\nhomes:\n- name: \"Demo Home\"\n"))
    }
}
