import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Testing

@Suite("unary calls over the socket")
struct UnaryCallTests {
    @Test("GetHome returns the demo home with its rooms and the lamp's services")
    func getHome() async throws {
        try await withPatientServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let home = try await client.getHome()
            #expect(home.journalID == client.hello.journalID)
            let graph = home.graph
            #expect(graph.homes.count == 1)
            let lamp = graph.accessories[graph.id("Living Room/Lamp")]!
            #expect(lamp.category == .lightbulb)
            let names = Set(try graph.characteristics(ofAccessory: lamp.id).map(\.type.name))
            #expect(names.isSuperset(of: ["On", "Brightness", "Hue", "Saturation"]))
            #expect(graph == server.store.snapshot().graph)
        }
    }
}
