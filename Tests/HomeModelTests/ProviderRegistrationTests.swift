import Testing

@testable import HomeModel

/// A lamp as a provider declares it: a Lightbulb with On and Brightness.
func providedLamp(
    key: String = "lamp-1", name: String = "Desk Lamp", on: Bool? = true, brightness: Int64? = nil,
    extraServices: [ProvidedService] = [], room: String? = nil
) -> ProvidedAccessory {
    var characteristics = [ProvidedCharacteristic(type: "On", value: on.map { .bool($0) })]
    if let brightness { characteristics.append(ProvidedCharacteristic(type: "Brightness", value: .int(brightness))) }
    return ProvidedAccessory(
        key: key, name: name, category: .lightbulb, manufacturer: "Acme", model: "L1", serialNumber: key,
        firmwareRevision: "1.0", room: room,
        services: [ProvidedService(type: "Lightbulb", primary: true, characteristics: characteristics)]
            + extraServices)
}

@Suite("Providers: registering accessories by key")
struct ProviderRegistrationTests {
    @Test("a new key becomes an accessory in the named room, with the information service built from its fields")
    func registerNew() throws {
        var (graph, _, _, kitchen) = try smallHome()
        let registration = try graph.register(
            [providedLamp(room: "kitchen")], provider: "zigbee", nowMs: 5)
        let lampID = try #require(registration.accessoryIDs.first)
        let lamp = try #require(graph.accessory(lampID))
        #expect(lamp.roomID == kitchen)
        #expect(lamp.provider == "zigbee" && lamp.providerKey == "lamp-1")
        #expect(registration.changes.map(\.action) == [.added])
        let services = lamp.serviceIDs.compactMap { graph.services[$0] }
        #expect(services.map(\.type.name) == ["AccessoryInformation", "Lightbulb"])
        let lightbulb = services[1].characteristicIDs.compactMap { graph.characteristics[$0] }
        #expect(lightbulb.map(\.type.name) == ["On"])
        #expect(lightbulb[0].value == .bool(true) && lightbulb[0].lastUpdatedMs == 5)
        // Identify is write-only and the On value was given: nothing is left to read.
        #expect(registration.unreadCharacteristicIDs.isEmpty)
        try graph.checkIntegrity()
    }

