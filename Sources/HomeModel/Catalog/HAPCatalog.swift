/// The standard HAP catalog: 149 characteristic types and 44 service types.
///
/// The tables themselves (`characteristicTypes`, `serviceTypes`) are generated from
/// the HAP reference JSON by `Scripts/generate-catalog.py`. Lookups accept a catalog
/// name (case-insensitive, spaces ignored: "current temperature" finds
/// "CurrentTemperature"), a full UUID (any case), or HAP's short form of an
/// Apple-defined UUID ("25" or "0025" for 00000025-0000-1000-8000-0026BB765291).
///
/// ```swift
/// HAPCatalog.characteristic("Brightness")?.maxValue   // 100
/// HAPCatalog.service("43")?.name                      // "Lightbulb"
/// ```
package enum HAPCatalog {
    /// The suffix shared by every Apple-defined HAP UUID; a short form is the hex
    /// number before it.
    package static let appleUUIDSuffix = "-0000-1000-8000-0026BB765291"

    /// A characteristic type by name, full UUID or short UUID.
    package static func characteristic(_ nameOrUUID: String) -> CharacteristicTypeInfo? {
        characteristic(named: nameOrUUID) ?? characteristic(uuid: nameOrUUID)
    }

    /// A characteristic type by catalog name (case-insensitive, spaces ignored).
    package static func characteristic(named name: String) -> CharacteristicTypeInfo? {
        characteristicIndex.byName[lookupKey(name)].map { characteristicTypes[$0] }
    }

    /// A characteristic type by full UUID or HAP short form, case-insensitive.
    /// Whether a characteristic type's values are occurrences (a button press), by
    /// UUID: asked for every published event, so it is one set lookup, not a copy of
    /// the catalog entry.
    package static func isEventOnly(uuid: String) -> Bool {
        // Asked on every write. Few types are event-only (a button's press):
        // comparing with each is cheaper than hashing a 36-character UUID.
        eventOnlyUUIDs.contains { $0 == uuid }
    }

    private static let eventOnlyUUIDs = characteristicTypes.filter(\.isEventOnly).map(\.uuid)

    package static func characteristic(uuid: String) -> CharacteristicTypeInfo? {
        // The canonical form (what the model stores) needs no parsing: a value write asks this.
        if let position = characteristicIndex.byUUID[uuid] { return characteristicTypes[position] }
        return fullUUID(uuid).flatMap { characteristicIndex.byUUID[$0] }.map { characteristicTypes[$0] }
    }

    /// A service type by name, full UUID or short UUID.
    package static func service(_ nameOrUUID: String) -> ServiceTypeInfo? {
        service(named: nameOrUUID) ?? service(uuid: nameOrUUID)
    }

    /// A service type by catalog name (case-insensitive, spaces ignored).
    package static func service(named name: String) -> ServiceTypeInfo? {
        serviceIndex.byName[lookupKey(name)].map { serviceTypes[$0] }
    }

    /// A service type by full UUID or HAP short form, case-insensitive.
    ///
    /// Speaker and TelevisionSpeaker share HAP's UUID 113 (they differ only in the
    /// characteristics HAP-python lists); the UUID finds Speaker, the first by name.
    package static func service(uuid: String) -> ServiceTypeInfo? {
        fullUUID(uuid).flatMap { serviceIndex.byUUID[$0] }.map { serviceTypes[$0] }
    }

    /// The canonical full upper-case UUID for a full UUID or a HAP short form
    /// (1 to 8 hex digits, meaning an Apple-defined type); nil if it is neither.
    package static func fullUUID(_ text: String) -> String? {
        let upper = text.uppercased()
        let hexDigits = Set("0123456789ABCDEF")
        if (1...8).contains(upper.count), upper.allSatisfy(hexDigits.contains) {
            return String(repeating: "0", count: 8 - upper.count) + upper + appleUUIDSuffix
        }
        let groups = upper.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12], groups.allSatisfy({ $0.allSatisfy(hexDigits.contains) }) else {
            return nil
        }
        return upper
    }

    /// The key names are compared by: lower-cased, spaces removed.
    static func lookupKey(_ name: String) -> String {
        String(name.lowercased().filter { $0 != " " })
    }

    private struct Index: Sendable {
        var byName: [String: Int] = [:]
        var byUUID: [String: Int] = [:]

        init(names: [String], uuids: [String]) {
            for (position, (name, uuid)) in zip(names, uuids).enumerated() {
                byName[HAPCatalog.lookupKey(name)] = position
                // The first type in name order keeps a shared UUID (see `service(uuid:)`).
                if byUUID[uuid] == nil { byUUID[uuid] = position }
            }
        }
    }

    private static let characteristicIndex = Index(
        names: characteristicTypes.map(\.name), uuids: characteristicTypes.map(\.uuid))
    private static let serviceIndex = Index(names: serviceTypes.map(\.name), uuids: serviceTypes.map(\.uuid))
}
