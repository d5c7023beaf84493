public import HomeModel
public import NIOCore

extension LayoutRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Proto.LayoutRequest(op: Proto.LayoutRequest.Op(operation)).serialize(into: &buffer)
    }

    /// Stricter than decoding the daemon's own answers: a request that is
    /// incomplete or carries an enum number this schema does not define is
    /// refused with INVALID_ARGUMENT rather than read with a default.
    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.LayoutRequest(serialized: bytes)
        guard let op = wire.op else {
            throw HomeError(.invalidArgument, "the layout request names no operation (field op is empty or unknown)")
        }
        self.init(try LayoutOperation(op))
    }
}

extension Proto.LayoutRequest.Op {
    init(_ operation: LayoutOperation) {
        switch operation {
        case .addHome(let name):
            self = .addHome(Proto.AddHome(name: name))
        case .rename(let id, let name):
            self = .rename(Proto.RenameObject(id: id, name: name))
        case .remove(let id):
            self = .remove(Proto.RemoveObject(id: id))
        case .setPrimaryHome(let homeID):
            self = .setPrimaryHome(Proto.SetPrimaryHome(homeID: homeID))
        case .addRoom(let name, let homeID):
            self = .addRoom(Proto.AddRoom(homeID: homeID, name: name))
        case .addZone(let name, let homeID):
            self = .addZone(Proto.AddZone(homeID: homeID, name: name))
        case .addRoomToZone(let roomID, let zoneID):
            self = .addRoomToZone(Proto.ZoneRoom(zoneID: zoneID, roomID: roomID))
        case .removeRoomFromZone(let roomID, let zoneID):
            self = .removeRoomFromZone(Proto.ZoneRoom(zoneID: zoneID, roomID: roomID))
        case .assignAccessory(let accessoryID, let roomID):
            self = .assignAccessory(Proto.AssignAccessory(accessoryID: accessoryID, roomID: roomID))
        case .addServiceGroup(let name, let homeID):
            self = .addServiceGroup(Proto.AddServiceGroup(homeID: homeID, name: name))
        case .addServiceToGroup(let serviceID, let groupID):
            self = .addServiceToGroup(Proto.GroupService(groupID: groupID, serviceID: serviceID))
        case .removeServiceFromGroup(let serviceID, let groupID):
            self = .removeServiceFromGroup(Proto.GroupService(groupID: groupID, serviceID: serviceID))
        case .addActionSet(let name, let kind, let homeID):
            self = .addActionSet(Proto.AddActionSet(homeID: homeID, name: name, kind: kind.wireNumber))
        case .addAction(let action, let actionSetID):
            self = .addAction(
                Proto.AddAction(actionSetID: actionSetID, action: Proto.CharacteristicWriteAction(action)))
        case .removeAction(let characteristicID, let actionSetID):
            self = .removeAction(Proto.RemoveAction(actionSetID: actionSetID, characteristicID: characteristicID))
        case .addTrigger(
            let name, let homeID, let kind, let actionSetIDs, let enabled, let condition, let holdMs, let once,
            let end, let command, let conditions):
            let kind: Proto.AddTrigger.Kind =
                switch Proto.Trigger.Kind(kind) {
                case .timer(let timer): .timer(timer)
                case .event(let event): .event(event)
                case .sun(let sun): .sun(sun)
                }
            self = .addTrigger(
                Proto.AddTrigger(
                    homeID: homeID, name: name, actionSetIDs: actionSetIDs, disabled: !enabled, kind: kind,
                    condition: Proto.TimeCondition(condition), holdMs: holdMs, executeOnce: once,
                    endAfterMs: end.afterMs, endWhenEventEnds: end.whenEventEnds,
                    command: command,
                    conditions: conditions.map(Proto.CharacteristicCondition.init)))
        case .setTrigger(
            let triggerID, let kind, let condition, let holdMs, let once, let end, let command, let conditions):
            let kind: Proto.SetTrigger.Kind =
                switch Proto.Trigger.Kind(kind) {
                case .timer(let timer): .timer(timer)
                case .event(let event): .event(event)
                case .sun(let sun): .sun(sun)
                }
            self = .setTrigger(
                Proto.SetTrigger(
                    triggerID: triggerID, kind: kind, condition: Proto.TimeCondition(condition), holdMs: holdMs,
                    executeOnce: once, endAfterMs: end.afterMs, endWhenEventEnds: end.whenEventEnds,
                    command: command,
                    conditions: conditions.map(Proto.CharacteristicCondition.init)))
        case .setHomeLocation(let homeID, let location):
            self = .setHomeLocation(
                Proto.SetHomeLocation(homeID: homeID, location: location))
        case .setTriggerEnabled(let triggerID, let enabled):
            self = .setTriggerEnabled(Proto.SetTriggerEnabled(triggerID: triggerID, enabled: enabled))
        case .addActionSetToTrigger(let actionSetID, let triggerID):
            self = .addActionSetToTrigger(Proto.TriggerActionSet(triggerID: triggerID, actionSetID: actionSetID))
        case .removeActionSetFromTrigger(let actionSetID, let triggerID):
            self = .removeActionSetFromTrigger(Proto.TriggerActionSet(triggerID: triggerID, actionSetID: actionSetID))
        }
    }
}

