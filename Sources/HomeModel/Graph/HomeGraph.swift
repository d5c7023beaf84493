/// Every home and everything in it, as flat tables keyed by `ObjectID`.
///
/// A value type: the daemon holds one behind a lock, changes a copy or the original
/// in place, and hands out snapshots freely. Lookups are dictionary lookups and a
/// value write touches one characteristic, so it scales to 10 000 accessories and
/// 100 000 characteristics; only layout operations and path resolution walk lists.
///
/// The tables are read-only from outside the module so their cross-references stay
/// consistent; change them through the mutating operations, each of which checks
/// everything before it changes anything: a thrown `HomeError` leaves the graph as
/// it was. Ids come from one counter (`nextID`) starting at 1 and are never reused.
///
/// Invariants (checked by `checkIntegrity()`): every object's parent exists and
/// lists it; a home's `roomIDs` start with its default room, which holds every
/// accessory not assigned elsewhere; exactly one home is primary when any exists.
public struct HomeGraph: Sendable, Equatable {
    /// The tables: every object by id. Each object's parent lists it (`Home.roomIDs`, …).
    public internal(set) var homes: [ObjectID: Home] = [:]
    public internal(set) var rooms: [ObjectID: Room] = [:]
    public internal(set) var zones: [ObjectID: Zone] = [:]
    public internal(set) var accessories: [ObjectID: Accessory] = [:]
    public internal(set) var services: [ObjectID: AccessoryService] = [:]
    public internal(set) var characteristics: [ObjectID: Characteristic] = [:]
    /// A position in `characteristics`: valid until the table next changes.
    package typealias CharacteristicIndex = Dictionary<ObjectID, Characteristic>.Index
    public internal(set) var serviceGroups: [ObjectID: ServiceGroup] = [:]
    public internal(set) var actionSets: [ObjectID: ActionSet] = [:]
    public internal(set) var triggers: [ObjectID: Trigger] = [:]
    /// Homes in the order they were added.
    public internal(set) var homeOrder: [ObjectID] = []
    /// The id the next new object gets.
    package internal(set) var nextID: ObjectID = 1

    /// An empty graph: no homes, ids starting at 1.
    public init() {}

    /// A graph from stored tables (the daemon's database), checked for integrity.
    ///
    /// - Throws: `.dataLoss` naming the first inconsistency: a duplicate id, a
    ///   dangling reference, an id at or above `nextID`, ….
    package init(
        homes: [Home], rooms: [Room], zones: [Zone], accessories: [Accessory],
        services: [AccessoryService], characteristics: [Characteristic], serviceGroups: [ServiceGroup],
        actionSets: [ActionSet], triggers: [Trigger], homeOrder: [ObjectID], nextID: ObjectID
    )
        throws(HomeError)
    {
        var seen = Set<ObjectID>()
        func table<T: Identifiable>(_ objects: [T], _ kind: ObjectKind) throws(HomeError) -> [ObjectID: T]
        where T.ID == ObjectID {
            var table: [ObjectID: T] = [:]
            table.reserveCapacity(objects.count)
            for object in objects {
                guard seen.insert(object.id).inserted else {
                    throw HomeError(.dataLoss, "id \(object.id) is used twice (again by \(kind.nounWithArticle))")
                }
                table[object.id] = object
            }
            return table
        }
        self.homes = try table(homes, .home)
        self.rooms = try table(rooms, .room)
        self.zones = try table(zones, .zone)
        self.accessories = try table(accessories, .accessory)
        self.services = try table(services, .service)
        self.characteristics = try table(characteristics, .characteristic)
        self.serviceGroups = try table(serviceGroups, .serviceGroup)
        self.actionSets = try table(actionSets, .actionSet)
        self.triggers = try table(triggers, .trigger)
        self.homeOrder = homeOrder
        self.nextID = nextID
        try checkIntegrity()
    }

    // MARK: Lookups

    /// The home with that id, or nil.
    public func home(_ id: ObjectID) -> Home? { homes[id] }
    /// The room with that id, or nil.
    public func room(_ id: ObjectID) -> Room? { rooms[id] }
    /// The zone with that id, or nil.
    public func zone(_ id: ObjectID) -> Zone? { zones[id] }
    /// The accessory with that id, or nil.
    public func accessory(_ id: ObjectID) -> Accessory? { accessories[id] }
    /// The service with that id, or nil.
    public func service(_ id: ObjectID) -> AccessoryService? { services[id] }
    /// The characteristic with that id, or nil.
    public func characteristic(_ id: ObjectID) -> Characteristic? { characteristics[id] }
    /// The service group with that id, or nil.
    public func serviceGroup(_ id: ObjectID) -> ServiceGroup? { serviceGroups[id] }
    /// The action set with that id, or nil.
    public func actionSet(_ id: ObjectID) -> ActionSet? { actionSets[id] }
    /// The trigger with that id, or nil.
    public func trigger(_ id: ObjectID) -> Trigger? { triggers[id] }

    /// The primary home, if there is any home.
    public var primaryHomeID: ObjectID? { homeOrder.first { homes[$0]?.isPrimary == true } }

