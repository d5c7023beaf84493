// Values as people read them: the daemon's notes and homectl's output say the
// same thing of the same value ("Open", "21.5 °C", "no value yet").

extension Characteristic {
    /// What a characteristic nothing has reported shows instead of a value.
    package static let noValueYet = "no value yet"

    /// The person's name of the current value, for an enumerated characteristic.
    package var valueName: String? {
        guard !metadata.validValues.isEmpty, let number = value?.integerValue.flatMap({ Int64(exactly: $0) })
        else { return nil }
        return ValueNames.name(of: number, type: type)
    }

    /// The value with its unit, for people; "no value yet" when it has none.
    package var displayValue: String {
        guard let value else { return Self.noValueYet }
        if let name = valueName { return name }
        let unit: String
        switch metadata.unit {
        case .none: unit = ""
        case .celsius: unit = " °C"
        case .percentage: unit = "%"
        case .arcDegrees: unit = "°"
        case .lux: unit = " lx"
        case .seconds: unit = " s"
        }
        return value.description + unit
    }
}

extension HomeGraph {
    /// A value of one of its characteristics as a person reads it: "Open",
    /// "21.5 °C"; the bare value when the characteristic is unknown.
    package func shown(_ value: CharacteristicValue, of characteristicID: ObjectID) -> String {
        guard var characteristic = characteristics[characteristicID] else { return value.description }
        characteristic.value = value
        return characteristic.displayValue
    }

    /// A characteristic taking a value, as a note names it: "Back Door/Contact
    /// Sensor/Contact Sensor State Open"; the id when it is gone.
    package func described(_ characteristicID: ObjectID, taking value: CharacteristicValue) -> String {
        (path(of: characteristicID) ?? "characteristic \(characteristicID)") + " " + shown(value, of: characteristicID)
    }
}
