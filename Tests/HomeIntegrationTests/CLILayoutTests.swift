import Foundation
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
import Testing

/// The built `homectl` (a separate process) against an in-process test server.
@Suite("homectl layout commands against a test server", .serialized)
struct CLILayoutTests {
    private func homectl(_ server: TestServer, _ arguments: String...) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try run(builtExecutable("homectl"), arguments, environment: ["HOMED_SOCKET": server.socketPath])
    }

    private func jsonObject(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("homes --json lists every home with its id, name and primary flag")
    func homesJSON() async throws {
        try await withPatientServer { server in
            let result = try homectl(server, "homes", "--json")
            #expect(result.status == 0, "\(result.stderr)")
            let homes = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            #expect(homes.count == 1)
            #expect(homes.first?["name"] as? String == "Demo Home")
            #expect(homes.first?["primary"] as? Bool == true)
            #expect(homes.first?["id"] as? Int == Int(server.store.snapshot().graph.id("Demo Home")))
            #expect(homes.first?["rooms"] as? Int == 5)
        }
    }

    @Test("rooms add creates the room, prints its event, and rooms lists it")
    func roomsAdd() async throws {
        try await withPatientServer { server in
            let added = try homectl(server, "rooms", "add", "Study")
            #expect(added.status == 0, "\(added.stderr)")
            let graph = server.store.snapshot().graph
            let study = graph.id("Study")
            #expect(added.stdout == "seq \(server.store.lastSeq)  added room \"Study\" (id \(study))\n")

            let json = try homectl(server, "rooms", "add", "Library", "--home", "Demo Home", "--json")
            let answer = try jsonObject(json.stdout)
            let library = server.store.snapshot().graph.id("Library")
            #expect(answer["created_id"] as? Int == Int(library))
            #expect(answer["seq"] as? Int == Int(server.store.lastSeq))
            let events = try #require(answer["events"] as? [[String: Any]])
            #expect(events.first?["kind"] as? String == "layout")
            #expect(events.first?["action"] as? String == "added")
            #expect(events.first?["object"] as? String == "room")
            #expect((events.first?["origin"] as? [String: Any])?["name"] as? String == "homectl")

            let listed = try homectl(server, "rooms")
            #expect(listed.stdout.contains("Study"))
            #expect(listed.stdout.contains("Default Room (default)"))
        }
    }

    @Test("show prints the accessory's services and characteristics with properties, metadata and values")
    func show() async throws {
        try await withPatientServer { server in
            let text = try homectl(server, "show", "Living Room/Lamp")
            #expect(text.status == 0, "\(text.stderr)")
            let lines = text.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("Lamp (id ") == true)
            #expect(lines.contains { $0.contains("Lightbulb \"Lamp\"") && $0.contains("primary") })
            let brightness = try #require(lines.first { $0.contains("Brightness") })
            #expect(brightness.contains("80%"))
            #expect(brightness.contains("pr pw ev"))
            #expect(brightness.contains("int 0…100 step 1 percentage"))

            // A name alone works when it is unique; --json has the whole tree.
            let json = try homectl(server, "show", "Thermostat", "--json")
            let accessory = try jsonObject(json.stdout)
            #expect(accessory["name"] as? String == "Thermostat")
            let services = try #require(accessory["services"] as? [[String: Any]])
            let characteristics = services.flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
            let target = try #require(
                characteristics.first { $0["type_name"] as? String == "TargetHeatingCoolingState" })
            #expect(target["value"] as? Int == 1)
            #expect(target["permissions"] as? [String] == ["pr", "pw", "ev"])
            let valid = try #require(target["valid_values"] as? [[String: Any]])
            #expect(valid.compactMap { $0["name"] as? String } == ["Off", "Heat", "Cool", "Auto"])
        }
    }

    @Test("types --json prints one object per type: 153 characteristic and 44 service types")
    func typesJSON() async throws {
        try await withPatientServer { server in
            let result = try homectl(server, "types", "--json")
            #expect(result.status == 0, "\(result.stderr)")
            let objects = try result.stdout.split(separator: "\n").map { try jsonObject(String($0)) }
            #expect(objects.count == 197)
            let characteristics = objects.filter { $0["kind"] as? String == "characteristic" }
            let services = objects.filter { $0["kind"] as? String == "service" }
            #expect(characteristics.count == 153)
            #expect(services.count == 44)
            #expect(
                Set(characteristics.compactMap { $0["uuid"] as? String })
                    == Set(HAPCatalog.characteristicTypes.map(\.uuid)))

            let brightness = try #require(characteristics.first { $0["name"] as? String == "Brightness" })
            #expect(brightness["uuid"] as? String == "00000008-0000-1000-8000-0026BB765291")
            #expect(brightness["format"] as? String == "int")
            #expect(brightness["unit"] as? String == "percentage")
            #expect(brightness["min"] as? Double == 0)
            #expect(brightness["max"] as? Double == 100)
            #expect(brightness["step"] as? Double == 1)
            #expect(brightness["permissions"] as? [String] == ["pr", "pw", "ev"])
            let lightbulb = try #require(services.first { $0["name"] as? String == "Lightbulb" })
            #expect(lightbulb["required_characteristics"] as? [String] == ["On"])
            #expect((lightbulb["optional_characteristics"] as? [String])?.contains("Brightness") == true)
        }
    }

    @Test("scenes and triggers are created, listed and switched from the command line")
    func scenesAndTriggers() async throws {
        try await withPatientServer { server in
            #expect(try homectl(server, "scenes", "create", "Evening").status == 0)
            let action = try homectl(server, "scenes", "add-action", "Evening", "Living Room/Lamp/Brightness", "30")
            #expect(action.status == 0, "\(action.stderr)")
            let trigger = try homectl(
                server, "triggers", "create", "Cold Bedroom",
                "--when", "Bedroom/Temperature Sensor/CurrentTemperature", "--below", "16",
                "--scene", "Evening", "--disabled")
            #expect(trigger.status == 0, "\(trigger.stderr)")
            let timer = try homectl(
                server, "triggers", "create", "Sunrise", "--at", "2027-01-15T07:00",
                "--time-zone", "Europe/Berlin", "--recurrence", "daily")
            #expect(timer.status == 0, "\(timer.stderr)")
            #expect(try homectl(server, "triggers", "enable", "Cold Bedroom").status == 0)

            let graph = server.store.snapshot().graph
            let scene = try #require(graph.actionSets.values.first { $0.name == "Evening" })
            #expect(
                scene.actions == [
                    CharacteristicWriteAction(
                        characteristicID: graph.id("Living Room/Lamp/Brightness"),
                        value: .int(30))
                ])
            let cold = try #require(graph.triggers.values.first { $0.name == "Cold Bedroom" })
            #expect(cold.isEnabled)
            #expect(cold.actionSetIDs == [scene.id])
            #expect(
                cold.kind
                    == .event(
                        characteristicID: graph.id("Bedroom/Temperature Sensor/CurrentTemperature"),
                        value: nil, rangeMin: nil, rangeMax: 16, conditions: []))
            let sunrise = try #require(graph.triggers.values.first { $0.name == "Sunrise" })
            // 07:00 in Berlin in January is 06:00 UTC.
            #expect(
                sunrise.kind == .timer(fireDateMs: 1_799_992_800_000, timeZone: "Europe/Berlin", recurrence: .daily))

            let listed = try homectl(server, "triggers")
            #expect(listed.stdout.contains("at 2027-01-15 07:00 Europe/Berlin, daily"))
            #expect(listed.stdout.contains("CurrentTemperature ≤ 16"))
        }
    }

    @Test("a refused change prints the daemon's reason and exits with its status code")
    func errors() async throws {
        try await withPatientServer { server in
            let before = server.store.snapshot()
            let duplicate = try homectl(server, "rooms", "add", "kitchen")
            #expect(duplicate.status == 6)
            #expect(
                duplicate.stderr
                    == "homectl: home \"Demo Home\" already has a room named \"Kitchen\" (id \(before.graph.id("Kitchen")))\n"
            )
            let empty = try homectl(server, "homes", "add", "")
            #expect(empty.status == 3)
            #expect(empty.stderr.hasPrefix("homectl: "))
            let tooLong = try homectl(server, "rename", "Living Room/Lamp", String(repeating: "x", count: 65))
            #expect(tooLong.status == 3)
            #expect(tooLong.stderr.contains("65 bytes"))
            let unknown = try homectl(server, "assign", "Living Room/Lamp", "Attic")
            #expect(unknown.status == 5)
            #expect(unknown.stderr.contains("Attic"))
            let missingID = try homectl(server, "rename", "987654", "Anything")
            #expect(missingID.status == 5)
            #expect(missingID.stderr.contains("987654"))
            let tooBright = try homectl(server, "scenes", "create", "Movie")
            #expect(tooBright.status == 0)
            let badValue = try homectl(server, "scenes", "add-action", "Movie", "Living Room/Lamp/Brightness", "150")
            #expect(badValue.status == 3)
            #expect(badValue.stderr.contains("150"))
            #expect(server.store.snapshot().graph.actionSets.values.first { $0.name == "Movie" }?.actions == [])
            #expect(server.store.snapshot().graph.rooms.count == before.graph.rooms.count)
        }
    }
}
