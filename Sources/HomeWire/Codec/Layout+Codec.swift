internal import CHomeProto
public import HomeModel
public import NIOCore

extension LayoutRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__LayoutRequest.self)
        home__v1__layout_request__init(message)
        switch operation {
        case .addHome(let name):
            let op = arena.allocate(Home__V1__AddHome.self)
            home__v1__add_home__init(op)
            op.pointee.name = arena.cString(name)
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ADD_HOME
            message.pointee.add_home = op
        case .rename(let id, let name):
            let op = arena.allocate(Home__V1__RenameObject.self)
            home__v1__rename_object__init(op)
            op.pointee.id = id
            op.pointee.name = arena.cString(name)
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_RENAME
            message.pointee.rename = op
        case .remove(let id):
            let op = arena.allocate(Home__V1__RemoveObject.self)
            home__v1__remove_object__init(op)
            op.pointee.id = id
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_REMOVE
            message.pointee.remove = op
        case .setPrimaryHome(let homeID):
            let op = arena.allocate(Home__V1__SetPrimaryHome.self)
            home__v1__set_primary_home__init(op)
            op.pointee.home_id = homeID
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_SET_PRIMARY_HOME
            message.pointee.set_primary_home = op
        case .addRoom(let name, let homeID):
            let op = arena.allocate(Home__V1__AddRoom.self)
            home__v1__add_room__init(op)
            op.pointee.home_id = homeID
            op.pointee.name = arena.cString(name)
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ADD_ROOM
            message.pointee.add_room = op
        case .addZone(let name, let homeID):
            let op = arena.allocate(Home__V1__AddZone.self)
            home__v1__add_zone__init(op)
            op.pointee.home_id = homeID
            op.pointee.name = arena.cString(name)
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ADD_ZONE
            message.pointee.add_zone = op
        case .addRoomToZone(let roomID, let zoneID):
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ADD_ROOM_TO_ZONE
            message.pointee.add_room_to_zone = arena.zoneRoom(zoneID: zoneID, roomID: roomID)
        case .removeRoomFromZone(let roomID, let zoneID):
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_REMOVE_ROOM_FROM_ZONE
            message.pointee.remove_room_from_zone = arena.zoneRoom(zoneID: zoneID, roomID: roomID)
        case .assignAccessory(let accessoryID, let roomID):
            let op = arena.allocate(Home__V1__AssignAccessory.self)
            home__v1__assign_accessory__init(op)
            op.pointee.accessory_id = accessoryID
            op.pointee.room_id = roomID
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ASSIGN_ACCESSORY
            message.pointee.assign_accessory = op
        case .addServiceGroup(let name, let homeID):
            let op = arena.allocate(Home__V1__AddServiceGroup.self)
            home__v1__add_service_group__init(op)
            op.pointee.home_id = homeID
            op.pointee.name = arena.cString(name)
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ADD_SERVICE_GROUP
            message.pointee.add_service_group = op
        case .addServiceToGroup(let serviceID, let groupID):
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ADD_SERVICE_TO_GROUP
            message.pointee.add_service_to_group = arena.groupService(groupID: groupID, serviceID: serviceID)
        case .removeServiceFromGroup(let serviceID, let groupID):
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_REMOVE_SERVICE_FROM_GROUP
            message.pointee.remove_service_from_group = arena.groupService(groupID: groupID, serviceID: serviceID)
        case .addActionSet(let name, let kind, let homeID):
            let op = arena.allocate(Home__V1__AddActionSet.self)
            home__v1__add_action_set__init(op)
            op.pointee.home_id = homeID
            op.pointee.name = arena.cString(name)
            op.pointee.kind = Home__V1__ActionSetKind(rawValue: kind.wireNumber())
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ADD_ACTION_SET
            message.pointee.add_action_set = op
        case .addAction(let action, let actionSetID):
            let op = arena.allocate(Home__V1__AddAction.self)
            home__v1__add_action__init(op)
            op.pointee.action_set_id = actionSetID
            let wire = arena.allocate(Home__V1__CharacteristicWriteAction.self)
            home__v1__characteristic_write_action__init(wire)
            wire.pointee.characteristic_id = action.characteristicID
            wire.pointee.value = arena.value(action.value)
            op.pointee.action = wire
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ADD_ACTION
            message.pointee.add_action = op
        case .removeAction(let characteristicID, let actionSetID):
            let op = arena.allocate(Home__V1__RemoveAction.self)
            home__v1__remove_action__init(op)
            op.pointee.action_set_id = actionSetID
            op.pointee.characteristic_id = characteristicID
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_REMOVE_ACTION
            message.pointee.remove_action = op
        case .addTrigger(let name, let homeID, let kind, let actionSetIDs, let enabled):
            let op = arena.allocate(Home__V1__AddTrigger.self)
            home__v1__add_trigger__init(op)
            op.pointee.home_id = homeID
            op.pointee.name = arena.cString(name)
            op.pointee.n_action_set_ids = actionSetIDs.count
            op.pointee.action_set_ids = arena.ids(actionSetIDs)
            op.pointee.disabled = enabled ? 0 : 1
            // The stored trigger's encoder builds the timer or event message; reuse it.
            let trigger = arena.trigger(Trigger(id: 0, homeID: homeID, name: name, kind: kind))
            if trigger.pointee.kind_case == HOME__V1__TRIGGER__KIND_TIMER {
                op.pointee.kind_case = HOME__V1__ADD_TRIGGER__KIND_TIMER
                op.pointee.timer = trigger.pointee.timer
            } else {
                op.pointee.kind_case = HOME__V1__ADD_TRIGGER__KIND_EVENT
                op.pointee.event = trigger.pointee.event
            }
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ADD_TRIGGER
            message.pointee.add_trigger = op
        case .setTriggerEnabled(let triggerID, let enabled):
            let op = arena.allocate(Home__V1__SetTriggerEnabled.self)
            home__v1__set_trigger_enabled__init(op)
            op.pointee.trigger_id = triggerID
            op.pointee.enabled = enabled ? 1 : 0
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_SET_TRIGGER_ENABLED
            message.pointee.set_trigger_enabled = op
        case .addActionSetToTrigger(let actionSetID, let triggerID):
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_ADD_ACTION_SET_TO_TRIGGER
            message.pointee.add_action_set_to_trigger = arena.triggerActionSet(
                triggerID: triggerID, actionSetID: actionSetID)
        case .removeActionSetFromTrigger(let actionSetID, let triggerID):
            message.pointee.op_case = HOME__V1__LAYOUT_REQUEST__OP_REMOVE_ACTION_SET_FROM_TRIGGER
            message.pointee.remove_action_set_from_trigger = arena.triggerActionSet(
                triggerID: triggerID,
                actionSetID: actionSetID)
        }
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.LayoutRequest", unpack: home__v1__layout_request__unpack,
            free: home__v1__layout_request__free_unpacked
        ) { message throws(HomeError) in
            LayoutRequest(try LayoutDecoding.operation(message.pointee))
        }
    }
}

