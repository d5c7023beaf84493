public import HomeModel

extension HomeDatabase {
    /// Makes the layout of `new` durable, given that `old` is what is stored: one
    /// transaction writes the rows that differ (`LayoutDiff`), so a small change to a
    /// large home writes a few rows. Values are not part of it, except that a new
    /// characteristic is stored with its initial value, and that `values` — the
    /// characteristics changed since the value log was last folded — are saved and
    /// the log emptied in the same transaction (so that a row written here is never
    /// older than a logged change replayed over it).
    ///
    /// When this returns, the change is on disk, against power loss too (the
    /// transaction commits with `synchronous=FULL`); if it throws, nothing was written.
    ///
    /// - Throws: `.internal` naming the file and SQLite's reason if a write fails
    ///   (`.resourceExhausted` for a full disk); `.failedPrecondition` if closed.
    public func saveLayout(from old: HomeGraph, to new: HomeGraph, values: [Characteristic] = [])
        throws(HomeError)
    {
        let diff = LayoutDiff(from: old, to: new)
        if diff.isEmpty && values.isEmpty { return }
        try withConnection { connection throws(HomeError) in
            try connection.execute("PRAGMA synchronous = FULL", doing: "asking for a synced commit")
            defer { try? connection.execute("PRAGMA synchronous = NORMAL", doing: "back to log-only commits") }
            try connection.transaction(doing: "saving the layout") { () throws(HomeError) in
                try LayoutWriter(connection: connection, diff: diff, graph: new).write()
                try ValueLogWriter(connection: connection).fold(into: values)
            }
        }
    }
}

/// Writes a `LayoutDiff`'s rows, taking their contents from the new graph.
///
/// Foreign keys are checked at commit, so the tables are written in any order.
private struct LayoutWriter {
    let connection: Connection
    let diff: LayoutDiff
    let graph: HomeGraph

    func write() throws(HomeError) {
        try writeHomes()
        try writeRooms()
        try writeZones()
        try writeAccessories()
        try writeServices()
        try writeCharacteristics()
        try writeServiceGroups()
        try writeActionSets()
        try writeTriggers()
        if diff.nextIDChanged {
            let update = try connection.statement("UPDATE meta SET value = ? WHERE key = 'next_id'")
            update.bind(1, graph.nextID)
            try update.run(doing: "saving the next id")
        }
    }

    // MARK: Tables

    private func writeHomes() throws(HomeError) {
        try insert(
            diff.homes,
            """
            INSERT INTO homes (id, position, name, is_primary, default_room_id, latitude, longitude)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """
        ) {
            (statement, id) throws(HomeError) in
            guard let home = graph.homes[id] else { return }
            statement.bind(1, id)
            statement.bind(2, try position(.homes, id))
            statement.bind(3, home.name)
            statement.bind(4, home.isPrimary)
            statement.bind(5, home.defaultRoomID)
            statement.bind(6, home.location?.latitude)
            statement.bind(7, home.location?.longitude)
        }
        try update(
            diff.homes,
            "UPDATE homes SET name = ?, is_primary = ?, default_room_id = ?, latitude = ?, longitude = ? WHERE id = ?"
        ) {
            statement, id in
            guard let home = graph.homes[id] else { return }
            statement.bind(1, home.name)
            statement.bind(2, home.isPrimary)
            statement.bind(3, home.defaultRoomID)
            statement.bind(4, home.location?.latitude)
            statement.bind(5, home.location?.longitude)
            statement.bind(6, id)
        }
        try finish(diff.homes, table: "homes", .homes)
    }

    private func writeRooms() throws(HomeError) {
        try insert(diff.rooms, "INSERT INTO rooms (id, home_id, position, name) VALUES (?, ?, ?, ?)") {
            (statement, id) throws(HomeError) in
            guard let room = graph.rooms[id] else { return }
            statement.bind(1, id)
            statement.bind(2, room.homeID)
            statement.bind(3, try position(.rooms, id))
            statement.bind(4, room.name)
        }
        try update(diff.rooms, "UPDATE rooms SET home_id = ?, name = ? WHERE id = ?") { statement, id in
            guard let room = graph.rooms[id] else { return }
            statement.bind(1, room.homeID)
            statement.bind(2, room.name)
            statement.bind(3, id)
        }
        try finish(diff.rooms, table: "rooms", .rooms)
    }

