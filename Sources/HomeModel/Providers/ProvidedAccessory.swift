/// An accessory as its provider declares it: its own stable key, its information,
/// and its services with their characteristics (catalog or custom types).
///
/// `HomeGraph.register(_:provider:homeID:nowMs:)` turns it into an accessory, or
/// updates the one it made before under the same key.
public struct ProvidedAccessory: Hashable, Sendable {
    /// The provider's stable key (a serial number, a device path): unique within
    /// the provider.
    public var key: String
    /// The name a new accessory gets; a known accessory keeps the daemon's name.
    public var name: String
    public var category: AccessoryCategory
    public var manufacturer: String
    public var model: String
    public var serialNumber: String
    public var firmwareRevision: String
    /// The key of the bridge accessory of the same provider it is reached through.
    public var bridgeKey: String?
    /// A new accessory goes to the home's room of this name, else to its default room.
    public var room: String?
    /// The services besides AccessoryInformation (which is built from the fields above).
    public var services: [ProvidedService]
    /// The device is known but not answering yet.
    public var isUnreachable: Bool

    public init(
        key: String, name: String, category: AccessoryCategory, manufacturer: String = "", model: String = "",
        serialNumber: String = "", firmwareRevision: String = "", bridgeKey: String? = nil, room: String? = nil,
        services: [ProvidedService] = [], isUnreachable: Bool = false
    ) {
        self.key = key
        self.name = name
        self.category = category
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber
        self.firmwareRevision = firmwareRevision
        self.bridgeKey = bridgeKey
        self.room = room
        self.services = services
        self.isUnreachable = isUnreachable
    }
}

public struct ProvidedService: Hashable, Sendable {
    /// A catalog service type, by name ("Lightbulb") or UUID.
    public var type: String
    /// Tells two services of one type apart across registrations; nil for the
    /// type and its rank among the accessory's services of that type.
    public var key: String?
    /// nil for the accessory's name.
    public var name: String?
    public var isPrimary: Bool
    public var isHidden: Bool
    /// Every required characteristic of the type, and any optional or custom ones.
    public var characteristics: [ProvidedCharacteristic]

    public init(
        type: String, key: String? = nil, name: String? = nil, primary: Bool = false, hidden: Bool = false,
        characteristics: [ProvidedCharacteristic] = []
    ) {
        self.type = type
        self.key = key
        self.name = name
        self.isPrimary = primary
        self.isHidden = hidden
        self.characteristics = characteristics
    }
}

public struct ProvidedCharacteristic: Hashable, Sendable {
    /// A catalog type by name ("On") or UUID, or a full UUID outside the catalog: a
    /// custom type, which then needs `customName`, `properties` and `metadata`.
    public var type: String
    /// A custom type's name.
    public var customName: String?
    /// A catalog type: nil for the catalog's permissions; given, it may drop
    /// permissions (and set hidden) but not add one. A custom type: required.
    public var properties: CharacteristicProperties?
    /// A catalog type: nil for the catalog's metadata; given, it narrows or widens the
    /// range (within what the format holds) and keeps the catalog's format and unit.
    /// A custom type: required.
    public var metadata: CharacteristicMetadata?
    /// The current value, when the provider knows it.
    public var value: CharacteristicValue?
    /// Writes take effect in the daemon at once; the provider corrects them later
    /// if the device disagrees.
    public var isOptimistic: Bool

    public init(
        type: String, customName: String? = nil, properties: CharacteristicProperties? = nil,
        metadata: CharacteristicMetadata? = nil, value: CharacteristicValue? = nil, optimistic: Bool = false
    ) {
        self.type = type
        self.customName = customName
        self.properties = properties
        self.metadata = metadata
        self.value = value
        self.isOptimistic = optimistic
    }
}

/// What a registration did to the graph.
package struct ProviderRegistration: Hashable, Sendable {
    /// The registered accessories' ids, in the order they were given.
    package var accessoryIDs: [ObjectID]
    /// The layout events, in order: additions, updates, removals.
    package var changes: [LayoutChange]
    /// Values given for characteristics that already existed, to apply as the
    /// provider's reports once the layout is committed (new characteristics got
    /// theirs as initial values).
    package var reportedValues: [CharacteristicWrite]
    /// Readable characteristics of the registered accessories that were given no
    /// value: the daemon asks the provider for them.
    package var unreadCharacteristicIDs: [ObjectID]
    /// Characteristics declared optimistic.
    package var optimisticCharacteristicIDs: Set<ObjectID>

    package init(
        accessoryIDs: [ObjectID] = [], changes: [LayoutChange] = [], reportedValues: [CharacteristicWrite] = [],
        unreadCharacteristicIDs: [ObjectID] = [], optimisticCharacteristicIDs: Set<ObjectID> = []
    ) {
        self.accessoryIDs = accessoryIDs
        self.changes = changes
        self.reportedValues = reportedValues
        self.unreadCharacteristicIDs = unreadCharacteristicIDs
        self.optimisticCharacteristicIDs = optimisticCharacteristicIDs
    }
}

/// The rules for provider ids and accessory keys.
package enum ProviderNames {
    /// The most accessories one registration call may carry.
    package static let maxAccessoriesPerCall = 1_000
    package static let maxKeyLength = 256
    package static let maxProviderIDLength = 64

    /// - Throws: INVALID_ARGUMENT saying what is wrong with the id.
    package static func validateProviderID(_ id: String) throws(HomeError) {
        guard !id.isEmpty else {
            throw HomeError(.invalidArgument, "a provider id cannot be empty")
        }
        guard id.utf8.count <= maxProviderIDLength else {
            throw HomeError(
                .invalidArgument,
                "provider id \(quoted(id)) is \(id.utf8.count) bytes long; at most \(maxProviderIDLength)")
        }
        for (position, byte) in id.utf8.enumerated() {
            let allowed =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x2D || byte == 0x5F
            if !allowed {
                throw HomeError(
                    .invalidArgument,
                    "provider id \(quoted(id)) has a character other than a letter, digit, '.', '-' or '_' "
                        + "at byte \(position + 1)")
            }
        }
    }

    /// - Throws: INVALID_ARGUMENT for an empty or too long key, or one with a
    ///   control character, naming `what` ("accessory key", "service key").
    package static func validateKey(_ key: String, what: String) throws(HomeError) {
        guard !key.isEmpty else { throw HomeError(.invalidArgument, "\(what) cannot be empty") }
        guard key.utf8.count <= maxKeyLength else {
            throw HomeError(
                .invalidArgument, "\(what) \(quoted(key)) is \(key.utf8.count) bytes long; at most \(maxKeyLength)")
        }
        if let position = key.unicodeScalars.firstIndex(where: { $0.properties.generalCategory == .control }) {
            let offset = key.unicodeScalars.distance(from: key.unicodeScalars.startIndex, to: position)
            throw HomeError(
                .invalidArgument, "\(what) \(quoted(key)) has a control character at character \(offset + 1)")
        }
    }
}