extension LayoutResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__LayoutResponse.self)
        home__v1__layout_response__init(message)
        let events = self.events
        message.pointee.n_events = events.count
        var sharedOrigin: (Origin, UnsafeMutablePointer<Home__V1__Origin>)?
        message.pointee.events = arena.array(UnsafeMutablePointer<Home__V1__Event>?.self, count: events.count) {
            $0.event(events[$1], sharedOrigin: &sharedOrigin)
        }
        message.pointee.seq = seq
        message.pointee.created_id = createdID
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.LayoutResponse", unpack: home__v1__layout_response__unpack,
            free: home__v1__layout_response__free_unpacked
        ) { message throws(HomeError) in
            LayoutResponse(
                events: try swiftArray(message.pointee.events, message.pointee.n_events) { pointer throws(HomeError) in
                    try ModelDecoding.event(pointer!.pointee)
                },
                seq: message.pointee.seq, createdID: message.pointee.created_id)
        }
    }
}

extension CArena {
    fileprivate mutating func zoneRoom(zoneID: ObjectID, roomID: ObjectID) -> UnsafeMutablePointer<Home__V1__ZoneRoom> {
        let op = allocate(Home__V1__ZoneRoom.self)
        home__v1__zone_room__init(op)
        op.pointee.zone_id = zoneID
        op.pointee.room_id = roomID
        return op
    }

    fileprivate mutating func groupService(groupID: ObjectID, serviceID: ObjectID)
        -> UnsafeMutablePointer<Home__V1__GroupService>
    {
        let op = allocate(Home__V1__GroupService.self)
        home__v1__group_service__init(op)
        op.pointee.group_id = groupID
        op.pointee.service_id = serviceID
        return op
    }

