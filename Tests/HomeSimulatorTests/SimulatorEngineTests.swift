import HomeClient
import HomeModel
import Testing

@testable import HomeSimulator

/// A random source that always yields the same number: walks are then predictable.
struct FixedRandom: RandomNumberGenerator {
    var value: UInt64
    mutating func next() -> UInt64 { value }
}

/// A one-accessory simulation.
func simulation(_ yaml: String) throws -> SimulatorEngine {
    try SimulatorEngine(SimulationFile.parse(yaml, source: "test.yaml"))
}

func ref(_ key: String, _ service: String, _ characteristic: String) -> CharacteristicRef {
    CharacteristicRef(accessoryKey: key, service: service, characteristic: characteristic)
}

@Suite("Simulator: behaviours, tick by tick")
struct SimulatorEngineTests {
    @Test("a thermostat heats towards its target in steps, then stops heating; off, it does nothing")
    func thermostat() throws {
        var engine = try simulation(
            """
            accessories:
              - {key: t, name: T, category: thermostat, simulate: [{kind: thermostat, step: 0.2}],
                 services: [{type: Thermostat, characteristics: {CurrentTemperature: 20, TargetTemperature: 20.5,
                   TargetHeatingCoolingState: 1, CurrentHeatingCoolingState: 0}}]}
            """)
        var random = SystemRandomNumberGenerator()
        let current = ref("t", "Thermostat", "CurrentTemperature")
        let state = ref("t", "Thermostat", "CurrentHeatingCoolingState")
        #expect(engine.tick(random: &random).values == [current: .float(20.2), state: .uint(1)])
        #expect(engine.tick(random: &random).values == [current: .float(20.4)])
        #expect(engine.tick(random: &random).values == [current: .float(20.5)])
        #expect(engine.tick(random: &random).values == [state: .uint(0)])
        #expect(engine.tick(random: &random).isEmpty)
        // Cool mode with a target below: it cools.
        _ = engine.write([
            ref("t", "Thermostat", "TargetHeatingCoolingState"): .uint(2),
            ref("t", "Thermostat", "TargetTemperature"): .float(20),
        ])
        #expect(engine.tick(random: &random).values == [current: .float(20.3), state: .uint(2)])
    }

    @Test("a lock's current state follows its target after the delay")
    func lock() throws {
        var engine = try simulation(
            """
            accessories:
              - {key: l, name: L, category: door-lock, simulate: [{kind: lock, delay_ticks: 2}],
                 services: [{type: LockMechanism, characteristics: {LockCurrentState: 1, LockTargetState: 1}}]}
            """)
        var random = SystemRandomNumberGenerator()
        _ = engine.write([ref("l", "LockMechanism", "LockTargetState"): .uint(0)])
        #expect(engine.tick(random: &random).isEmpty)
        #expect(engine.tick(random: &random).values == [ref("l", "LockMechanism", "LockCurrentState"): .uint(0)])
        #expect(engine.tick(random: &random).isEmpty)
    }

    @Test("a garage door moves through opening to open, and every second movement is obstructed")
    func garageDoor() throws {
        var engine = try simulation(
            """
            accessories:
              - {key: g, name: G, category: garage-door-opener,
                 simulate: [{kind: garage-door, delay_ticks: 2, obstruct_every: 2}],
                 services: [{type: GarageDoorOpener, characteristics: {CurrentDoorState: 1, TargetDoorState: 1}}]}
            """)
        var random = SystemRandomNumberGenerator()
        let current = ref("g", "GarageDoorOpener", "CurrentDoorState")
        let obstruction = ref("g", "GarageDoorOpener", "ObstructionDetected")
        _ = engine.write([ref("g", "GarageDoorOpener", "TargetDoorState"): .uint(0)])
        #expect(engine.tick(random: &random).values == [current: .uint(2)])  // opening
        #expect(engine.tick(random: &random).isEmpty)
        #expect(engine.tick(random: &random).values == [current: .uint(0)])  // open
        // The second movement stops halfway, obstructed.
        _ = engine.write([ref("g", "GarageDoorOpener", "TargetDoorState"): .uint(1)])
        #expect(engine.tick(random: &random).values == [current: .uint(3)])  // closing
        #expect(engine.tick(random: &random).isEmpty)
        #expect(engine.tick(random: &random).values == [current: .uint(4), obstruction: .bool(true)])
        #expect(engine.tick(random: &random).isEmpty)
    }

