public import HomeModel

extension HomeDatabase {
    /// Reads the whole home graph: every object with its id, the lists in their
    /// order, last known values, and the next id. Values still in the value log
    /// (the last run stopped without folding them) are folded into the tables.
    ///
    /// - Throws: `.dataLoss` naming the file and what is wrong when the tables do not
    ///   make a consistent graph (checked by `HomeGraph(homes:…)`) or hold something
    ///   this build cannot read; `.failedPrecondition` if closed.
    ///
    /// - Parameter skipped: told of each row that cannot be part of a valid home and
    ///   is left out, so that no saved row can stop the daemon from starting (a
    ///   timer trigger whose date is out of range, written by an older build). The
    ///   row stays in the file, untouched.
    public func load(skipped: (String) -> Void = { _ in }) throws(HomeError) -> HomeGraph {
        try withConnection { connection throws(HomeError) -> HomeGraph in
            do throws(HomeError) {
                return try GraphLoader(connection: connection).load(skipped: skipped)
            } catch  where error.code == .dataLoss {
                throw HomeError(.dataLoss, "database \(path) holds a damaged home: \(error.message)")
            }
        }
    }
}

/// Reads the tables and assembles a `HomeGraph`.
private struct GraphLoader {
    let connection: Connection

    /// Children of each parent with their positions, for putting lists in order.
    private struct Children {
        private var entries: [ObjectID: [(position: Int64, id: ObjectID)]] = [:]

        mutating func add(_ id: ObjectID, to parent: ObjectID, at position: Int64) {
            entries[parent, default: []].append((position, id))
        }

        func list(of parent: ObjectID) -> [ObjectID] {
            guard let children = entries[parent] else { return [] }
            return children.sorted { $0.position < $1.position }.map(\.id)
        }
    }

    /// Link rows of each owner, already in order (their primary key is owner, position).
    private typealias Links<T> = [ObjectID: [T]]

