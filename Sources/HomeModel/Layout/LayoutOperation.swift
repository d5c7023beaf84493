/// One change to the layout: what a `LayoutRequest` carries in its `op`.
///
/// Each case maps to one `HomeGraph` operation; the daemon applies it atomically
/// (all or nothing) and answers with the events it published.
public enum LayoutOperation: Hashable, Sendable {
    case addHome(name: String)
    /// Renames whatever `id` names: a home, room, zone, accessory, service, service
    /// group, action set or trigger.
    case rename(id: ObjectID, name: String)
    /// Removes whatever `id` names: a home, room, zone, accessory, service group,
    /// action set or trigger.
    case remove(id: ObjectID)
    case setPrimaryHome(homeID: ObjectID)
    case addRoom(name: String, homeID: ObjectID)
    case addZone(name: String, homeID: ObjectID)
    case addRoomToZone(roomID: ObjectID, zoneID: ObjectID)
    case removeRoomFromZone(roomID: ObjectID, zoneID: ObjectID)
    case assignAccessory(accessoryID: ObjectID, roomID: ObjectID)
    case addServiceGroup(name: String, homeID: ObjectID)
    case addServiceToGroup(serviceID: ObjectID, groupID: ObjectID)
    case removeServiceFromGroup(serviceID: ObjectID, groupID: ObjectID)
    case addActionSet(name: String, kind: ActionSetKind, homeID: ObjectID)
    /// Sets what an action set writes to a characteristic (replacing an earlier value).
    case addAction(CharacteristicWriteAction, actionSetID: ObjectID)
    case removeAction(characteristicID: ObjectID, actionSetID: ObjectID)
    case addTrigger(
        name: String, homeID: ObjectID, kind: TriggerKind, actionSetIDs: [ObjectID], enabled: Bool,
        condition: TimeCondition = .always, holdMs: Int64 = 0, executeOnce: Bool = false, end: TriggerEnd = .none,
        command: TriggerCommand? = nil, conditions: [CharacteristicCondition] = [])
    /// Replaces what a trigger fires on, its time condition, its hold, whether it
    /// fires once and its end, all at once.
    case setTrigger(
        triggerID: ObjectID, kind: TriggerKind, condition: TimeCondition, holdMs: Int64, executeOnce: Bool = false,
        end: TriggerEnd = .none, command: TriggerCommand? = nil, conditions: [CharacteristicCondition] = [])
    /// Sets (or, with nil, clears) where a home is, for the sun's times.
    case setHomeLocation(homeID: ObjectID, location: GeoLocation?)
    case setTriggerEnabled(triggerID: ObjectID, enabled: Bool)
    case addActionSetToTrigger(actionSetID: ObjectID, triggerID: ObjectID)
    case removeActionSetFromTrigger(actionSetID: ObjectID, triggerID: ObjectID)

    /// The command an operation gives a trigger, if any: the daemon checks the
    /// program exists and is executable before applying it.
    package var command: TriggerCommand? {
        switch self {
        case .addTrigger(_, _, _, _, _, _, _, _, _, let command, _), .setTrigger(_, _, _, _, _, _, let command, _):
            return command
        default:
            return nil
        }
    }

    /// The operation's name in the schema (`add_room`), for messages and logs.
    package var name: String {
        switch self {
        case .addHome: return "add_home"
        case .rename: return "rename"
        case .remove: return "remove"
        case .setPrimaryHome: return "set_primary_home"
        case .addRoom: return "add_room"
        case .addZone: return "add_zone"
        case .addRoomToZone: return "add_room_to_zone"
        case .removeRoomFromZone: return "remove_room_from_zone"
        case .assignAccessory: return "assign_accessory"
        case .addServiceGroup: return "add_service_group"
        case .addServiceToGroup: return "add_service_to_group"
        case .removeServiceFromGroup: return "remove_service_from_group"
        case .addActionSet: return "add_action_set"
        case .addAction: return "add_action"
        case .removeAction: return "remove_action"
        case .addTrigger: return "add_trigger"
        case .setTriggerEnabled: return "set_trigger_enabled"
        case .addActionSetToTrigger: return "add_action_set_to_trigger"
        case .removeActionSetFromTrigger: return "remove_action_set_from_trigger"
        case .setTrigger: return "set_trigger"
        case .setHomeLocation: return "set_home_location"
        }
    }
}

/// What a layout operation did, once it is durable and published.
package struct LayoutOutcome: Hashable, Sendable {
    /// Its layout events (and a primary-home event when the primary home changed),
    /// numbered; empty when nothing changed.
    package var events: [HomeEvent]
    /// The daemon's sequence number once the change took effect.
    package var seq: UInt64
    /// For an `add…` operation, the new object's id; 0 otherwise.
    package var createdID: ObjectID

    package init(events: [HomeEvent], seq: UInt64, createdID: ObjectID = 0) {
        self.events = events
        self.seq = seq
        self.createdID = createdID
    }
}
