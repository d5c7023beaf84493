/// Enumerated values as people say them: `ContactSensorState = Open`, not `1` or
/// `ContactNotDetected`. The catalog's names are HAP's identifiers; where they say
/// something else than a person would (a contact sensor "detects contact" when the
/// door is closed), the name here is the person's, else the catalog's with its
/// words spaced ("NotCharging" → "Not charging"). Text output shows these; JSON
/// keeps the number and adds the name. homectl and homed-web both word values so.
public enum ValueNames {
    /// Names that read differently from the catalog's, by characteristic type.
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

    /// The person's name of `number` for a characteristic of this type, nil when
    /// it has no names or `number` is none of them.
    public static func name(of number: Int64, type: TypeIdentifier) -> String? {
        name(
            of: number, typeName: type.name,
            catalogName: HAPCatalog.characteristic(uuid: type.uuid)?.name(ofValidValue: number))
    }

    /// The person's name of `number` for a characteristic type named `typeName`,
    /// given the catalog's name of it (from this build's catalog, or the daemon's:
    /// `ListTypes`).
    public static func name(of number: Int64, typeName: String, catalogName: String?) -> String? {
        if let name = forPeople[typeName]?[number] { return name }
        return catalogName.map(spaced)
    }

    /// Every valid value of a characteristic with its person's name, in order.
    public static func names(of characteristic: Characteristic) -> [(value: Int64, name: String)] {
        characteristic.metadata.validValues.compactMap { value in
            name(of: value, type: characteristic.type).map { (value, $0) }
        }
    }

    /// The number a person's word stands for: the person's name or the catalog's,
    /// without regard to case or spaces ("open", "NotCharging", "not charging").
    public static func value(named text: String, for characteristic: Characteristic) -> Int64? {
        let wanted = squeezed(text)
        let info = HAPCatalog.characteristic(uuid: characteristic.type.uuid)
        for value in characteristic.metadata.validValues {
            let names = [name(of: value, type: characteristic.type), info?.name(ofValidValue: value)].compactMap { $0 }
            if names.contains(where: { squeezed($0) == wanted }) { return value }
        }
        return nil
    }

    /// "NotCharging" → "Not charging"; "PM2.5" and all-capital words stay as they are.
    public static func spaced(_ identifier: String) -> String {
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

    private static func squeezed(_ text: String) -> String {
        text.lowercased().filter { !$0.isWhitespace && $0 != "_" && $0 != "-" }
    }
}
