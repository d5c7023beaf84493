internal import Foundation
internal import HomeModel

/// What importing a layout file into a home changes, decided before anything is:
/// each step is the layout operation the daemon will be asked for, tried first on a
/// copy of the home with the daemon's own model, so that a name that clashes, a room
/// that does not exist or a value a characteristic cannot take stops the import
/// with nothing changed. What exists already and differs from the file is reported
/// and left as it is (an import adds; it never removes nor overwrites).
struct ImportPlan {
    struct Step {
        /// For people: "add room "Attic" to "Home"".
        var text: String
        var operation: LayoutOperation
        /// The id the step created in the copy (0: none), to be mapped to the
        /// daemon's when the step is carried out.
        var createdID: ObjectID
    }

    var steps: [Step] = []
    /// What differs and is left as it is.
    var differences: [String] = []
    /// The home as it will be.
    private(set) var graph: HomeGraph

    init(file: LayoutFile, graph: HomeGraph) throws(HomeError) {
        self.graph = graph
        for home in file.homes { try plan(home) }
    }

    private mutating func step(_ text: String, _ operation: LayoutOperation) throws(HomeError) -> ObjectID {
        do {
            let created = try graph.apply(operation).createdID
            steps.append(Step(text: text, operation: operation, createdID: created))
            return created
        } catch {
            throw HomeError(error.code, "cannot \(text): \(error.message)")
        }
    }

    private mutating func plan(_ file: LayoutFile.Home) throws(HomeError) {
        var homeID = graph.homes.values.first { $0.name == file.name }?.id ?? 0
        if homeID == 0 { homeID = try step("add home \(quote(file.name))", .addHome(name: file.name)) }
        if file.primary, graph.primaryHomeID != homeID {
            _ = try step("make \(quote(file.name)) the primary home", .setPrimaryHome(homeID: homeID))
        }
        let home = file.name
        if let location = file.location {
            if let current = graph.homes[homeID]?.location, current != location {
                differences.append("home \(quote(home)) has another location than the file's: left as it is")
            } else if graph.homes[homeID]?.location == nil {
                _ = try step(
                    "set the location of \(quote(home))", .setHomeLocation(homeID: homeID, location: location))
            }
        }
        func roomID(_ name: String) -> ObjectID? {
            graph.homes[homeID]?.roomIDs.first { graph.rooms[$0]?.name == name }
        }
        for room in file.rooms where roomID(room) == nil {
            _ = try step("add room \(quote(room)) to \(quote(home))", .addRoom(name: room, homeID: homeID))
        }
        for zone in file.zones {
            var zoneID = graph.homes[homeID]?.zoneIDs.first { graph.zones[$0]?.name == zone.name } ?? 0
            if zoneID == 0 {
                zoneID = try step(
                    "add zone \(quote(zone.name)) to \(quote(home))", .addZone(name: zone.name, homeID: homeID))
            }
            for room in zone.rooms {
                guard let id = roomID(room) else {
                    throw HomeError(
                        .notFound, "zone \(quote(zone.name)) names room \(quote(room)), which \(quote(home)) has not")
                }
                if graph.zones[zoneID]?.roomIDs.contains(id) == false {
                    _ = try step(
                        "add room \(quote(room)) to zone \(quote(zone.name))",
                        .addRoomToZone(roomID: id, zoneID: zoneID))
                }
            }
        }
        for accessory in file.accessories {
            let room = accessory.room.isEmpty ? nil : roomID(accessory.room)
            try plan(accessory, homeID: homeID, roomID: room)
        }
        for group in file.groups {
            var groupID =
                graph.homes[homeID]?.serviceGroupIDs.first { graph.serviceGroups[$0]?.name == group.name } ?? 0
            if groupID == 0 {
                groupID = try step(
                    "add group \(quote(group.name)) to \(quote(home))",
                    .addServiceGroup(name: group.name, homeID: homeID))
            }
            for path in group.services {
                let serviceID = try resolve(path, in: home, as: "a service of group \(quote(group.name))") {
                    graph, full throws(HomeError) in try graph.resolveService(full)
                }
                if graph.serviceGroups[groupID]?.serviceIDs.contains(serviceID) == false {
                    _ = try step(
                        "add \(quote(path)) to group \(quote(group.name))",
                        .addServiceToGroup(serviceID: serviceID, groupID: groupID))
                }
            }
        }
        for scene in file.scenes { try plan(scene, homeID: homeID, home: home) }
        for trigger in file.triggers { try plan(trigger, homeID: homeID, home: home) }
    }

