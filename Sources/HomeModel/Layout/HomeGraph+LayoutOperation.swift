/// The layout changes an operation made, and the id of what it created (0 when
/// nothing was created).
private typealias Outcome = (changes: [LayoutChange], createdID: ObjectID)

extension HomeGraph {
    /// Applies one layout operation: the single place where a `LayoutOperation`
    /// becomes graph operations, for the daemon's store and for tests alike.
    ///
    /// - Returns: the events it caused, in order (its layout changes, then a
    ///   primary-home event when the primary home changed), and the id of what it
    ///   created, 0 for operations that create nothing.
    /// - Throws: the graph operation's error (ALREADY_EXISTS, NOT_FOUND naming the
    ///   id, INVALID_ARGUMENT, FAILED_PRECONDITION); the graph is then unchanged
    ///   only if the caller applied it to a copy, as the store does.
    package mutating func apply(_ operation: LayoutOperation, nowMs: Int64 = 0) throws(HomeError)
        -> (events: [HomeEvent.Body], createdID: ObjectID)
    {
        let primaryBefore = primaryHomeID
        let outcome = try LayoutOperations.changes(of: operation, in: &self)
        var events = outcome.changes.map { HomeEvent.Body.layout($0) }
        // A renamed accessory's AccessoryInformation Name follows its name, so that
        // what a client reads there (a HomeKit bridge shows it) is the name people
        // gave it; a value event says so like any other value change.
        if case .rename(let id, let name) = operation, !outcome.changes.isEmpty,
            let change = renameInformationName(ofAccessory: id, to: name, nowMs: nowMs)
        {
            events.append(.value(change))
        }
        // Adding the first home, choosing another, or removing the primary one all
        // change which home is primary; subscribers hear it once, after the layout
        // events that caused it.
        if let primary = primaryHomeID, primary != primaryBefore {
            events.append(.primaryHome(primary))
        }
        return (events, outcome.createdID)
    }
}

/// Each operation mapped onto the graph's own methods.
private enum LayoutOperations {
    static func changes(of operation: LayoutOperation, in graph: inout HomeGraph) throws(HomeError) -> Outcome {
        switch operation {
        case .addHome(let name):
            let id = try graph.addHome(name: name)
            // The home arrives with its default room; announce both.
            let room = graph.home(id).flatMap { graph.layoutChange(.added, of: $0.defaultRoomID) }
            return (added(id, in: graph).changes + (room.map { [$0] } ?? []), id)
        case .rename(let id, let name):
            return (try rename(id, to: name, in: &graph), 0)
        case .remove(let id):
            return (try remove(id, from: &graph), 0)
        case .setPrimaryHome(let homeID):
            return (try graph.setPrimaryHome(homeID), 0)
        case .addRoom(let name, let homeID):
            return added(try graph.addRoom(name: name, homeID: homeID), in: graph)
        case .addZone(let name, let homeID):
            return added(try graph.addZone(name: name, homeID: homeID), in: graph)
        case .addRoomToZone(let roomID, let zoneID):
            return (try graph.addRoom(roomID, toZone: zoneID), 0)
        case .removeRoomFromZone(let roomID, let zoneID):
            return (try graph.removeRoom(roomID, fromZone: zoneID), 0)
        case .assignAccessory(let accessoryID, let roomID):
            return (try graph.assignAccessory(accessoryID, toRoom: roomID), 0)
        case .addServiceGroup(let name, let homeID):
            return added(try graph.addServiceGroup(name: name, homeID: homeID), in: graph)
        case .addServiceToGroup(let serviceID, let groupID):
            return (try graph.addService(serviceID, toGroup: groupID), 0)
        case .removeServiceFromGroup(let serviceID, let groupID):
            return (try graph.removeService(serviceID, fromGroup: groupID), 0)
        case .addActionSet(let name, let kind, let homeID):
            return added(try graph.addActionSet(name: name, kind: kind, homeID: homeID), in: graph)
        case .addAction(let action, let actionSetID):
            return (
                try graph.addAction(
                    characteristicID: action.characteristicID, value: action.value, onlyIf: action.onlyIf,
                    toActionSet: actionSetID), 0
            )
        case .removeAction(let characteristicID, let actionSetID):
            return (try graph.removeAction(characteristicID: characteristicID, fromActionSet: actionSetID), 0)
        case .addTrigger(
            let name, let homeID, let kind, let actionSetIDs, let enabled, let condition, let holdMs, let once,
            let end, let command, let conditions):
            return added(
                try graph.addTrigger(
                    name: name, homeID: homeID, kind: kind, actionSetIDs: actionSetIDs,
                    enabled: enabled, condition: condition, holdMs: holdMs, executeOnce: once, end: end,
                    command: command, conditions: conditions), in: graph)
        case .setTrigger(
            let triggerID, let kind, let condition, let holdMs, let once, let end, let command, let conditions):
            return (
                try graph.setTrigger(
                    triggerID, kind: kind, condition: condition, holdMs: holdMs, executeOnce: once, end: end,
                    command: command, conditions: conditions), 0
            )
        case .setHomeLocation(let homeID, let location):
            return (try graph.setLocation(location, ofHome: homeID), 0)
        case .setTriggerEnabled(let triggerID, let enabled):
            return (try graph.setTrigger(triggerID, enabled: enabled), 0)
        case .addActionSetToTrigger(let actionSetID, let triggerID):
            return (try graph.addActionSet(actionSetID, toTrigger: triggerID), 0)
        case .removeActionSetFromTrigger(let actionSetID, let triggerID):
            return (try graph.removeActionSet(actionSetID, fromTrigger: triggerID), 0)
        }
    }