    private func writeZones() throws(HomeError) {
        try insert(diff.zones, "INSERT INTO zones (id, home_id, position, name) VALUES (?, ?, ?, ?)") {
            (statement, id) throws(HomeError) in
            guard let zone = graph.zones[id] else { return }
            statement.bind(1, id)
            statement.bind(2, zone.homeID)
            statement.bind(3, try position(.zones, id))
            statement.bind(4, zone.name)
        }
        try update(diff.zones, "UPDATE zones SET home_id = ?, name = ? WHERE id = ?") { statement, id in
            guard let zone = graph.zones[id] else { return }
            statement.bind(1, zone.homeID)
            statement.bind(2, zone.name)
            statement.bind(3, id)
        }
        try finish(diff.zones, table: "zones", .zones)
        try rewriteLinks(
            diff.zoneRooms, rows: diff.zones, table: "zone_rooms", owner: "zone_id",
            insert: "INSERT INTO zone_rooms (zone_id, position, room_id) VALUES (?, ?, ?)"
        ) {
            graph.zones[$0]?.roomIDs ?? []
        } bind: { statement, roomID in
            statement.bind(3, roomID)
        }
    }

    private func writeAccessories() throws(HomeError) {
        try insert(
            diff.accessories,
            """
            INSERT INTO accessories (id, home_id, position, room_id, name, category, manufacturer, model,
                                     serial_number, firmware_revision, is_reachable, bridge_id, bridge_position, provider,
                                     provider_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ) { (statement, id) throws(HomeError) in
            guard let accessory = graph.accessories[id] else { return }
            statement.bind(1, id)
            statement.bind(2, accessory.homeID)
            statement.bind(3, try position(.accessories, id))
            bindColumns(of: accessory, to: statement, from: 4)
            if accessory.bridgeID != nil {
                statement.bind(13, try position(.bridgedAccessories, id))
            } else {
                statement.bindNull(13)
            }
            statement.bind(14, accessory.provider)
            statement.bind(15, accessory.providerKey)
        }
        try update(
            diff.accessories,
            """
            UPDATE accessories
            SET room_id = ?, name = ?, category = ?, manufacturer = ?, model = ?, serial_number = ?,
                firmware_revision = ?, is_reachable = ?, bridge_id = ?,
                bridge_position = CASE WHEN ?9 IS NULL THEN NULL ELSE bridge_position END,
                provider = ?, home_id = ?, provider_key = ?
            WHERE id = ?
            """
        ) { statement, id in
            guard let accessory = graph.accessories[id] else { return }
            bindColumns(of: accessory, to: statement, from: 1)
            statement.bind(10, accessory.provider)
            statement.bind(11, accessory.homeID)
            statement.bind(12, accessory.providerKey)
            statement.bind(13, id)
        }
        try finish(diff.accessories, table: "accessories", .accessories)
        try updatePositions(
            .bridgedAccessories, inserted: diff.accessories.inserted,
            "UPDATE accessories SET bridge_position = ? WHERE id = ?")
    }

    /// Binds room, name, category, manufacturer, model, serial, firmware, reachable, bridge: nine columns.
    private func bindColumns(of accessory: Accessory, to statement: Statement, from first: Int32) {
        statement.bind(first, accessory.roomID)
        statement.bind(first + 1, accessory.name)
        statement.bind(first + 2, accessory.category.rawValue)
        statement.bind(first + 3, accessory.manufacturer)
        statement.bind(first + 4, accessory.model)
        statement.bind(first + 5, accessory.serialNumber)
        statement.bind(first + 6, accessory.firmwareRevision)
        statement.bind(first + 7, accessory.isReachable)
        statement.bind(first + 8, accessory.bridgeID)
    }

    private func writeServices() throws(HomeError) {
        try insert(
            diff.services,
            """
            INSERT INTO services (id, accessory_id, position, type_uuid, type_name, name, is_primary,
                                  is_user_interactive, is_hidden, provider_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ) { (statement, id) throws(HomeError) in
            guard let service = graph.services[id] else { return }
            statement.bind(1, id)
            statement.bind(2, service.accessoryID)
            statement.bind(3, try position(.services, id))
            bindColumns(of: service, to: statement, from: 4)
        }
        try update(
            diff.services,
            """
            UPDATE services
            SET type_uuid = ?, type_name = ?, name = ?, is_primary = ?, is_user_interactive = ?, is_hidden = ?,
                provider_key = ?, accessory_id = ?
            WHERE id = ?
            """
        ) { statement, id in
            guard let service = graph.services[id] else { return }
            bindColumns(of: service, to: statement, from: 1)
            statement.bind(8, service.accessoryID)
            statement.bind(9, id)
        }
        try finish(diff.services, table: "services", .services)
        try rewriteLinks(
            diff.serviceLinks, rows: diff.services, table: "service_links", owner: "service_id",
            insert: "INSERT INTO service_links (service_id, position, linked_service_id) VALUES (?, ?, ?)"
        ) {
            graph.services[$0]?.linkedServiceIDs ?? []
        } bind: { statement, linkedID in
            statement.bind(3, linkedID)
        }
    }

    /// Binds type uuid and name, name, primary, user-interactive, hidden: six columns.
    private func bindColumns(of service: AccessoryService, to statement: Statement, from first: Int32) {
        statement.bind(first, service.type.uuid)
        statement.bind(first + 1, service.type.name)
        statement.bind(first + 2, service.name)
        statement.bind(first + 3, service.isPrimary)
        statement.bind(first + 4, service.isUserInteractive)
        statement.bind(first + 5, service.isHidden)
        statement.bind(first + 6, service.providerKey)
    }

    private func writeCharacteristics() throws(HomeError) {
        try insert(
            diff.characteristics,
            """
            INSERT INTO characteristics (id, service_id, accessory_id, position, type_uuid, type_name, readable,
                                         writable, supports_event_notification, hidden, write_response, format, unit,
                                         min_value, max_value, min_step, valid_values, valid_bits, max_length,
                                         value_type, value, last_updated_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ) { (statement, id) throws(HomeError) in
            guard let characteristic = graph.characteristics[id] else { return }
            statement.bind(1, id)
            statement.bind(2, characteristic.serviceID)
            statement.bind(3, characteristic.accessoryID)
            statement.bind(4, try position(.characteristics, id))
            bindColumns(of: characteristic, to: statement, from: 5)
            statement.bind(20, 21, characteristic.value)
            statement.bind(22, characteristic.lastUpdatedMs)
        }
        try update(
            diff.characteristics,
            """
            UPDATE characteristics
            SET type_uuid = ?, type_name = ?, readable = ?, writable = ?, supports_event_notification = ?,
                hidden = ?, write_response = ?, format = ?, unit = ?, min_value = ?, max_value = ?, min_step = ?,
                valid_values = ?, valid_bits = ?, max_length = ?, service_id = ?, accessory_id = ?
            WHERE id = ?
            """
        ) { statement, id in
            guard let characteristic = graph.characteristics[id] else { return }
            bindColumns(of: characteristic, to: statement, from: 1)
            statement.bind(16, characteristic.serviceID)
            statement.bind(17, characteristic.accessoryID)
            statement.bind(18, id)
        }
        try finish(diff.characteristics, table: "characteristics", .characteristics)
    }

    /// Binds the type, properties and metadata: fifteen columns.
    private func bindColumns(of characteristic: Characteristic, to statement: Statement, from first: Int32) {
        let properties = characteristic.properties
        let metadata = characteristic.metadata
        statement.bind(first, characteristic.type.uuid)
        statement.bind(first + 1, characteristic.type.name)
        statement.bind(first + 2, properties.readable)
        statement.bind(first + 3, properties.writable)
        statement.bind(first + 4, properties.supportsEventNotification)
        statement.bind(first + 5, properties.hidden)
        statement.bind(first + 6, properties.writeResponse)
        statement.bind(first + 7, metadata.format.rawValue)
        statement.bind(first + 8, metadata.unit.rawValue)
        statement.bind(first + 9, metadata.minValue)
        statement.bind(first + 10, metadata.maxValue)
        statement.bind(first + 11, metadata.minStep)
        statement.bind(first + 12, ValidValues.encode(metadata.validValues))
        statement.bind(first + 13, metadata.validBits)
        statement.bind(first + 14, metadata.maxLength.map(Int64.init))
    }

    private func writeServiceGroups() throws(HomeError) {
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

    private func writeActionSets() throws(HomeError) {
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

    private func writeTriggers() throws(HomeError) {
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

    // MARK: Helpers

    /// The new position of an inserted child.
    private func position(_ column: LayoutDiff.PositionColumn, _ id: ObjectID) throws(HomeError) -> Int64 {
        guard let position = diff.position(column, of: id) else {
            throw HomeError(.internal, "cannot save the layout: object \(id) is new but no parent lists it")
        }
        return position
    }

    private func insert(
        _ rows: LayoutDiff.Rows, _ sql: String,
        bind: (Statement, ObjectID) throws(HomeError) -> Void
    ) throws(HomeError) {
        guard !rows.inserted.isEmpty else { return }
        let statement = try connection.statement(sql)
        for id in rows.inserted {
            try bind(statement, id)
            try statement.run(doing: "saving new object \(id)")
        }
    }

    private func update(_ rows: LayoutDiff.Rows, _ sql: String, bind: (Statement, ObjectID) -> Void) throws(HomeError) {
        guard !rows.updated.isEmpty else { return }
        let statement = try connection.statement(sql)
        for id in rows.updated {
            bind(statement, id)
            try statement.run(doing: "saving changed object \(id)")
        }
    }

    /// Deletes removed rows and moves the rows whose position changed.
    private func finish(_ rows: LayoutDiff.Rows, table: String, _ column: LayoutDiff.PositionColumn)
        throws(HomeError)
    {
        if !rows.removed.isEmpty {
            let delete = try connection.statement("DELETE FROM \(table) WHERE id = ?")
            for id in rows.removed {
                delete.bind(1, id)
                try delete.run(doing: "removing object \(id)")
            }
        }
        try updatePositions(column, inserted: rows.inserted, "UPDATE \(table) SET position = ? WHERE id = ?")
    }

    private func updatePositions(_ column: LayoutDiff.PositionColumn, inserted: [ObjectID], _ sql: String)
        throws(HomeError)
    {
        guard let positions = diff.positions[column], positions.count > 0 else { return }
        // Inserted rows were written with their position already.
        let inserted = Set(inserted)
        let statement = try connection.statement(sql)
        for (id, position) in positions where !inserted.contains(id) {
            statement.bind(1, position)
            statement.bind(2, id)
            try statement.run(doing: "moving object \(id)")
        }
    }

    /// Replaces the link rows of each owner in `owners` with its list in the new graph.
    private func rewriteLinks<Link>(
        _ owners: [ObjectID], rows: LayoutDiff.Rows, table: String, owner: String,
        insert sql: String, links: (ObjectID) -> [Link],
        bind: (Statement, Link) -> Void
    ) throws(HomeError) {
        guard !owners.isEmpty else { return }
        let inserted = Set(rows.inserted)
        let delete = try connection.statement("DELETE FROM \(table) WHERE \(owner) = ?")
        let insert = try connection.statement(sql)
        for id in owners {
            if !inserted.contains(id) {
                delete.bind(1, id)
                try delete.run(doing: "rewriting the \(table) of \(id)")
            }
            for (position, link) in links(id).enumerated() {
                insert.bind(1, id)
                insert.bind(2, position)
                bind(insert, link)
                try insert.run(doing: "saving the \(table) of \(id)")
            }
        }
    }
}

/// A characteristic's valid values as a JSON array of integers ("[0,1,3]"), so
/// SQLite's `json_each` can read them too.
enum ValidValues {
    static func encode(_ values: [Int64]) -> String {
        "[" + values.map(String.init).joined(separator: ",") + "]"
    }

    static func decode(_ text: String) -> [Int64]? {
        var body = Substring(text)
        guard body.first == "[", body.last == "]" else { return nil }
        body = body.dropFirst().dropLast()
        if body.allSatisfy(\.isWhitespace) { return [] }
        var values: [Int64] = []
        for part in body.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = Int64(part.trimmingSpaces) else { return nil }
            values.append(value)
        }
        return values
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var copy = self
        while copy.first?.isWhitespace == true { copy = copy.dropFirst() }
        while copy.last?.isWhitespace == true { copy = copy.dropLast() }
        return copy
    }
}
