import Testing

@testable import HomeModel

@Suite("Home graph: path resolution")
struct PathTests {
    let graph = DemoHome.make(nowMs: 0)

    @Test("a decimal id names any object; an unknown id is NOT_FOUND")
    func ids() throws {
        #expect(try graph.resolve(path: "1") == 1)
        #expect(try graph.resolve(path: "17") == 17)
        #expect(throws: HomeError(.notFound, "no object with id 5000")) { try graph.resolve(path: "5000") }
        #expect(throws: HomeError(.notFound, "no object with id 99999999999999999999999")) {
            try graph.resolve(path: "99999999999999999999999")
        }
    }

    @Test(
        "Room/Accessory names an accessory and Room/Accessory/Characteristic its characteristic, without regard to case"
    )
    func names() throws {
        let lamp = try graph.resolve(path: "Living Room/Lamp")
        #expect(graph.accessory(lamp)?.name == "Lamp")
        let brightness = try graph.resolve(path: "living room/LAMP/brightness")
        #expect(graph.characteristic(brightness)?.type.name == "Brightness")
        #expect(graph.characteristic(brightness)?.accessoryID == lamp)
        #expect(
            try graph.resolve(path: "Living Room/Thermostat/current temperature")
                == graph.resolve(path: "Living Room/Thermostat/CurrentTemperature"))
    }

    @Test("Room/Accessory/Service/Characteristic picks the service by type or name")
    func serviceForm() throws {
        let on = try graph.resolve(path: "Living Room/Lamp/On")
        #expect(try graph.resolve(path: "Living Room/Lamp/Lightbulb/On") == on)
        let name = try graph.resolve(path: "Living Room/Lamp/AccessoryInformation/Name")
        #expect(graph.characteristic(name)?.value == .string("Lamp"))
        let service = try graph.resolve(path: "Living Room/Lamp/Lightbulb")
        #expect(graph.service(service)?.type.name == "Lightbulb")
    }

    @Test("a home name before the path is accepted; so are a home, a home's room and a room alone")
    func homePrefix() throws {
        #expect(try graph.resolve(path: "Demo Home") == 1)
        #expect(try graph.resolve(path: "demo home/Living Room/Lamp/On") == graph.resolve(path: "Living Room/Lamp/On"))
        #expect(try graph.resolve(path: "Demo Home/Kitchen") == graph.resolve(path: "Kitchen"))
        #expect(graph.room(try graph.resolve(path: "Kitchen"))?.name == "Kitchen")
    }

    @Test("a path that stops short of a characteristic says what it names, with an article, and a path that works")
    func shortOfACharacteristic() {
        let lamp = graph.accessories.values.first { $0.name == "Lamp" }!.id
        #expect(
            throws: HomeError(
                .invalidArgument,
                "Living Room/Lamp is an accessory (id \(lamp)), not a characteristic; add the characteristic's name, "
                    + "e.g. Living Room/Lamp/On")
        ) { try graph.resolveCharacteristic("Living Room/Lamp") }
        let kitchen = graph.rooms.values.first { $0.name == "Kitchen" }!.id
        #expect(
            throws: HomeError(
                .invalidArgument,
                "Kitchen is a room (id \(kitchen)), not a characteristic; add the characteristic's name, "
                    + "e.g. Kitchen/Coffee Maker/On")
        ) { try graph.resolveCharacteristic("Kitchen") }
    }

    @Test("an unknown room names the part and lists the home's rooms")
    func unknownRoom() {
        #expect(
            throws: HomeError(
                .notFound,
                "home \"Demo Home\" has no room named \"Kichen\"; its rooms are "
                    + "Default Room, Living Room, Kitchen, Bedroom, Hallway")
        ) {
            try graph.resolve(path: "Kichen/Coffee Maker/On")
        }
    }

    @Test("an unknown accessory names the part and lists the room's accessories")
    func unknownAccessory() {
        #expect(
            throws: HomeError(
                .notFound,
                "room \"Living Room\" has no accessory named \"Lmap\"; its accessories are "
                    + "Lamp, Thermostat")
        ) {
            try graph.resolve(path: "Living Room/Lmap/On")
        }
    }

    @Test("an unknown characteristic names the part and lists the accessory's characteristics")
    func unknownCharacteristic() {
        #expect(
            throws: HomeError(
                .notFound,
                "accessory \"Lamp\" has no characteristic or service named \"Brightnes\"; "
                    + "its characteristics are Identify, Manufacturer, Model, Name, SerialNumber, "
                    + "FirmwareRevision, On, Brightness, Hue, Saturation")
        ) {
            try graph.resolve(path: "Living Room/Lamp/Brightnes")
        }
        #expect(
            throws: HomeError(
                .notFound,
                "service \"Lightbulb\" of accessory \"Lamp\" has no characteristic named "
                    + "\"Name\"; its characteristics are On, Brightness, Hue, Saturation")
        ) {
            try graph.resolve(path: "Living Room/Lamp/Lightbulb/Name")
        }
        #expect(
            throws: HomeError(
                .notFound,
                "accessory \"Lamp\" has no service named \"Switch\"; its services are "
                    + "AccessoryInformation (\"Lamp\"), Lightbulb (\"Lamp\")")
        ) {
            try graph.resolve(path: "Living Room/Lamp/Switch/On")
        }
    }

    @Test("a characteristic in two services is ambiguous, and the message gives the paths that are not")
    func ambiguousCharacteristic() throws {
        var graph = graph
        let spec = AccessorySpec(
            name: "Strip", category: .lightbulb,
            services: [
                ServiceSpec(type: "Lightbulb", name: "Left"), ServiceSpec(type: "Lightbulb", name: "Right"),
            ])
        let strip = try graph.addAccessory(spec, homeID: 1, roomID: id(graph, "Kitchen"), nowMs: 0)
        let services = try graph.services(ofAccessory: strip)
        let left = services[1].characteristicIDs[0]
        let right = services[2].characteristicIDs[0]
        #expect(
            throws: HomeError(
                .invalidArgument,
                "accessory \"Strip\" has 2 On characteristics; name the service: "
                    + "Kitchen/Strip/Left/On (id \(left)), Kitchen/Strip/Right/On (id \(right))")
        ) {
            try graph.resolve(path: "Kitchen/Strip/On")
        }
        #expect(try graph.resolve(path: "Kitchen/Strip/Left/On") == left)
        #expect(try graph.resolve(path: "Kitchen/Strip/right/On") == right)
        #expect(
            throws: HomeError(
                .invalidArgument,
                "\"Lightbulb/On\" names 2 characteristics of accessory \"Strip\" "
                    + "(ids \(left), \(right)); use an id")
        ) {
            try graph.resolve(path: "Kitchen/Strip/Lightbulb/On")
        }
    }

    @Test("two accessories of one name in a room are ambiguous, listing their ids")
    func ambiguousAccessory() throws {
        var graph = graph
        let kitchen = id(graph, "Kitchen")
        let first = id(graph, "Kitchen/Coffee Maker")
        let second = try graph.addAccessory(lampSpec("coffee maker"), homeID: 1, roomID: kitchen, nowMs: 0)
        #expect(
            throws: HomeError(
                .invalidArgument,
                "\"Coffee Maker\" names 2 accessories in room \"Kitchen\" "
                    + "(ids \(first), \(second)); use an id")
        ) {
            try graph.resolve(path: "Kitchen/Coffee Maker/On")
        }
    }

    @Test("with several homes a path is searched in all; a match in two needs the home's name")
    func severalHomes() throws {
        var graph = graph
        let cabin = try graph.addHome(name: "Cabin")
        let cabinKitchen = try graph.addRoom(name: "Kitchen", homeID: cabin)
        let kettle = try graph.addAccessory(lampSpec("Kettle"), homeID: cabin, roomID: cabinKitchen, nowMs: 0)
        #expect(try graph.resolve(path: "Kitchen/Kettle") == kettle)
        #expect(try graph.resolve(path: "Living Room/Lamp/On") == id(graph, "Demo Home/Living Room/Lamp/On"))
        #expect(
            throws: HomeError(
                .invalidArgument,
                "\"Kitchen\" names objects in 2 homes: Demo Home/Kitchen (id 4), "
                    + "Cabin/Kitchen (id \(cabinKitchen)); start the path with the home's name")
        ) {
            try graph.resolve(path: "Kitchen")
        }
        #expect(try graph.resolve(path: "Cabin/Kitchen") == cabinKitchen)
        // Of the homes' failures, the one that got furthest explains.
        #expect(
            throws: HomeError(
                .notFound,
                "room \"Kitchen\" has no accessory named \"Toaster\"; its accessories are "
                    + "Coffee Maker")
        ) {
            try graph.resolve(path: "Kitchen/Toaster")
        }
    }

    @Test("an empty path, an empty part or too many parts is INVALID_ARGUMENT")
    func malformed() {
        #expect(throws: HomeError(.invalidArgument, "an empty path names nothing")) { try graph.resolve(path: "") }
        #expect(throws: HomeError(.invalidArgument, "the path \"Living Room//On\" has an empty part")) {
            try graph.resolve(path: "Living Room//On")
        }
        #expect(
            throws: HomeError(
                .invalidArgument,
                "the path \"Demo Home/Living Room/Lamp/Lightbulb/On/x\" has too "
                    + "many parts; the longest form is Home/Room/Accessory/Service/Characteristic")
        ) {
            try graph.resolve(path: "Demo Home/Living Room/Lamp/Lightbulb/On/x")
        }
        #expect(throws: HomeError(.notFound, "there are no homes, so nothing is named \"Kitchen\"")) {
            try HomeGraph().resolve(path: "Kitchen")
        }
    }

    @Test("the path of every object of the demo home resolves back to it")
    func roundTrip() throws {
        let ids =
            Array(graph.homes.keys) + Array(graph.rooms.keys) + Array(graph.accessories.keys)
            + Array(graph.services.keys) + Array(graph.characteristics.keys)
        for objectID in ids {
            let path = try #require(graph.path(of: objectID))
            #expect(try graph.resolve(path: path) == objectID, "\(path)")
        }
        #expect(
            graph.path(of: id(graph, "Living Room/Lamp/Brightness"))
                == "Demo Home/Living Room/Lamp/Lightbulb/Brightness")
        #expect(graph.path(of: 9999) == nil)
    }

    @Test("a characteristic's path may start with an accessory's name alone, when it names one accessory")
    func bareAccessoryName() throws {
        let on = try graph.resolve(path: "Living Room/Lamp/On")
        #expect(try graph.resolveCharacteristic("Lamp/On") == on)
        #expect(try graph.resolveCharacteristic("lamp/Lightbulb/On") == on)
        // Past the accessory, the accessory's own message: which characteristics it has.
        #expect(throws: HomeError.self) { try graph.resolveCharacteristic("Lamp/Onn") }
        do {
            _ = try graph.resolveCharacteristic("Lamp/Onn")
        } catch {
            #expect(error.message.contains("Onn"), "\(error.message)")
            #expect(!error.message.contains("no room named"), "\(error.message)")
        }
        // A word that is no accessory's name keeps the path's own error.
        #expect(throws: HomeError.self) { try graph.resolveCharacteristic("Attic/Lamp/On") }
    }
}