    @Test("a window covering moves to its target position and says which way")
    func windowCovering() throws {
        var engine = try simulation(
            """
            accessories:
              - {key: w, name: W, category: window-covering, simulate: [{kind: window-covering, step: 30}],
                 services: [{type: WindowCovering, characteristics: {CurrentPosition: 100, TargetPosition: 100, PositionState: 2}}]}
            """)
        var random = SystemRandomNumberGenerator()
        let position = ref("w", "WindowCovering", "CurrentPosition")
        let direction = ref("w", "WindowCovering", "PositionState")
        _ = engine.write([ref("w", "WindowCovering", "TargetPosition"): .uint(40)])
        #expect(engine.tick(random: &random).values == [position: .uint(70), direction: .uint(0)])
        #expect(engine.tick(random: &random).values == [position: .uint(40), direction: .uint(2)])
        #expect(engine.tick(random: &random).isEmpty)
    }

    @Test("a random walk stays within its bounds")
    func randomWalk() throws {
        var engine = try simulation(
            """
            accessories:
              - {key: s, name: S, category: sensor,
                 simulate: [{kind: random-walk, characteristic: CurrentTemperature, min: 10, max: 10.3, step: 0.1}],
                 services: [{type: TemperatureSensor, characteristics: {CurrentTemperature: 10}}]}
            """)
        var up = FixedRandom(value: UInt64.max)  // always the largest move
        let temperature = ref("s", "TemperatureSensor", "CurrentTemperature")
        var seen: [Double] = []
        for _ in 0..<6 { seen.append(engine.tick(random: &up).values[temperature]?.numericValue ?? seen.last ?? 10) }
        #expect(seen == [10.1, 10.2, 10.3, 10.3, 10.3, 10.3])
    }

    @Test("motion, contact, a doorbell, an outlet in use and a flaky radio, on their schedules")
    func schedules() throws {
        var engine = try simulation(
            """
            accessories:
              - {key: m, name: M, category: sensor, simulate: [{kind: motion, every: 3, for_ticks: 1}],
                 services: [{type: MotionSensor}]}
              - {key: c, name: C, category: sensor, simulate: [{kind: contact, every: 2}],
                 services: [{type: ContactSensor}]}
              - {key: d, name: D, category: video-doorbell, simulate: [{kind: doorbell, every: 3}],
                 services: [{type: Doorbell}]}
              - {key: o, name: O, category: outlet, simulate: [{kind: outlet-in-use}],
                 services: [{type: Outlet, characteristics: {On: false, OutletInUse: false}}]}
              - {key: f, name: F, category: sensor, simulate: [{kind: flaky, every: 3, for_ticks: 2}],
                 services: [{type: TemperatureSensor}]}
            """)
        var random = SystemRandomNumberGenerator()
        let motion = ref("m", "MotionSensor", "MotionDetected")
        let contact = ref("c", "ContactSensor", "ContactSensorState")
        let press = ref("d", "Doorbell", "ProgrammableSwitchEvent")
        let inUse = ref("o", "Outlet", "OutletInUse")
        var ticks: [SimulatorEngine.Changes] = []
        for tick in 1...6 {
            if tick == 4 { _ = engine.write([ref("o", "Outlet", "On"): .bool(true)]) }
            ticks.append(engine.tick(random: &random))
        }
        #expect(ticks.map { $0.values[motion] } == [nil, nil, .bool(true), .bool(false), nil, .bool(true)])
        #expect(ticks.map { $0.values[contact] } == [nil, .uint(1), nil, .uint(0), nil, .uint(1)])
        // A press is an occurrence: reported every time, though the value repeats.
        #expect(ticks.map { $0.values[press] } == [nil, nil, .uint(0), nil, nil, .uint(0)])
        #expect(ticks.map { $0.values[inUse] } == [nil, nil, nil, .bool(true), nil, nil])
        #expect(ticks.map { $0.reachability["f"] } == [nil, nil, false, nil, true, false])
    }

