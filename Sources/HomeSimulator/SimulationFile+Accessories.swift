public import HomeModel

/// The characteristics every simulated accessory carries on its first service so
/// that clients can drive the simulation through the daemon (`homectl sim`):
/// writing them is an ordinary write, which the daemon sends to the simulator.
public enum SimulatorControls {
    /// Write `true`: the accessory's button is pressed (a doorbell rings).
    public static let press = TypeIdentifier(uuid: "484D4400-0001-1000-8000-686F6D656400", name: "SimulatorPress")
    /// Write a number of seconds: the accessory is unreachable for that long.
    public static let offline = TypeIdentifier(uuid: "484D4400-0002-1000-8000-686F6D656400", name: "SimulatorOffline")

    static var characteristics: [ProvidedCharacteristic] {
        let properties = CharacteristicProperties(readable: false, writable: true, hidden: true)
        return [
            ProvidedCharacteristic(
                type: press.uuid, customName: press.name, properties: properties,
                metadata: CharacteristicMetadata(format: .bool)),
            ProvidedCharacteristic(
                type: offline.uuid, customName: offline.name, properties: properties,
                metadata: CharacteristicMetadata(format: .uint32, unit: .seconds, minValue: 0, maxValue: 86_400)),
        ]
    }
}

extension SimulationFile {
    /// The file's accessories as the simulator registers them: each service with
    /// the values the file gives and the type's other required characteristics,
    /// in catalog order; the simulator's controls on the first service.
    ///
    /// - Throws: INVALID_ARGUMENT naming the accessory, service or characteristic
    ///   the catalog does not know, or a value of the wrong kind.
    public func providedAccessories() throws(HomeError) -> [ProvidedAccessory] {
        var result: [ProvidedAccessory] = []
        for accessory in accessories {
            let label = "accessory \"\(accessory.key)\""
            guard let category = Self.category(accessory.category) else {
                throw HomeError(
                    .invalidArgument,
                    "\(label): unknown category \"\(accessory.category)\"; one of "
                        + AccessoryCategory.allCases.map { Self.kebab("\($0)") }.joined(separator: ", "))
            }
            var services: [ProvidedService] = []
            for (position, service) in accessory.services.enumerated() {
                var provided = try Self.service(service, label: "\(label), service \(position + 1) (\(service.type))")
                if position == 0 { provided.characteristics += SimulatorControls.characteristics }
                services.append(provided)
            }
            result.append(
                ProvidedAccessory(
                    key: accessory.key, name: accessory.name, category: category,
                    manufacturer: accessory.manufacturer ?? "homed", model: accessory.model ?? "Simulated",
                    serialNumber: accessory.serialNumber ?? accessory.key,
                    firmwareRevision: accessory.firmwareRevision ?? "1.0.0", room: accessory.room,
                    services: services))
        }
        return result
    }

    private static func service(_ service: Service, label: String) throws(HomeError) -> ProvidedService {
        guard let info = HAPCatalog.service(service.type) else {
            throw HomeError(.invalidArgument, "\(label): unknown service type")
        }
        let members = info.requiredCharacteristics + info.optionalCharacteristics
        var given: [String: CharacteristicValue] = [:]
        for (name, scalar) in service.characteristics {
            guard let type = HAPCatalog.characteristic(name), members.contains(type.name) else {
                throw HomeError(
                    .invalidArgument,
                    "\(label): \(info.name) has no characteristic \"\(name)\"; it has \(members.joined(separator: ", "))"
                )
            }
            given[type.name] = try value(scalar, format: type.format, label: "\(label), \(type.name)")
        }
        let included = members.filter { info.requiredCharacteristics.contains($0) || given[$0] != nil }
        return ProvidedService(
            type: info.name, key: service.key, name: service.name, primary: service.primary,
            characteristics: included.map { ProvidedCharacteristic(type: $0, value: given[$0]) })
    }

    /// A YAML scalar as a value of the characteristic's format.
    static func value(_ scalar: ScalarValue, format: CharacteristicFormat, label: String) throws(HomeError)
        -> CharacteristicValue
    {
        switch (format, scalar) {
        case (.bool, .bool(let bool)): return .bool(bool)
        case (.bool, .int(let int)) where int == 0 || int == 1: return .bool(int == 1)
        case (.uint8, .int(let int)), (.uint16, .int(let int)), (.uint32, .int(let int)), (.uint64, .int(let int)):
            guard int >= 0 else { throw HomeError(.invalidArgument, "\(label): \(int) is negative") }
            return .uint(UInt64(int))
        case (.int, .int(let int)): return .int(int)
        case (.float, .int(let int)): return .float(Double(int))
        case (.float, .double(let double)): return .float(double)
        case (.string, .string(let string)): return .string(string)
        default:
            throw HomeError(.invalidArgument, "\(label): \(scalar) is not a value of format \(format.rawValue)")
        }
    }

    static func category(_ text: String) -> AccessoryCategory? {
        if let number = Int(text) { return AccessoryCategory(rawValue: number) }
        let wanted = text.lowercased().filter { $0 != "-" && $0 != "_" && $0 != " " }
        return AccessoryCategory.allCases.first { "\($0)".lowercased() == wanted }
    }

    private static func kebab(_ camel: String) -> String {
        var result = ""
        for character in camel {
            if character.isUppercase { result += "-" + character.lowercased() } else { result.append(character) }
        }
        return result
    }
}
