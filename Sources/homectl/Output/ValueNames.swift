internal import HomeModel

extension CharacteristicValue {
    /// The value as an Int64 when it is a whole number that fits.
    var integerValue: Int64? {
        switch self {
        case .int(let number): return number
        case .uint(let number): return Int64(exactly: number)
        default: return nil
        }
    }
}