    @Test("the controls: a press rings at once; offline takes the accessory away and back")
    func controls() throws {
        var engine = try simulation(
            """
            tick_ms: 1000
            accessories:
              - {key: d, name: D, category: video-doorbell, services: [{type: Doorbell}]}
            """)
        var random = SystemRandomNumberGenerator()
        let pressed = engine.write([ref("d", "Doorbell", "SimulatorPress"): .bool(true)])
        #expect(pressed.values == [ref("d", "Doorbell", "ProgrammableSwitchEvent"): .uint(0)])
        let offline = engine.write([ref("d", "Doorbell", "SimulatorOffline"): .uint(2)])
        #expect(offline.reachability == ["d": false])
        #expect(engine.tick(random: &random).isEmpty)
        #expect(engine.tick(random: &random).reachability == ["d": true])
    }

    @Test("files with mistakes are refused, naming where")
    func badFiles() throws {
        func refusal(_ yaml: String) -> String {
            do {
                _ = try SimulationFile.parse(yaml, source: "home.yaml")
                return "accepted"
            } catch {
                return error.message
            }
        }
        #expect(
            refusal("accessories: [{key: a, name: A, category: toaster, services: []}]").hasPrefix(
                "home.yaml: accessory \"a\": unknown category \"toaster\"; one of other, bridge"))
        #expect(
            refusal(
                "accessories: [{key: a, name: A, category: outlet, services: [{type: Outlet, characteristics: {Hue: 3}}]}]"
            )
            .hasPrefix("home.yaml: accessory \"a\", service 1 (Outlet): Outlet has no characteristic \"Hue\""))
        #expect(
            refusal(
                "accessories: [{key: a, name: A, category: outlet, services: [{type: Outlet, characteristics: {On: 3}}]}]"
            )
                == "home.yaml: accessory \"a\", service 1 (Outlet), On: int(3) is not a value of format bool")
        #expect(
            refusal("accessories: [{key: a, name: A, category: outlet, services: [], simulate: [{kind: dance}]}]")
                .hasPrefix("home.yaml: accessory \"a\", behaviour \"dance\": unknown kind"))
        #expect(refusal("accessories: [{name: A, services: []}]") == "home.yaml: missing key \"key\" in accessories[0]")
    }

    @Test("the demo file holds the built-in demo home's accessories, keys, rooms and values")
    func demoFileMatchesDemoHome() throws {
        let file = try SimulationFile.demo()
        let provided = try file.providedAccessories()
        let demo = DemoHome.make(nowMs: 0)
        for accessory in demo.accessories.values {
            let entry = try #require(provided.first { $0.key == accessory.providerKey }, "\(accessory.name)")
            #expect(entry.name == accessory.name && entry.category == accessory.category)
            #expect(entry.room == demo.rooms[accessory.roomID]?.name)
            // Every value of the demo's services is the file's.
            for serviceID in accessory.serviceIDs.dropFirst() {
                let service = try #require(demo.services[serviceID])
                let fileService = try #require(entry.services.first { $0.type == service.type.name })
                for characteristicID in service.characteristicIDs {
                    let characteristic = try #require(demo.characteristics[characteristicID])
                    let given = fileService.characteristics.first { $0.type == characteristic.type.name }
                    #expect(given != nil, "\(accessory.name): \(characteristic.type.name)")
                    if let value = given?.value {
                        #expect(value == characteristic.value, "\(characteristic.type.name)")
                    }
                }
            }
        }
        #expect(Set(file.accessories.map(\.key)).count == file.accessories.count)
    }
}