    fileprivate mutating func triggerActionSet(triggerID: ObjectID, actionSetID: ObjectID)
        -> UnsafeMutablePointer<Home__V1__TriggerActionSet>
    {
        let op = allocate(Home__V1__TriggerActionSet.self)
        home__v1__trigger_action_set__init(op)
        op.pointee.trigger_id = triggerID
        op.pointee.action_set_id = actionSetID
        return op
    }
}

/// Decoding of a LayoutRequest. Stricter than decoding the daemon's own answers:
/// a request that is incomplete or carries an enum number this schema does not
/// define is refused with INVALID_ARGUMENT rather than read with a default.
private enum LayoutDecoding {
    static func operation(_ message: Home__V1__LayoutRequest) throws(HomeError) -> LayoutOperation {
        switch message.op_case {
        case HOME__V1__LAYOUT_REQUEST__OP_ADD_HOME:
            let op = try present(message.add_home, "add_home")
            return .addHome(name: swiftString(op.name))
        case HOME__V1__LAYOUT_REQUEST__OP_RENAME:
            let op = try present(message.rename, "rename")
            return .rename(id: op.id, name: swiftString(op.name))
        case HOME__V1__LAYOUT_REQUEST__OP_REMOVE:
            return .remove(id: try present(message.remove, "remove").id)
        case HOME__V1__LAYOUT_REQUEST__OP_SET_PRIMARY_HOME:
            return .setPrimaryHome(homeID: try present(message.set_primary_home, "set_primary_home").home_id)
        case HOME__V1__LAYOUT_REQUEST__OP_ADD_ROOM:
            let op = try present(message.add_room, "add_room")
            return .addRoom(name: swiftString(op.name), homeID: op.home_id)
        case HOME__V1__LAYOUT_REQUEST__OP_ADD_ZONE:
            let op = try present(message.add_zone, "add_zone")
            return .addZone(name: swiftString(op.name), homeID: op.home_id)
        case HOME__V1__LAYOUT_REQUEST__OP_ADD_ROOM_TO_ZONE:
            let op = try present(message.add_room_to_zone, "add_room_to_zone")
            return .addRoomToZone(roomID: op.room_id, zoneID: op.zone_id)
        case HOME__V1__LAYOUT_REQUEST__OP_REMOVE_ROOM_FROM_ZONE:
            let op = try present(message.remove_room_from_zone, "remove_room_from_zone")
            return .removeRoomFromZone(roomID: op.room_id, zoneID: op.zone_id)
        case HOME__V1__LAYOUT_REQUEST__OP_ASSIGN_ACCESSORY:
            let op = try present(message.assign_accessory, "assign_accessory")
            return .assignAccessory(accessoryID: op.accessory_id, roomID: op.room_id)
        case HOME__V1__LAYOUT_REQUEST__OP_ADD_SERVICE_GROUP:
            let op = try present(message.add_service_group, "add_service_group")
            return .addServiceGroup(name: swiftString(op.name), homeID: op.home_id)
        case HOME__V1__LAYOUT_REQUEST__OP_ADD_SERVICE_TO_GROUP:
            let op = try present(message.add_service_to_group, "add_service_to_group")
            return .addServiceToGroup(serviceID: op.service_id, groupID: op.group_id)
        case HOME__V1__LAYOUT_REQUEST__OP_REMOVE_SERVICE_FROM_GROUP:
            let op = try present(message.remove_service_from_group, "remove_service_from_group")
            return .removeServiceFromGroup(serviceID: op.service_id, groupID: op.group_id)
        case HOME__V1__LAYOUT_REQUEST__OP_ADD_ACTION_SET:
            let op = try present(message.add_action_set, "add_action_set")
            let kind = try ActionSetKind.fromWire(op.kind.rawValue, field: "add_action_set.kind")
            return .addActionSet(name: swiftString(op.name), kind: kind, homeID: op.home_id)
        case HOME__V1__LAYOUT_REQUEST__OP_ADD_ACTION:
            let op = try present(message.add_action, "add_action")
            let action = try present(op.action, "add_action.action")
            guard let value = ModelDecoding.value(action.value) else {
                throw HomeError(
                    .invalidArgument, "add_action for characteristic \(action.characteristic_id) carries no value")
            }
            return .addAction(
                CharacteristicWriteAction(characteristicID: action.characteristic_id, value: value),
                actionSetID: op.action_set_id)
        case HOME__V1__LAYOUT_REQUEST__OP_REMOVE_ACTION:
            let op = try present(message.remove_action, "remove_action")
            return .removeAction(characteristicID: op.characteristic_id, actionSetID: op.action_set_id)
        case HOME__V1__LAYOUT_REQUEST__OP_ADD_TRIGGER:
            let op = try present(message.add_trigger, "add_trigger")
            return .addTrigger(
                name: swiftString(op.name), homeID: op.home_id, kind: try triggerKind(op),
                actionSetIDs: ModelDecoding.ids(op.action_set_ids, op.n_action_set_ids),
                enabled: op.disabled == 0)
        case HOME__V1__LAYOUT_REQUEST__OP_SET_TRIGGER_ENABLED:
            let op = try present(message.set_trigger_enabled, "set_trigger_enabled")
            return .setTriggerEnabled(triggerID: op.trigger_id, enabled: op.enabled != 0)
        case HOME__V1__LAYOUT_REQUEST__OP_ADD_ACTION_SET_TO_TRIGGER:
            let op = try present(message.add_action_set_to_trigger, "add_action_set_to_trigger")
            return .addActionSetToTrigger(actionSetID: op.action_set_id, triggerID: op.trigger_id)
        case HOME__V1__LAYOUT_REQUEST__OP_REMOVE_ACTION_SET_FROM_TRIGGER:
            let op = try present(message.remove_action_set_from_trigger, "remove_action_set_from_trigger")
            return .removeActionSetFromTrigger(actionSetID: op.action_set_id, triggerID: op.trigger_id)
        default:
            throw HomeError(.invalidArgument, "the layout request names no operation (field op is empty or unknown)")
        }
    }

