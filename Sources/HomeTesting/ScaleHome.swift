public import HomeModel

/// Large generated homes, for benchmarks and scale tests of storage and serving.
public enum ScaleHome {
    /// Characteristics of each generated accessory: AccessoryInformation (Identify,
    /// Manufacturer, Model, Name, SerialNumber, FirmwareRevision) and a Lightbulb with
    /// On, Brightness, Hue and Saturation.
    public static var characteristicsPerAccessory: Int { 10 }

    /// A home named "Scale Home" with `rooms` rooms (after its default room) and
    /// `accessories` colour bulbs spread over them in turn: "Bulb 0" in "Room 0", …
    /// Every tenth bulb is on; values vary so that they are not all alike.
    ///
    /// `make(accessories: 10_000)` is the benchmark home: 10 000 accessories,
    /// 100 000 characteristics.
    ///
    /// - Parameters:
    ///   - nowMs: The time of every initial value (`lastUpdatedMs`).
    ///   - daemonOwned: How many of the last bulbs are the daemon's own (no provider:
    ///     written in the store); the others are provider "scale"'s.
    public static func make(accessories: Int, rooms: Int = 100, nowMs: Int64 = 0, daemonOwned: Int = 0) -> HomeGraph {
        var graph = HomeGraph()
        do {
            let home = try graph.addHome(name: "Scale Home")
            var roomIDs: [ObjectID] = []
            for number in 0..<max(rooms, 1) {
                roomIDs.append(try graph.addRoom(name: "Room \(number)", homeID: home))
            }
            for number in 0..<accessories {
                let spec = AccessorySpec(
                    name: "Bulb \(number)", category: .lightbulb, manufacturer: "homed", model: "Scale Bulb",
                    serialNumber: "SCALE-\(number)", firmwareRevision: "1.0.0",
                    provider: number >= accessories - daemonOwned ? "" : "scale",
                    services: [
                        ServiceSpec(
                            type: "Lightbulb", primary: true,
                            characteristics: [
                                "On": .bool(number % 10 == 0), "Brightness": .int(Int64(number % 101)),
                                "Hue": .float(Double(number % 360)), "Saturation": .float(Double(number % 100)),
                            ])
                    ])
                try graph.addAccessory(spec, homeID: home, roomID: roomIDs[number % roomIDs.count], nowMs: nowMs)
            }
        } catch {
            // Fixed, valid input: failing here is a bug in the generator.
            preconditionFailure("the scale home is invalid: \(error)")
        }
        return graph
    }
}
