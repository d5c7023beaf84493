internal import HomeModel

// The automation tables (and service groups), for GraphLoader
// (HomeDatabase+Load.swift): each read whole, with its children's positions.
extension GraphLoader {
    func serviceGroups() throws(HomeError) -> (groups: [ServiceGroup], ofHome: Children) {
        let groupMembers: Links<ObjectID> = try links(
            """
            SELECT group_id, service_id FROM service_group_members ORDER BY group_id, position
            """
        ) { row throws(HomeError) in row.id(1) }
        var groupsOfHome = Children()
        var serviceGroups: [ServiceGroup] = []
        try each("SELECT id, home_id, position, name FROM service_groups") { row throws(HomeError) in
            let id = row.id(0)
            serviceGroups.append(
                ServiceGroup(
                    id: id, homeID: row.id(1), name: row.string(3),
                    serviceIDs: groupMembers[id] ?? []))
            groupsOfHome.add(id, to: row.id(1), at: row.int64(2))
        }
        return (serviceGroups, groupsOfHome)
    }

    func actionSets() throws(HomeError) -> (actionSets: [ActionSet], ofHome: Children) {
        let actions: Links<CharacteristicWriteAction> = try links(
            """
            SELECT action_set_id, characteristic_id, value_type, value, only_if_type, only_if FROM actions
            ORDER BY action_set_id, position
            """
        ) { row throws(HomeError) in
            let owner = "an action of action set \(row.id(0))"
            guard let value = try row.value(2, 3, owner: owner) else {
                throw HomeError(.dataLoss, "\(owner) has no value")
            }
            return CharacteristicWriteAction(
                characteristicID: row.id(1), value: value, onlyIf: try row.value(4, 5, owner: owner))
        }
        var actionSetsOfHome = Children()
        var actionSets: [ActionSet] = []
        try each("SELECT id, home_id, position, name, kind FROM action_sets") { row throws(HomeError) in
            let id = row.id(0)
            guard let kind = ActionSetKind(rawValue: row.string(4)) else {
                throw HomeError(.dataLoss, "action set \(id) has unknown kind \(row.string(4))")
            }
            actionSets.append(
                ActionSet(
                    id: id, homeID: row.id(1), name: row.string(3), kind: kind,
                    actions: actions[id] ?? []))
            actionSetsOfHome.add(id, to: row.id(1), at: row.int64(2))
        }
        return (actionSets, actionSetsOfHome)
    }

    func triggers(skipped: (String) -> Void) throws(HomeError) -> (triggers: [Trigger], ofHome: Children) {
        let triggerActionSets: Links<ObjectID> = try links(
            """
            SELECT trigger_id, action_set_id FROM trigger_action_sets ORDER BY trigger_id, position
            """
        ) { row throws(HomeError) in row.id(1) }
        let conditions: Links<CharacteristicCondition> = try links(
            """
            SELECT trigger_id, characteristic_id, comparison, value_type, value
            FROM trigger_conditions ORDER BY trigger_id, position
            """
        ) { row throws(HomeError) in
            let owner = "a condition of trigger \(row.id(0))"
            guard let comparison = Comparison(rawValue: row.string(2)) else {
                throw HomeError(.dataLoss, "\(owner) has unknown comparison \(row.string(2))")
            }
            guard let value = try row.value(3, 4, owner: owner) else {
                throw HomeError(.dataLoss, "\(owner) has no value")
            }
            return CharacteristicCondition(characteristicID: row.id(1), comparison: comparison, value: value)
        }
        var triggersOfHome = Children()
        var triggers: [Trigger] = []
        try each(
            """
            SELECT id, home_id, position, name, is_enabled, kind, fire_date_ms, time_zone, recurrence,
                   characteristic_id, value_type, value, range_min, range_max,
                   sun, sun_offset_ms, hold_ms, days, window_from, window_to, condition_time_zone, execute_once,
                   end_after_ms, end_when_event_ends, command_program, command_arguments, command_timeout_ms
            FROM triggers
            """
        ) { row throws(HomeError) in
            let id = row.id(0)
            let kind: TriggerKind
            if !row.isNull(14) {
                guard let event = SunEvent(rawValue: row.string(14)) else {
                    throw HomeError(.dataLoss, "trigger \(id) has unknown sun event \(row.string(14))")
                }
                kind = .sun(event, offsetMs: row.int64(15), timeZone: row.string(7))
            } else if row.text(5, equals: "timer") {
                guard let recurrence = Recurrence(rawValue: row.string(8)) else {
                    throw HomeError(.dataLoss, "trigger \(id) has unknown recurrence \(row.string(8))")
                }
                // Skipped rather than refused: a trigger is something a person can
                // set again, and nothing else in the home depends on it.
                guard TriggerKind.fireDateRange.contains(row.int64(6)) else {
                    skipped(
                        "timer trigger \(id) (\(row.string(3))) has fire_date_ms \(row.int64(6)), outside "
                            + "\(TriggerKind.fireDateRange); it is left out of the home until it is set again")
                    return
                }
                kind = .timer(fireDateMs: row.int64(6), timeZone: row.string(7), recurrence: recurrence)
            } else {
                guard let characteristicID = row.optionalID(9) else {
                    throw HomeError(.dataLoss, "event trigger \(id) watches no characteristic")
                }
                kind = .event(
                    characteristicID: characteristicID, value: try row.value(10, 11, owner: "trigger \(id)"),
                    rangeMin: row.optionalDouble(12), rangeMax: row.optionalDouble(13),
                    conditions: conditions[id] ?? [])
            }
            triggers.append(
                Trigger(
                    id: id, homeID: row.id(1), name: row.string(3), isEnabled: row.bool(4),
                    actionSetIDs: triggerActionSets[id] ?? [], kind: kind,
                    condition: try HomeDatabase.condition(row, of: id), holdMs: row.int64(16),
                    executeOnce: row.bool(21), end: TriggerEnd(afterMs: row.int64(22), whenEventEnds: row.bool(23)),
                    command: try HomeDatabase.command(row, of: id),
                    conditions: kind.isEvent ? [] : conditions[id] ?? []))
            triggersOfHome.add(id, to: row.id(1), at: row.int64(2))
        }
        return (triggers, triggersOfHome)
    }
}
