extension HomeGraph {
    /// The homes, in the order they were added.
    package var orderedHomes: [Home] { homeOrder.compactMap { homes[$0] } }

    /// A home's rooms in their order: the default room first, then the others as added.
    package func rooms(inHome homeID: ObjectID) throws(HomeError) -> [Room] {
        try requireHome(homeID).roomIDs.compactMap { rooms[$0] }
    }

    /// A home's zones, as added.
    package func zones(inHome homeID: ObjectID) throws(HomeError) -> [Zone] {
        try requireHome(homeID).zoneIDs.compactMap { zones[$0] }
    }

    /// A home's service groups, as added.
    package func serviceGroups(inHome homeID: ObjectID) throws(HomeError) -> [ServiceGroup] {
        try requireHome(homeID).serviceGroupIDs.compactMap { serviceGroups[$0] }
    }

    /// A home's action sets, as added.
    package func actionSets(inHome homeID: ObjectID) throws(HomeError) -> [ActionSet] {
        try requireHome(homeID).actionSetIDs.compactMap { actionSets[$0] }
    }

    /// A home's triggers, as added.
    package func triggers(inHome homeID: ObjectID) throws(HomeError) -> [Trigger] {
        try requireHome(homeID).triggerIDs.compactMap { triggers[$0] }
    }

    /// A home's accessories, by name (case-insensitive, then id).
    package func accessories(inHome homeID: ObjectID) throws(HomeError) -> [Accessory] {
        Self.byName(try requireHome(homeID).accessoryIDs.compactMap { accessories[$0] })
    }

    /// A home's accessories grouped by room, for output.
    ///
    /// Rooms come in the home's order, which starts with the default room (the room
    /// for the entire home, then the rooms as they were added); rooms without
    /// accessories are included, with none. Within a room, accessories are by name.
    package func accessoriesByRoom(homeID: ObjectID) throws(HomeError) -> [(room: Room, accessories: [Accessory])] {
        let home = try requireHome(homeID)
        var byRoom: [ObjectID: [Accessory]] = [:]
        for accessory in home.accessoryIDs.compactMap({ accessories[$0] }) {
            byRoom[accessory.roomID, default: []].append(accessory)
        }
        return home.roomIDs.compactMap { id in
            rooms[id].map { (room: $0, accessories: Self.byName(byRoom[id] ?? [])) }
        }
    }

    /// A home's accessories grouped by category, for output: categories in HAP's
    /// numbering (lightbulb before thermostat), only those with accessories; within
    /// one, accessories by name.
    package func accessoriesByCategory(homeID: ObjectID) throws(HomeError)
        -> [(category: AccessoryCategory, accessories: [Accessory])]
    {
        let home = try requireHome(homeID)
        var byCategory: [AccessoryCategory: [Accessory]] = [:]
        for accessory in home.accessoryIDs.compactMap({ accessories[$0] }) {
            byCategory[accessory.category, default: []].append(accessory)
        }
        return byCategory.keys.sorted { $0.rawValue < $1.rawValue }.map { category in
            (category: category, accessories: Self.byName(byCategory[category] ?? []))
        }
    }

    /// The accessories in a room, by name.
    package func accessories(inRoom roomID: ObjectID) throws(HomeError) -> [Accessory] {
        let room = try requireRoom(roomID)
        let home = try requireHome(room.homeID)
        return Self.byName(home.accessoryIDs.compactMap { accessories[$0] }.filter { $0.roomID == roomID })
    }

    /// An accessory's services in its order (AccessoryInformation first).
    package func services(ofAccessory accessoryID: ObjectID) throws(HomeError) -> [AccessoryService] {
        try requireAccessory(accessoryID).serviceIDs.compactMap { services[$0] }
    }

    /// A service's characteristics in its order (required, then optional, as the catalog lists them).
    package func characteristics(ofService serviceID: ObjectID) throws(HomeError) -> [Characteristic] {
        try requireService(serviceID).characteristicIDs.compactMap { characteristics[$0] }
    }

    /// All of an accessory's characteristics, service by service.
    package func characteristics(ofAccessory accessoryID: ObjectID) throws(HomeError) -> [Characteristic] {
        try requireAccessory(accessoryID).serviceIDs.compactMap { services[$0] }
            .flatMap { $0.characteristicIDs.compactMap { characteristics[$0] } }
    }

    /// Accessories by name without regard to case, then by id, so output is stable.
    private static func byName(_ list: [Accessory]) -> [Accessory] {
        list.map { (key: $0.name.lowercased(), accessory: $0) }
            .sorted { $0.key != $1.key ? $0.key < $1.key : $0.accessory.id < $1.accessory.id }
            .map(\.accessory)
    }
}
