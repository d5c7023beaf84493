extension HomeGraph {
    /// Adds a room to a home, after its existing rooms.
    ///
    /// - Throws: `.notFound` for an unknown home; `.invalidArgument` for a blank or
    ///   over-long name; `.alreadyExists` if the home has a room of that name
    ///   (case-insensitive, the default room included).
    @discardableResult
    package mutating func addRoom(name: String, homeID: ObjectID) throws(HomeError) -> ObjectID {
        let home = try requireHome(homeID)
        try Self.validateName(name, for: .room)
        try requireUniqueName(name, kind: .room, among: named(home.roomIDs, in: rooms), in: homeLabel(homeID))
        let id = allocateID()
        rooms[id] = Room(id: id, homeID: homeID, name: name)
        homes[homeID]?.roomIDs.append(id)
        return id
    }

    /// Renames a room (the default room too); room names are unique in a home.
    package mutating func renameRoom(_ id: ObjectID, to name: String) throws(HomeError) -> [LayoutChange] {
        try renameInHome(id, to: name, kind: .room, table: \.rooms, siblings: \.roomIDs)
    }

    /// Removes a room: its accessories move to the home's default room and it leaves
    /// every zone. The default room itself cannot be removed.
    ///
    /// - Returns: `.moved` for each accessory (to the default room), `.updated` for
    ///   each zone it was in, then `.removed` for the room.
    /// - Throws: `.notFound` for an unknown room; `.failedPrecondition` for the default room.
    package mutating func removeRoom(_ id: ObjectID) throws(HomeError) -> [LayoutChange] {
        let room = try requireRoom(id)
        let home = try requireHome(room.homeID)
        if id == home.defaultRoomID {
            throw HomeError(
                .failedPrecondition,
                "\(describe(.room, id)) is the default room of \(homeLabel(home.id)) and cannot be removed")
        }
        var changes: [LayoutChange] = []
        for accessoryID in home.accessoryIDs where accessories[accessoryID]?.roomID == id {
            accessories[accessoryID]?.roomID = home.defaultRoomID
            changes.append(change(.moved, accessoryID))
        }
        for zoneID in home.zoneIDs where zones[zoneID]?.roomIDs.contains(id) == true {
            zones[zoneID]?.roomIDs.removeAll { $0 == id }
            changes.append(change(.updated, zoneID))
        }
        changes.append(change(.removed, id))
        rooms[id] = nil
        homes[home.id]?.roomIDs.removeAll { $0 == id }
        return changes
    }
}
