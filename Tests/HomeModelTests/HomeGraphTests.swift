import Testing

@testable import HomeModel

@Suite("Home graph: homes, rooms and accessories")
struct HomeGraphTests {
    @Test("the first home is primary and starts with a default room; a second home is not primary")
    func firstHomeIsPrimary() throws {
        var graph = HomeGraph()
        let first = try graph.addHome(name: "Home")
        let second = try graph.addHome(name: "Cabin")
        let home = try #require(graph.home(first))
        #expect(home.isPrimary)
        #expect(graph.home(second)?.isPrimary == false)
        #expect(graph.primaryHomeID == first)
        #expect(home.roomIDs == [home.defaultRoomID])
        #expect(graph.room(home.defaultRoomID) == Room(id: home.defaultRoomID, homeID: first, name: "Default Room"))
        #expect(graph.homeOrder == [first, second])
        try graph.checkIntegrity()
    }

    @Test("ids come from one counter starting at 1, shared by every kind of object")
    func idsFromOneCounter() throws {
        var graph = HomeGraph()
        #expect(graph.nextID == 1)
        let home = try graph.addHome(name: "Home")
        let room = try graph.addRoom(name: "Kitchen", homeID: home)
        let lamp = try graph.addAccessory(lampSpec(), homeID: home, roomID: room, nowMs: 0)
        #expect([home, graph.home(home)?.defaultRoomID, room, lamp] == [1, 2, 3, 4])
        // AccessoryInformation (5) and its 6 characteristics (6–11), Lightbulb (12), On (13), Brightness (14).
        #expect(graph.accessory(lamp)?.serviceIDs == [5, 12])
        #expect(graph.service(12)?.characteristicIDs == [13, 14])
        #expect(graph.nextID == 15)
    }

    @Test("a home name used already, in any case, is ALREADY_EXISTS naming the existing home")
    func duplicateHome() throws {
        var graph = HomeGraph()
        try graph.addHome(name: "Home")
        expectFailure(graph, HomeError(.alreadyExists, "a home named \"Home\" already exists (id 1)")) {
            _ = try $0.addHome(name: "HOME")
        }
    }

