public import HomeModel

// Swift values for `rpc ListTypes`: the standard HAP catalog on the wire.

/// Every characteristic type and service type the daemon knows, by name.
public struct ListTypesResponse: Sendable {
    public var characteristicTypes: [CharacteristicTypeInfo]
    public var serviceTypes: [ServiceTypeInfo]

    public init(characteristicTypes: [CharacteristicTypeInfo], serviceTypes: [ServiceTypeInfo]) {
        self.characteristicTypes = characteristicTypes
        self.serviceTypes = serviceTypes
    }

    /// The daemon's catalog: HAP's 149 characteristic and 44 service types.
    public static var standard: ListTypesResponse {
        ListTypesResponse(characteristicTypes: HAPCatalog.characteristicTypes, serviceTypes: HAPCatalog.serviceTypes)
    }
}
