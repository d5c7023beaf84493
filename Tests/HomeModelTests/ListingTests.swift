import Testing

@testable import HomeModel

@Suite("Home graph: ordered listings")
struct ListingTests {
    @Test("accessories by room follow the home's room order, default room first, empty rooms included, names sorted")
    func byRoom() throws {
        var graph = DemoHome.make(nowMs: 0)
        try graph.addAccessory(lampSpec("Spare Bulb"), homeID: 1, nowMs: 0)
        try graph.addRoom(name: "Attic", homeID: 1)
        let groups = try graph.accessoriesByRoom(homeID: 1)
        #expect(groups.map(\.room.name) == ["Default Room", "Living Room", "Kitchen", "Bedroom", "Hallway", "Attic"])
        #expect(
            groups.map { $0.accessories.map(\.name) } == [
                ["Spare Bulb"], ["Lamp", "Thermostat"], ["Coffee Maker"], ["Temperature Sensor"],
                ["Doorbell", "Front Door Lock"], [],
            ])
    }

    @Test("accessories by category follow HAP's category numbers and skip empty categories")
    func byCategory() throws {
        let graph = DemoHome.make(nowMs: 0)
        let groups = try graph.accessoriesByCategory(homeID: 1)
        #expect(groups.map(\.category) == [.lightbulb, .doorLock, .outlet, .thermostat, .sensor, .videoDoorbell])
        #expect(
            groups.map { $0.accessories.map(\.name) } == [
                ["Lamp"], ["Front Door Lock"], ["Coffee Maker"], ["Thermostat"], ["Temperature Sensor"], ["Doorbell"],
            ])
    }

    @Test("accessories sort by name without regard to case, then by id")
    func nameOrder() throws {
        var (graph, home, _, _) = try smallHome()
        let b = try graph.addAccessory(lampSpec("b"), homeID: home, nowMs: 0)
        let a2 = try graph.addAccessory(lampSpec("A"), homeID: home, nowMs: 0)
        let a1 = try graph.addAccessory(lampSpec("a"), homeID: home, nowMs: 0)
        #expect(try graph.accessories(inHome: home).map(\.id) == [a2, a1, b])
        #expect(try graph.accessories(inRoom: graph.home(home)!.defaultRoomID).map(\.id) == [a2, a1, b])
    }

    @Test("listing an unknown home is NOT_FOUND")
    func unknown() {
        let graph = DemoHome.make(nowMs: 0)
        #expect(throws: HomeError(.notFound, "no home with id 3 (3 is a room)")) {
            try graph.accessoriesByRoom(homeID: 3)
        }
        #expect(throws: HomeError(.notFound, "no accessory with id 77")) { try graph.services(ofAccessory: 77) }
    }

    @Test("a layout change describes an object as it is now")
    func layoutChange() throws {
        let graph = DemoHome.make(nowMs: 0)
        let lamp = id(graph, "Living Room/Lamp")
        #expect(
            graph.layoutChange(.added, of: lamp)
                == LayoutChange(
                    action: .added, object: .accessory, objectID: lamp, homeID: 1, name: "Lamp", parentID: 3))
        #expect(
            graph.layoutChange(.updated, of: 4)
                == LayoutChange(
                    action: .updated, object: .room, objectID: 4, homeID: 1, name: "Kitchen"))
        #expect(graph.layoutChange(.removed, of: 9999) == nil)
    }
}
