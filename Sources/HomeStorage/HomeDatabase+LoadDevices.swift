internal import HomeModel

// The home's own tables, for GraphLoader (HomeDatabase+Load.swift): each read
// whole, with its children's positions for putting lists in order.
extension GraphLoader {
    func homes() throws(HomeError) -> (homes: [Home], order: [ObjectID]) {
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
        return (homes, homeOrder.sorted { $0.position < $1.position }.map(\.id))
    }

    func rooms() throws(HomeError) -> (rooms: [Room], ofHome: Children) {
        var roomsOfHome = Children()
        var rooms: [Room] = []
        try each("SELECT id, home_id, position, name FROM rooms") { row throws(HomeError) in
            rooms.append(Room(id: row.id(0), homeID: row.id(1), name: row.string(3)))
            roomsOfHome.add(row.id(0), to: row.id(1), at: row.int64(2))
        }
        return (rooms, roomsOfHome)
    }

    func zones() throws(HomeError) -> (zones: [Zone], ofHome: Children) {
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
        return (zones, zonesOfHome)
    }

    func accessories() throws(HomeError) -> (accessories: [Accessory], ofHome: Children, ofBridge: Children) {
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
        return (accessories, accessoriesOfHome, accessoriesOfBridge)
    }

    func services(_ types: inout TypeIdentifiers) throws(HomeError) -> (
        services: [AccessoryService], ofAccessory: Children
    ) {
        let serviceLinks: Links<ObjectID> = try links(
            """
            SELECT service_id, linked_service_id FROM service_links ORDER BY service_id, position
            """
        ) { row throws(HomeError) in row.id(1) }
        var servicesOfAccessory = Children()
        var services: [AccessoryService] = []
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
        return (services, servicesOfAccessory)
    }

    /// The characteristics with their last values, the value log folded in.
    func characteristics(_ types: inout TypeIdentifiers) throws(HomeError) -> (
        characteristics: [Characteristic], ofService: Children
    ) {
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
        return (characteristics, characteristicsOfService)
    }
}
