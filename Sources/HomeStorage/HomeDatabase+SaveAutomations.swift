internal import HomeModel

/// The rows of service groups, action sets and triggers that a `LayoutDiff`
/// names, written from the new graph.
extension LayoutWriter {
    func writeServiceGroups() throws(HomeError) {
        try insert(diff.serviceGroups, "INSERT INTO service_groups (id, home_id, position, name) VALUES (?, ?, ?, ?)") {
            (statement, id) throws(HomeError) in
            guard let group = graph.serviceGroups[id] else { return }
            statement.bind(1, id)
            statement.bind(2, group.homeID)
            statement.bind(3, try position(.serviceGroups, id))
            statement.bind(4, group.name)
        }
        try update(diff.serviceGroups, "UPDATE service_groups SET home_id = ?, name = ? WHERE id = ?") {
            statement, id in
            guard let group = graph.serviceGroups[id] else { return }
            statement.bind(1, group.homeID)
            statement.bind(2, group.name)
            statement.bind(3, id)
        }
        try finish(diff.serviceGroups, table: "service_groups", .serviceGroups)
        try rewriteLinks(
            diff.groupMembers, rows: diff.serviceGroups, table: "service_group_members",
            owner: "group_id",
            insert: "INSERT INTO service_group_members (group_id, position, service_id) VALUES (?, ?, ?)"
        ) {
            graph.serviceGroups[$0]?.serviceIDs ?? []
        } bind: { statement, serviceID in
            statement.bind(3, serviceID)
        }
    }

