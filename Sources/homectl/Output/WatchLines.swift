internal import HomeModel
internal import HomeWire

// `homectl watch`'s lines, one JSON object per event, snapshot entry or marker
// (the schema is docs/homectl.md, "homectl watch output"), with the names of what
// they are about from the graph the watch last fetched.

/// Names for ids, from the graph the watch last fetched.
struct Names {
    let graph: HomeGraph

    func fields(accessoryID: ObjectID) -> [(String, JSON)] {
        let accessory = graph.accessories[accessoryID]
        let room = accessory.flatMap { graph.rooms[$0.roomID] }
        return [
            ("home_id", .uint(accessory?.homeID ?? 0)),
            ("room_id", .uint(room?.id ?? 0)),
            ("room", .string(room?.name ?? "")),
            ("accessory_id", .uint(accessoryID)),
            ("accessory", .string(accessory?.name ?? "")),
        ]
    }

    /// An enumerated value's person's name ("Open"), null for any other value.
    func valueName(_ value: CharacteristicValue, of characteristicID: ObjectID) -> JSON {
        guard var characteristic = graph.characteristics[characteristicID] else { return .null }
        characteristic.value = value
        return characteristic.valueName.map { .string($0) } ?? .null
    }

    func fields(characteristicID: ObjectID, serviceID: ObjectID) -> [(String, JSON)] {
        let service = graph.services[serviceID]
        let characteristic = graph.characteristics[characteristicID]
        return [
            ("service_id", .uint(serviceID)),
            ("service", .string(service.map { $0.name.isEmpty ? $0.type.name : $0.name } ?? "")),
            ("characteristic_id", .uint(characteristicID)),
            ("characteristic", .string(characteristic?.type.name ?? "")),
            ("type", .string(characteristic?.type.uuid ?? "")),
        ]
    }
}

func eventLine(_ event: HomeEvent, names: Names, journal: String, ownConnection: UInt64) -> JSON {
    var fields: [(String, JSON)] = [
        ("seq", .uint(event.seq)),
        ("journal", .string(journal)),
        ("kind", .string(event.kind.rawValue)),
        ("time", .string(isoTime(event.timeMs))),
    ]
    switch event.body {
    case .value(let change):
        fields += names.fields(accessoryID: change.accessoryID)
        fields += names.fields(characteristicID: change.characteristicID, serviceID: change.serviceID)
        fields.append(("value", change.value.json))
        fields.append(("value_name", names.valueName(change.value, of: change.characteristicID)))
        fields.append(("merged", .uint(UInt64(change.merged))))
    case .reachability(let accessoryID, let reachable):
        fields += names.fields(accessoryID: accessoryID)
        fields.append(("reachable", .bool(reachable)))
    case .layout(let change):
        fields += [
            ("home_id", .uint(change.homeID)),
            ("action", .string(change.action.rawValue)),
            ("object", .string(change.object.rawValue)),
            ("object_id", .uint(change.objectID)),
            ("name", .string(change.name)),
            ("parent_id", .uint(change.parentID)),
        ]
    case .primaryHome(let homeID):
        fields.append(("home_id", .uint(homeID)))
    case .actionSetExecuted(let id):
        fields.append(("action_set_id", .uint(id)))
        fields.append(("action_set", .string(names.graph.actionSets[id]?.name ?? "")))
    case .triggerFired(let id):
        fields.append(("trigger_id", .uint(id)))
        fields.append(("trigger", .string(names.graph.triggers[id]?.name ?? "")))
    case .audit(let note):
        fields.append(("action", .string(note.action)))
        fields.append(("detail", .string(note.detail)))
        if !note.values.isEmpty {
            let values = note.values.sorted { $0.key < $1.key }.map { id, value in
                JSON.object([("characteristic_id", .uint(id)), ("value", value.json)])
            }
            fields.append(("values", .array(values)))
        }
    }
    fields.append(
        (
            "origin",
            .object([
                ("kind", .string(event.origin.kind.rawValue)),
                ("connection_id", .uint(event.origin.connectionID)),
                ("name", .string(event.origin.name)),
                ("uid", event.origin.uid.map { .uint(UInt64($0)) } ?? .null),
                ("local", .bool(event.origin.kind == .client && event.origin.connectionID == ownConnection)),
            ])
        ))
    return .object(fields)
}

func snapshotLine(_ characteristic: Characteristic, names: Names, journal: String, seq: UInt64) -> JSON {
    var fields: [(String, JSON)] = [
        ("seq", .uint(seq)),
        ("journal", .string(journal)),
        ("kind", .string("snapshot")),
        ("time", .string(isoTime(characteristic.lastUpdatedMs))),
    ]
    fields += names.fields(accessoryID: characteristic.accessoryID)
    fields += names.fields(characteristicID: characteristic.id, serviceID: characteristic.serviceID)
    fields.append(("value", characteristic.value?.json ?? .null))
    fields.append(("value_name", characteristic.valueName.map { .string($0) } ?? .null))
    return .object(fields)
}

func markerLine(_ marker: StreamMarker, journal: String) -> JSON {
    var fields: [(String, JSON)] = [
        ("seq", .uint(marker.seq)),
        ("journal", .string(journal)),
        ("kind", .string(marker.kind.rawValue)),
    ]
    if marker.kind == .gap {
        fields.append(("gap_from", .uint(marker.gapFrom)))
        fields.append(("gap_to", .uint(marker.gapTo)))
    }
    if !marker.reason.isEmpty { fields.append(("reason", .string(marker.reason))) }
    return .object(fields)
}
