extension HomeGraph {
    /// Moves an accessory to another room of its home.
    ///
    /// - Returns: `.moved` with the room as `parentID`, or nothing if it is there already.
    /// - Throws: `.notFound` for an unknown accessory or room; `.invalidArgument` for
    ///   a room of another home.
    package mutating func assignAccessory(_ id: ObjectID, toRoom roomID: ObjectID) throws(HomeError) -> [LayoutChange] {
        let accessory = try requireAccessory(id)
        _ = try requireRoom(roomID)
        try requireSameHome(roomID, .room, homeID: accessory.homeID)
        if accessory.roomID == roomID { return [] }
        accessories[id]?.roomID = roomID
        return [change(.moved, id)]
    }

    /// Renames an accessory. Accessory names need not be unique (two rooms may each
    /// have a "Lamp"). Through `apply(.rename)`, its AccessoryInformation Name
    /// follows (with a value event), and a provider's registrations keep it.
    package mutating func renameAccessory(_ id: ObjectID, to name: String) throws(HomeError) -> [LayoutChange] {
        let accessory = try requireAccessory(id)
        try Self.validateName(name, for: .accessory)
        if accessory.name == name { return [] }
        accessories[id]?.name = name
        return [change(.updated, id)]
    }

    /// Renames a service.
    package mutating func renameService(_ id: ObjectID, to name: String) throws(HomeError) -> [LayoutChange] {
        let service = try requireService(id)
        try Self.validateName(name, for: .service)
        if service.name == name { return [] }
        services[id]?.name = name
        return [change(.updated, id)]
    }

    /// Removes an accessory with its services and characteristics; a bridge takes
    /// its bridged accessories with it. What referred to them is cut loose: actions
    /// writing their characteristics leave their action sets, their services leave
    /// service groups, conditions on them leave triggers, and event triggers
    /// watching them are removed (they could never fire again).
    ///
    /// - Returns: `.updated` for every action set, group, trigger and bridge that
    ///   changed, `.removed` for every trigger removed, then `.removed` for each
    ///   accessory (bridged ones before their bridge).
    package mutating func removeAccessory(_ id: ObjectID) throws(HomeError) -> [LayoutChange] {
        let accessory = try requireAccessory(id)
        let doomed = accessory.bridgedAccessoryIDs + [id]
        var serviceIDs = Set<ObjectID>()
        var characteristicIDs = Set<ObjectID>()
        for accessoryID in doomed {
            for serviceID in accessories[accessoryID]?.serviceIDs ?? [] {
                serviceIDs.insert(serviceID)
                characteristicIDs.formUnion(services[serviceID]?.characteristicIDs ?? [])
            }
        }
        var changes = forget(services: serviceIDs, characteristics: characteristicIDs, homeID: accessory.homeID)
        if let bridgeID = accessory.bridgeID {
            accessories[bridgeID]?.bridgedAccessoryIDs.removeAll { $0 == id }
            changes.append(change(.updated, bridgeID))
        }
        for accessoryID in doomed {
            changes.append(change(.removed, accessoryID))
        }
        for characteristicID in characteristicIDs { characteristics[characteristicID] = nil }
        for serviceID in serviceIDs { services[serviceID] = nil }
        let removed = Set(doomed)
        for accessoryID in doomed { accessories[accessoryID] = nil }
        homes[accessory.homeID]?.accessoryIDs.removeAll { removed.contains($0) }
        return changes
    }

    /// Drops every reference the home's groups, action sets and triggers hold to
    /// services and characteristics about to disappear.
    mutating func forget(
        services serviceIDs: Set<ObjectID>, characteristics characteristicIDs: Set<ObjectID>,
        homeID: ObjectID
    ) -> [LayoutChange] {
        guard let home = homes[homeID] else { return [] }
        var changes: [LayoutChange] = []
        for groupID in home.serviceGroupIDs {
            guard let group = serviceGroups[groupID], group.serviceIDs.contains(where: serviceIDs.contains) else {
                continue
            }
            serviceGroups[groupID]?.serviceIDs.removeAll { serviceIDs.contains($0) }
            changes.append(change(.updated, groupID))
        }
        for actionSetID in home.actionSetIDs {
            guard let actionSet = actionSets[actionSetID],
                actionSet.actions.contains(where: { characteristicIDs.contains($0.characteristicID) })
            else {
                continue
            }
            actionSets[actionSetID]?.actions.removeAll { characteristicIDs.contains($0.characteristicID) }
            changes.append(change(.updated, actionSetID))
        }
        var removedTriggers: [ObjectID] = []
        for triggerID in home.triggerIDs {
            if let conditions = triggers[triggerID]?.conditions,
                conditions.contains(where: { characteristicIDs.contains($0.characteristicID) })
            {
                triggers[triggerID]?.conditions = conditions.filter { !characteristicIDs.contains($0.characteristicID) }
                changes.append(change(.updated, triggerID))
            }
            guard case .event(let watched, let value, let low, let high, let conditions) = triggers[triggerID]?.kind
            else { continue }
            if characteristicIDs.contains(watched) {
                changes.append(change(.removed, triggerID))
                removedTriggers.append(triggerID)
            } else if conditions.contains(where: { characteristicIDs.contains($0.characteristicID) }) {
                let kept = conditions.filter { !characteristicIDs.contains($0.characteristicID) }
                triggers[triggerID]?.kind = .event(
                    characteristicID: watched, value: value, rangeMin: low,
                    rangeMax: high, conditions: kept)
                changes.append(change(.updated, triggerID))
            }
        }
        for triggerID in removedTriggers { triggers[triggerID] = nil }
        if !removedTriggers.isEmpty {
            let removed = Set(removedTriggers)
            homes[homeID]?.triggerIDs.removeAll { removed.contains($0) }
        }
        return changes
    }
}
