import Testing

@testable import HomeModel

@Suite("Demo home")
struct DemoHomeTests {
    let graph = DemoHome.make(nowMs: 1_700_000_000_000)

    @Test("the demo home is the only, primary home, with its default room and four rooms")
    func rooms() throws {
        #expect(graph.orderedHomes.map(\.name) == ["Demo Home"])
        #expect(graph.home(1)?.isPrimary == true)
        #expect(
            try graph.rooms(inHome: 1).map(\.name) == ["Default Room", "Living Room", "Kitchen", "Bedroom", "Hallway"])
        try graph.checkIntegrity()
    }

    @Test("the demo accessories sit in their rooms with their categories, all by homed, served by the simulator")
    func accessories() throws {
        let placed = try graph.accessoriesByRoom(homeID: 1).flatMap { group in
            group.accessories.map { "\(group.room.name)/\($0.name):\($0.category)" }
        }
        #expect(
            placed == [
                "Living Room/Lamp:lightbulb", "Living Room/Thermostat:thermostat", "Kitchen/Coffee Maker:outlet",
                "Bedroom/Temperature Sensor:sensor", "Hallway/Doorbell:videoDoorbell",
                "Hallway/Front Door Lock:doorLock",
            ])
        for accessory in graph.accessories.values {
            #expect(accessory.manufacturer == "homed")
            #expect(accessory.provider == "simulator")
            #expect(accessory.isReachable)
        }
    }

    @Test("the demo services carry the characteristics the brief names")
    func services() throws {
        func names(_ path: String) throws -> [String] {
            try graph.characteristics(ofService: graph.resolve(path: path)).map(\.type.name)
        }
        #expect(try names("Living Room/Lamp/Lightbulb") == ["On", "Brightness", "Hue", "Saturation"])
        #expect(
            try names("Living Room/Thermostat/Thermostat") == [
                "CurrentHeatingCoolingState", "TargetHeatingCoolingState", "CurrentTemperature", "TargetTemperature",
                "TemperatureDisplayUnits",
            ])
        #expect(try names("Hallway/Front Door Lock/LockMechanism") == ["LockCurrentState", "LockTargetState"])
        #expect(try names("Bedroom/Temperature Sensor/TemperatureSensor") == ["CurrentTemperature", "StatusActive"])
        #expect(try names("Hallway/Doorbell/Doorbell") == ["ProgrammableSwitchEvent"])
        #expect(try names("Kitchen/Coffee Maker/Outlet") == ["On", "OutletInUse"])
    }

    @Test("every characteristic with state has a value that passes validation, stamped with the build time")
    func valuesValid() throws {
        for characteristic in graph.characteristics.values {
            let stateless = characteristic.isEventOnly || !characteristic.properties.readable
            guard let value = characteristic.value else {
                #expect(stateless, "\(characteristic.type.name) of \(characteristic.accessoryID) has no value")
                continue
            }
            #expect(try characteristic.validate(value, enforceWritable: false) == value)
            #expect(characteristic.lastUpdatedMs == 1_700_000_000_000)
        }
        #expect(graph.characteristic(id(graph, "Living Room/Thermostat/CurrentTemperature"))?.value == .float(20.5))
        #expect(graph.characteristic(id(graph, "Hallway/Front Door Lock/LockCurrentState"))?.value == .uint(1))
    }

    @Test("the demo home is the same every time, ids included")
    func deterministic() {
        #expect(DemoHome.make(nowMs: 1_700_000_000_000) == graph)
        #expect(id(graph, "Living Room/Lamp") == 7)
        #expect(id(graph, "Living Room/Lamp/On") == 16)
    }
}
