internal import HomeModel

/// Objects decoded from the wire, in wire order, before they become a `HomeGraph`.
struct DecodedTables {
    var homes: [ObjectID: Home] = [:]
    var rooms: [ObjectID: Room] = [:]
    var zones: [ObjectID: Zone] = [:]
    var accessories: [ObjectID: Accessory] = [:]
    var services: [ObjectID: AccessoryService] = [:]
    var characteristics: [ObjectID: Characteristic] = [:]
    var serviceGroups: [ObjectID: ServiceGroup] = [:]
    var actionSets: [ObjectID: ActionSet] = [:]
    var triggers: [ObjectID: Trigger] = [:]
    var homeOrder: [ObjectID] = []

    /// Adds a decoded home and everything in it.
    mutating func add(home wire: Proto.Home) {
        var home = Home(
            id: wire.id, name: wire.name, isPrimary: wire.primary, defaultRoomID: wire.defaultRoomID,
            location: wire.location)
        for room in wire.rooms {
            rooms[room.id] = Room(id: room.id, homeID: room.homeID == 0 ? home.id : room.homeID, name: room.name)
            home.roomIDs.append(room.id)
        }
        for zone in wire.zones {
            zones[zone.id] = Zone(id: zone.id, homeID: home.id, name: zone.name, roomIDs: zone.roomIDs)
            home.zoneIDs.append(zone.id)
        }
        add(accessories: wire.accessories, to: &home)
        for group in wire.serviceGroups {
            serviceGroups[group.id] = ServiceGroup(
                id: group.id, homeID: home.id, name: group.name, serviceIDs: group.serviceIDs)
            home.serviceGroupIDs.append(group.id)
        }
        for actionSet in wire.actionSets {
            let actions = actionSet.actions.compactMap { action in
                CharacteristicValue(action.value).map {
                    CharacteristicWriteAction(
                        characteristicID: action.characteristicID, value: $0, onlyIf: CharacteristicValue(action.onlyIf)
                    )
                }
            }
            actionSets[actionSet.id] = ActionSet(
                id: actionSet.id, homeID: home.id, name: actionSet.name,
                kind: .fromWire(actionSet.kind, default: .userDefined), actions: actions)
            home.actionSetIDs.append(actionSet.id)
        }
        for trigger in wire.triggers {
            triggers[trigger.id] = Trigger(
                id: trigger.id, homeID: home.id, name: trigger.name, isEnabled: trigger.enabled,
                actionSetIDs: trigger.actionSetIDs, kind: Self.triggerKind(trigger.kind),
                condition: TimeCondition(lenient: trigger.condition), holdMs: trigger.holdMs,
                executeOnce: trigger.executeOnce,
                end: TriggerEnd(afterMs: trigger.endAfterMs, whenEventEnds: trigger.endWhenEventEnds),
                command: trigger.command,
                conditions: CharacteristicCondition.lenient(trigger.conditions))
            home.triggerIDs.append(trigger.id)
        }
        homes[home.id] = home
        homeOrder.append(home.id)
    }

    /// A stored trigger's kind as the daemon sent it (lenient: a condition without
    /// a value is left out, an unknown number read as the default).
    private static func triggerKind(_ kind: Proto.Trigger.Kind?) -> TriggerKind {
        if case .sun(let sun)? = kind {
            return .sun(.fromWire(sun.event, default: .sunrise), offsetMs: sun.offsetMs, timeZone: sun.timeZone)
        }
        guard case .event(let event)? = kind else {
            let timer: Proto.TimerTrigger
            if case .timer(let wire)? = kind {
                timer = wire
            } else {
                timer = Proto.TimerTrigger(fireDateMs: 0, timeZone: "", recurrence: 0)
            }
            return .timer(
                fireDateMs: timer.fireDateMs, timeZone: timer.timeZone,
                recurrence: .fromWire(timer.recurrence, default: .none))
        }
        let conditions = CharacteristicCondition.lenient(event.conditions)
        return .event(
            characteristicID: event.characteristicID, value: CharacteristicValue(event.value),
            rangeMin: event.rangeMin, rangeMax: event.rangeMax, conditions: conditions)
    }

    /// Adds a later page's accessories to a home the first page brought.
    mutating func add(accessories wire: [Proto.Accessory], toHome homeID: ObjectID) {
        guard var home = homes[homeID] else { return }
        add(accessories: wire, to: &home)
        homes[homeID] = home
    }

    private mutating func add(accessories wire: [Proto.Accessory], to home: inout Home) {
        for accessory in wire {
            var serviceIDs: [ObjectID] = []
            for service in accessory.services {
                var characteristicIDs: [ObjectID] = []
                for wireCharacteristic in service.characteristics {
                    let characteristic = Characteristic(wire: wireCharacteristic)
                    characteristics[characteristic.id] = characteristic
                    characteristicIDs.append(characteristic.id)
                }
                services[service.id] = AccessoryService(
                    id: service.id, accessoryID: accessory.id,
                    type: TypeIdentifier(uuid: service.type, name: service.typeName), name: service.name,
                    isPrimary: service.primary, isUserInteractive: service.userInteractive, isHidden: service.hidden,
                    linkedServiceIDs: service.linkedServiceIDs, characteristicIDs: characteristicIDs,
                    providerKey: service.providerKey)
                serviceIDs.append(service.id)
            }
            accessories[accessory.id] = Accessory(
                id: accessory.id, homeID: accessory.homeID == 0 ? home.id : accessory.homeID,
                roomID: accessory.roomID, name: accessory.name,
                category: AccessoryCategory(rawValue: Int(accessory.category)) ?? .other,
                manufacturer: accessory.manufacturer, model: accessory.model, serialNumber: accessory.serialNumber,
                firmwareRevision: accessory.firmwareRevision, isReachable: accessory.reachable,
                bridgeID: accessory.bridgeID == 0 ? nil : accessory.bridgeID,
                bridgedAccessoryIDs: accessory.bridgedAccessoryIDs, provider: accessory.provider,
                providerKey: accessory.providerKey,
                serviceIDs: serviceIDs)
            home.accessoryIDs.append(accessory.id)
        }
    }

    /// The graph these tables describe, checked for integrity like a stored one.
    func graph() throws(HomeError) -> HomeGraph {
        let maxID =
            [
                homes.keys.max(), rooms.keys.max(), zones.keys.max(), accessories.keys.max(), services.keys.max(),
                characteristics.keys.max(), serviceGroups.keys.max(), actionSets.keys.max(), triggers.keys.max(),
            ]
            .compactMap { $0 }.max() ?? 0
        do throws(HomeError) {
            return try HomeGraph(
                homes: Array(homes.values), rooms: Array(rooms.values), zones: Array(zones.values),
                accessories: Array(accessories.values), services: Array(services.values),
                characteristics: Array(characteristics.values), serviceGroups: Array(serviceGroups.values),
                actionSets: Array(actionSets.values), triggers: Array(triggers.values), homeOrder: homeOrder,
                nextID: maxID + 1)
        } catch {
            throw HomeError(.invalidArgument, "the homes received are inconsistent: \(error.message)")
        }
    }
}
