public import HomeModel

/// Enumerated values as people say them, as `homectl accessories` shows them:
/// `ContactSensorState` is "Open", not `1` or `ContactNotDetected`. The catalog's
/// names come from homed (`ListTypes`); where they say something else than a person
/// would, the name here is the person's, else the catalog's with its words spaced
/// ("NotCharging" → "Not charging"). The table is homectl's (Sources/homectl/Output/
/// ValueNames.swift), which the main package keeps internal to homectl.
public struct ValueNames: Sendable {
    private static let forPeople: [String: [Int64: String]] = [
        "ContactSensorState": [0: "Closed", 1: "Open"],
        "LockCurrentState": [0: "Unlocked", 1: "Locked", 2: "Jammed", 3: "Unknown"],
        "LockTargetState": [0: "Unlocked", 1: "Locked"],
        "LeakDetected": [0: "No leak", 1: "Leak"],
        "SmokeDetected": [0: "No smoke", 1: "Smoke"],
        "CarbonMonoxideDetected": [0: "Normal", 1: "CO detected"],
        "CarbonDioxideDetected": [0: "Normal", 1: "CO2 detected"],
        "OccupancyDetected": [0: "Not occupied", 1: "Occupied"],
        "StatusLowBattery": [0: "Normal", 1: "Low"],
    ]

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
            if let name = Self.forPeople[characteristic.type.name]?[value] {
                names[value] = name
            } else if let name = catalog[characteristic.type.uuid]?[value] {
                names[value] = Self.spaced(name)
            }
        }
        return names
    }

    /// "NotCharging" → "Not charging"; "PM2.5" and all-capital words stay as they are.
    static func spaced(_ identifier: String) -> String {
        var words: [String] = []
        var current = ""
        let characters = Array(identifier)
        for (index, character) in characters.enumerated() {
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            let previous = index > 0 ? characters[index - 1] : nil
            let startsWord =
                character.isUppercase && !current.isEmpty
                && (previous?.isLowercase == true || next?.isLowercase == true)
            if startsWord {
                words.append(current)
                current = ""
            }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        return words.enumerated().map { index, word in
            index == 0 || word.allSatisfy(\.isUppercase) ? word : word.lowercased()
        }.joined(separator: " ")
    }
}
