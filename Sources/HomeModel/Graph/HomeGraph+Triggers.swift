extension HomeGraph {
    /// Adds a trigger that runs action sets: at a time (a timer), or when a
    /// characteristic takes a value or enters a range (an event).
    ///
    /// An event trigger must watch a characteristic of the home that notifies
    /// changes; its value (if any) is validated like a provider's write and stored
    /// normalized; a range needs a numeric characteristic and min ≤ max; it may have
    /// a value or a range, not both (neither: any change fires). Conditions are
    /// checked the same way, and ordering comparisons need numbers.
    ///
    /// - Throws: `.notFound` for an unknown home, characteristic or action set;
    ///   `.invalidArgument` for a bad name, time zone, value, range, comparison, or
    ///   an object of another home; `.alreadyExists` if the home has a trigger of that name.
    @discardableResult
    package mutating func addTrigger(
        name: String, homeID: ObjectID, kind: TriggerKind, actionSetIDs: [ObjectID] = [],
        enabled: Bool = true, condition: TimeCondition = .always, holdMs: Int64 = 0, executeOnce: Bool = false,
        end: TriggerEnd = .none, command: TriggerCommand? = nil, conditions: [CharacteristicCondition] = []
    ) throws(HomeError) -> ObjectID {
        let home = try requireHome(homeID)
        try Self.validateName(name, for: .trigger)
        try requireUniqueName(name, kind: .trigger, among: named(home.triggerIDs, in: triggers), in: homeLabel(homeID))
        let kind = try checked(kind, homeID: homeID)
        try checkTiming(kind: kind, condition: condition, holdMs: holdMs, homeID: homeID, name: name)
        try Self.checkEnd(end, kind: kind, name: name)
        let command = try command.map { (command) throws(HomeError) in try command.checked(trigger: name) }
        let conditions = try checked(conditions, of: kind, homeID: homeID, name: name)
        try checkActionSets(actionSetIDs, homeID: homeID)
        let id = allocateID()
        triggers[id] = Trigger(
            id: id, homeID: homeID, name: name, isEnabled: enabled, actionSetIDs: actionSetIDs,
            kind: kind, condition: condition, holdMs: holdMs, executeOnce: executeOnce, end: end, command: command,
            conditions: conditions)
        homes[homeID]?.triggerIDs.append(id)
        return id
    }

    /// Renames a trigger; trigger names are unique in a home.
    package mutating func renameTrigger(_ id: ObjectID, to name: String) throws(HomeError) -> [LayoutChange] {
        try renameInHome(id, to: name, kind: .trigger, table: \.triggers, siblings: \.triggerIDs)
    }

    /// Enables or disables a trigger.
    ///
    /// - Returns: `.updated`, or nothing if it already was.
    package mutating func setTrigger(_ id: ObjectID, enabled: Bool) throws(HomeError) -> [LayoutChange] {
        let trigger = try requireTrigger(id)
        if trigger.isEnabled == enabled { return [] }
        triggers[id]?.isEnabled = enabled
        return [change(.updated, id)]
    }

    /// Replaces what a trigger fires on (a new time, a new threshold), checked as `addTrigger` does.
    package mutating func setTrigger(_ id: ObjectID, kind: TriggerKind) throws(HomeError) -> [LayoutChange] {
        let trigger = try requireTrigger(id)
        return try setTrigger(
            id, kind: kind, condition: trigger.condition, holdMs: trigger.holdMs, executeOnce: trigger.executeOnce,
            end: trigger.end, command: trigger.command, conditions: trigger.conditions)
    }

    /// Replaces what a trigger fires on, when it may fire, how long its event must
    /// hold and whether it fires once, checked as `addTrigger` does: all or nothing.
    ///
    /// - Returns: `.updated`, or nothing if all were so already.
    package mutating func setTrigger(
        _ id: ObjectID, kind: TriggerKind, condition: TimeCondition, holdMs: Int64, executeOnce: Bool = false,
        end: TriggerEnd = .none, command: TriggerCommand? = nil, conditions: [CharacteristicCondition] = []
    ) throws(HomeError) -> [LayoutChange] {
        let trigger = try requireTrigger(id)
        let kind = try checked(kind, homeID: trigger.homeID)
        try checkTiming(kind: kind, condition: condition, holdMs: holdMs, homeID: trigger.homeID, name: trigger.name)
        try Self.checkEnd(end, kind: kind, name: trigger.name)
        let command = try command.map { (command) throws(HomeError) in try command.checked(trigger: trigger.name) }
        let conditions = try checked(conditions, of: kind, homeID: trigger.homeID, name: trigger.name)
        if trigger.kind == kind && trigger.condition == condition && trigger.holdMs == holdMs
            && trigger.executeOnce == executeOnce && trigger.end == end && trigger.command == command
            && trigger.conditions == conditions
        {
            return []
        }
        triggers[id]?.conditions = conditions
        triggers[id]?.command = command
        triggers[id]?.end = end
        triggers[id]?.executeOnce = executeOnce
        triggers[id]?.kind = kind
        triggers[id]?.condition = condition
        triggers[id]?.holdMs = holdMs
        return [change(.updated, id)]
    }

    /// Sets or clears where a home is (for the sun's times).
    ///
    /// - Throws: `.invalidArgument` for a latitude or longitude out of range, or for
    ///   clearing the location of a home whose triggers use the sun (naming them).
    package mutating func setLocation(_ location: GeoLocation?, ofHome homeID: ObjectID) throws(HomeError)
        -> [LayoutChange]
    {
        let home = try requireHome(homeID)
        let location = try location.map { (location) throws(HomeError) in try location.checked() }
        if location == nil {
            let users = home.triggerIDs.compactMap { triggers[$0] }.filter(\.usesSun).map { quoted($0.name) }
            if !users.isEmpty {
                throw HomeError(
                    .invalidArgument,
                    "\(homeLabel(homeID)) keeps its location: its triggers \(users.joined(separator: ", ")) "
                        + "use the sun's times")
            }
        }
        if home.location == location { return [] }
        homes[homeID]?.location = location
        return [change(.updated, homeID)]
    }

    /// Removes a trigger; its action sets stay.
    package mutating func removeTrigger(_ id: ObjectID) throws(HomeError) -> [LayoutChange] {
        let trigger = try requireTrigger(id)
        let changes = [change(.removed, id)]
        triggers[id] = nil
        homes[trigger.homeID]?.triggerIDs.removeAll { $0 == id }
        return changes
    }

    /// Makes a trigger also run an action set of its home.
    ///
    /// - Throws: `.notFound` for an unknown trigger or action set; `.invalidArgument`
    ///   for a set of another home; `.alreadyExists` if the trigger runs it already.
    package mutating func addActionSet(_ actionSetID: ObjectID, toTrigger triggerID: ObjectID) throws(HomeError)
        -> [LayoutChange]
    {
        let trigger = try requireTrigger(triggerID)
        try checkActionSets([actionSetID], homeID: trigger.homeID)
        if trigger.actionSetIDs.contains(actionSetID) {
            throw HomeError(
                .alreadyExists,
                "\(describe(.trigger, triggerID)) already runs "
                    + describe(.actionSet, actionSetID))
        }
        triggers[triggerID]?.actionSetIDs.append(actionSetID)
        return [change(.updated, triggerID)]
    }

    /// Stops a trigger running an action set.
    ///
    /// - Throws: `.notFound` for an unknown trigger, or a set it does not run.
    package mutating func removeActionSet(_ actionSetID: ObjectID, fromTrigger triggerID: ObjectID) throws(HomeError)
        -> [LayoutChange]
    {
        let trigger = try requireTrigger(triggerID)
        guard trigger.actionSetIDs.contains(actionSetID) else {
            throw HomeError(.notFound, "\(describe(.trigger, triggerID)) does not run action set \(actionSetID)")
        }
        triggers[triggerID]?.actionSetIDs.removeAll { $0 == actionSetID }
        return [change(.updated, triggerID)]
    }

}

extension Trigger {
    /// Whether it needs the home's location: a sun trigger, or a window that starts or ends with the sun.
    package var usesSun: Bool {
        if case .sun = kind { return true }
        return condition.usesSun
    }
}
