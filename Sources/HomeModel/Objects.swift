/// Every object in the daemon (home, room, zone, accessory, service, characteristic,
/// group, action set, trigger) has one id from a single daemon-wide space, so an id
/// alone names an object. Ids are never reused and survive restarts.
public typealias ObjectID = UInt64

/// A characteristic or service type: its HAP UUID and its catalog name.
public struct TypeIdentifier: Hashable, Sendable {
    /// Full upper-case UUID, e.g. "00000025-0000-1000-8000-0026BB765291".
    public var uuid: String
    /// Catalog name, e.g. "On"; for a custom type, whatever its provider called it.
    public var name: String

    public init(uuid: String, name: String) {
        self.uuid = uuid
        self.name = name
    }
}

public struct Characteristic: Hashable, Sendable, Identifiable {
    public var id: ObjectID
    public var serviceID: ObjectID
    public var accessoryID: ObjectID
    public var type: TypeIdentifier
    public var properties: CharacteristicProperties
    public var metadata: CharacteristicMetadata
    public var value: CharacteristicValue?
    /// Milliseconds since the Unix epoch when the value last changed; 0 = never.
    public var lastUpdatedMs: Int64
    /// The sequence number of the value event that last changed the value, in the
    /// running daemon's journal; 0 when it has not changed since the daemon started.
    /// A stamp of the running daemon, not part of the home: it is neither saved nor
    /// compared (`==` and `hash` leave it out), so a graph loaded from the database
    /// equals the one that was saved.
    public var changeSeq: UInt64

    public init(
        id: ObjectID, serviceID: ObjectID, accessoryID: ObjectID, type: TypeIdentifier,
        properties: CharacteristicProperties, metadata: CharacteristicMetadata,
        value: CharacteristicValue? = nil, lastUpdatedMs: Int64 = 0, changeSeq: UInt64 = 0
    ) {
        self.id = id
        self.serviceID = serviceID
        self.accessoryID = accessoryID
        self.type = type
        self.properties = properties
        self.metadata = metadata
        self.value = value
        self.lastUpdatedMs = lastUpdatedMs
        self.changeSeq = changeSeq
    }

    public static func == (lhs: Characteristic, rhs: Characteristic) -> Bool {
        lhs.id == rhs.id && lhs.serviceID == rhs.serviceID && lhs.accessoryID == rhs.accessoryID
            && lhs.type == rhs.type && lhs.properties == rhs.properties && lhs.metadata == rhs.metadata
            && lhs.value == rhs.value && lhs.lastUpdatedMs == rhs.lastUpdatedMs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(serviceID)
        hasher.combine(accessoryID)
        hasher.combine(type)
        hasher.combine(properties)
        hasher.combine(metadata)
        hasher.combine(value)
        hasher.combine(lastUpdatedMs)
    }
}

/// A service of an accessory (HomeKit's `HMService`; named so to stay clear of
/// ServiceLifecycle's `Service`).
public struct AccessoryService: Hashable, Sendable, Identifiable {
    public var id: ObjectID
    public var accessoryID: ObjectID
    public var type: TypeIdentifier
    public var name: String
    public var isPrimary: Bool
    public var isUserInteractive: Bool
    public var isHidden: Bool
    public var linkedServiceIDs: [ObjectID]
    /// In the accessory's order.
    public var characteristicIDs: [ObjectID]
    /// The key its provider gave it to tell it from other services of its type
    /// ("" when none was given: the type and its rank then identify it).
    public var providerKey: String

    public init(
        id: ObjectID, accessoryID: ObjectID, type: TypeIdentifier, name: String, isPrimary: Bool = false,
        isUserInteractive: Bool = true, isHidden: Bool = false, linkedServiceIDs: [ObjectID] = [],
        characteristicIDs: [ObjectID] = [], providerKey: String = ""
    ) {
        self.id = id
        self.accessoryID = accessoryID
        self.type = type
        self.name = name
        self.isPrimary = isPrimary
        self.isUserInteractive = isUserInteractive
        self.isHidden = isHidden
        self.linkedServiceIDs = linkedServiceIDs
        self.characteristicIDs = characteristicIDs
        self.providerKey = providerKey
    }
}

/// HAP accessory categories (the numbers are HAP's).
public enum AccessoryCategory: Int, Sendable, CaseIterable, Hashable {
    case other = 1
    case bridge = 2
    case fan = 3
    case garageDoorOpener = 4
    case lightbulb = 5
    case doorLock = 6
    case outlet = 7
    case `switch` = 8
    case thermostat = 9
    case sensor = 10
    case securitySystem = 11
    case door = 12
    case window = 13
    case windowCovering = 14
    case programmableSwitch = 15
    case ipCamera = 17
    case videoDoorbell = 18
    case airPurifier = 19
    case airHeater = 20
    case airConditioner = 21
    case airHumidifier = 22
    case airDehumidifier = 23
    case sprinkler = 28
    case faucet = 29
    case showerHead = 30
    case television = 31
}

public struct Accessory: Hashable, Sendable, Identifiable {
    public var id: ObjectID
    public var homeID: ObjectID
    public var roomID: ObjectID
    public var name: String
    public var category: AccessoryCategory
    public var manufacturer: String
    public var model: String
    public var serialNumber: String
    public var firmwareRevision: String
    public var isReachable: Bool
    /// The bridge this accessory is reached through, if any.
    public var bridgeID: ObjectID?
    /// For a bridge: the accessories behind it.
    public var bridgedAccessoryIDs: [ObjectID]
    /// Who serves reads and writes ("simulator", a provider's id).
    public var provider: String
    /// The provider's own stable key for it (a serial, a device path): unique per
    /// provider, "" for an accessory no provider registered.
    public var providerKey: String
    public var serviceIDs: [ObjectID]

