/// The home the simulator serves when no real accessories are configured: one of
/// each common kind, built from catalog types with sensible values.
///
/// "Demo Home" has rooms Living Room, Kitchen, Bedroom and Hallway (after its
/// default room) and these accessories, all by manufacturer "homed" and provider
/// "simulator", keyed by their serial numbers (HMD-0001 …):
///
/// | Accessory          | Room        | Service (characteristics)                                   |
/// |--------------------|-------------|-------------------------------------------------------------|
/// | Lamp               | Living Room | Lightbulb (On, Brightness, Hue, Saturation)                 |
/// | Thermostat         | Living Room | Thermostat (current/target state and temperature, units)    |
/// | Coffee Maker       | Kitchen     | Outlet (On, OutletInUse)                                    |
/// | Temperature Sensor | Bedroom     | TemperatureSensor (CurrentTemperature, StatusActive)        |
/// | Front Door Lock    | Hallway     | LockMechanism (LockCurrentState, LockTargetState)           |
/// | Doorbell           | Hallway     | Doorbell (ProgrammableSwitchEvent)                          |
///
/// Ids are deterministic: the home is 1, its default room 2, the rooms 3–6, then
/// each accessory, its services and characteristics in the order above.
package enum DemoHome {
    package static let name = "Demo Home"
    package static let manufacturer = "homed"
    package static let provider = "simulator"

    /// Builds the demo home.
    ///
    /// - Parameter nowMs: The time of every initial value (`lastUpdatedMs`).
    package static func make(nowMs: Int64) -> HomeGraph {
        var graph = HomeGraph()
        do {
            try add(to: &graph, nowMs: nowMs)
        } catch {
            // The demo is fixed data checked by the tests; failing here is a bug in it.
            preconditionFailure("the demo home is invalid: \(error)")
        }
        return graph
    }

    private static func add(to graph: inout HomeGraph, nowMs: Int64) throws(HomeError) {
        let home = try graph.addHome(name: name)
        let livingRoom = try graph.addRoom(name: "Living Room", homeID: home)
        let kitchen = try graph.addRoom(name: "Kitchen", homeID: home)
        let bedroom = try graph.addRoom(name: "Bedroom", homeID: home)
        let hallway = try graph.addRoom(name: "Hallway", homeID: home)

        var serial = 0
        func spec(_ name: String, _ category: AccessoryCategory, model: String, _ services: [ServiceSpec])
            -> AccessorySpec
        {
            serial += 1
            let number = String(serial)
            let serialNumber = "HMD-" + String(repeating: "0", count: max(0, 4 - number.count)) + number
            // The serial is the simulator's key for the accessory.
            return AccessorySpec(
                name: name, category: category, manufacturer: manufacturer, model: model,
                serialNumber: serialNumber, firmwareRevision: "1.0.0", provider: provider, providerKey: serialNumber,
                services: services)
        }

        try graph.addAccessory(
            spec(
                "Lamp", .lightbulb, model: "Simulated Color Bulb",
                [
                    ServiceSpec(
                        type: "Lightbulb", primary: true,
                        characteristics: [
                            "On": .bool(true), "Brightness": .int(80), "Hue": .float(35), "Saturation": .float(60),
                        ])
                ]), homeID: home, roomID: livingRoom, nowMs: nowMs)
        try graph.addAccessory(
            spec(
                "Thermostat", .thermostat, model: "Simulated Thermostat",
                [
                    ServiceSpec(
                        type: "Thermostat", primary: true,
                        characteristics: [
                            "CurrentHeatingCoolingState": .uint(1),  // Heat
                            "TargetHeatingCoolingState": .uint(1),  // Heat
                            "CurrentTemperature": .float(20.5),
                            "TargetTemperature": .float(21),
                            "TemperatureDisplayUnits": .uint(0),  // Celsius
                        ])
                ]), homeID: home, roomID: livingRoom, nowMs: nowMs)
        try graph.addAccessory(
            spec(
                "Coffee Maker", .outlet, model: "Simulated Outlet",
                [
                    ServiceSpec(
                        type: "Outlet", primary: true,
                        characteristics: ["On": .bool(false), "OutletInUse": .bool(false)])
                ]), homeID: home, roomID: kitchen, nowMs: nowMs)
        try graph.addAccessory(
            spec(
                "Temperature Sensor", .sensor, model: "Simulated Temperature Sensor",
                [
                    ServiceSpec(
                        type: "TemperatureSensor", primary: true,
                        characteristics: ["CurrentTemperature": .float(18.5), "StatusActive": .bool(true)])
                ]), homeID: home, roomID: bedroom, nowMs: nowMs)
        try graph.addAccessory(
            spec(
                "Front Door Lock", .doorLock, model: "Simulated Lock",
                [
                    ServiceSpec(
                        type: "LockMechanism", primary: true,
                        characteristics: [
                            "LockCurrentState": .uint(1),  // Secured
                            "LockTargetState": .uint(1),  // Secured
                        ])
                ]), homeID: home, roomID: hallway, nowMs: nowMs)
        // A press is an event, not a state: ProgrammableSwitchEvent starts with no value.
        try graph.addAccessory(
            spec(
                "Doorbell", .videoDoorbell, model: "Simulated Doorbell",
                [
                    ServiceSpec(type: "Doorbell", primary: true)
                ]), homeID: home, roomID: hallway, nowMs: nowMs)
    }
}