    private static func present<M>(_ pointer: UnsafeMutablePointer<M>?, _ field: String) throws(HomeError) -> M {
        guard let pointer else { throw HomeError(.invalidArgument, "the layout request's \(field) is missing") }
        return pointer.pointee
    }

    /// A Swift enum case from its wire number, refusing numbers the schema does not define.
    private static func triggerKind(_ op: Home__V1__AddTrigger) throws(HomeError) -> TriggerKind {
        switch op.kind_case {
        case HOME__V1__ADD_TRIGGER__KIND_TIMER:
            let timer = try present(op.timer, "add_trigger.timer")
            let recurrence = try Recurrence.fromWire(timer.recurrence.rawValue, field: "add_trigger.timer.recurrence")
            return .timer(
                fireDateMs: timer.fire_date_ms, timeZone: swiftString(timer.time_zone), recurrence: recurrence)
        case HOME__V1__ADD_TRIGGER__KIND_EVENT:
            let event = try present(op.event, "add_trigger.event")
            var value: CharacteristicValue?
            if event.value_present_case == HOME__V1__EVENT_TRIGGER__VALUE_PRESENT_VALUE {
                guard let decoded = ModelDecoding.value(event.value) else {
                    throw HomeError(.invalidArgument, "add_trigger.event.value is present but empty")
                }
                value = decoded
            }
            var conditions: [CharacteristicCondition] = []
            for index in 0..<event.n_conditions {
                let condition = try present(event.conditions?[index] ?? nil, "add_trigger.event.conditions[\(index)]")
                let comparison = try Comparison.fromWire(
                    condition.comparison.rawValue,
                    field: "add_trigger.event.conditions[\(index)].comparison")
                guard let conditionValue = ModelDecoding.value(condition.value) else {
                    throw HomeError(
                        .invalidArgument,
                        "the condition on characteristic \(condition.characteristic_id) "
                            + "carries no value")
                }
                conditions.append(
                    CharacteristicCondition(
                        characteristicID: condition.characteristic_id,
                        comparison: comparison, value: conditionValue))
            }
            return .event(
                characteristicID: event.characteristic_id, value: value,
                rangeMin: event.min_present_case == HOME__V1__EVENT_TRIGGER__MIN_PRESENT_RANGE_MIN
                    ? event.range_min : nil,
                rangeMax: event.max_present_case == HOME__V1__EVENT_TRIGGER__MAX_PRESENT_RANGE_MAX
                    ? event.range_max : nil,
                conditions: conditions)
        default:
            throw HomeError(.invalidArgument, "add_trigger needs a timer or an event")
        }
    }
}