extension LayoutOperation {
    /// An operation as a client sent it.
    ///
    /// - Throws: `.invalidArgument` for a part that is missing or an enum number the schema does not define.
    init(_ op: Proto.LayoutRequest.Op) throws(HomeError) {
        switch op {
        case .addHome(let op):
            self = .addHome(name: op.name)
        case .rename(let op):
            self = .rename(id: op.id, name: op.name)
        case .remove(let op):
            self = .remove(id: op.id)
        case .setPrimaryHome(let op):
            self = .setPrimaryHome(homeID: op.homeID)
        case .addRoom(let op):
            self = .addRoom(name: op.name, homeID: op.homeID)
        case .addZone(let op):
            self = .addZone(name: op.name, homeID: op.homeID)
        case .addRoomToZone(let op):
            self = .addRoomToZone(roomID: op.roomID, zoneID: op.zoneID)
        case .removeRoomFromZone(let op):
            self = .removeRoomFromZone(roomID: op.roomID, zoneID: op.zoneID)
        case .assignAccessory(let op):
            self = .assignAccessory(accessoryID: op.accessoryID, roomID: op.roomID)
        case .addServiceGroup(let op):
            self = .addServiceGroup(name: op.name, homeID: op.homeID)
        case .addServiceToGroup(let op):
            self = .addServiceToGroup(serviceID: op.serviceID, groupID: op.groupID)
        case .removeServiceFromGroup(let op):
            self = .removeServiceFromGroup(serviceID: op.serviceID, groupID: op.groupID)
        case .addActionSet(let op):
            let kind = try ActionSetKind.fromWire(op.kind, field: "add_action_set.kind")
            self = .addActionSet(name: op.name, kind: kind, homeID: op.homeID)
        case .addAction(let op):
            guard let action = op.action else {
                throw HomeError(.invalidArgument, "the layout request's add_action.action is missing")
            }
            guard let value = CharacteristicValue(action.value) else {
                throw HomeError(
                    .invalidArgument, "add_action for characteristic \(action.characteristicID) carries no value")
            }
            let onlyIf = CharacteristicValue(action.onlyIf)
            if action.onlyIf != nil && onlyIf == nil {
                throw HomeError(
                    .invalidArgument,
                    "add_action for characteristic \(action.characteristicID) has an only_if value of no kind")
            }
            self = .addAction(
                CharacteristicWriteAction(characteristicID: action.characteristicID, value: value, onlyIf: onlyIf),
                actionSetID: op.actionSetID)
        case .removeAction(let op):
            self = .removeAction(characteristicID: op.characteristicID, actionSetID: op.actionSetID)
        case .addTrigger(let op):
            self = .addTrigger(
                name: op.name, homeID: op.homeID, kind: try Self.triggerKind(op.kind, op: "add_trigger"),
                actionSetIDs: op.actionSetIDs, enabled: !op.disabled,
                condition: try TimeCondition(op.condition, field: "add_trigger.condition"), holdMs: op.holdMs,
                executeOnce: op.executeOnce,
                end: TriggerEnd(afterMs: op.endAfterMs, whenEventEnds: op.endWhenEventEnds),
                command: op.command,
                conditions: try CharacteristicCondition.strict(op.conditions, field: "add_trigger.conditions"))
        case .setTrigger(let op):
            let kind: Proto.AddTrigger.Kind? =
                switch op.kind {
                case .timer(let timer)?: .timer(timer)
                case .event(let event)?: .event(event)
                case .sun(let sun)?: .sun(sun)
                case nil: nil
                }
            self = .setTrigger(
                triggerID: op.triggerID, kind: try Self.triggerKind(kind, op: "set_trigger"),
                condition: try TimeCondition(op.condition, field: "set_trigger.condition"), holdMs: op.holdMs,
                executeOnce: op.executeOnce,
                end: TriggerEnd(afterMs: op.endAfterMs, whenEventEnds: op.endWhenEventEnds),
                command: op.command,
                conditions: try CharacteristicCondition.strict(op.conditions, field: "set_trigger.conditions"))
        case .setHomeLocation(let op):
            self = .setHomeLocation(homeID: op.homeID, location: op.location)
        case .setTriggerEnabled(let op):
            self = .setTriggerEnabled(triggerID: op.triggerID, enabled: op.enabled)
        case .addActionSetToTrigger(let op):
            self = .addActionSetToTrigger(actionSetID: op.actionSetID, triggerID: op.triggerID)
        case .removeActionSetFromTrigger(let op):
            self = .removeActionSetFromTrigger(actionSetID: op.actionSetID, triggerID: op.triggerID)
        }
    }

    private static func triggerKind(_ kind: Proto.AddTrigger.Kind?, op: String) throws(HomeError) -> TriggerKind {
        switch kind {
        case .sun(let sun)?:
            let event = try SunEvent.fromWire(sun.event, field: "\(op).sun.event")
            return .sun(event, offsetMs: sun.offsetMs, timeZone: sun.timeZone)
        case .timer(let timer)?:
            let recurrence = try Recurrence.fromWire(timer.recurrence, field: "\(op).timer.recurrence")
            return .timer(fireDateMs: timer.fireDateMs, timeZone: timer.timeZone, recurrence: recurrence)
        case .event(let event)?:
            var value: CharacteristicValue?
            if let wire = event.value {
                guard let decoded = CharacteristicValue(wire) else {
                    throw HomeError(.invalidArgument, "\(op).event.value is present but empty")
                }
                value = decoded
            }
            let conditions = try CharacteristicCondition.strict(event.conditions, field: "\(op).event.conditions")
            return .event(
                characteristicID: event.characteristicID, value: value, rangeMin: event.rangeMin,
                rangeMax: event.rangeMax, conditions: conditions)
        case nil:
            throw HomeError(.invalidArgument, "\(op) needs a timer, an event or a sun trigger")
        }
    }
}
