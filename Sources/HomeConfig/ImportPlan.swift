internal import Foundation
package import HomeModel

/// What importing a layout file into a home changes, and the home once it has:
/// each step is a layout operation applied in turn to a copy of the home by the
/// model's own rules, so that a name that clashes, a room that does not exist or a
/// value a characteristic cannot take stops the import with nothing changed. What
/// exists already and differs from the file is reported and left as it is (an
/// import adds; it never removes nor overwrites). Pure: the daemon plans under its
/// store's lock and installs the copy in one layout commit (`ImportLayout`).
package struct ImportPlan {
    package struct Step {
        /// For people: "add room "Attic" to "Home"".
        package var text: String
        package var operation: LayoutOperation
    }

    package private(set) var steps: [Step] = []
    /// What differs and is left as it is.
    package private(set) var differences: [String] = []
    /// The home as it will be.
    package private(set) var graph: HomeGraph
    /// The events the steps cause, in order: what the commit publishes.
    package private(set) var events: [HomeEvent.Body] = []
    /// The programs of the triggers it adds, each with its step's text: the file
    /// system is no part of the model, so the caller checks them (outside its lock)
    /// before the plan is used.
    package private(set) var programs: [String: String] = [:]
    private let nowMs: Int64

    /// - Parameter nowMs: the time the steps are stamped with (a trigger's creation).
    package init(file: LayoutFile, graph: HomeGraph, nowMs: Int64 = 0) throws(HomeError) {
        self.graph = graph
        self.nowMs = nowMs
        for home in file.homes { try plan(home) }
    }

    private mutating func step(_ text: String, _ operation: LayoutOperation) throws(HomeError) -> ObjectID {
        do {
            let applied = try graph.apply(operation, nowMs: nowMs)
            steps.append(Step(text: text, operation: operation))
            events += applied.events
            return applied.createdID
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
            // As the characteristic would take it (a value of the wrong type refuses
            // the file), so that an unchanged scene compares equal.
            let value = try normalized(
                try Self.value(action.value, at: at), for: characteristicID, writing: true, at: "\(at).value")
            let onlyIf = try action.onlyIf.map { expected throws(HomeError) in
                try normalized(
                    try Self.value(expected, at: "\(at).only_if"), for: characteristicID, writing: false,
                    at: "\(at).only_if")
            }
            if let existing = graph.actionSets[sceneID]?.actions.first(where: {
                $0.characteristicID == characteristicID
            }) {
                if existing.value != value {
                    differences.append(
                        "scene \(quote(scene.name)) sets \(quote(action.characteristic)) to \(existing.value), "
                            + "the file to \(value): left as it is")
                } else if existing.onlyIf != onlyIf {
                    differences.append(
                        "scene \(quote(scene.name)) sets \(quote(action.characteristic)) "
                            + (existing.onlyIf.map { "only if it is \($0)" } ?? "always")
                            + ", the file " + (onlyIf.map { "only if it is \($0)" } ?? "always") + ": left as it is")
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
        let adding = { (name: String) in
            LayoutOperation.addTrigger(
                name: name, homeID: homeID, kind: kind, actionSetIDs: scenes, enabled: trigger.enabled,
                condition: trigger.condition, holdMs: trigger.holdMs, executeOnce: trigger.executeOnce,
                end: trigger.end, command: trigger.command, conditions: conditions)
        }
        if let existing = graph.homes[homeID]?.triggerIDs.compactMap({ graph.triggers[$0] })
            .first(where: { $0.name == trigger.name })
        {
            // The file's trigger as the model would make it (its values normalized, a
            // bad one refusing the file), on a scratch copy under a name of its own.
            var scratch = graph
            let made: Trigger
            do {
                let id = try scratch.apply(adding("\(trigger.name) (import check)"), nowMs: nowMs).createdID
                guard let trigger = scratch.triggers[id] else { return }
                made = trigger
            } catch {
                throw HomeError(error.code, "\(trigger.place): \(error.message)")
            }
            let differing = Self.differences(existing, made)
            if !differing.isEmpty {
                differences.append(
                    "trigger \(quote(trigger.name)) exists with another \(differing.joined(separator: ", ")) than the "
                        + "file's: left as it is")
            }
            return
        }
        let text = "add trigger \(quote(trigger.name)) to \(quote(home))"
        if let command = trigger.command { programs[command.program] = programs[command.program] ?? text }
        _ = try step(text, adding(trigger.name))
    }

    /// What of a trigger the file would change: the names of the parts that differ.
    private static func differences(_ existing: Trigger, _ file: Trigger) -> [String] {
        var parts: [String] = []
        if existing.kind != file.kind { parts.append("kind (its event, time or sun)") }
        if existing.actionSetIDs != file.actionSetIDs { parts.append("scenes") }
        if existing.isEnabled != file.isEnabled { parts.append("enabled") }
        if existing.condition != file.condition { parts.append("time condition") }
        if existing.conditions != file.conditions { parts.append("conditions") }
        if existing.holdMs != file.holdMs { parts.append("hold") }
        if existing.executeOnce != file.executeOnce { parts.append("execute-once") }
        if existing.end != file.end { parts.append("end") }
        if existing.command != file.command { parts.append("command") }
        return parts
    }

    /// A value from the file as the characteristic at `id` takes it: as a scene's
    /// write (`writing`), or as a value it is compared with.
    private func normalized(_ value: CharacteristicValue, for id: ObjectID, writing: Bool, at place: String)
        throws(HomeError) -> CharacteristicValue
    {
        do {
            return try graph.validateWrite(value, to: id, enforceWritable: writing)
        } catch {
            throw HomeError(error.code, "\(place): \(error.message)")
        }
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

private func quote(_ text: String) -> String { "\"\(text)\"" }
