internal import HomeClient
internal import HomeModel
internal import HomeWire

/// What the page is given of the home: every home's rooms with their accessories in
/// homed's order, each accessory's services and characteristics with what the page
/// needs to show a value as `homectl accessories` does (unit, names of enumerated
/// values) and to offer a control for it (writable, range, step), and the `seq` and
/// journal the state was taken at, from which the page's event stream resumes.
enum HomeJSON {
    static func state(
        _ home: GetHomeResponse, names: ValueNameTable, session: Session, providers: [ProviderInfo]
    ) -> JSONValue {
        let graph = home.graph
        var homes: [JSONValue] = []
        for homeID in graph.homeOrder {
            guard let entry = graph.homes[homeID] else { continue }
            // The default room first, then the others as added (homectl's order).
            var roomIDs = [entry.defaultRoomID]
            roomIDs += entry.roomIDs.filter { $0 != entry.defaultRoomID }
            var accessoriesByRoom: [ObjectID: [ObjectID]] = [:]
            for accessoryID in entry.accessoryIDs {
                guard let accessory = graph.accessories[accessoryID] else { continue }
                accessoriesByRoom[accessory.roomID, default: []].append(accessoryID)
            }
            let rooms: [JSONValue] = roomIDs.compactMap { roomID in
                guard let room = graph.rooms[roomID] else { return nil }
                return .object([
                    ("id", .uint(roomID)), ("name", .string(room.name)),
                    ("accessories", .array((accessoriesByRoom[roomID] ?? []).map { .uint($0) })),
                ])
            }
            let scenes: [JSONValue] = entry.actionSetIDs.compactMap { id in
                guard let scene = graph.actionSets[id] else { return nil }
                return .object([
                    ("id", .uint(id)), ("name", .string(scene.name)), ("kind", .string(scene.kind.rawValue)),
                ])
            }
            homes.append(
                .object([
                    ("id", .uint(homeID)), ("name", .string(entry.name)), ("primary", .bool(entry.isPrimary)),
                    ("rooms", .array(rooms)), ("scenes", .array(scenes)),
                ]))
        }
        let accessories: [(String, JSONValue)] = graph.accessories.keys.sorted().compactMap { id in
            guard let accessory = graph.accessories[id] else { return nil }
            let services: [JSONValue] = accessory.serviceIDs.compactMap { serviceID in
                guard let service = graph.services[serviceID] else { return nil }
                return .object([
                    ("id", .uint(serviceID)), ("name", .string(service.name)), ("type", .string(service.type.name)),
                    ("primary", .bool(service.isPrimary)), ("hidden", .bool(service.isHidden)),
                    ("characteristics", .array(service.characteristicIDs.map { .uint($0) })),
                ])
            }
            return (
                String(id),
                .object([
                    ("id", .uint(id)), ("name", .string(accessory.name)), ("room", .uint(accessory.roomID)),
                    ("category", .string(String(describing: accessory.category))),
                    ("reachable", .bool(accessory.isReachable)), ("provider", .string(accessory.provider)),
                    ("manufacturer", .string(accessory.manufacturer)), ("model", .string(accessory.model)),
                    ("services", .array(services)),
                ])
            )
        }
        let characteristics: [(String, JSONValue)] = graph.characteristics.keys.sorted().compactMap { id in
            guard let characteristic = graph.characteristics[id] else { return nil }
            return (String(id), Self.characteristic(characteristic, names: names))
        }
        let providerList: [JSONValue] = providers.map { provider in
            .object([
                ("id", .string(provider.providerID)), ("connected", .bool(provider.connected)),
                ("client", .string(provider.clientName)), ("accessories", .uint(UInt64(provider.accessoryIDs.count))),
                ("lastSeenMs", .int(provider.lastSeenMs)), ("requests", .uint(provider.requests)),
                ("timeouts", .uint(provider.timeouts)), ("p50Us", .uint(provider.latencyP50Us)),
                ("p99Us", .uint(provider.latencyP99Us)),
            ])
        }
        return .object([
            ("journal", .string(home.journalID)), ("seq", .uint(home.seq)),
            ("user", .string(session.user)), ("role", .string(session.role.name)),
            ("csrf", .string(session.csrfToken)), ("login", .bool(session.loggedIn)),
            ("homes", .array(homes)), ("accessories", .object(accessories)),
            ("characteristics", .object(characteristics)), ("providers", .array(providerList)),
        ])
    }

    static func characteristic(_ characteristic: Characteristic, names: ValueNameTable) -> JSONValue {
        let metadata = characteristic.metadata
        var members: [(String, JSONValue)] = [
            ("id", .uint(characteristic.id)), ("accessory", .uint(characteristic.accessoryID)),
            ("service", .uint(characteristic.serviceID)), ("type", .string(characteristic.type.name)),
            ("format", .string(metadata.format.rawValue)), ("unit", .string(metadata.unit.rawValue)),
            ("readable", .bool(characteristic.properties.readable)),
            ("writable", .bool(characteristic.properties.writable)),
            ("events", .bool(characteristic.properties.supportsEventNotification)),
            ("hidden", .bool(characteristic.properties.hidden)),
            ("value", JSONValue(characteristic.value)), ("updatedMs", .int(characteristic.lastUpdatedMs)),
        ]
        if let min = metadata.minValue { members.append(("min", .double(min))) }
        if let max = metadata.maxValue { members.append(("max", .double(max))) }
        if let step = metadata.minStep { members.append(("step", .double(step))) }
        let valueNames = names.names(of: characteristic)
        if !valueNames.isEmpty {
            members.append(
                ("names", .object(valueNames.sorted { $0.key < $1.key }.map { (String($0.key), .string($0.value)) })))
        }
        return .object(members)
    }

    /// One event as the page's stream carries it (the SSE `data:`); nil for kinds the
    /// page does not show.
    static func event(_ event: HomeEvent) -> (name: String, data: JSONValue)? {
        let origin: JSONValue = .object([
            ("kind", .string(event.origin.kind.rawValue)), ("name", .string(event.origin.name)),
        ])
        switch event.body {
        case .value(let change):
            return (
                "value",
                .object([
                    ("seq", .uint(event.seq)), ("id", .uint(change.characteristicID)),
                    ("accessory", .uint(change.accessoryID)), ("value", JSONValue(change.value)),
                    ("timeMs", .int(event.timeMs)), ("merged", .uint(UInt64(change.merged))), ("origin", origin),
                ])
            )
        case .reachability(let accessoryID, let reachable):
            return (
                "reachability",
                .object([
                    ("seq", .uint(event.seq)), ("accessory", .uint(accessoryID)), ("reachable", .bool(reachable)),
                ])
            )
        case .layout(let change):
            return (
                "layout",
                .object([
                    ("seq", .uint(event.seq)), ("action", .string(change.action.rawValue)),
                    ("object", .string(change.object.rawValue)), ("name", .string(change.name)),
                ])
            )
        case .actionSetExecuted(let id):
            return ("scene", .object([("seq", .uint(event.seq)), ("id", .uint(id)), ("origin", origin)]))
        case .primaryHome, .triggerFired, .audit:
            return ("other", .object([("seq", .uint(event.seq)), ("kind", .string(event.kind.rawValue))]))
        }
    }
}