    /// - Parameter roomID: the room the file names, in the home (nil: none named, or
    ///   not there).
    private mutating func plan(_ file: LayoutFile.Accessory, homeID: ObjectID, roomID: ObjectID?) throws(HomeError) {
        guard
            let accessory = graph.accessories.values.first(where: {
                $0.provider == file.provider && $0.providerKey == file.key
            })
        else {
            throw HomeError(
                .notFound,
                "\(file.place): provider \(quote(file.provider)) has registered no accessory with key \(quote(file.key)); "
                    + "an import does not hold places for accessories: start the provider, then import again")
        }
        guard accessory.homeID == homeID else {
            throw HomeError(
                .failedPrecondition,
                "\(file.place): \(quote(accessory.name)) (key \(quote(file.key))) is in another home; an import does "
                    + "not move accessories between homes")
        }
        if accessory.name != file.name {
            _ = try step(
                "rename \(quote(accessory.name)) to \(quote(file.name))", .rename(id: accessory.id, name: file.name))
        }
        if !file.room.isEmpty {
            guard let room = roomID else {
                throw HomeError(
                    .notFound, "\(file.place): room \(quote(file.room)) is neither in the file nor in the home")
            }
            if accessory.roomID != room {
                _ = try step(
                    "put \(quote(file.name)) in room \(quote(file.room))",
                    .assignAccessory(accessoryID: accessory.id, roomID: room))
            }
        }
    }

    private mutating func plan(_ scene: LayoutFile.Scene, homeID: ObjectID, home: String) throws(HomeError) {
        var sceneID = graph.homes[homeID]?.actionSetIDs.first { graph.actionSets[$0]?.name == scene.name }
        if sceneID == nil {
            sceneID = try step(
                "add scene \(quote(scene.name)) to \(quote(home))",
                .addActionSet(name: scene.name, kind: scene.kind, homeID: homeID))
        }
        guard let sceneID else { return }
        for (index, action) in scene.actions.enumerated() {
            let at = "\(scene.place).actions[\(index)]"
            let characteristicID = try resolve(action.characteristic, in: home, as: "\(at).characteristic") {
                graph, full throws(HomeError) in try graph.resolveCharacteristic(full)
            }
            let value = try Self.value(action.value, at: at)
            let onlyIf = try action.onlyIf.map { expected throws(HomeError) in
                try Self.value(expected, at: "\(at).only_if")
            }
            if let existing = graph.actionSets[sceneID]?.actions.first(where: {
                $0.characteristicID == characteristicID
            }) {
                if existing.value != value || (existing.onlyIf == nil) != (onlyIf == nil) {
                    differences.append(
                        "scene \(quote(scene.name)) sets \(quote(action.characteristic)) to \(existing.value), "
                            + "the file to \(value): left as it is")
                }
                continue
            }
            _ = try step(
                "add \(quote(action.characteristic)) = \(value) to scene \(quote(scene.name))",
                .addAction(
                    CharacteristicWriteAction(characteristicID: characteristicID, value: value, onlyIf: onlyIf),
                    actionSetID: sceneID))
        }
    }

