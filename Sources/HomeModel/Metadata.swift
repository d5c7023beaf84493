/// A characteristic's value format, as HAP names them.
public enum CharacteristicFormat: String, Sendable, CaseIterable, Hashable {
    case bool, uint8, uint16, uint32, uint64, int, float, string, tlv8, data
}

/// A characteristic's unit, as HAP names them.
public enum CharacteristicUnit: String, Sendable, CaseIterable, Hashable {
    case none
    case celsius
    case percentage
    case arcDegrees = "arcdegrees"
    case lux
    case seconds
}

/// What a client may do with a characteristic.
public struct CharacteristicProperties: Hashable, Sendable {
    public var readable: Bool
    public var writable: Bool
    /// Changes of this characteristic are streamed to subscribers (HAP `ev`).
    public var supportsEventNotification: Bool
    public var hidden: Bool
    /// HAP `wr`: a write returns a response value.
    public var writeResponse: Bool

    public init(
        readable: Bool = true, writable: Bool = false, supportsEventNotification: Bool = false,
        hidden: Bool = false, writeResponse: Bool = false
    ) {
        self.readable = readable
        self.writable = writable
        self.supportsEventNotification = supportsEventNotification
        self.hidden = hidden
        self.writeResponse = writeResponse
    }
}

/// The constraints a value must meet (HAP's characteristic metadata).
public struct CharacteristicMetadata: Hashable, Sendable {
    public var format: CharacteristicFormat
    public var unit: CharacteristicUnit
    public var minValue: Double?
    public var maxValue: Double?
    public var minStep: Double?
    /// Allowed values for an enumerated integer characteristic; empty = any in range.
    public var validValues: [Int64]
    /// Allowed bits for a bit-field characteristic; 0 = not constrained.
    public var validBits: UInt64
    /// Maximum length in bytes of a string or data value; nil = the default
    /// (HAP's 64 for strings, the daemon's 64 KiB for data and TLV8: see
    /// `CharacteristicTypeInfo.defaultDataMaxLength`).
    public var maxLength: Int?

    public init(
        format: CharacteristicFormat, unit: CharacteristicUnit = .none, minValue: Double? = nil,
        maxValue: Double? = nil, minStep: Double? = nil, validValues: [Int64] = [],
        validBits: UInt64 = 0, maxLength: Int? = nil
    ) {
        self.format = format
        self.unit = unit
        self.minValue = minValue
        self.maxValue = maxValue
        self.minStep = minStep
        self.validValues = validValues
        self.validBits = validBits
        self.maxLength = maxLength
    }
}
