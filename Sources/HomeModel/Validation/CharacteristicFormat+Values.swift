extension CharacteristicFormat {
    /// Whether values of this format are integers (`uint8` … `uint64`, `int`).
    package var isInteger: Bool {
        switch self {
        case .uint8, .uint16, .uint32, .uint64, .int: return true
        case .bool, .float, .string, .tlv8, .data: return false
        }
    }

    /// Whether values of this format are unsigned integers, stored as `.uint`.
    package var isUnsigned: Bool {
        switch self {
        case .uint8, .uint16, .uint32, .uint64: return true
        case .bool, .int, .float, .string, .tlv8, .data: return false
        }
    }

    /// The values an integer format can hold at all, whatever its metadata says
    /// (HAP's `int` is 32 bits); nil for other formats.
    var integerRange: ClosedRange<Int128>? {
        switch self {
        case .uint8: return 0...Int128(UInt8.max)
        case .uint16: return 0...Int128(UInt16.max)
        case .uint32: return 0...Int128(UInt32.max)
        case .uint64: return 0...Int128(UInt64.max)
        case .int: return Int128(Int32.min)...Int128(Int32.max)
        case .bool, .float, .string, .tlv8, .data: return nil
        }
    }

    /// The largest value of an unsigned format (plain integer arithmetic: this is on
    /// the path of every write).
    private var unsignedMaximum: UInt64 {
        switch self {
        case .uint8: return UInt64(UInt8.max)
        case .uint16: return UInt64(UInt16.max)
        case .uint32: return UInt64(UInt32.max)
        default: return UInt64.max
        }
    }

    /// The one representation the daemon stores for a value of this format, or nil
    /// if the value cannot stand for one.
    ///
    /// Unsigned formats become `.uint`, `int` becomes `.int` (both from either integer
    /// case, within the format's own range), `float` becomes `.float` (from any finite
    /// number or integer), and `bool` becomes `.bool` — from `0` or `1` too, because
    /// HAP's JSON encodes booleans either way. Strings stay strings and `tlv8`/`data`
    /// stay bytes. Metadata (min, max, step, valid values) is not checked here; see
    /// `Characteristic.validate(_:enforceWritable:)`.
    package func normalized(_ value: CharacteristicValue) -> CharacteristicValue? {
        switch (self, value) {
        case (.bool, .bool):
            return value
        case (.bool, .int(let number)) where number == 0 || number == 1:
            return .bool(number == 1)
        case (.bool, .uint(let number)) where number == 0 || number == 1:
            return .bool(number == 1)
        case (.uint8, .uint(let number)), (.uint16, .uint(let number)), (.uint32, .uint(let number)),
            (.uint64, .uint(let number)):
            return number <= unsignedMaximum ? value : nil
        case (.uint8, .int(let number)), (.uint16, .int(let number)), (.uint32, .int(let number)),
            (.uint64, .int(let number)):
            return number >= 0 && UInt64(number) <= unsignedMaximum ? .uint(UInt64(number)) : nil
        case (.int, .int(let number)):
            return number >= Int64(Int32.min) && number <= Int64(Int32.max) ? value : nil
        case (.int, .uint(let number)):
            return number <= UInt64(Int32.max) ? .int(Int64(number)) : nil
        case (.float, .float(let number)):
            return number.isFinite ? value : nil
        case (.float, .int(let number)):
            return .float(Double(number))
        case (.float, .uint(let number)):
            return .float(Double(number))
        case (.string, .string):
            return value
        case (.tlv8, .data), (.data, .data):
            return value
        default:
            return nil
        }
    }

    /// How the format is named in an error message: what a value of it must be.
    var expectation: String {
        switch self {
        case .bool: return "a bool (true or false, or 0 or 1)"
        case .uint8, .uint16, .uint32, .uint64, .int: return "an integer (\(rawValue))"
        case .float: return "a number (float)"
        case .string: return "a string"
        case .tlv8: return "TLV8 data"
        case .data: return "data"
        }
    }
}