    @Test("a characteristic registered without a value has none, and no time, until its device reports one")
    func noValueYet() throws {
        var (graph, _, _, _) = try smallHome()
        let registration = try graph.register(
            [
                providedLamp(
                    on: nil,
                    extraServices: [
                        ProvidedService(
                            type: "ContactSensor", characteristics: [ProvidedCharacteristic(type: "ContactSensorState")]
                        ),
                        ProvidedService(
                            type: "TemperatureSensor",
                            characteristics: [
                                ProvidedCharacteristic(type: "CurrentTemperature", value: .float(0))
                            ]),
                    ])
            ], provider: "zigbee", nowMs: 5)
        let onID = try graph.resolve(path: "Default Room/Desk Lamp/On")
        let contactID = try graph.resolve(path: "Default Room/Desk Lamp/ContactSensorState")
        let temperatureID = try graph.resolve(path: "Default Room/Desk Lamp/CurrentTemperature")
        for id in [onID, contactID] {
            #expect(graph.characteristics[id]?.value == nil && graph.characteristics[id]?.lastUpdatedMs == 0)
        }
        // A value the provider gave is real, even a zero.
        #expect(graph.characteristics[temperatureID]?.value == .float(0))
        #expect(graph.characteristics[temperatureID]?.lastUpdatedMs == 5)
        #expect(Set(registration.unreadCharacteristicIDs) == [onID, contactID])
        // The first report is a change from nothing.
        let checked = try #require(
            try graph.checkWrite(.uint(1), to: contactID, enforceWritable: false, source: .device))
        #expect(graph.store(checked, nowMs: 9) == .uint(1))
        #expect(graph.characteristics[contactID]?.value == .uint(1))
        #expect(graph.characteristics[contactID]?.lastUpdatedMs == 9)
        try graph.checkIntegrity()
    }

    @Test("re-registering a key keeps the accessory's id, room, name, scene actions and characteristic ids")
    func reRegisterKeeps() throws {
        var (graph, home, _, kitchen) = try smallHome()
        let first = try graph.register([providedLamp()], provider: "zigbee", nowMs: 1)
        let lampID = first.accessoryIDs[0]
        let onID = try graph.resolve(path: "Default Room/Desk Lamp/On")
        _ = try graph.assignAccessory(lampID, toRoom: kitchen)
        _ = try graph.renameAccessory(lampID, to: "Reading Lamp")
        let scene = try graph.apply(.addActionSet(name: "Evening", kind: .userDefined, homeID: home)).createdID
        _ = try graph.apply(
            .addAction(CharacteristicWriteAction(characteristicID: onID, value: .bool(true)), actionSetID: scene))

        let again = try graph.register(
            [providedLamp(name: "Desk Lamp", on: false)], provider: "zigbee", nowMs: 2)
        #expect(again.accessoryIDs == [lampID])
        #expect(again.changes.isEmpty)
        let lamp = try #require(graph.accessory(lampID))
        #expect(lamp.roomID == kitchen && lamp.name == "Reading Lamp")
        #expect(try graph.resolve(path: "Kitchen/Reading Lamp/On") == onID)
        #expect(graph.actionSets[scene]?.actions.map(\.characteristicID) == [onID])
        // The value it gave for a known characteristic is returned as its report.
        #expect(again.reportedValues.contains(CharacteristicWrite(characteristicID: onID, value: .bool(false))))
        try graph.checkIntegrity()
    }

    @Test("services added and removed on re-registration are layout events; what referred to removed ones lets go")
    func servicesChange() throws {
        var (graph, home, _, _) = try smallHome()
        let fan = ProvidedService(
            type: "Fan", key: "fan", characteristics: [ProvidedCharacteristic(type: "On", value: .bool(false))])
        let first = try graph.register([providedLamp(extraServices: [fan])], provider: "p", nowMs: 1)
        let lampID = first.accessoryIDs[0]
        let fanService = try #require(graph.accessory(lampID)?.serviceIDs.last)
        let fanOn = try #require(graph.services[fanService]?.characteristicIDs.first)
        let scene = try graph.apply(.addActionSet(name: "Cool", kind: .userDefined, homeID: home)).createdID
        _ = try graph.apply(
            .addAction(CharacteristicWriteAction(characteristicID: fanOn, value: .bool(true)), actionSetID: scene))

        let second = try graph.register([providedLamp(brightness: 50)], provider: "p", nowMs: 2)
        let brightness = try graph.resolve(path: "Default Room/Desk Lamp/Brightness")
        #expect(
            second.changes.map { "\($0.action) \($0.object) \($0.objectID)" } == [
                "added characteristic \(brightness)", "updated service \(graph.accessory(lampID)!.serviceIDs[1])",
                "removed service \(fanService)", "removed characteristic \(fanOn)", "updated actionSet \(scene)",
                "updated accessory \(lampID)",
            ])
        #expect(graph.services[fanService] == nil && graph.characteristics[fanOn] == nil)
        #expect(graph.actionSets[scene]?.actions.isEmpty == true)
        try graph.checkIntegrity()
    }

    @Test("a keyed service registered again with another type is a new service, not the old one retyped")
    func keyedServiceChangesType() throws {
        var (graph, _, _, _) = try smallHome()
        var device = ProvidedAccessory(
            key: "d", name: "Device", category: .outlet,
            services: [
                ProvidedService(
                    type: "Outlet", key: "s1",
                    characteristics: [ProvidedCharacteristic(type: "On"), ProvidedCharacteristic(type: "OutletInUse")])
            ])
        let id = try graph.register([device], provider: "p", nowMs: 1).accessoryIDs[0]
        let outlet = try #require(graph.accessory(id)?.serviceIDs.last)
        device.services = [
            ProvidedService(type: "Lightbulb", key: "s1", characteristics: [ProvidedCharacteristic(type: "On")])
        ]
        let again = try graph.register([device], provider: "p", nowMs: 2)
        let bulb = try #require(graph.accessory(id)?.serviceIDs.last)
        #expect(bulb != outlet && graph.services[bulb]?.type.name == "Lightbulb" && graph.services[outlet] == nil)
        #expect(again.changes.contains { $0.action == .removed && $0.objectID == outlet })
        try graph.checkIntegrity()
    }

    @Test("keys are per provider: two providers registering one key get two accessories")
    func keysPerProvider() throws {
        var (graph, _, _, _) = try smallHome()
        let a = try graph.register([providedLamp()], provider: "a", nowMs: 1)
        let b = try graph.register([providedLamp()], provider: "b", nowMs: 1)
        #expect(a.accessoryIDs != b.accessoryIDs)
        #expect(graph.accessoryIDs(ofProvider: "a") == ["lamp-1": a.accessoryIDs[0]])
        #expect(graph.accessoryIDs(ofProvider: "b") == ["lamp-1": b.accessoryIDs[0]])
    }

    @Test("a bridge and the accessories behind it, in any order in one call")
    func bridged() throws {
        var (graph, _, _, _) = try smallHome()
        var bulb = providedLamp(key: "bulb")
        bulb.bridgeKey = "hub"
        let hub = ProvidedAccessory(key: "hub", name: "Hub", category: .bridge)
        let registration = try graph.register([bulb, hub], provider: "hue", nowMs: 1)
        let (bulbID, hubID) = (registration.accessoryIDs[0], registration.accessoryIDs[1])
        #expect(graph.accessory(bulbID)?.bridgeID == hubID)
        #expect(graph.accessory(hubID)?.bridgedAccessoryIDs == [bulbID])
        try graph.checkIntegrity()
    }

    @Test("a custom characteristic type with full metadata is accepted, and needs that metadata")
    func customType() throws {
        var (graph, _, _, _) = try smallHome()
        let uuid = "A1B2C3D4-0000-1000-8000-00AABBCCDDEE"
        let custom = ProvidedCharacteristic(
            type: uuid, customName: "Watts",
            properties: CharacteristicProperties(readable: true, supportsEventNotification: true),
            metadata: CharacteristicMetadata(format: .float, minValue: 0, maxValue: 4_000), value: .float(12.5))
        var outlet = providedLamp()
        outlet.services[0].characteristics.append(custom)
        _ = try graph.register([outlet], provider: "p", nowMs: 1)
        let watts = try #require(graph.characteristics.values.first { $0.type.uuid == uuid })
        #expect(watts.type.name == "Watts" && watts.value == .float(12.5) && watts.metadata.maxValue == 4_000)

        var bare = providedLamp(key: "lamp-2")
        bare.services[0].characteristics.append(ProvidedCharacteristic(type: uuid, customName: "Watts"))
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "accessory 1 (key \"lamp-2\"), service 1 (\"Lightbulb\"), characteristic 2 (\"\(uuid)\"): "
                    + "the custom type \(uuid) needs its properties")
        ) { _ = try $0.register([bare], provider: "p", nowMs: 1) }
    }

    @Test("malformed registrations are refused naming the item, and nothing of the call is registered")
    func malformed() throws {
        let (graph, _, _, _) = try smallHome()
        let good = providedLamp(key: "good")

        var missingOn = providedLamp(key: "no-on")
        missingOn.services[0].characteristics = [ProvidedCharacteristic(type: "Brightness")]
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "accessory 2 (key \"no-on\"), service 1 (\"Lightbulb\"): a Lightbulb service requires On, which is missing"
            )
        ) { _ = try $0.register([good, missingOn], provider: "p", nowMs: 1) }

        var plug = providedLamp(key: "plug")
        plug.services = [
            ProvidedService(type: "Outlet", characteristics: [ProvidedCharacteristic(type: "OutletInUse")])
        ]
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "accessory 1 (key \"plug\"), service 1 (\"Outlet\"): an Outlet service requires On, which is missing")
        ) { _ = try $0.register([plug], provider: "p", nowMs: 1) }

        var inverted = providedLamp(key: "inverted")
        inverted.services[0].characteristics.append(
            ProvidedCharacteristic(
                type: "Brightness", metadata: CharacteristicMetadata(format: .int, minValue: 80, maxValue: 20)))
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "accessory 2 (key \"inverted\"), service 1 (\"Lightbulb\"), characteristic 2 (\"Brightness\"): "
                    + "minimum 80.0 is above maximum 20.0")
        ) { _ = try $0.register([good, inverted], provider: "p", nowMs: 1) }

        var wrongFormat = providedLamp(key: "format")
        wrongFormat.services[0].characteristics.append(
            ProvidedCharacteristic(type: "Brightness", metadata: CharacteristicMetadata(format: .string)))
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "accessory 2 (key \"format\"), service 1 (\"Lightbulb\"), characteristic 2 (\"Brightness\"): "
                    + "the format of Brightness is int; it cannot be string")
        ) { _ = try $0.register([good, wrongFormat], provider: "p", nowMs: 1) }

        var unknownService = providedLamp(key: "svc")
        unknownService.services[0].type = "Toaster"
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "accessory 1 (key \"svc\"), service 1 (\"Toaster\"): unknown service type; a service type is a "
                    + "HAP catalog name such as Lightbulb, or its UUID")
        ) { _ = try $0.register([unknownService], provider: "p", nowMs: 1) }

        let many = (0..<10_000).map { providedLamp(key: "lamp-\($0)") }
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "the registration carries 10000 accessories; at most 1000 per call: register them in several calls")
        ) { _ = try $0.register(many, provider: "p", nowMs: 1) }

        expectFailure(
            graph, HomeError(.invalidArgument, "accessory 2 (key \"good\"): the key is given twice in this call")
        ) { _ = try $0.register([good, good], provider: "p", nowMs: 1) }

        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "provider id \"my provider\" has a character other than a letter, digit, '.', '-' or '_' at byte 3")
        ) { _ = try $0.register([good], provider: "my provider", nowMs: 1) }

        expectFailure(
            graph, HomeError(.notFound, "provider \"p\" has no accessory with key \"ghost\" to remove")
        ) { _ = try $0.register([], removing: ["ghost"], provider: "p", nowMs: 1) }
    }

    @Test("a renamed accessory keeps its name in AccessoryInformation when its provider registers it again")
    func renameSurvivesRegistration() throws {
        var (graph, _, _, _) = try smallHome()
        let id = try #require(try graph.register([providedLamp()], provider: "zigbee", nowMs: 1).accessoryIDs.first)
        let applied = try graph.apply(.rename(id: id, name: "Reading Lamp"), nowMs: 2)
        let nameChange = applied.events.compactMap { event -> ValueChange? in
            if case .value(let change) = event { return change }
            return nil
        }
        #expect(nameChange.map(\.value) == [.string("Reading Lamp")])
        let again = try graph.register([providedLamp()], provider: "zigbee", nowMs: 3)
        let nameID = try #require(nameChange.first?.characteristicID)
        #expect(again.reportedValues.first { $0.characteristicID == nameID }?.value == .string("Reading Lamp"))
        #expect(graph.accessories[id]?.name == "Reading Lamp")
    }

    @Test("a provider may widen a catalog range to what its device has, within what the format holds")
    func widenedRange() throws {
        var (graph, _, _, _) = try smallHome()
        // A bulb that goes warmer than the catalog's 500 mireds, on Apple's optional
        // ColorTemperature (not in the base catalog, added from Apple's metadata).
        var bulb = providedLamp(key: "warm-bulb")
        bulb.services[0].characteristics.append(
            ProvidedCharacteristic(
                type: "ColorTemperature",
                metadata: CharacteristicMetadata(format: .uint32, minValue: 153, maxValue: 555),
                value: .uint(550)))
        let registration = try graph.register([bulb], provider: "zigbee", nowMs: 1)
        let lamp = try #require(registration.accessoryIDs.first.flatMap { graph.accessory($0) })
        let lightbulb = try #require(lamp.serviceIDs.compactMap { graph.services[$0] }.last)
        let temperature = try #require(
            lightbulb.characteristicIDs.compactMap { graph.characteristics[$0] }.first {
                $0.type.name == "ColorTemperature"
            })
        #expect(temperature.metadata.minValue == 153 && temperature.metadata.maxValue == 555)
        #expect(temperature.value == .uint(550))

        var impossible = providedLamp(key: "impossible")
        impossible.services[0].characteristics.append(
            ProvidedCharacteristic(
                type: "Brightness", metadata: CharacteristicMetadata(format: .int, minValue: 0, maxValue: 1e12)))
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "accessory 1 (key \"impossible\"), service 1 (\"Lightbulb\"), characteristic 2 (\"Brightness\"): "
                    + "maximum 1000000000000.0 is outside what format int holds (-2147483648...2147483647)")
        ) { _ = try $0.register([impossible], provider: "p", nowMs: 1) }
    }

    @Test("removing a key removes its accessory with what referred to it")
    func remove() throws {
        var (graph, _, _, _) = try smallHome()
        let id = try graph.register([providedLamp()], provider: "p", nowMs: 1).accessoryIDs[0]
        let removal = try graph.register([], removing: ["lamp-1"], provider: "p", nowMs: 2)
        #expect(removal.changes.map(\.action) == [.removed])
        #expect(graph.accessory(id) == nil)
        try graph.checkIntegrity()
    }

    @Test(
        "an empty daemon gets a home for a provider's accessories, announced before them as ChangeLayout announces one")
    func makesHome() throws {
        var graph = HomeGraph()
        let registration = try graph.register([providedLamp()], provider: "p", nowMs: 1)
        let id = registration.accessoryIDs[0]
        #expect(graph.homes.values.map(\.name) == ["Home"])
        let home = try #require(graph.primaryHomeID)
        #expect(graph.accessory(id)?.homeID == home)
        let announced = registration.changes.prefix(3).map { "\($0.action) \($0.object) \($0.objectID)" }
        let room = try #require(graph.home(home)?.defaultRoomID)
        #expect(announced == ["added home \(home)", "added room \(room)", "added accessory \(id)"])
        let again = try graph.register([providedLamp()], provider: "p", nowMs: 2)
        #expect(!again.changes.contains { $0.object == .home }, "only the call that made it announces it")
    }
}