    private mutating func plan(_ trigger: LayoutFile.Trigger, homeID: ObjectID, home: String) throws(HomeError) {
        let scenes = try trigger.scenes.map { name throws(HomeError) -> ObjectID in
            guard let id = graph.homes[homeID]?.actionSetIDs.first(where: { graph.actionSets[$0]?.name == name }) else {
                throw HomeError(.notFound, "\(trigger.place).scenes: no scene \(quote(name)) in \(quote(home))")
            }
            return id
        }
        let kind: TriggerKind
        if let sun = trigger.sun {
            kind = .sun(sun.event, offsetMs: sun.offsetMs, timeZone: sun.timeZone)
        } else if let timer = trigger.timer {
            kind = .timer(fireDateMs: timer.fireDateMs, timeZone: timer.timeZone, recurrence: timer.recurrence)
        } else if let event = trigger.event {
            let at = "\(trigger.place).event"
            let characteristicID = try resolve(event.characteristic, in: home, as: "\(at).characteristic") {
                graph, full throws(HomeError) in try graph.resolveCharacteristic(full)
            }
            let conditions = try resolved(event.conditions, in: home, at: "\(at).conditions")
            kind = .event(
                characteristicID: characteristicID,
                value: try event.equals.map { value throws(HomeError) in try Self.value(value, at: "\(at).equals") },
                rangeMin: event.above, rangeMax: event.below, conditions: conditions)
        } else {
            return
        }
        let conditions = try resolved(trigger.conditions, in: home, at: "\(trigger.place).conditions")
        if let existing = graph.homes[homeID]?.triggerIDs.compactMap({ graph.triggers[$0] })
            .first(where: { $0.name == trigger.name })
        {
            if existing.kind != kind || existing.actionSetIDs != scenes || existing.isEnabled != trigger.enabled
                || existing.condition != trigger.condition || existing.holdMs != trigger.holdMs
                || existing.executeOnce != trigger.executeOnce || existing.end != trigger.end
                || existing.command != trigger.command || existing.conditions != conditions
            {
                differences.append("trigger \(quote(trigger.name)) exists and is not as the file says: left as it is")
            }
            return
        }
        if let command = trigger.command {
            // The daemon checks the program when the trigger is added, after the steps
            // before it are made; checked here too, an import that names a program
            // that is not there stops before anything changed.
            if let problem = Self.problem(withProgram: command.program) {
                throw HomeError(
                    .invalidArgument,
                    "cannot add trigger \(quote(trigger.name)) to \(quote(home)): the command \(command.program) "
                        + problem)
            }
        }
        _ = try step(
            "add trigger \(quote(trigger.name)) to \(quote(home))",
            .addTrigger(
                name: trigger.name, homeID: homeID, kind: kind, actionSetIDs: scenes, enabled: trigger.enabled,
                condition: trigger.condition, holdMs: trigger.holdMs, executeOnce: trigger.executeOnce,
                end: trigger.end, command: trigger.command, conditions: conditions))
    }

    /// Why `program` cannot be a trigger's command on this machine ("does not
    /// exist", "is not a file", "is not executable"), or nil. The execute bits
    /// alone: the daemon's user, not this one's, is the one that will run it.
    static func problem(withProgram program: String) -> String? {
        guard program.hasPrefix("/") else { return nil }  // the model refuses it, in its words
        var info = stat()
        guard stat(program, &info) == 0 else { return "does not exist" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "is not a file" }
        return info.st_mode & 0o111 == 0 ? "is not executable" : nil
    }

    /// A file's conditions with their characteristics resolved in `home`.
    private func resolved(
        _ conditions: [(characteristic: String, comparison: Comparison, value: Any)], in home: String,
        at place: String
    ) throws(HomeError) -> [CharacteristicCondition] {
        try conditions.enumerated().map { index, condition throws(HomeError) -> CharacteristicCondition in
            let cat = "\(place)[\(index)]"
            return CharacteristicCondition(
                characteristicID: try resolve(condition.characteristic, in: home, as: "\(cat).characteristic") {
                    graph, full throws(HomeError) in try graph.resolveCharacteristic(full)
                }, comparison: condition.comparison, value: try Self.value(condition.value, at: "\(cat).value"))
        }
    }

    /// A path within a home (as the export writes it: the home's name left off).
    private func resolve(
        _ path: String, in home: String, as place: String,
        _ lookup: (HomeGraph, String) throws(HomeError) -> ObjectID
    ) throws(HomeError) -> ObjectID {
        do {
            return try lookup(graph, home + "/" + path)
        } catch {
            throw HomeError(error.code, "\(place): \(quote(path)): \(error.message)")
        }
    }

