extension HomeGraph {
    /// Checks every cross-reference of the tables, for a graph loaded from storage
    /// and in tests after every operation.
    ///
    /// - Throws: `.dataLoss` naming the first inconsistency found.
    package func checkIntegrity() throws(HomeError) {
        func fail(_ message: String) -> HomeError { HomeError(.dataLoss, "home graph is inconsistent: \(message)") }
        func checkID(_ id: ObjectID) throws(HomeError) {
            if id == 0 || id >= nextID { throw fail("id \(id) is not below the next id \(nextID)") }
        }

        guard homeOrder.count == homes.count, Set(homeOrder) == Set(homes.keys) else {
            throw fail("the home order \(homeOrder) does not list the homes \(homes.keys.sorted())")
        }
        let primaries = homes.values.filter(\.isPrimary).map(\.id)
        if primaries.count != (homes.isEmpty ? 0 : 1) {
            throw fail("\(primaries.count) primary homes among \(homes.count)")
        }
        var names = Set<String>()
        for id in homeOrder {
            guard let home = homes[id], home.id == id else { throw fail("home \(id) is filed under another id") }
            try checkID(id)
            if !names.insert(home.name.lowercased()).inserted { throw fail("two homes are named \(quoted(home.name))") }
            guard home.roomIDs.first == home.defaultRoomID else {
                throw fail("home \(id)'s rooms do not start with its default room \(home.defaultRoomID)")
            }
            try checkChildren(home.roomIDs, of: id, in: rooms, \.homeID, "room")
            try checkChildren(home.zoneIDs, of: id, in: zones, \.homeID, "zone")
            try checkChildren(home.accessoryIDs, of: id, in: accessories, \.homeID, "accessory")
            try checkChildren(home.serviceGroupIDs, of: id, in: serviceGroups, \.homeID, "service group")
            try checkChildren(home.actionSetIDs, of: id, in: actionSets, \.homeID, "action set")
            try checkChildren(home.triggerIDs, of: id, in: triggers, \.homeID, "trigger")
        }
        var listed = 0
        for home in homes.values {
            let layout = home.roomIDs.count + home.zoneIDs.count + home.serviceGroupIDs.count
            let things = home.accessoryIDs.count + home.actionSetIDs.count + home.triggerIDs.count
            listed += layout + things
        }
        let filedLayout: Int = rooms.count + zones.count + serviceGroups.count
        let filed: Int = filedLayout + accessories.count + actionSets.count + triggers.count
        if listed != filed { throw fail("\(filed - listed) objects belong to no home") }

        for zone in zones.values {
            try checkID(zone.id)
            for roomID in zone.roomIDs where rooms[roomID]?.homeID != zone.homeID {
                throw fail("zone \(zone.id) lists room \(roomID), which is not in its home")
            }
        }
        for room in rooms.values { try checkID(room.id) }
        var serviceCount = 0
        for accessory in accessories.values {
            try checkID(accessory.id)
            guard rooms[accessory.roomID]?.homeID == accessory.homeID else {
                throw fail("accessory \(accessory.id) is in room \(accessory.roomID), which is not in its home")
            }
            if let bridgeID = accessory.bridgeID,
                accessories[bridgeID]?.bridgedAccessoryIDs.contains(accessory.id) != true
            {
                throw fail("accessory \(accessory.id)'s bridge \(bridgeID) does not list it")
            }
            for bridgedID in accessory.bridgedAccessoryIDs where accessories[bridgedID]?.bridgeID != accessory.id {
                throw fail("bridge \(accessory.id) lists accessory \(bridgedID), which is not bridged through it")
            }
            try checkChildren(accessory.serviceIDs, of: accessory.id, in: services, \.accessoryID, "service")
            serviceCount += accessory.serviceIDs.count
        }
        if serviceCount != services.count {
            throw fail("\(services.count - serviceCount) services belong to no accessory")
        }
        var characteristicCount = 0
        for service in services.values {
            try checkID(service.id)
            try checkChildren(
                service.characteristicIDs, of: service.id, in: characteristics, \.serviceID,
                "characteristic")
            for characteristicID in service.characteristicIDs
            where characteristics[characteristicID]?.accessoryID != service.accessoryID {
                throw fail("characteristic \(characteristicID) names another accessory than its service \(service.id)")
            }
            for linkedID in service.linkedServiceIDs where services[linkedID]?.accessoryID != service.accessoryID {
                throw fail("service \(service.id) links service \(linkedID) of another accessory")
            }
            characteristicCount += service.characteristicIDs.count
        }
        if characteristicCount != characteristics.count {
            throw fail("\(characteristics.count - characteristicCount) characteristics belong to no service")
        }
        for characteristic in characteristics.values { try checkID(characteristic.id) }
        for group in serviceGroups.values {
            try checkID(group.id)
            for serviceID in group.serviceIDs
            where services[serviceID] == nil || homeID(of: serviceID) != group.homeID {
                throw fail("service group \(group.id) lists service \(serviceID), which is not in its home")
            }
        }
        for actionSet in actionSets.values {
            try checkID(actionSet.id)
            for action in actionSet.actions
            where characteristics[action.characteristicID] == nil
                || homeID(of: action.characteristicID) != actionSet.homeID
            {
                throw fail(
                    "action set \(actionSet.id) writes characteristic \(action.characteristicID), "
                        + "which is not in its home")
            }
        }
        for trigger in triggers.values {
            try checkID(trigger.id)
            for actionSetID in trigger.actionSetIDs where actionSets[actionSetID]?.homeID != trigger.homeID {
                throw fail("trigger \(trigger.id) runs action set \(actionSetID), which is not in its home")
            }
            var watched = trigger.conditions.map(\.characteristicID)
            if case .event(let characteristicID, _, _, _, let conditions) = trigger.kind {
                watched += [characteristicID] + conditions.map(\.characteristicID)
            }
            for id in watched where characteristics[id] == nil || homeID(of: id) != trigger.homeID {
                throw fail("trigger \(trigger.id) watches characteristic \(id), which is not in its home")
            }
        }
    }

    /// Checks that a parent's child list names existing objects that name it back, once each.
    private func checkChildren<T>(
        _ ids: [ObjectID], of parentID: ObjectID, in table: [ObjectID: T],
        _ parent: KeyPath<T, ObjectID>, _ noun: String
    ) throws(HomeError) {
        var seen = Set<ObjectID>()
        for id in ids {
            guard let child = table[id] else {
                throw HomeError(
                    .dataLoss,
                    "home graph is inconsistent: \(parentID) lists \(noun) \(id), which does not exist")
            }
            guard child[keyPath: parent] == parentID else {
                throw HomeError(
                    .dataLoss,
                    "home graph is inconsistent: \(parentID) lists \(noun) \(id), "
                        + "which belongs to \(child[keyPath: parent])")
            }
            guard seen.insert(id).inserted else {
                throw HomeError(.dataLoss, "home graph is inconsistent: \(parentID) lists \(noun) \(id) twice")
            }
        }
    }
}
