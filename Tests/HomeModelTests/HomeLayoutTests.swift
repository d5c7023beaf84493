import Testing

@testable import HomeModel

@Suite("Layout: homes, rooms and zones")
struct HomeLayoutTests {
    @Test("renaming a home reports the update; the same name reports nothing; a taken name is ALREADY_EXISTS")
    func renameHome() throws {
        var graph = DemoHome.make(nowMs: 0)
        let cabin = try graph.addHome(name: "Cabin")
        #expect(
            try graph.renameHome(1, to: "Town House") == [
                LayoutChange(action: .updated, object: .home, objectID: 1, homeID: 1, name: "Town House")
            ])
        #expect(try graph.renameHome(1, to: "Town House") == [])
        #expect(try graph.renameHome(1, to: "town house").count == 1)
        expectFailure(graph, HomeError(.alreadyExists, "a home named \"Cabin\" already exists (id \(cabin))")) {
            _ = try $0.renameHome(1, to: "CABIN")
        }
        expectFailure(graph, HomeError(.notFound, "no home with id 999")) { _ = try $0.renameHome(999, to: "X") }
    }

    @Test("setting the primary home updates the old and the new one; setting it again reports nothing")
    func setPrimary() throws {
        var graph = DemoHome.make(nowMs: 0)
        let cabin = try graph.addHome(name: "Cabin")
        #expect(
            try graph.setPrimaryHome(cabin) == [
                LayoutChange(action: .updated, object: .home, objectID: 1, homeID: 1, name: "Demo Home"),
                LayoutChange(action: .updated, object: .home, objectID: cabin, homeID: cabin, name: "Cabin"),
            ])
        #expect(graph.primaryHomeID == cabin)
        #expect(graph.home(1)?.isPrimary == false)
        #expect(try graph.setPrimaryHome(cabin) == [])
        try graph.checkIntegrity()
    }

    @Test("removing the primary home removes everything in it and makes the next home primary")
    func removeHome() throws {
        var graph = DemoHome.make(nowMs: 0)
        let cabin = try graph.addHome(name: "Cabin")
        let nextID = graph.nextID
        #expect(
            try graph.removeHome(1) == [
                LayoutChange(action: .removed, object: .home, objectID: 1, homeID: 1, name: "Demo Home"),
                LayoutChange(action: .updated, object: .home, objectID: cabin, homeID: cabin, name: "Cabin"),
            ])
        #expect(graph.primaryHomeID == cabin)
        #expect(graph.homeOrder == [cabin])
        #expect(graph.accessories.isEmpty)
        #expect(graph.characteristics.isEmpty)
        #expect(graph.rooms.count == 1)
        try graph.checkIntegrity()
        // Ids are never reused.
        #expect(try graph.addRoom(name: "Porch", homeID: cabin) == nextID)
        #expect(try graph.removeHome(cabin).count == 1)
        #expect(graph.homes.isEmpty)
        try graph.checkIntegrity()
    }

    @Test("renaming a room keeps names unique in the home; the default room may be renamed")
    func renameRoom() throws {
        var graph = DemoHome.make(nowMs: 0)
        #expect(
            try graph.renameRoom(4, to: "Galley") == [
                LayoutChange(action: .updated, object: .room, objectID: 4, homeID: 1, name: "Galley")
            ])
        expectFailure(
            graph, HomeError(.alreadyExists, "home \"Demo Home\" already has a room named \"Bedroom\" (id 5)")
        ) {
            _ = try $0.renameRoom(4, to: "bedroom")
        }
        expectFailure(graph, HomeError(.invalidArgument, "a room name cannot be empty")) {
            _ = try $0.renameRoom(4, to: "")
        }
        expectFailure(graph, HomeError(.notFound, "no room with id 1 (1 is a home)")) {
            _ = try $0.renameRoom(1, to: "X")
        }
        #expect(try graph.renameRoom(2, to: "Everywhere").count == 1)
    }

    @Test("removing a room moves its accessories to the default room and takes it out of its zones")
    func removeRoom() throws {
        var graph = DemoHome.make(nowMs: 0)
        let downstairs = try graph.addZone(name: "Downstairs", homeID: 1)
        _ = try graph.addRoom(3, toZone: downstairs)
        _ = try graph.addRoom(4, toZone: downstairs)
        let lamp = id(graph, "Living Room/Lamp")
        let thermostat = id(graph, "Living Room/Thermostat")
        #expect(
            try graph.removeRoom(3) == [
                LayoutChange(action: .moved, object: .accessory, objectID: lamp, homeID: 1, name: "Lamp", parentID: 2),
                LayoutChange(
                    action: .moved, object: .accessory, objectID: thermostat, homeID: 1, name: "Thermostat",
                    parentID: 2),
                LayoutChange(action: .updated, object: .zone, objectID: downstairs, homeID: 1, name: "Downstairs"),
                LayoutChange(action: .removed, object: .room, objectID: 3, homeID: 1, name: "Living Room"),
            ])
        #expect(graph.accessory(lamp)?.roomID == 2)
        #expect(graph.zone(downstairs)?.roomIDs == [4])
        #expect(try graph.rooms(inHome: 1).map(\.name) == ["Default Room", "Kitchen", "Bedroom", "Hallway"])
        try graph.checkIntegrity()
    }

    @Test("the default room cannot be removed")
    func removeDefaultRoom() {
        let graph = DemoHome.make(nowMs: 0)
        expectFailure(
            graph,
            HomeError(
                .failedPrecondition,
                "room 2 (\"Default Room\") is the default room of home \"Demo Home\" and cannot be removed")
        ) {
            _ = try $0.removeRoom(2)
        }
    }

    @Test("zones are added, renamed and removed with unique names, and hold rooms of their home once each")
    func zones() throws {
        var graph = DemoHome.make(nowMs: 0)
        let upstairs = try graph.addZone(name: "Upstairs", homeID: 1)
        expectFailure(
            graph,
            HomeError(
                .alreadyExists,
                "home \"Demo Home\" already has a zone named \"Upstairs\" (id \(upstairs))")
        ) {
            _ = try $0.addZone(name: "upstairs", homeID: 1)
        }
        #expect(
            try graph.addRoom(5, toZone: upstairs) == [
                LayoutChange(action: .updated, object: .zone, objectID: upstairs, homeID: 1, name: "Upstairs")
            ])
        expectFailure(
            graph,
            HomeError(
                .alreadyExists,
                "room 5 (\"Bedroom\") is already in zone \(upstairs) (\"Upstairs\")")
        ) {
            _ = try $0.addRoom(5, toZone: upstairs)
        }
        let cabin = try graph.addHome(name: "Cabin")
        let loft = try graph.addRoom(name: "Loft", homeID: cabin)
        expectFailure(
            graph, HomeError(.invalidArgument, "room \(loft) belongs to home \"Cabin\", not home \"Demo Home\"")
        ) {
            _ = try $0.addRoom(loft, toZone: upstairs)
        }
        expectFailure(graph, HomeError(.notFound, "room 4 (\"Kitchen\") is not in zone \(upstairs) (\"Upstairs\")")) {
            _ = try $0.removeRoom(4, fromZone: upstairs)
        }
        #expect(try graph.removeRoom(5, fromZone: upstairs).count == 1)
        #expect(try graph.renameZone(upstairs, to: "First Floor").first?.name == "First Floor")
        #expect(
            try graph.removeZone(upstairs) == [
                LayoutChange(action: .removed, object: .zone, objectID: upstairs, homeID: 1, name: "First Floor")
            ])
        #expect(graph.home(1)?.zoneIDs == [])
        expectFailure(graph, HomeError(.notFound, "no zone with id \(upstairs)")) { _ = try $0.removeZone(upstairs) }
        try graph.checkIntegrity()
    }
}

@Suite("Names are text for people")
struct ControlCharacterNameTests {
    @Test("a control character anywhere in a name is refused, with its code and position; the message stays printable")
    func controlCharacters() throws {
        var graph = DemoHome.make(nowMs: 0)
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "the room name \"Red\\u{1B}[31m\" has a control character (U+001B) at position 4; names are text for people"
            )
        ) {
            _ = try $0.renameRoom(4, to: "Red\u{1B}[31m")
        }
        for name in ["a\nb", "nul\u{0}", "del\u{7F}", "c1\u{85}", "\ttab"] {
            #expect(throws: HomeError.self, "\(name.debugDescription)") {
                _ = try graph.addRoom(name: name, homeID: 1)
            }
        }
        let error = try #require(throws: HomeError.self) { _ = try graph.addHome(name: "x\u{1B}]0;pwned\u{7}") }
        #expect(!error.message.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        // Text beyond ASCII is fine.
        #expect(throws: Never.self) { _ = try graph.addRoom(name: "Küche 🍳", homeID: 1) }
    }
}
