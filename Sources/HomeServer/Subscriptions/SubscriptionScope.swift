internal import HomeModel
@_spi(Wire) internal import HomeWire

/// A subscription filter compiled for matching against events.
///
/// The object selectors (homes, rooms, zones, accessories, services,
/// characteristics) are a union: an event matches when it concerns anything
/// selected (all of them empty = the whole daemon). Types and kinds then narrow:
/// a value event must also match a listed service type and characteristic type,
/// and every event a listed kind.
struct SubscriptionScope: Sendable {
    private var homeIDs: Set<ObjectID>
    private var roomIDs: Set<ObjectID>
    private var zoneIDs: Set<ObjectID>
    private var accessoryIDs: Set<ObjectID>
    private var serviceIDs: Set<ObjectID>
    private var characteristicIDs: Set<ObjectID>
    private var serviceTypes: Set<String>
    private var characteristicTypes: Set<String>
    private var kinds: Set<EventKind>
    /// Objects a client narrowed away without having named them (removing one
    /// characteristic from "everything"): never matched, whatever else selects them.
    private var excludedIDs = Set<ObjectID>()
    /// The subscription named no objects: it covers the whole daemon (less
    /// exclusions). Fixed at subscribe time, so narrowing a scope to nothing never
    /// turns it into everything.
    private let selectsEverything: Bool

    init(_ filter: SubscriptionFilter) {
        homeIDs = Set(filter.homeIDs)
        roomIDs = Set(filter.roomIDs)
        zoneIDs = Set(filter.zoneIDs)
        accessoryIDs = Set(filter.accessoryIDs)
        serviceIDs = Set(filter.serviceIDs)
        characteristicIDs = Set(filter.characteristicIDs)
        // Types match by UUID or by catalog name, case-insensitively.
        serviceTypes = Set(filter.serviceTypes.map { $0.uppercased() })
        characteristicTypes = Set(filter.characteristicTypes.map { $0.uppercased() })
        kinds = Set(filter.kinds)
        selectsEverything =
            homeIDs.isEmpty && roomIDs.isEmpty && zoneIDs.isEmpty && accessoryIDs.isEmpty
            && serviceIDs.isEmpty && characteristicIDs.isEmpty
    }

    /// Widens the scope: everything in `filter` is now covered (and no longer excluded).
    mutating func add(_ filter: SubscriptionFilter) {
        let ids =
            filter.homeIDs + filter.roomIDs + filter.zoneIDs + filter.accessoryIDs + filter.serviceIDs
            + filter.characteristicIDs
        excludedIDs.subtract(ids)
        // Adding to a scope that selects everything keeps it so.
        if !selectsEverything {
            homeIDs.formUnion(filter.homeIDs)
            roomIDs.formUnion(filter.roomIDs)
            zoneIDs.formUnion(filter.zoneIDs)
            accessoryIDs.formUnion(filter.accessoryIDs)
            serviceIDs.formUnion(filter.serviceIDs)
            characteristicIDs.formUnion(filter.characteristicIDs)
        }
        if !serviceTypes.isEmpty { serviceTypes.formUnion(filter.serviceTypes.map { $0.uppercased() }) }
        if !characteristicTypes.isEmpty {
            characteristicTypes.formUnion(filter.characteristicTypes.map { $0.uppercased() })
        }
        if !kinds.isEmpty { kinds.formUnion(filter.kinds) }
    }

    /// Narrows the scope: nothing in `filter` is covered any more, even where
    /// something wider still selects it (removing one characteristic of a watched
    /// accessory), until a later `add` names it again.
    mutating func remove(_ filter: SubscriptionFilter) {
        for id in filter.homeIDs + filter.roomIDs + filter.zoneIDs + filter.accessoryIDs + filter.serviceIDs
            + filter.characteristicIDs
        {
            homeIDs.remove(id)
            roomIDs.remove(id)
            zoneIDs.remove(id)
            accessoryIDs.remove(id)
            serviceIDs.remove(id)
            characteristicIDs.remove(id)
            excludedIDs.insert(id)
        }
        serviceTypes.subtract(filter.serviceTypes.map { $0.uppercased() })
        characteristicTypes.subtract(filter.characteristicTypes.map { $0.uppercased() })
        kinds.subtract(filter.kinds)
    }

    /// Checks every id in the filter names an object of the right kind.
    static func validate(_ filter: SubscriptionFilter, in graph: HomeGraph) throws(HomeError) {
        func check(_ ids: [ObjectID], _ kind: String, _ exists: (ObjectID) -> Bool) throws(HomeError) {
            for id in ids where !exists(id) {
                throw HomeError(.notFound, "subscription filter names \(kind) \(id), which does not exist")
            }
        }
        try check(filter.homeIDs, "home") { graph.homes[$0] != nil }
        try check(filter.roomIDs, "room") { graph.rooms[$0] != nil }
        try check(filter.zoneIDs, "zone") { graph.zones[$0] != nil }
        try check(filter.accessoryIDs, "accessory") { graph.accessories[$0] != nil }
        try check(filter.serviceIDs, "service") { graph.services[$0] != nil }
        try check(filter.characteristicIDs, "characteristic") { graph.characteristics[$0] != nil }
    }

    func accepts(kind: EventKind) -> Bool {
        kinds.isEmpty || kinds.contains(kind)
    }