    static func added(_ id: ObjectID, in graph: HomeGraph) -> Outcome {
        (graph.layoutChange(.added, of: id).map { [$0] } ?? [], id)
    }

    static func rename(_ id: ObjectID, to name: String, in graph: inout HomeGraph) throws(HomeError)
        -> [LayoutChange]
    {
        switch graph.kind(of: id) {
        case .home: return try graph.renameHome(id, to: name)
        case .room: return try graph.renameRoom(id, to: name)
        case .zone: return try graph.renameZone(id, to: name)
        case .accessory: return try graph.renameAccessory(id, to: name)
        case .service: return try graph.renameService(id, to: name)
        case .serviceGroup: return try graph.renameServiceGroup(id, to: name)
        case .actionSet: return try graph.renameActionSet(id, to: name)
        case .trigger: return try graph.renameTrigger(id, to: name)
        case .characteristic:
            let typeName = graph.characteristic(id)?.type.name ?? "?"
            throw HomeError(
                .invalidArgument,
                "characteristic \(id) (\(typeName)) is named by its type and cannot be renamed")
        case nil:
            throw HomeError(.notFound, "no object with id \(id) to rename")
        }
    }

    static func remove(_ id: ObjectID, from graph: inout HomeGraph) throws(HomeError) -> [LayoutChange] {
        switch graph.kind(of: id) {
        case .home: return try graph.removeHome(id)
        case .room: return try graph.removeRoom(id)
        case .zone: return try graph.removeZone(id)
        case .accessory: return try graph.removeAccessory(id)
        case .serviceGroup: return try graph.removeServiceGroup(id)
        case .actionSet: return try graph.removeActionSet(id)
        case .trigger: return try graph.removeTrigger(id)
        case .service:
            let accessoryID = graph.service(id)?.accessoryID ?? 0
            throw HomeError(
                .invalidArgument,
                "service \(id) is part of accessory \(accessoryID) and cannot be "
                    + "removed on its own; remove the accessory")
        case .characteristic:
            let serviceID = graph.characteristic(id)?.serviceID ?? 0
            throw HomeError(
                .invalidArgument,
                "characteristic \(id) is part of service \(serviceID) and cannot be "
                    + "removed on its own")
        case nil:
            throw HomeError(.notFound, "no object with id \(id) to remove")
        }
    }
}

extension HomeGraph {
    /// Sets an accessory's AccessoryInformation Name to `name`; the change, or nil
    /// when `id` is no accessory, it has no Name, or the Name is that already.
    fileprivate mutating func renameInformationName(ofAccessory id: ObjectID, to name: String, nowMs: Int64)
        -> ValueChange?
    {
        guard let accessory = accessories[id] else { return nil }
        for serviceID in accessory.serviceIDs {
            guard let service = services[serviceID], service.type.name == "AccessoryInformation" else { continue }
            for characteristicID in service.characteristicIDs
            where characteristics[characteristicID]?.type.name == "Name" {
                guard characteristics[characteristicID]?.value != .string(name) else { return nil }
                characteristics[characteristicID]?.value = .string(name)
                characteristics[characteristicID]?.lastUpdatedMs = nowMs
                return ValueChange(
                    accessoryID: id, serviceID: serviceID, characteristicID: characteristicID, value: .string(name))
            }
        }
        return nil
    }
}
