extension HomeGraph {
    /// The name of the room every home starts with, for accessories not assigned elsewhere.
    package static let defaultRoomName = "Default Room"

    /// Adds a home with its default room; the first home becomes the primary one.
    ///
    /// - Returns: The new home's id (its default room gets the next one).
    /// - Throws: `.invalidArgument` for a blank or over-long name; `.alreadyExists`
    ///   if a home has the name already (case-insensitive).
    @discardableResult
    package mutating func addHome(name: String) throws(HomeError) -> ObjectID {
        try Self.validateName(name, for: .home)
        if let clash = homeOrder.compactMap({ homes[$0] }).first(where: { Self.sameName($0.name, name) }) {
            throw HomeError(.alreadyExists, "a home named \(quoted(clash.name)) already exists (id \(clash.id))")
        }
        let homeID = allocateID()
        let roomID = allocateID()
        rooms[roomID] = Room(id: roomID, homeID: homeID, name: Self.defaultRoomName)
        homes[homeID] = Home(id: homeID, name: name, isPrimary: homes.isEmpty, defaultRoomID: roomID, roomIDs: [roomID])
        homeOrder.append(homeID)
        return homeID
    }
}

extension HomeGraph {
    /// Renames a home; home names are unique without regard to case.
    ///
    /// - Returns: The `.updated` change, or nothing if the name is the same.
    package mutating func renameHome(_ id: ObjectID, to name: String) throws(HomeError) -> [LayoutChange] {
        let home = try requireHome(id)
        try Self.validateName(name, for: .home)
        if let clash = orderedHomes.first(where: { $0.id != id && Self.sameName($0.name, name) }) {
            throw HomeError(.alreadyExists, "a home named \(quoted(clash.name)) already exists (id \(clash.id))")
        }
        if home.name == name { return [] }
        homes[id]?.name = name
        return [change(.updated, id)]
    }

    /// Makes a home the primary one.
    ///
    /// - Returns: `.updated` for the previous primary home and for this one (announce
    ///   a primary-home event with them), or nothing if it was primary already.
    package mutating func setPrimaryHome(_ id: ObjectID) throws(HomeError) -> [LayoutChange] {
        let home = try requireHome(id)
        if home.isPrimary { return [] }
        var changes: [LayoutChange] = []
        if let previous = primaryHomeID {
            homes[previous]?.isPrimary = false
            changes.append(change(.updated, previous))
        }
        homes[id]?.isPrimary = true
        changes.append(change(.updated, id))
        return changes
    }

    /// Removes a home and everything in it. If it was the primary home, the first
    /// remaining home (in the order added) becomes primary.
    ///
    /// - Returns: `.removed` for the home (its contents go with it, unannounced), then
    ///   `.updated` for the new primary home, if any.
    package mutating func removeHome(_ id: ObjectID) throws(HomeError) -> [LayoutChange] {
        let home = try requireHome(id)
        var changes = [change(.removed, id)]
        for accessoryID in home.accessoryIDs {
            for serviceID in accessories[accessoryID]?.serviceIDs ?? [] {
                for characteristicID in services[serviceID]?.characteristicIDs ?? [] {
                    characteristics[characteristicID] = nil
                }
                services[serviceID] = nil
            }
            accessories[accessoryID] = nil
        }
        for roomID in home.roomIDs { rooms[roomID] = nil }
        for zoneID in home.zoneIDs { zones[zoneID] = nil }
        for groupID in home.serviceGroupIDs { serviceGroups[groupID] = nil }
        for actionSetID in home.actionSetIDs { actionSets[actionSetID] = nil }
        for triggerID in home.triggerIDs { triggers[triggerID] = nil }
        homes[id] = nil
        homeOrder.removeAll { $0 == id }
        if home.isPrimary, let successor = homeOrder.first {
            homes[successor]?.isPrimary = true
            changes.append(change(.updated, successor))
        }
        return changes
    }
}
