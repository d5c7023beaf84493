import Testing

@testable import HomeModel

@Suite("Home graph: loading and integrity")
struct IntegrityTests {
    /// The demo home's tables, as the daemon's database would hand them back.
    func reload(
        _ graph: HomeGraph, nextID: ObjectID? = nil, rooms: [Room]? = nil,
        characteristics: [Characteristic]? = nil
    ) throws -> HomeGraph {
        try HomeGraph(
            homes: Array(graph.homes.values), rooms: rooms ?? Array(graph.rooms.values),
            zones: Array(graph.zones.values), accessories: Array(graph.accessories.values),
            services: Array(graph.services.values),
            characteristics: characteristics ?? Array(graph.characteristics.values),
            serviceGroups: Array(graph.serviceGroups.values), actionSets: Array(graph.actionSets.values),
            triggers: Array(graph.triggers.values), homeOrder: graph.homeOrder, nextID: nextID ?? graph.nextID)
    }

    @Test("a graph rebuilt from its tables equals the original")
    func roundTrip() throws {
        let graph = DemoHome.make(nowMs: 5)
        #expect(try reload(graph) == graph)
    }

    @Test("stored tables with a duplicate id, a dangling reference or an id past the counter are DATA_LOSS")
    func corrupt() throws {
        let graph = DemoHome.make(nowMs: 5)
        #expect(throws: HomeError(.dataLoss, "id 3 is used twice (again by a room)")) {
            try reload(graph, rooms: Array(graph.rooms.values) + [Room(id: 3, homeID: 1, name: "Again")])
        }
        #expect(throws: HomeError(.dataLoss, "home graph is inconsistent: id 1 is not below the next id 1")) {
            try reload(graph, nextID: 1)
        }
        let orphans = graph.characteristics.values.filter { $0.id != 16 }
        #expect(
            throws: HomeError(.dataLoss, "home graph is inconsistent: 15 lists characteristic 16, which does not exist")
        ) {
            try reload(graph, characteristics: Array(orphans))
        }
    }
}
