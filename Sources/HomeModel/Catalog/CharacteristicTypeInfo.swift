/// A standard HAP characteristic type: its identity, permissions and value constraints,
/// as the HAP catalog (`Tests/Fixtures/hap/characteristics.json`) defines them.
public struct CharacteristicTypeInfo: Sendable {
    /// Full upper-case UUID, e.g. "00000008-0000-1000-8000-0026BB765291".
    public let uuid: String
    /// Catalog name, e.g. "Brightness".
    public let name: String
    public let format: CharacteristicFormat
    /// HAP `pr`, `pw`, `ev` and `wr`; `hidden` is always false for a standard type.
    public let permissions: CharacteristicProperties
    public let unit: CharacteristicUnit
    public let minValue: Double?
    public let maxValue: Double?
    /// HAP's minStep (the JSON spells it `minStep`, and once `stepValue`).
    public let minStep: Double?
    /// The enumerated values with their HAP names, by ascending value.
    public let validValues: [(name: String, value: Int64)]
    /// The defined bits of a bit-field characteristic with their HAP names, by ascending bit.
    public let validBits: [(bit: Int, name: String)]
    /// Maximum length in bytes, where the catalog states one.
    public let maxLength: Int?
    /// The value is an occurrence, not a state (a button press): every write is an
    /// event subscribers must receive, never deduplicated or coalesced, and the
    /// characteristic has no current value until the first one happens.
    public let isEventOnly: Bool

    public init(
        uuid: String, name: String, format: CharacteristicFormat, permissions: CharacteristicProperties,
        unit: CharacteristicUnit = .none, minValue: Double? = nil, maxValue: Double? = nil,
        minStep: Double? = nil, validValues: [(name: String, value: Int64)] = [],
        validBits: [(bit: Int, name: String)] = [], maxLength: Int? = nil, isEventOnly: Bool = false
    ) {
        self.uuid = uuid
        self.name = name
        self.format = format
        self.permissions = permissions
        self.unit = unit
        self.minValue = minValue
        self.maxValue = maxValue
        self.minStep = minStep
        self.validValues = validValues
        self.validBits = validBits
        self.maxLength = maxLength
        self.isEventOnly = isEventOnly
    }

    /// The type as a model `TypeIdentifier`.
    public var typeIdentifier: TypeIdentifier { TypeIdentifier(uuid: uuid, name: name) }

    /// The HAP default length limit of a string value, where the catalog states none.
    package static let defaultStringMaxLength = 64

    /// The daemon's length limit of a data or TLV8 value where neither the catalog
    /// nor the provider states one: 64 KiB. (HAP's own default, 2 MiB, would let
    /// any characteristic hold values that pin memory in every queue and the
    /// journal; a provider whose device needs more says so with `maxLength`.)
    package static let defaultDataMaxLength = 65_536

    /// The largest `maxLength` a characteristic may state: the daemon's default
    /// frame size, 4 MiB, since a value travels whole in one frame.
    package static let largestMaxLength = 4_194_304

    /// The metadata a new characteristic of this type starts with.
    ///
    /// Valid bits fold into a mask; a string without a stated maximum length gets
    /// HAP's default of 64 bytes, so every string characteristic has a bound.
    package var defaultMetadata: CharacteristicMetadata {
        CharacteristicMetadata(
            format: format, unit: unit, minValue: minValue, maxValue: maxValue, minStep: minStep,
            validValues: validValues.map(\.value),
            validBits: validBits.reduce(0) { mask, entry in mask | (1 << UInt64(entry.bit)) },
            maxLength: maxLength ?? (format == .string ? Self.defaultStringMaxLength : nil))
    }

    /// The HAP name of an enumerated value ("Heat" for 1 of TargetHeatingCoolingState).
    package func name(ofValidValue value: Int64) -> String? {
        validValues.first { $0.value == value }?.name
    }
}
