public import HomeModel

/// Enumerated values as people say them, as `homectl accessories` shows them
/// (`HomeModel.ValueNames`), with the catalog's names as homed has them
/// (`ListTypes`), so that a homed newer than this build is worded by its own catalog.
public struct ValueNameTable: Sendable {
    /// The catalog's names of each type's valid values, by type UUID.
    private let catalog: [String: [Int64: String]]

    public init(types: [CharacteristicTypeInfo]) {
        var catalog: [String: [Int64: String]] = [:]
        for type in types where !type.validValues.isEmpty {
            catalog[type.uuid] = Dictionary(
                type.validValues.map { ($0.value, $0.name) }, uniquingKeysWith: { a, _ in a })
        }
        self.catalog = catalog
    }

    /// Every valid value of a characteristic with its person's name.
    public func names(of characteristic: Characteristic) -> [Int64: String] {
        var names: [Int64: String] = [:]
        for value in characteristic.metadata.validValues {
            names[value] = ValueNames.name(
                of: value, typeName: characteristic.type.name,
                catalogName: catalog[characteristic.type.uuid]?[value])
        }
        return names
    }
}
