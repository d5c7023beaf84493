internal import HomeModel
internal import HomeWire

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homectl watch` for a person at a terminal: one short line per event, with the
/// local time, the place by name, the value with its unit and who made the change.
/// (Piped, or with --json, watch writes the JSON lines scripts read instead.)
enum WatchText {
    static func event(_ event: HomeEvent, names: Names, ownConnection: UInt64) -> String {
        let time = clock(event.timeMs)
        let by = origin(event.origin, ownConnection: ownConnection)
        switch event.body {
        case .value(let change):
            return "\(time)  \(names.place(of: change.characteristicID)) = "
                + names.display(change.value, of: change.characteristicID) + by
        case .reachability(let accessoryID, let reachable):
            return "\(time)  \(names.place(ofAccessory: accessoryID)) is \(reachable ? "reachable" : "unreachable")"
                + by
        case .layout(let change):
            let name = change.name.isEmpty ? "" : " \(quote(change.name))"
            return "\(time)  \(change.object.rawValue)\(name) (id \(change.objectID)) \(change.action.rawValue)" + by
        case .primaryHome(let homeID):
            return "\(time)  the primary home is now \(quote(names.graph.homes[homeID]?.name ?? String(homeID)))" + by
        case .actionSetExecuted(let id):
            return "\(time)  scene \(quote(names.graph.actionSets[id]?.name ?? String(id))) ran" + by
        case .triggerFired(let id):
            return "\(time)  trigger \(quote(names.graph.triggers[id]?.name ?? String(id))) fired" + by
        case .audit(let note):
            return "\(time)  \(note.detail)" + by
        }
    }

    static func snapshot(_ characteristic: Characteristic, names: Names) -> String {
        "now           \(names.place(of: characteristic.id)) = "
            + names.display(characteristic.value, of: characteristic.id)
    }

    static func marker(_ marker: StreamMarker) -> String {
        switch marker.kind {
        case .snapshotEnd: return "-- the state above is at seq \(marker.seq); changes follow --"
        case .resync: return "-- resync (\(marker.reason)): a fresh snapshot follows --"
        case .gap: return "-- gap: events \(marker.gapFrom)…\(marker.gapTo) were dropped (this watch fell behind) --"
        default: return "-- \(marker.kind.rawValue) at seq \(marker.seq) --"
        }
    }

    /// "21:07:02.370", local time.
    static func clock(_ ms: Int64) -> String {
        var seconds = time_t(ms / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = Int(ms % 1000)
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)"
    }

    /// "  (by homectl, connection 7, uid 1000)", "  (by you)", "  (by automation Cold Bedroom)".
    static func origin(_ origin: Origin, ownConnection: UInt64) -> String {
        let uid = origin.uid.map { ", uid \($0)" } ?? ""
        switch origin.kind {
        case .client where origin.connectionID == ownConnection: return "  (by you)"
        case .client:
            return "  (by \(origin.name.isEmpty ? "a client" : origin.name), connection \(origin.connectionID)\(uid))"
        case .provider: return "  (by provider \(origin.name)\(uid))"
        case .automation: return "  (by automation\(origin.name.isEmpty ? "" : " " + origin.name))"
        case .simulator: return "  (by the simulator)"
        case .daemon, .unknown: return ""
        }
    }
}

extension Names {
    /// "Living Room/Lamp/Brightness": where a characteristic is, as a person says it
    /// ("Hallway/Remote/Up/ProgrammableSwitchEvent" when the accessory has several).
    func place(of characteristicID: ObjectID) -> String {
        guard let characteristic = graph.characteristics[characteristicID] else {
            return "characteristic \(characteristicID)"
        }
        // An accessory with several of this characteristic (a remote's buttons) names
        // the service too: the line says which, in the path `get` takes.
        let accessory = graph.accessories[characteristic.accessoryID]
        let sameType = (accessory?.serviceIDs ?? []).compactMap { graph.services[$0] }.flatMap(\.characteristicIDs)
            .filter { graph.characteristics[$0]?.type == characteristic.type }
        guard sameType.count > 1, let service = graph.services[characteristic.serviceID] else {
            return place(ofAccessory: characteristic.accessoryID) + "/" + characteristic.type.name
        }
        return place(ofAccessory: characteristic.accessoryID) + "/" + graph.segment(for: service) + "/"
            + characteristic.type.name
    }

    /// "Living Room/Lamp".
    func place(ofAccessory accessoryID: ObjectID) -> String {
        guard let accessory = graph.accessories[accessoryID] else { return "accessory \(accessoryID)" }
        let room = graph.rooms[accessory.roomID]?.name
        return (room.map { $0 + "/" } ?? "") + accessory.name
    }

    /// "42%", "21.5 °C": a value with its characteristic's unit.
    func display(_ value: CharacteristicValue?, of characteristicID: ObjectID) -> String {
        guard var characteristic = graph.characteristics[characteristicID] else { return value?.description ?? "—" }
        characteristic.value = value
        return characteristic.displayValue
    }
}
