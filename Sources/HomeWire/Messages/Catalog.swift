internal import HomeModel

extension ListTypesResponse {
    /// The daemon's catalog: HAP's 149 characteristic and 44 service types.
    package static var standard: ListTypesResponse {
        ListTypesResponse(characteristicTypes: HAPCatalog.characteristicTypes, serviceTypes: HAPCatalog.serviceTypes)
    }
}
