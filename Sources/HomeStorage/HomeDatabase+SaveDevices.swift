internal import HomeModel

/// The rows of homes, rooms, zones, accessories, services and characteristics
/// that a `LayoutDiff` names, written from the new graph.
extension LayoutWriter {
    func writeHomes() throws(HomeError) {
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

    func writeRooms() throws(HomeError) {
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

    func writeZones() throws(HomeError) {
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

    func writeAccessories() throws(HomeError) {
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

    func writeServices() throws(HomeError) {
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

    func writeCharacteristics() throws(HomeError) {
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
}