    @Test("a blank or over-long name is INVALID_ARGUMENT saying which")
    func badNames() throws {
        let (graph, home, _, _) = try smallHome()
        expectFailure(graph, HomeError(.invalidArgument, "a home name cannot be empty")) {
            _ = try $0.addHome(name: "")
        }
        expectFailure(graph, HomeError(.invalidArgument, "a room name cannot be empty")) {
            _ = try $0.addRoom(name: "  ", homeID: home)
        }
        let long = String(repeating: "ä", count: 33)
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "the room name \"\(long)\" is 66 bytes long; names are limited to 64 bytes")
        ) {
            _ = try $0.addRoom(name: long, homeID: home)
        }
        var graph2 = graph
        #expect(throws: Never.self) { try graph2.addRoom(name: String(repeating: "a", count: 64), homeID: home) }
    }

    @Test("a room name must be unique in its home, default room included, but another home may reuse it")
    func roomNamesUnique() throws {
        var (graph, home, _, _) = try smallHome()
        expectFailure(graph, HomeError(.alreadyExists, "home \"Home\" already has a room named \"Kitchen\" (id 4)")) {
            _ = try $0.addRoom(name: "kitchen", homeID: home)
        }
        expectFailure(
            graph, HomeError(.alreadyExists, "home \"Home\" already has a room named \"Default Room\" (id 2)")
        ) {
            _ = try $0.addRoom(name: "Default Room", homeID: home)
        }
        let cabin = try graph.addHome(name: "Cabin")
        try graph.addRoom(name: "Kitchen", homeID: cabin)
        try graph.checkIntegrity()
    }

    @Test("adding to an unknown home is NOT_FOUND naming the id, and what it is if it is something else")
    func unknownHome() throws {
        let (graph, _, livingRoom, _) = try smallHome()
        expectFailure(graph, HomeError(.notFound, "no home with id 99")) {
            _ = try $0.addRoom(name: "Study", homeID: 99)
        }
        expectFailure(graph, HomeError(.notFound, "no home with id 3 (3 is a room)")) {
            _ = try $0.addRoom(name: "Study", homeID: livingRoom)
        }
    }

    @Test("an accessory gets AccessoryInformation first, filled from its spec, then its services")
    func accessoryInformation() throws {
        var (graph, home, livingRoom, _) = try smallHome()
        let lamp = try graph.addAccessory(lampSpec(), homeID: home, roomID: livingRoom, nowMs: 1000)
        let services = try graph.services(ofAccessory: lamp)
        #expect(services.map(\.type.name) == ["AccessoryInformation", "Lightbulb"])
        #expect(services.map(\.name) == ["Lamp", "Lamp"])
        #expect(services.map(\.isUserInteractive) == [false, true])
        #expect(services.map(\.isPrimary) == [false, true])
        let information = try graph.characteristics(ofService: services[0].id)
        #expect(
            information.map(\.type.name)
                == ["Identify", "Manufacturer", "Model", "Name", "SerialNumber", "FirmwareRevision"])
        #expect(
            information.map(\.value) == [
                nil, .string("Acme"), .string("L1"), .string("Lamp"), .string("S1"),
                .string("1.0"),
            ])
        let accessory = try #require(graph.accessory(lamp))
        #expect(accessory.homeID == home)
        #expect(accessory.roomID == livingRoom)
        #expect(accessory.category == .lightbulb)
        #expect(accessory.provider == "test")
        #expect(graph.home(home)?.accessoryIDs == [lamp])
        try graph.checkIntegrity()
    }

    @Test("an accessory without a room goes to the default room")
    func defaultRoom() throws {
        var (graph, home, _, _) = try smallHome()
        let lamp = try graph.addAccessory(lampSpec(), homeID: home, nowMs: 0)
        #expect(graph.accessory(lamp)?.roomID == graph.home(home)?.defaultRoomID)
    }

    @Test(
        "a service has its required characteristics plus the optional ones asked for, in catalog order, with catalog permissions and metadata"
    )
    func serviceCharacteristics() throws {
        var (graph, home, _, _) = try smallHome()
        let spec = AccessorySpec(
            name: "Bulb", category: .lightbulb,
            services: [
                ServiceSpec(
                    type: "lightbulb", characteristics: ["Saturation": .float(10)],
                    optionalCharacteristics: ["Brightness", "Name"])
            ])
        let bulb = try graph.addAccessory(spec, homeID: home, nowMs: 5)
        let service = try #require(try graph.services(ofAccessory: bulb).last)
        let characteristics = try graph.characteristics(ofService: service.id)
        #expect(characteristics.map(\.type.name) == ["On", "Brightness", "Saturation", "Name"])
        #expect(characteristics.map(\.value) == [.bool(false), .int(0), .float(10), .string("Bulb")])
        let brightness = characteristics[1]
        #expect(brightness.type == TypeIdentifier(uuid: "00000008-0000-1000-8000-0026BB765291", name: "Brightness"))
        #expect(
            brightness.properties
                == CharacteristicProperties(
                    readable: true, writable: true,
                    supportsEventNotification: true))
        #expect(brightness.metadata == HAPCatalog.characteristic("Brightness")?.defaultMetadata)
        #expect(brightness.lastUpdatedMs == 5)
        #expect(brightness.serviceID == service.id)
        #expect(brightness.accessoryID == bulb)
    }

    @Test("a service type may be given by UUID, full or short")
    func serviceByUUID() throws {
        var (graph, home, _, _) = try smallHome()
        let spec = AccessorySpec(name: "Plug", category: .outlet, services: [ServiceSpec(type: "47")])
        let plug = try graph.addAccessory(spec, homeID: home, nowMs: 0)
        #expect(try graph.services(ofAccessory: plug).last?.type.name == "Outlet")
    }

    @Test("an unknown service type is INVALID_ARGUMENT naming it and the accessory")
    func unknownServiceType() throws {
        let (graph, home, _, _) = try smallHome()
        let spec = AccessorySpec(name: "Thing", category: .other, services: [ServiceSpec(type: "Toaster")])
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "unknown service type \"Toaster\" in accessory \"Thing\"; a service type is a "
                    + "HAP catalog name such as Lightbulb, or its UUID")
        ) {
            _ = try $0.addAccessory(spec, homeID: home, nowMs: 0)
        }
    }

    @Test("a characteristic its service type does not have is INVALID_ARGUMENT listing the ones it has")
    func foreignCharacteristic() throws {
        let (graph, home, _, _) = try smallHome()
        let spec = AccessorySpec(
            name: "Plug", category: .outlet,
            services: [
                ServiceSpec(type: "Outlet", characteristics: ["Brightness": .int(3)])
            ])
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "service type Outlet has no characteristic Brightness; it has On, OutletInUse, Name")
        ) {
            _ = try $0.addAccessory(spec, homeID: home, nowMs: 0)
        }
        let unknown = AccessorySpec(
            name: "Plug", category: .outlet,
            services: [
                ServiceSpec(type: "Outlet", optionalCharacteristics: ["Wattage"])
            ])
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "unknown characteristic type \"Wattage\" for service Outlet of accessory \"Plug\"")
        ) {
            _ = try $0.addAccessory(unknown, homeID: home, nowMs: 0)
        }
    }

    @Test("an invalid initial value names the characteristic, its service and the accessory, and adds nothing")
    func invalidInitialValue() throws {
        let (graph, home, _, _) = try smallHome()
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "Brightness of service Lightbulb of accessory \"Lamp\": 150 is above the maximum 100")
        ) {
            _ = try $0.addAccessory(lampSpec(brightness: 150), homeID: home, nowMs: 0)
        }
        var spec = lampSpec()
        spec.manufacturer = String(repeating: "m", count: 65)
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "Manufacturer of service AccessoryInformation of accessory \"Lamp\": the string "
                    + "\"\(String(repeating: "m", count: 40))…\" is 65 bytes long; "
                    + "the maximum length is 64 bytes")
        ) {
            _ = try $0.addAccessory(spec, homeID: home, nowMs: 0)
        }
    }

    @Test("two primary services are INVALID_ARGUMENT")
    func twoPrimaries() throws {
        let (graph, home, _, _) = try smallHome()
        let spec = AccessorySpec(
            name: "Combo", category: .other,
            services: [
                ServiceSpec(type: "Switch", primary: true), ServiceSpec(type: "Outlet", primary: true),
            ])
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "accessory \"Combo\" has 2 primary services (Switch, Outlet); at most one may be primary")
        ) {
            _ = try $0.addAccessory(spec, homeID: home, nowMs: 0)
        }
    }

    @Test("an explicit AccessoryInformation spec adds optional characteristics and overrides values")
    func explicitInformation() throws {
        var (graph, home, _, _) = try smallHome()
        var spec = lampSpec()
        spec.services.append(
            ServiceSpec(
                type: "AccessoryInformation",
                characteristics: ["HardwareRevision": .string("B"), "Model": .string("L2")]))
        let lamp = try graph.addAccessory(spec, homeID: home, nowMs: 0)
        let services = try graph.services(ofAccessory: lamp)
        #expect(services.map(\.type.name) == ["AccessoryInformation", "Lightbulb"])
        let values = try graph.characteristics(ofService: services[0].id).map {
            "\($0.type.name)=\($0.value?.description ?? "nil")"
        }
        #expect(
            values == [
                "Identify=nil", "Manufacturer=Acme", "Model=L2", "Name=Lamp", "SerialNumber=S1",
                "FirmwareRevision=1.0", "HardwareRevision=B",
            ])
    }

    @Test("an accessory may not be put in a room of another home")
    func roomOfAnotherHome() throws {
        var (graph, home, _, _) = try smallHome()
        let cabin = try graph.addHome(name: "Cabin")
        let shed = try graph.addRoom(name: "Shed", homeID: cabin)
        expectFailure(graph, HomeError(.invalidArgument, "room \(shed) belongs to home \"Cabin\", not home \"Home\"")) {
            _ = try $0.addAccessory(lampSpec(), homeID: home, roomID: shed, nowMs: 0)
        }
    }

    @Test("a bridged accessory names its bridge and the bridge lists it; bridges do not nest")
    func bridges() throws {
        var (graph, home, _, _) = try smallHome()
        let bridge = try graph.addAccessory(AccessorySpec(name: "Hub", category: .bridge), homeID: home, nowMs: 0)
        var spec = lampSpec()
        spec.bridgeID = bridge
        let lamp = try graph.addAccessory(spec, homeID: home, nowMs: 0)
        #expect(graph.accessory(lamp)?.bridgeID == bridge)
        #expect(graph.accessory(bridge)?.bridgedAccessoryIDs == [lamp])
        try graph.checkIntegrity()
        spec.bridgeID = lamp
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "accessory \(lamp) (\"Lamp\") is itself bridged through accessory \(bridge); "
                    + "bridges do not nest")
        ) {
            _ = try $0.addAccessory(spec, homeID: home, nowMs: 0)
        }
        spec.bridgeID = 999
        expectFailure(graph, HomeError(.notFound, "no accessory with id 999")) {
            _ = try $0.addAccessory(spec, homeID: home, nowMs: 0)
        }
    }

    @Test("every catalog characteristic's default value passes its own validation")
    func defaultValuesValid() throws {
        for info in HAPCatalog.characteristicTypes {
            let characteristic = Characteristic(id: 1, serviceID: 2, accessoryID: 3, typeInfo: info)
            let value = info.defaultMetadata.defaultValue
            #expect(try characteristic.validate(value, enforceWritable: false) == value, "\(info.name)")
        }
        #expect(HAPCatalog.characteristic("TargetTemperature")?.defaultMetadata.defaultValue == .float(10))
        #expect(HAPCatalog.characteristic("CurrentTemperature")?.defaultMetadata.defaultValue == .float(0))
        #expect(HAPCatalog.characteristic("ColorTemperature")?.defaultMetadata.defaultValue == .uint(140))
        #expect(HAPCatalog.characteristic("ResetFilterIndication")?.defaultMetadata.defaultValue == .uint(1))
        #expect(HAPCatalog.characteristic("TargetTiltAngle")?.defaultMetadata.defaultValue == .int(0))
        #expect(HAPCatalog.characteristic("CurrentAmbientLightLevel")?.defaultMetadata.defaultValue == .float(0.0001))
    }

    @Test("a service of every catalog type can be built with its required and optional characteristics")
    func everyServiceType() throws {
        var (graph, home, _, _) = try smallHome()
        for info in HAPCatalog.serviceTypes where info.name != "AccessoryInformation" {
            let spec = AccessorySpec(
                name: info.name, category: .other,
                services: [
                    ServiceSpec(type: info.name, optionalCharacteristics: info.optionalCharacteristics)
                ])
            let accessory = try graph.addAccessory(spec, homeID: home, nowMs: 0)
            let service = try #require(try graph.services(ofAccessory: accessory).last)
            let names = try graph.characteristics(ofService: service.id).map(\.type.name)
            #expect(names == info.requiredCharacteristics + info.optionalCharacteristics, "\(info.name)")
        }
        try graph.checkIntegrity()
    }
}
