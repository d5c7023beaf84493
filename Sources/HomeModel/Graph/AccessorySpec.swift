/// What an accessory is made of, for `HomeGraph.addAccessory(_:homeID:roomID:nowMs:)`:
/// its identity and its services as catalog types with initial values.
///
/// ```swift
/// AccessorySpec(name: "Lamp", category: .lightbulb, manufacturer: "homed", provider: "simulator",
///               services: [ServiceSpec(type: "Lightbulb", primary: true,
///                                      characteristics: ["On": .bool(true), "Brightness": .int(80)])])
/// ```
package struct AccessorySpec: Sendable, Hashable {
    package var name: String
    package var category: AccessoryCategory
    package var manufacturer: String
    package var model: String
    package var serialNumber: String
    package var firmwareRevision: String
    /// Who serves reads and writes ("simulator", a provider's name).
    package var provider: String
    /// The provider's own stable key for it; "" for none.
    package var providerKey: String
    /// The bridge (an accessory in the same home) this accessory is reached through.
    package var bridgeID: ObjectID?
    package var isReachable: Bool
    /// The services besides AccessoryInformation, which every accessory gets (a
    /// spec for it here adds to it: optional characteristics, overriding values).
    package var services: [ServiceSpec]

    package init(
        name: String, category: AccessoryCategory, manufacturer: String = "", model: String = "",
        serialNumber: String = "", firmwareRevision: String = "", provider: String = "", providerKey: String = "",
        bridgeID: ObjectID? = nil, isReachable: Bool = true, services: [ServiceSpec] = []
    ) {
        self.name = name
        self.category = category
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber
        self.firmwareRevision = firmwareRevision
        self.provider = provider
        self.providerKey = providerKey
        self.bridgeID = bridgeID
        self.isReachable = isReachable
        self.services = services
    }
}
