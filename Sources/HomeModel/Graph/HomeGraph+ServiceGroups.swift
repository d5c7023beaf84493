extension HomeGraph {
    /// Adds a service group (services controlled together, such as "Ceiling Lights").
    ///
    /// - Throws: `.notFound` for an unknown home; `.invalidArgument` for a bad name;
    ///   `.alreadyExists` if the home has a group of that name.
    @discardableResult
    package mutating func addServiceGroup(name: String, homeID: ObjectID) throws(HomeError) -> ObjectID {
        let home = try requireHome(homeID)
        try Self.validateName(name, for: .serviceGroup)
        try requireUniqueName(
            name, kind: .serviceGroup, among: named(home.serviceGroupIDs, in: serviceGroups),
            in: homeLabel(homeID))
        let id = allocateID()
        serviceGroups[id] = ServiceGroup(id: id, homeID: homeID, name: name)
        homes[homeID]?.serviceGroupIDs.append(id)
        return id
    }

    /// Renames a service group; group names are unique in a home.
    package mutating func renameServiceGroup(_ id: ObjectID, to name: String) throws(HomeError) -> [LayoutChange] {
        try renameInHome(id, to: name, kind: .serviceGroup, table: \.serviceGroups, siblings: \.serviceGroupIDs)
    }

    /// Removes a service group; its services stay.
    package mutating func removeServiceGroup(_ id: ObjectID) throws(HomeError) -> [LayoutChange] {
        let group = try requireServiceGroup(id)
        let changes = [change(.removed, id)]
        serviceGroups[id] = nil
        homes[group.homeID]?.serviceGroupIDs.removeAll { $0 == id }
        return changes
    }

    /// Adds a service of the group's home to a group.
    ///
    /// - Throws: `.notFound` for an unknown group or service; `.invalidArgument` for
    ///   a service of another home; `.alreadyExists` if it is in the group already.
    package mutating func addService(_ serviceID: ObjectID, toGroup groupID: ObjectID) throws(HomeError)
        -> [LayoutChange]
    {
        let group = try requireServiceGroup(groupID)
        _ = try requireService(serviceID)
        try requireSameHome(serviceID, .service, homeID: group.homeID)
        if group.serviceIDs.contains(serviceID) {
            throw HomeError(
                .alreadyExists,
                "\(describe(.service, serviceID)) is already in "
                    + describe(.serviceGroup, groupID))
        }
        serviceGroups[groupID]?.serviceIDs.append(serviceID)
        return [change(.updated, groupID)]
    }

    /// Takes a service out of a group.
    ///
    /// - Throws: `.notFound` for an unknown group, or a service not in it.
    package mutating func removeService(_ serviceID: ObjectID, fromGroup groupID: ObjectID) throws(HomeError)
        -> [LayoutChange]
    {
        let group = try requireServiceGroup(groupID)
        guard group.serviceIDs.contains(serviceID) else {
            throw HomeError(.notFound, "service \(serviceID) is not in \(describe(.serviceGroup, groupID))")
        }
        serviceGroups[groupID]?.serviceIDs.removeAll { $0 == serviceID }
        return [change(.updated, groupID)]
    }
}
