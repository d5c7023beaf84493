extension HomeGraph {
    /// Adds a zone (a named set of rooms, such as "Upstairs") to a home.
    ///
    /// - Throws: `.notFound` for an unknown home; `.invalidArgument` for a bad name;
    ///   `.alreadyExists` if the home has a zone of that name.
    @discardableResult
    package mutating func addZone(name: String, homeID: ObjectID) throws(HomeError) -> ObjectID {
        let home = try requireHome(homeID)
        try Self.validateName(name, for: .zone)
        try requireUniqueName(name, kind: .zone, among: named(home.zoneIDs, in: zones), in: homeLabel(homeID))
        let id = allocateID()
        zones[id] = Zone(id: id, homeID: homeID, name: name)
        homes[homeID]?.zoneIDs.append(id)
        return id
    }

    /// Renames a zone; zone names are unique in a home.
    package mutating func renameZone(_ id: ObjectID, to name: String) throws(HomeError) -> [LayoutChange] {
        try renameInHome(id, to: name, kind: .zone, table: \.zones, siblings: \.zoneIDs)
    }

    /// Removes a zone; its rooms stay.
    package mutating func removeZone(_ id: ObjectID) throws(HomeError) -> [LayoutChange] {
        let zone = try requireZone(id)
        let changes = [change(.removed, id)]
        zones[id] = nil
        homes[zone.homeID]?.zoneIDs.removeAll { $0 == id }
        return changes
    }

    /// Puts a room in a zone (a room may be in several zones).
    ///
    /// - Throws: `.notFound` for an unknown room or zone; `.invalidArgument` for a
    ///   room of another home; `.alreadyExists` if the room is in the zone already.
    package mutating func addRoom(_ roomID: ObjectID, toZone zoneID: ObjectID) throws(HomeError) -> [LayoutChange] {
        let zone = try requireZone(zoneID)
        _ = try requireRoom(roomID)
        try requireSameHome(roomID, .room, homeID: zone.homeID)
        if zone.roomIDs.contains(roomID) {
            throw HomeError(.alreadyExists, "\(describe(.room, roomID)) is already in \(describe(.zone, zoneID))")
        }
        zones[zoneID]?.roomIDs.append(roomID)
        return [change(.updated, zoneID)]
    }

    /// Takes a room out of a zone.
    ///
    /// - Throws: `.notFound` for an unknown zone, or a room not in it.
    package mutating func removeRoom(_ roomID: ObjectID, fromZone zoneID: ObjectID) throws(HomeError) -> [LayoutChange]
    {
        let zone = try requireZone(zoneID)
        guard zone.roomIDs.contains(roomID) else {
            let room = rooms[roomID] == nil ? "room \(roomID)" : describe(.room, roomID)
            throw HomeError(.notFound, "\(room) is not in \(describe(.zone, zoneID))")
        }
        zones[zoneID]?.roomIDs.removeAll { $0 == roomID }
        return [change(.updated, zoneID)]
    }
}
