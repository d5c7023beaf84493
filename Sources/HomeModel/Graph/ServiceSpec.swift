/// One service of an `AccessorySpec`: a catalog type and the characteristics to give it.
///
/// The service gets every required characteristic of its type, plus the optional
/// ones named in `optionalCharacteristics` or given a value in `characteristics`,
/// in catalog order. A characteristic without a value gets its type's default
/// (`CharacteristicMetadata.defaultValue`).
package struct ServiceSpec: Sendable, Hashable {
    /// A catalog service name ("Lightbulb") or UUID, full or short ("43").
    package var type: String
    /// The service's name; nil for the accessory's name, as HomeKit does.
    package var name: String?
    package var isPrimary: Bool
    /// Initial values by characteristic catalog name ("Brightness") or UUID; a value
    /// is validated like a provider's write (read-only characteristics may be set).
    package var characteristics: [String: CharacteristicValue]
    /// Optional characteristics to include with their default value.
    package var optionalCharacteristics: [String]
    package var isHidden: Bool

    package init(
        type: String, name: String? = nil, primary: Bool = false,
        characteristics: [String: CharacteristicValue] = [:], optionalCharacteristics: [String] = [],
        hidden: Bool = false
    ) {
        self.type = type
        self.name = name
        self.isPrimary = primary
        self.characteristics = characteristics
        self.optionalCharacteristics = optionalCharacteristics
        self.isHidden = hidden
    }
}