    func load(skipped: (String) -> Void) throws(HomeError) -> HomeGraph {
        let nextID = try readNextID()

        var homes: [Home] = []
        var homeOrder: [(position: Int64, id: ObjectID)] = []
        try each("SELECT id, position, name, is_primary, default_room_id, latitude, longitude FROM homes") {
            row throws(HomeError) in
            let id = row.id(0)
            let location = row.optionalDouble(5).flatMap { latitude in
                row.optionalDouble(6).map { GeoLocation(latitude: latitude, longitude: $0) }
            }
            homes.append(
                Home(
                    id: id, name: row.string(2), isPrimary: row.bool(3), defaultRoomID: row.id(4),
                    location: location))
            homeOrder.append((row.int64(1), id))
        }

        var roomsOfHome = Children()
        var rooms: [Room] = []
        try each("SELECT id, home_id, position, name FROM rooms") { row throws(HomeError) in
            rooms.append(Room(id: row.id(0), homeID: row.id(1), name: row.string(3)))
            roomsOfHome.add(row.id(0), to: row.id(1), at: row.int64(2))
        }

        let zoneRooms: Links<ObjectID> = try links("SELECT zone_id, room_id FROM zone_rooms ORDER BY zone_id, position")
        {
            row throws(HomeError) in row.id(1)
        }
        var zonesOfHome = Children()
        var zones: [Zone] = []
        try each("SELECT id, home_id, position, name FROM zones") { row throws(HomeError) in
            let id = row.id(0)
            zones.append(Zone(id: id, homeID: row.id(1), name: row.string(3), roomIDs: zoneRooms[id] ?? []))
            zonesOfHome.add(id, to: row.id(1), at: row.int64(2))
        }

        var accessoriesOfHome = Children()
        var accessoriesOfBridge = Children()
        var accessories: [Accessory] = []
        try each(
            """
            SELECT id, home_id, position, room_id, name, category, manufacturer, model, serial_number,
                   firmware_revision, is_reachable, bridge_id, bridge_position, provider, provider_key
            FROM accessories
            """
        ) { row throws(HomeError) in
            let id = row.id(0)
            guard let category = AccessoryCategory(rawValue: Int(row.int64(5))) else {
                throw HomeError(.dataLoss, "accessory \(id) has unknown category \(row.int64(5))")
            }
            let bridgeID = row.optionalID(11)
            accessories.append(
                Accessory(
                    id: id, homeID: row.id(1), roomID: row.id(3), name: row.string(4), category: category,
                    manufacturer: row.string(6), model: row.string(7), serialNumber: row.string(8),
                    firmwareRevision: row.string(9), isReachable: row.bool(10), bridgeID: bridgeID,
                    provider: row.string(13), providerKey: row.string(14)))
            accessoriesOfHome.add(id, to: row.id(1), at: row.int64(2))
            if let bridgeID { accessoriesOfBridge.add(id, to: bridgeID, at: row.optionalInt64(12) ?? 0) }
        }

        let serviceLinks: Links<ObjectID> = try links(
            """
            SELECT service_id, linked_service_id FROM service_links ORDER BY service_id, position
            """
        ) { row throws(HomeError) in row.id(1) }
        var servicesOfAccessory = Children()
        var services: [AccessoryService] = []
        var types = TypeIdentifiers()
        try each(
            """
            SELECT id, accessory_id, position, type_uuid, type_name, name, is_primary, is_user_interactive, is_hidden,
                   provider_key
            FROM services
            """
        ) { row throws(HomeError) in
            let id = row.id(0)
            services.append(
                AccessoryService(
                    id: id, accessoryID: row.id(1), type: types.type(row.string(3), row.string(4)), name: row.string(5),
                    isPrimary: row.bool(6), isUserInteractive: row.bool(7), isHidden: row.bool(8),
                    linkedServiceIDs: serviceLinks[id] ?? [], providerKey: row.string(9)))
            servicesOfAccessory.add(id, to: row.id(1), at: row.int64(2))
        }

        var characteristicsOfService = Children()
        var characteristics: [Characteristic] = []
        try each(
            """
            SELECT id, service_id, accessory_id, position, type_uuid, type_name, readable, writable,
                   supports_event_notification, hidden, write_response, format, unit, min_value, max_value, min_step,
                   valid_values, valid_bits, max_length, value_type, value, last_updated_ms
            FROM characteristics
            """
        ) { row throws(HomeError) in
            let id = row.id(0)
            guard let format = CharacteristicFormat(rawValue: row.string(11)) else {
                throw HomeError(.dataLoss, "characteristic \(id) has unknown format \(row.string(11))")
            }
            guard let unit = CharacteristicUnit(rawValue: row.string(12)) else {
                throw HomeError(.dataLoss, "characteristic \(id) has unknown unit \(row.string(12))")
            }
            let validValues: [Int64]
            if row.text(16, equals: "[]") {
                validValues = []
            } else if let values = ValidValues.decode(row.string(16)) {
                validValues = values
            } else {
                throw HomeError(.dataLoss, "characteristic \(id) has unreadable valid values \(row.string(16))")
            }
            let properties = CharacteristicProperties(
                readable: row.bool(6), writable: row.bool(7), supportsEventNotification: row.bool(8),
                hidden: row.bool(9), writeResponse: row.bool(10))
            let metadata = CharacteristicMetadata(
                format: format, unit: unit, minValue: row.optionalDouble(13), maxValue: row.optionalDouble(14),
                minStep: row.optionalDouble(15), validValues: validValues, validBits: UInt64(bitPattern: row.int64(17)),
                maxLength: row.optionalInt64(18).map { Int($0) })
            characteristics.append(
                Characteristic(
                    id: id, serviceID: row.id(1), accessoryID: row.id(2),
                    type: types.type(row.string(4), row.string(5)),
                    properties: properties, metadata: metadata,
                    value: try row.value(19, 20, owner: "characteristic \(id)"), lastUpdatedMs: row.int64(21)))
            characteristicsOfService.add(id, to: row.id(1), at: row.int64(3))
        }
        // Values acknowledged since the log was last folded into the rows above
        // (the daemon stopped without folding it). They are folded now: the
        // daemon that loads this graph knows nothing of the log's rows, and its
        // next fold would empty the log without saving them.
        let replayed = try ValueLogReplay(connection: connection).apply(to: &characteristics)
        if !replayed.isEmpty {
            try connection.transaction(doing: "folding the value log left by the last run") { () throws(HomeError) in
                try ValueLogWriter(connection: connection).fold(into: replayed.sorted().map { characteristics[$0] })
            }
        }

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

        // The lists, in order.
        for index in homes.indices {
            let id = homes[index].id
            homes[index].roomIDs = roomsOfHome.list(of: id)
            homes[index].zoneIDs = zonesOfHome.list(of: id)
            homes[index].accessoryIDs = accessoriesOfHome.list(of: id)
            homes[index].serviceGroupIDs = groupsOfHome.list(of: id)
            homes[index].actionSetIDs = actionSetsOfHome.list(of: id)
            homes[index].triggerIDs = triggersOfHome.list(of: id)
        }
        for index in accessories.indices {
            let id = accessories[index].id
            accessories[index].serviceIDs = servicesOfAccessory.list(of: id)
            accessories[index].bridgedAccessoryIDs = accessoriesOfBridge.list(of: id)
        }
        for index in services.indices {
            services[index].characteristicIDs = characteristicsOfService.list(of: services[index].id)
        }

        return try HomeGraph(
            homes: homes, rooms: rooms, zones: zones, accessories: accessories, services: services,
            characteristics: characteristics, serviceGroups: serviceGroups, actionSets: actionSets, triggers: triggers,
            homeOrder: homeOrder.sorted { $0.position < $1.position }.map(\.id), nextID: nextID)
    }

    private func readNextID() throws(HomeError) -> ObjectID {
        let statement = try connection.prepare("SELECT value FROM meta WHERE key = 'next_id'")
        guard try statement.step(doing: "reading the next id"), !statement.isNull(0) else {
            throw HomeError(.dataLoss, "the next id is missing")
        }
        return statement.id(0)
    }

    /// Runs a query, calling `body` with the statement positioned on each row.
    private func each(_ sql: String, _ body: (Statement) throws(HomeError) -> Void) throws(HomeError) {
        let statement = try connection.prepare(sql)
        while try statement.step(doing: "reading the layout") {
            try body(statement)
        }
    }

    /// Reads a link table whose first column is the owner, in order.
    private func links<T>(_ sql: String, _ link: (Statement) throws(HomeError) -> T) throws(HomeError) -> Links<T> {
        var links: Links<T> = [:]
        try each(sql) { row throws(HomeError) in
            links[row.id(0), default: []].append(try link(row))
        }
        return links
    }
}

/// Shares one `TypeIdentifier` (and its strings' storage) among all objects of a
/// type: 100 000 characteristics hold a few dozen distinct types.
private struct TypeIdentifiers {
    private var known: [TypeIdentifier: TypeIdentifier] = [:]

    mutating func type(_ uuid: String, _ name: String) -> TypeIdentifier {
        let type = TypeIdentifier(uuid: uuid, name: name)
        if let shared = known[type] { return shared }
        known[type] = type
        return type
    }
}