    func writeActionSets() throws(HomeError) {
        try insert(
            diff.actionSets, "INSERT INTO action_sets (id, home_id, position, name, kind) VALUES (?, ?, ?, ?, ?)"
        ) {
            (statement, id) throws(HomeError) in
            guard let actionSet = graph.actionSets[id] else { return }
            statement.bind(1, id)
            statement.bind(2, actionSet.homeID)
            statement.bind(3, try position(.actionSets, id))
            statement.bind(4, actionSet.name)
            statement.bind(5, actionSet.kind.rawValue)
        }
        try update(diff.actionSets, "UPDATE action_sets SET home_id = ?, name = ?, kind = ? WHERE id = ?") {
            statement, id in
            guard let actionSet = graph.actionSets[id] else { return }
            statement.bind(1, actionSet.homeID)
            statement.bind(2, actionSet.name)
            statement.bind(3, actionSet.kind.rawValue)
            statement.bind(4, id)
        }
        try finish(diff.actionSets, table: "action_sets", .actionSets)
        try rewriteLinks(
            diff.actions, rows: diff.actionSets, table: "actions", owner: "action_set_id",
            insert: """
                INSERT INTO actions (action_set_id, position, characteristic_id, value_type, value, only_if_type, only_if)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ) {
            graph.actionSets[$0]?.actions ?? []
        } bind: { statement, action in
            statement.bind(3, action.characteristicID)
            statement.bind(4, 5, action.value)
            statement.bind(6, 7, action.onlyIf)
        }
    }

    func writeTriggers() throws(HomeError) {
        try insert(
            diff.triggers,
            """
            INSERT INTO triggers (id, home_id, position, name, is_enabled, kind, fire_date_ms, time_zone, recurrence,
                                  characteristic_id, value_type, value, range_min, range_max,
                                  sun, sun_offset_ms, hold_ms, days, window_from, window_to, condition_time_zone,
                                  execute_once, end_after_ms, end_when_event_ends, command_program, command_arguments,
                                  command_timeout_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ) { (statement, id) throws(HomeError) in
            guard let trigger = graph.triggers[id] else { return }
            statement.bind(1, id)
            statement.bind(2, trigger.homeID)
            statement.bind(3, try position(.triggers, id))
            bindColumns(of: trigger, to: statement, from: 4)
            bindTiming(of: trigger, to: statement, from: 15)
        }
        try update(
            diff.triggers,
            """
            UPDATE triggers
            SET name = ?, is_enabled = ?, kind = ?, fire_date_ms = ?, time_zone = ?, recurrence = ?,
                characteristic_id = ?, value_type = ?, value = ?, range_min = ?, range_max = ?, home_id = ?,
                sun = ?, sun_offset_ms = ?, hold_ms = ?, days = ?, window_from = ?, window_to = ?,
                condition_time_zone = ?, execute_once = ?, end_after_ms = ?, end_when_event_ends = ?,
                command_program = ?, command_arguments = ?, command_timeout_ms = ?
            WHERE id = ?
            """
        ) { statement, id in
            guard let trigger = graph.triggers[id] else { return }
            bindColumns(of: trigger, to: statement, from: 1)
            statement.bind(12, trigger.homeID)
            bindTiming(of: trigger, to: statement, from: 13)
            statement.bind(26, id)
        }
        try finish(diff.triggers, table: "triggers", .triggers)
        try rewriteLinks(
            diff.triggerActionSets, rows: diff.triggers, table: "trigger_action_sets",
            owner: "trigger_id",
            insert: "INSERT INTO trigger_action_sets (trigger_id, position, action_set_id) VALUES (?, ?, ?)"
        ) {
            graph.triggers[$0]?.actionSetIDs ?? []
        } bind: { statement, actionSetID in
            statement.bind(3, actionSetID)
        }
        try rewriteLinks(
            diff.triggerConditions, rows: diff.triggers, table: "trigger_conditions",
            owner: "trigger_id",
            insert: """
                INSERT INTO trigger_conditions (trigger_id, position, characteristic_id, comparison, value_type, value)
                VALUES (?, ?, ?, ?, ?, ?)
                """
        ) {
            graph.triggers[$0]?.characteristicConditions ?? []
        } bind: { statement, condition in
            statement.bind(3, condition.characteristicID)
            statement.bind(4, condition.comparison.rawValue)
            statement.bind(5, 6, condition.value)
        }
    }

    /// Binds name, enabled, kind, timer (fire date, time zone, recurrence) and event
    /// (characteristic, value type and value, range): eleven columns.
    private func bindColumns(of trigger: Trigger, to statement: Statement, from first: Int32) {
        statement.bind(first, trigger.name)
        statement.bind(first + 1, trigger.isEnabled)
        switch trigger.kind {
        case .timer(let fireDateMs, let timeZone, let recurrence):
            statement.bind(first + 2, "timer")
            statement.bind(first + 3, fireDateMs)
            statement.bind(first + 4, timeZone)
            statement.bind(first + 5, recurrence.rawValue)
            statement.bindNull(first + 6)
            statement.bind(first + 7, first + 8, nil)
            statement.bindNull(first + 9)
            statement.bindNull(first + 10)
        case .event(let characteristicID, let value, let rangeMin, let rangeMax, _):
            statement.bind(first + 2, "event")
            statement.bindNull(first + 3)
            statement.bindNull(first + 4)
            statement.bindNull(first + 5)
            statement.bind(first + 6, characteristicID)
            statement.bind(first + 7, first + 8, value)
            statement.bind(first + 9, rangeMin)
            statement.bind(first + 10, rangeMax)
        case .sun(_, _, let timeZone):
            // A timer row with `sun` set (see `Schema.triggerTiming`).
            statement.bind(first + 2, "timer")
            statement.bind(first + 3, Int64(0))
            statement.bind(first + 4, timeZone)
            statement.bind(first + 5, Recurrence.daily.rawValue)
            statement.bindNull(first + 6)
            statement.bind(first + 7, first + 8, nil)
            statement.bindNull(first + 9)
            statement.bindNull(first + 10)
        }
    }

    /// Binds the sun, hold, time condition, execute-once, end and command: thirteen columns.
    private func bindTiming(of trigger: Trigger, to statement: Statement, from first: Int32) {
        if case .sun(let event, let offsetMs, _) = trigger.kind {
            statement.bind(first, event.rawValue)
            statement.bind(first + 1, offsetMs)
        } else {
            statement.bindNull(first)
            statement.bindNull(first + 1)
        }
        statement.bind(first + 2, trigger.holdMs)
        statement.bind(first + 3, Int64(trigger.condition.days.rawValue))
        for (offset, time) in [trigger.condition.windowFrom, trigger.condition.windowTo].enumerated() {
            if let time {
                statement.bind(first + 4 + Int32(offset), time.storedText)
            } else {
                statement.bindNull(first + 4 + Int32(offset))
            }
        }
        if trigger.condition.isAlways {
            statement.bindNull(first + 6)
        } else {
            statement.bind(first + 6, trigger.condition.timeZone)
        }
        statement.bind(first + 7, trigger.executeOnce)
        statement.bind(first + 8, trigger.end.afterMs)
        statement.bind(first + 9, trigger.end.whenEventEnds)
        if let command = trigger.command {
            statement.bind(first + 10, command.program)
            statement.bind(first + 11, command.arguments.map { "\($0.utf8.count):\($0)" }.joined())
            statement.bind(first + 12, command.timeoutMs)
        } else {
            statement.bindNull(first + 10)
            statement.bindNull(first + 11)
            statement.bindNull(first + 12)
        }
    }
}
