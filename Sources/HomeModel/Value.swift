/// A characteristic's value, in the representation its format calls for.
///
/// Integers of every unsigned HAP format (`uint8` … `uint64`) are `.uint`, `int` is
/// `.int`; `tlv8` and `data` are `.data`.
public enum CharacteristicValue: Hashable, Sendable {
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case float(Double)
    case string(String)
    case data([UInt8])
}

extension CharacteristicValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .uint(let value): return String(value)
        case .float(let value): return String(value)
        case .string(let value): return value
        case .data(let bytes): return "0x" + bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        }
    }

    /// The value as a double, for numeric formats (range and step checks, thresholds).
    public var numericValue: Double? {
        switch self {
        case .bool(let value): return value ? 1 : 0
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        case .float(let value): return value
        case .string, .data: return nil
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
