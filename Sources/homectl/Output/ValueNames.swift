internal import HomeModel

extension Characteristic {
    /// The person's name of the current value, for an enumerated characteristic.
    var valueName: String? {
        guard !metadata.validValues.isEmpty, let number = value?.integerValue else { return nil }
        return ValueNames.name(of: number, type: type)
    }
}

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

extension HomeGraph {
    /// A value of one of its characteristics as a person reads it: "Open",
    /// "21.5 °C"; the bare value when the characteristic is unknown.
    func shown(_ value: CharacteristicValue, of characteristicID: ObjectID) -> String {
        guard var characteristic = characteristics[characteristicID] else { return value.description }
        characteristic.value = value
        return characteristic.displayValue
    }
}