    /// A value as YAML or JSON gives it; the characteristic's format is checked
    /// when the step is tried.
    static func value(_ value: Any, at place: String) throws(HomeError) -> CharacteristicValue {
        switch value {
        case let flag as Bool: return .bool(flag)
        case let number as Int: return .int(Int64(number))
        case let number as Double: return .float(number)
        case let text as String: return .string(text)
        default: throw HomeError(.invalidArgument, "\(place): \(value) is not a value (a number, true/false or text)")
        }
    }
}

extension LayoutOperation {
    /// The same operation with the ids of objects the plan created in its copy
    /// replaced by the ids the daemon gave them.
    func mapping(_ ids: [ObjectID: ObjectID]) -> LayoutOperation {
        func id(_ old: ObjectID) -> ObjectID { ids[old] ?? old }
        switch self {
        case .addHome: return self
        case .rename(let target, let name): return .rename(id: id(target), name: name)
        case .remove(let target): return .remove(id: id(target))
        case .setPrimaryHome(let homeID): return .setPrimaryHome(homeID: id(homeID))
        case .addRoom(let name, let homeID): return .addRoom(name: name, homeID: id(homeID))
        case .addZone(let name, let homeID): return .addZone(name: name, homeID: id(homeID))
        case .addRoomToZone(let roomID, let zoneID): return .addRoomToZone(roomID: id(roomID), zoneID: id(zoneID))
        case .removeRoomFromZone(let roomID, let zoneID):
            return .removeRoomFromZone(roomID: id(roomID), zoneID: id(zoneID))
        case .assignAccessory(let accessoryID, let roomID):
            return .assignAccessory(accessoryID: id(accessoryID), roomID: id(roomID))
        case .addServiceGroup(let name, let homeID): return .addServiceGroup(name: name, homeID: id(homeID))
        case .addServiceToGroup(let serviceID, let groupID):
            return .addServiceToGroup(serviceID: id(serviceID), groupID: id(groupID))
        case .removeServiceFromGroup(let serviceID, let groupID):
            return .removeServiceFromGroup(serviceID: id(serviceID), groupID: id(groupID))
        case .addActionSet(let name, let kind, let homeID):
            return .addActionSet(name: name, kind: kind, homeID: id(homeID))
        case .addAction(let action, let actionSetID): return .addAction(action, actionSetID: id(actionSetID))
        case .removeAction(let characteristicID, let actionSetID):
            return .removeAction(characteristicID: characteristicID, actionSetID: id(actionSetID))
        case .addTrigger(
            let name, let homeID, let kind, let actionSetIDs, let enabled, let condition, let holdMs, let once,
            let end, let command, let conditions):
            return .addTrigger(
                name: name, homeID: id(homeID), kind: kind, actionSetIDs: actionSetIDs.map(id), enabled: enabled,
                condition: condition, holdMs: holdMs, executeOnce: once, end: end, command: command,
                conditions: conditions)
        case .setTrigger(
            let triggerID, let kind, let condition, let holdMs, let once, let end, let command, let conditions):
            return .setTrigger(
                triggerID: id(triggerID), kind: kind, condition: condition, holdMs: holdMs, executeOnce: once,
                end: end, command: command, conditions: conditions)
        case .setHomeLocation(let homeID, let location):
            return .setHomeLocation(homeID: id(homeID), location: location)
        case .setTriggerEnabled(let triggerID, let enabled):
            return .setTriggerEnabled(triggerID: id(triggerID), enabled: enabled)
        case .addActionSetToTrigger(let actionSetID, let triggerID):
            return .addActionSetToTrigger(actionSetID: id(actionSetID), triggerID: id(triggerID))
        case .removeActionSetFromTrigger(let actionSetID, let triggerID):
            return .removeActionSetFromTrigger(actionSetID: id(actionSetID), triggerID: id(triggerID))
        }
    }
}