    /// Whether a characteristic is covered (for snapshots).
    func covers(_ characteristic: Characteristic, in graph: HomeGraph) -> Bool {
        covers(
            id: characteristic.id, serviceID: characteristic.serviceID, accessoryID: characteristic.accessoryID,
            in: graph
        ) { characteristic.type }
    }

    /// Whether the characteristic at `index` of the graph's table is covered (for
    /// value events: read in place, with no copy of the characteristic per subscriber).
    func covers(characteristicAt index: HomeGraph.CharacteristicIndex, in graph: HomeGraph) -> Bool {
        let characteristics = graph.characteristics.values
        return covers(
            id: characteristics[index].id, serviceID: characteristics[index].serviceID,
            accessoryID: characteristics[index].accessoryID, in: graph
        ) { characteristics[index].type }
    }

    /// - Parameter type: asked only when the scope filters by characteristic type.
    private func covers(
        id: ObjectID, serviceID: ObjectID, accessoryID: ObjectID, in graph: HomeGraph,
        type: () -> TypeIdentifier
    ) -> Bool {
        if !excludedIDs.isEmpty
            && (excludedIDs.contains(id) || excludedIDs.contains(serviceID)
                || isAccessoryExcluded(accessoryID, in: graph))
        {
            return false
        }
        if !characteristicTypes.isEmpty {
            let type = type()
            if !characteristicTypes.contains(type.uuid.uppercased())
                && !characteristicTypes.contains(type.name.uppercased())
            {
                return false
            }
        }
        if !serviceTypes.isEmpty {
            guard let service = graph.services[serviceID],
                serviceTypes.contains(service.type.uuid.uppercased())
                    || serviceTypes.contains(service.type.name.uppercased())
            else { return false }
        }
        if selectsEverything { return true }
        if characteristicIDs.contains(id) || serviceIDs.contains(serviceID) || accessoryIDs.contains(accessoryID) {
            return true
        }
        return coversAccessory(accessoryID, in: graph)
    }

    private func isAccessoryExcluded(_ accessoryID: ObjectID, in graph: HomeGraph) -> Bool {
        if excludedIDs.contains(accessoryID) { return true }
        guard let accessory = graph.accessories[accessoryID] else { return false }
        return excludedIDs.contains(accessory.roomID) || excludedIDs.contains(accessory.homeID)
    }

    private func coversAccessory(_ accessoryID: ObjectID, in graph: HomeGraph) -> Bool {
        if accessoryIDs.contains(accessoryID) { return true }
        guard !(homeIDs.isEmpty && roomIDs.isEmpty && zoneIDs.isEmpty),
            let accessory = graph.accessories[accessoryID]
        else { return false }
        if homeIDs.contains(accessory.homeID) || roomIDs.contains(accessory.roomID) { return true }
        for zoneID in zoneIDs where graph.zones[zoneID]?.roomIDs.contains(accessory.roomID) == true {
            return true
        }
        return false
    }

    /// Whether a past event is in scope (ReadHistory): as `matches`, except that
    /// every value event counts, not only those of characteristics with event
    /// notification, and one of a characteristic removed since is matched by its
    /// ids (and by no type: its type is gone with it).
    func matchesPast(_ event: HomeEvent, in graph: HomeGraph) -> Bool {
        guard case .value(let change) = event.body else { return matches(event, characteristic: nil, in: graph) }
        guard accepts(kind: .valueChanged) else { return false }
        if let index = graph.characteristics.index(forKey: change.characteristicID) {
            return covers(characteristicAt: index, in: graph)
        }
        guard characteristicTypes.isEmpty && serviceTypes.isEmpty else { return false }
        if excludedIDs.contains(change.characteristicID) || excludedIDs.contains(change.serviceID)
            || isAccessoryExcluded(change.accessoryID, in: graph)
        {
            return false
        }
        return selectsEverything || characteristicIDs.contains(change.characteristicID)
            || serviceIDs.contains(change.serviceID) || coversAccessory(change.accessoryID, in: graph)
    }

    /// - Parameter characteristic: for a value event, where its characteristic is in
    ///   the graph's table (the publisher looks it up once for all subscribers).
    func matches(_ event: HomeEvent, characteristic: HomeGraph.CharacteristicIndex?, in graph: HomeGraph) -> Bool {
        guard accepts(kind: event.kind) else { return false }
        switch event.body {
        case .value:
            // Like HomeKit's enableNotification: only characteristics that support
            // event notification stream their changes.
            guard let characteristic,
                graph.characteristics.values[characteristic].properties.supportsEventNotification
            else { return false }
            return covers(characteristicAt: characteristic, in: graph)
        case .reachability(let accessoryID, _):
            if !excludedIDs.isEmpty && isAccessoryExcluded(accessoryID, in: graph) { return false }
            return selectsEverything || coversAccessory(accessoryID, in: graph)
        case .layout(let change):
            if excludedIDs.contains(change.objectID) { return false }
            return selectsEverything || homeIDs.contains(change.homeID) || roomIDs.contains(change.objectID)
                || accessoryIDs.contains(change.objectID) || serviceIDs.contains(change.objectID)
                || characteristicIDs.contains(change.objectID) || zoneIDs.contains(change.objectID)
                || (change.object == .accessory && coversAccessory(change.objectID, in: graph))
        case .primaryHome, .actionSetExecuted, .triggerFired:
            return selectsEverything || !homeIDs.isEmpty
        }
    }
}
