import Foundation
import HomeClient
import HomeModel
import HomeTesting
import HomeWire
import Testing

/// A small simulation for a `homed-sim` process: a lamp and a sensor that walks.
private let garageFile = """
    provider: garage-sim
    home: Demo Home
    rooms: [Garage]
    tick_ms: 50
    accessories:
      - key: lamp-1
        name: Workbench Lamp
        room: Garage
        category: lightbulb
        services:
          - type: Lightbulb
            characteristics: {On: false, Brightness: 20}
      - key: sensor-1
        name: Garage Sensor
        room: Garage
        category: sensor
        services:
          - type: TemperatureSensor
            characteristics: {CurrentTemperature: 12}
        simulate:
          - {kind: random-walk, characteristic: CurrentTemperature, min: 0, max: 30, step: 0.5}
    """

@Suite("the simulator as a provider process", .timeLimit(.safetyNet))
struct SimulatorProcessTests {
    @Test("homed --demo comes alive: events from most of the demo's accessories, each kind of behaviour")
    func demoIsAlive() async throws {
        let daemon = try DaemonProcess(arguments: ["--demo", "--in-memory", "--simulator-interval-ms", "40"])
        let client = try await HomeClient.connect(to: daemon.socketPath, name: "watcher")
        // The simulator registers the demo file's twelve accessories.
        let graph = try await withTimeout(patience, "the simulator's registration") {
            while true {
                let graph = try await client.getHome().graph
                if graph.accessories.count == 12 && graph.accessories.values.allSatisfy(\.isReachable) { return graph }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        var iterator = client.subscribe(SubscribeRequest(filter: SubscriptionFilter())).makeAsyncIterator()
        var accessories = Set<ObjectID>()
        var characteristics = Set<String>()
        let deadline = Date().addingTimeInterval(patience)
        // The demo moves by itself: two sensors walking, motion, contact, the doorbell, the flaky
        // radio (the thermostat reaches its target within a few ticks, likely before we look).
        let wanted: Set<String> = ["ProgrammableSwitchEvent", "MotionDetected", "ContactSensorState"]
        while Date() < deadline, accessories.count < 6 || !characteristics.isSuperset(of: wanted) {
            guard let message = try await iterator.next() else { break }
            for event in message.events {
                switch event.body {
                case .value(let change):
                    accessories.insert(change.accessoryID)
                    characteristics.insert(graph.characteristics[change.characteristicID]?.type.name ?? "?")
                    #expect(event.origin.kind == .provider && event.origin.name == "simulator")
                case .reachability(let accessoryID, _):
                    accessories.insert(accessoryID)
                default: break
                }
            }
        }
        #expect(accessories.count >= 6, "only \(accessories.count) accessories changed: \(characteristics.sorted())")
        #expect(
            characteristics.isSuperset(of: wanted),
            "\(characteristics.sorted())")
        // A write goes through the simulator: the garage door opens over its ticks. On a
        // connection of its own: the subscription above is no longer read, and a connection
        // whose subscriber stops reading stops being read itself once its buffer is full.
        let writer = try await HomeClient.connect(to: daemon.socketPath, name: "writer")
        let target = graph.id("Garage/Garage Door/TargetDoorState")
        let current = graph.id("Garage/Garage Door/CurrentDoorState")
        _ = try await writer.write(.uint(0), to: target)
        try await withTimeout(patience, "the garage door to open") {
            while try await writer.read([current]).reads.first?.value != .uint(0) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        await writer.close()
        await client.close()
    }

    @Test(
        "homed --demo accepts its first client only once its in-process simulator has registered: every accessory reachable, a write acknowledged at once"
    )
    func demoReadyBeforeListening() async throws {
        // Three fresh daemons: the first call races the simulator's registration if anything does.
        for _ in 0..<3 {
            // Ticks a minute apart: the Garden Sensor's flaky radio (unreachable every
            // ninth tick) cannot answer for the registration this test is about.
            let daemon = try DaemonProcess(arguments: ["--demo", "--in-memory", "--simulator-interval-ms", "60000"])
            let client = try await HomeClient.connect(to: daemon.socketPath, name: "first")
            let accessories = try await client.listAccessories().accessories
            #expect(accessories.count == 12)
            #expect(accessories.filter { !$0.isReachable }.map(\.name) == [])
            let graph = try await client.getHome().graph
            let write = try await client.write(.bool(false), to: graph.id("Living Room/Lamp/On"))
            #expect(write.seq > 0)
            let providers = try await client.call(HomeMethods.listProviders, ListProvidersRequest()).providers
            #expect(providers.map(\.providerID) == ["simulator"])
            #expect(providers.first?.clientName == "simulator (simulator)")
            await client.close()
        }
    }

    @Test(
        "homed-sim as its own process: killed with SIGKILL its accessories are unreachable at once, not after a ping's timeout; restarted, the same ids are back"
    )
    func killedSimulator() async throws {
        // Pings an hour apart: no ping can end the session within the test's time limit,
        // so if the accessories become unreachable, the closed connection made them so.
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--no-simulator", "--in-memory", "--provider-ping-interval-ms", "3600000",
            "--provider-ping-timeout-ms", "3600000",
        ])
        let file = daemon.directory + "/garage.yaml"
        try garageFile.write(toFile: file, atomically: true, encoding: .utf8)
        let client = try await HomeClient.connect(to: daemon.socketPath, name: "watcher")
        var events = client.subscribe(SubscribeRequest(filter: SubscriptionFilter(kinds: [.reachabilityChanged])))
            .makeAsyncIterator()
        _ = try await events.next()

        func startSimulator() throws -> ChildProcess {
            try ChildProcess(
                builtExecutable("homed-sim"), [file, "--socket", daemon.socketPath, "--log-level", "warning"])
        }
        func registered() async throws -> [String: ObjectID] {
            try await withTimeout(patience, "the simulator's registration") {
                while true {
                    let accessories = try await client.listAccessories().accessories.filter {
                        $0.provider == "garage-sim" && $0.isReachable
                    }
                    if accessories.count == 2 {
                        return Dictionary(uniqueKeysWithValues: accessories.map { ($0.providerKey, $0.id) })
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        }
        let first = try startSimulator()
        let ids = try await registered()
        let lamp = try #require(ids["lamp-1"])
        // The user moves the lamp; the move must survive the simulator's restart.
        let rooms = try await client.getHome().graph
        let kitchen = rooms.id("Kitchen")
        _ = try await client.changeLayout(.assignAccessory(accessoryID: lamp, roomID: kitchen))
        first.signal(SIGKILL)
        first.wait()
        var gone = Set<ObjectID>()
        while gone.count < 2 {
            guard let message = try await events.next() else { break }
            for event in message.events {
                if case .reachability(let accessoryID, false) = event.body, ids.values.contains(accessoryID) {
                    gone.insert(accessoryID)
                }
            }
        }
        #expect(gone == Set(ids.values))
        // A write to a gone provider's accessory is refused, not hung.
        let on = try await client.getHome().graph.id("Kitchen/Workbench Lamp/On")
        let refused = try await client.write(
            WriteCharacteristicsRequest(writes: [CharacteristicWrite(characteristicID: on, value: .bool(true))]))
        #expect(refused.results.first?.error?.code == .unavailable)

        let second = try startSimulator()
        #expect(try await registered() == ids)
        #expect(try await client.getHome().graph.accessories[lamp]?.roomID == kitchen)
        // And it serves writes again.
        _ = try await client.write(.bool(true), to: on)
        #expect(try await client.read([on]).reads.first?.value == .bool(true))
        second.signal(SIGTERM)
        #expect(second.wait() == 0)
        await client.close()
    }
}
