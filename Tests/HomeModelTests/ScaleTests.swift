import Testing

@testable import HomeModel

@Suite("Home graph: scale")
struct ScaleTests {
    @Test(
        "10 000 accessories with 100 000 characteristics build, write and resolve within the time limit",
        .timeLimit(.safetyNet))
    func tenThousandAccessories() throws {
        var graph = HomeGraph()
        let home = try graph.addHome(name: "Big")
        var rooms: [ObjectID] = []
        for number in 0..<100 { rooms.append(try graph.addRoom(name: "Room \(number)", homeID: home)) }
        for number in 0..<10_000 {
            // AccessoryInformation (6) + Lightbulb with On, Brightness, Hue, Saturation = 10 characteristics.
            let spec = AccessorySpec(
                name: "Bulb \(number)", category: .lightbulb,
                services: [
                    ServiceSpec(type: "Lightbulb", optionalCharacteristics: ["Brightness", "Hue", "Saturation"])
                ])
            try graph.addAccessory(spec, homeID: home, roomID: rooms[number % 100], nowMs: 0)
        }
        #expect(graph.accessories.count == 10_000)
        #expect(graph.characteristics.count == 100_000)

        var changed = 0
        for characteristic in graph.characteristics.values where characteristic.type.name == "Brightness" {
            if try graph.write(.int(75), to: characteristic.id, nowMs: 1, enforceWritable: true) != nil {
                changed += 1
            }
        }
        #expect(changed == 10_000)
        let on = try graph.resolve(path: "Room 99/Bulb 9999/On")
        #expect(graph.characteristic(on)?.type.name == "On")
        try graph.checkIntegrity()
    }
}
