extension CharacteristicValue {
    /// The value as an exact integer, for the integer cases only.
    var integerValue: Int128? {
        switch self {
        case .int(let number): return Int128(number)
        case .uint(let number): return Int128(number)
        case .bool, .float, .string, .data: return nil
        }
    }

    /// The value as an error message shows it: the kind, then the value, quoted if a
    /// string and shortened if long ("the string \"on\"", "the float 21.55").
    var phrase: String {
        switch self {
        case .bool(let flag): return "the bool \(flag)"
        case .int(let number): return "the integer \(number)"
        case .uint(let number): return "the integer \(number)"
        case .float(let number): return "the float \(formatNumber(number))"
        case .string(let text): return "the string \(quoted(text))"
        case .data(let bytes): return "the data \(hexPreview(bytes))"
        }
    }

    /// The bare value as an error message shows it ("150", "21.5", "\"on\"").
    package var shortDescription: String {
        switch self {
        case .float(let number): return formatNumber(number)
        case .string(let text): return quoted(text)
        case .data(let bytes): return hexPreview(bytes)
        case .bool, .int, .uint: return description
        }
    }
}