    public init(
        id: ObjectID, homeID: ObjectID, roomID: ObjectID, name: String, category: AccessoryCategory,
        manufacturer: String = "", model: String = "", serialNumber: String = "",
        firmwareRevision: String = "", isReachable: Bool = true, bridgeID: ObjectID? = nil,
        bridgedAccessoryIDs: [ObjectID] = [], provider: String = "", providerKey: String = "",
        serviceIDs: [ObjectID] = []
    ) {
        self.id = id
        self.homeID = homeID
        self.roomID = roomID
        self.name = name
        self.category = category
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber
        self.firmwareRevision = firmwareRevision
        self.isReachable = isReachable
        self.bridgeID = bridgeID
        self.bridgedAccessoryIDs = bridgedAccessoryIDs
        self.provider = provider
        self.providerKey = providerKey
        self.serviceIDs = serviceIDs
    }
}

public struct Room: Hashable, Sendable, Identifiable {
    public var id: ObjectID
    public var homeID: ObjectID
    public var name: String

    public init(id: ObjectID, homeID: ObjectID, name: String) {
        self.id = id
        self.homeID = homeID
        self.name = name
    }
}

public struct Zone: Hashable, Sendable, Identifiable {
    public var id: ObjectID
    public var homeID: ObjectID
    public var name: String
    public var roomIDs: [ObjectID]

    public init(id: ObjectID, homeID: ObjectID, name: String, roomIDs: [ObjectID] = []) {
        self.id = id
        self.homeID = homeID
        self.name = name
        self.roomIDs = roomIDs
    }
}

public struct ServiceGroup: Hashable, Sendable, Identifiable {
    public var id: ObjectID
    public var homeID: ObjectID
    public var name: String
    public var serviceIDs: [ObjectID]

    public init(id: ObjectID, homeID: ObjectID, name: String, serviceIDs: [ObjectID] = []) {
        self.id = id
        self.homeID = homeID
        self.name = name
        self.serviceIDs = serviceIDs
    }
}

/// One write an action set performs.
public struct CharacteristicWriteAction: Hashable, Sendable {
    public var characteristicID: ObjectID
    public var value: CharacteristicValue
    /// Write only if the characteristic holds this value when the scene runs (a
    /// conditional write: otherwise this action fails FAILED_PRECONDITION and the
    /// others still run); nil: always.
    public var onlyIf: CharacteristicValue?

    public init(characteristicID: ObjectID, value: CharacteristicValue, onlyIf: CharacteristicValue? = nil) {
        self.characteristicID = characteristicID
        self.value = value
        self.onlyIf = onlyIf
    }
}

public enum ActionSetKind: String, Sendable, CaseIterable, Hashable {
    case userDefined = "user-defined"
    case wakeUp = "wake-up"
    case sleep
    case homeDeparture = "departure"
    case homeArrival = "arrival"
}

/// A scene: writes applied together (HomeKit's `HMActionSet`).
public struct ActionSet: Hashable, Sendable, Identifiable {
    public var id: ObjectID
    public var homeID: ObjectID
    public var name: String
    public var kind: ActionSetKind
    public var actions: [CharacteristicWriteAction]

    public init(
        id: ObjectID, homeID: ObjectID, name: String, kind: ActionSetKind = .userDefined,
        actions: [CharacteristicWriteAction] = []
    ) {
        self.id = id
        self.homeID = homeID
        self.name = name
        self.kind = kind
        self.actions = actions
    }
}

public struct Home: Hashable, Sendable, Identifiable {
    public var id: ObjectID
    public var name: String
    public var isPrimary: Bool
    /// The room for the entire home, where unassigned accessories live.
    public var defaultRoomID: ObjectID
    /// Ordered child ids; the objects themselves live in `HomeGraph`'s tables.
    public var roomIDs: [ObjectID]
    public var zoneIDs: [ObjectID]
    public var accessoryIDs: [ObjectID]
    public var serviceGroupIDs: [ObjectID]
    public var actionSetIDs: [ObjectID]
    public var triggerIDs: [ObjectID]
    /// Where the home is, for sun triggers and windows; nil until it is set.
    public var location: GeoLocation?

    public init(
        id: ObjectID, name: String, isPrimary: Bool, defaultRoomID: ObjectID, roomIDs: [ObjectID] = [],
        zoneIDs: [ObjectID] = [], accessoryIDs: [ObjectID] = [], serviceGroupIDs: [ObjectID] = [],
        actionSetIDs: [ObjectID] = [], triggerIDs: [ObjectID] = [], location: GeoLocation? = nil
    ) {
        self.location = location
        self.id = id
        self.name = name
        self.isPrimary = isPrimary
        self.defaultRoomID = defaultRoomID
        self.roomIDs = roomIDs
        self.zoneIDs = zoneIDs
        self.accessoryIDs = accessoryIDs
        self.serviceGroupIDs = serviceGroupIDs
        self.actionSetIDs = actionSetIDs
        self.triggerIDs = triggerIDs
    }
}
