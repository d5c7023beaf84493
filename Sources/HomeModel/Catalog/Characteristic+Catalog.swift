extension Characteristic {
    /// A characteristic of a standard type, with the catalog's permissions and metadata.
    ///
    /// - Parameters:
    ///   - info: The catalog type, e.g. `HAPCatalog.characteristic("Brightness")!`.
    ///   - value: The initial value, stored as given: validate it first.
    package init(
        id: ObjectID, serviceID: ObjectID, accessoryID: ObjectID, typeInfo info: CharacteristicTypeInfo,
        value: CharacteristicValue? = nil, lastUpdatedMs: Int64 = 0
    ) {
        self.init(
            id: id, serviceID: serviceID, accessoryID: accessoryID, type: info.typeIdentifier,
            properties: info.permissions, metadata: info.defaultMetadata, value: value,
            lastUpdatedMs: lastUpdatedMs)
    }
}
