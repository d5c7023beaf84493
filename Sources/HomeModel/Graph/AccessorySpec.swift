/// What an accessory is made of, for `HomeGraph.addAccessory(_:homeID:roomID:nowMs:)`:
/// its identity and its services as catalog types with initial values.
///
/// ```swift
/// AccessorySpec(name: "Lamp", category: .lightbulb, manufacturer: "homed", provider: "simulator",
///               services: [ServiceSpec(type: "Lightbulb", primary: true,
///                                      characteristics: ["On": .bool(true), "Brightness": .int(80)])])
/// ```
public struct AccessorySpec: Sendable, Hashable {
    public var name: String
    public var category: AccessoryCategory
    public var manufacturer: String
    public var model: String
    public var serialNumber: String
    public var firmwareRevision: String
    /// Who serves reads and writes ("simulator", a provider's name).
    public var provider: String
    /// The provider's own stable key for it; "" for none.
    public var providerKey: String
    /// The bridge (an accessory in the same home) this accessory is reached through.
    public var bridgeID: ObjectID?
    public var isReachable: Bool
    /// The services besides AccessoryInformation, which every accessory gets (a
    /// spec for it here adds to it: optional characteristics, overriding values).
    public var services: [ServiceSpec]

    public init(
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