    /// What kind of object an id names, or nil if none.
    package func kind(of id: ObjectID) -> ObjectKind? {
        if characteristics[id] != nil { return .characteristic }
        if services[id] != nil { return .service }
        if accessories[id] != nil { return .accessory }
        if rooms[id] != nil { return .room }
        if homes[id] != nil { return .home }
        if zones[id] != nil { return .zone }
        if serviceGroups[id] != nil { return .serviceGroup }
        if actionSets[id] != nil { return .actionSet }
        if triggers[id] != nil { return .trigger }
        return nil
    }

    /// The home an object belongs to (a home belongs to itself), or nil for an unknown id.
    package func homeID(of id: ObjectID) -> ObjectID? {
        if let characteristic = characteristics[id] { return accessories[characteristic.accessoryID]?.homeID }
        if let service = services[id] { return accessories[service.accessoryID]?.homeID }
        if let accessory = accessories[id] { return accessory.homeID }
        if let room = rooms[id] { return room.homeID }
        if homes[id] != nil { return id }
        if let zone = zones[id] { return zone.homeID }
        if let group = serviceGroups[id] { return group.homeID }
        if let actionSet = actionSets[id] { return actionSet.homeID }
        if let trigger = triggers[id] { return trigger.homeID }
        return nil
    }

    // MARK: Internals shared by the operations

    /// Hands out the next id; ids are never reused, even after a removal.
    mutating func allocateID() -> ObjectID {
        defer { nextID += 1 }
        return nextID
    }

    /// "no room with id 7", or "no room with id 7 (7 is an accessory)" when the id
    /// names something else, which is usually the mistake.
    func notFound(_ kind: ObjectKind, _ id: ObjectID) -> HomeError {
        if let actual = self.kind(of: id) {
            return HomeError(.notFound, "no \(kind.noun) with id \(id) (\(id) is \(actual.nounWithArticle))")
        }
        return HomeError(.notFound, "no \(kind.noun) with id \(id)")
    }

    func requireHome(_ id: ObjectID) throws(HomeError) -> Home {
        guard let home = homes[id] else { throw notFound(.home, id) }
        return home
    }

    func requireRoom(_ id: ObjectID) throws(HomeError) -> Room {
        guard let room = rooms[id] else { throw notFound(.room, id) }
        return room
    }

    func requireZone(_ id: ObjectID) throws(HomeError) -> Zone {
        guard let zone = zones[id] else { throw notFound(.zone, id) }
        return zone
    }

    func requireAccessory(_ id: ObjectID) throws(HomeError) -> Accessory {
        guard let accessory = accessories[id] else { throw notFound(.accessory, id) }
        return accessory
    }

    func requireService(_ id: ObjectID) throws(HomeError) -> AccessoryService {
        guard let service = services[id] else { throw notFound(.service, id) }
        return service
    }

    func requireCharacteristic(_ id: ObjectID) throws(HomeError) -> Characteristic {
        guard let characteristic = characteristics[id] else { throw notFound(.characteristic, id) }
        return characteristic
    }

    func requireServiceGroup(_ id: ObjectID) throws(HomeError) -> ServiceGroup {
        guard let group = serviceGroups[id] else { throw notFound(.serviceGroup, id) }
        return group
    }

    func requireActionSet(_ id: ObjectID) throws(HomeError) -> ActionSet {
        guard let actionSet = actionSets[id] else { throw notFound(.actionSet, id) }
        return actionSet
    }

    func requireTrigger(_ id: ObjectID) throws(HomeError) -> Trigger {
        guard let trigger = triggers[id] else { throw notFound(.trigger, id) }
        return trigger
    }

    /// Checks that an object of another home is not being tied to this one.
    func requireSameHome(_ id: ObjectID, _ kind: ObjectKind, homeID: ObjectID) throws(HomeError) {
        let owner = self.homeID(of: id)
        guard owner == homeID else {
            let ownerName = owner.flatMap { homes[$0]?.name }.map { "home \(quoted($0))" } ?? "no home"
            let homeName = quoted(homes[homeID]?.name ?? "?")
            throw HomeError(.invalidArgument, "\(kind.noun) \(id) belongs to \(ownerName), not home \(homeName)")
        }
    }
}

extension ObjectKind {
    /// How messages name the kind: "service group", "action set".
    package var noun: String {
        switch self {
        case .home: return "home"
        case .room: return "room"
        case .zone: return "zone"
        case .accessory: return "accessory"
        case .service: return "service"
        case .characteristic: return "characteristic"
        case .serviceGroup: return "service group"
        case .actionSet: return "action set"
        case .trigger: return "trigger"
        }
    }

    var nounWithArticle: String {
        switch self {
        case .accessory, .actionSet: return "an \(noun)"
        default: return "a \(noun)"
        }
    }
}

/// "a Lightbulb", "an Outlet", "an accessory": a name with the article its first
/// letter asks for (no HAP type name starts with a silent consonant or a "u" said "you").
func withArticle(_ name: String) -> String {
    guard let first = name.first?.lowercased() else { return name }
    return ("aeiou".contains(first) ? "an " : "a ") + name
}
