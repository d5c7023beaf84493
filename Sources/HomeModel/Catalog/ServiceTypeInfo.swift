/// A standard HAP service type and the characteristics it is made of, as the HAP
/// catalog (`Tests/Fixtures/hap/services.json`) defines them.
public struct ServiceTypeInfo: Sendable, Hashable {
    /// Full upper-case UUID, e.g. "00000043-0000-1000-8000-0026BB765291".
    public let uuid: String
    /// Catalog name, e.g. "Lightbulb".
    public let name: String
    /// Characteristic type names every service of this type has, in catalog order.
    public let requiredCharacteristics: [String]
    /// Characteristic type names a service of this type may add, in catalog order.
    public let optionalCharacteristics: [String]

    public init(uuid: String, name: String, requiredCharacteristics: [String], optionalCharacteristics: [String]) {
        self.uuid = uuid
        self.name = name
        self.requiredCharacteristics = requiredCharacteristics
        self.optionalCharacteristics = optionalCharacteristics
    }

    /// The type as a model `TypeIdentifier`.
    public var typeIdentifier: TypeIdentifier { TypeIdentifier(uuid: uuid, name: name) }

    /// Whether a characteristic type (by catalog name, case-insensitive) is required or optional here.
    package func allows(characteristic name: String) -> Bool {
        let key = HAPCatalog.lookupKey(name)
        return (requiredCharacteristics + optionalCharacteristics).contains { HAPCatalog.lookupKey($0) == key }
    }
}
