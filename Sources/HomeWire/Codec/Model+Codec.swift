public import HomeModel

// The home model on the wire: model values to their generated `Proto` mirrors
// (encoding) and back (decoding). Plain Swift; protobuf-c is behind the mirrors.

// MARK: - Values and metadata

extension Proto.Value {
    init(_ value: CharacteristicValue) {
        switch value {
        case .bool(let bool): kind = .boolValue(bool)
        case .int(let int): kind = .intValue(int)
        case .uint(let uint): kind = .uintValue(uint)
        case .float(let double): kind = .floatValue(double)
        case .string(let string): kind = .stringValue(string)
        case .data(let bytes): kind = .dataValue(bytes)
        }
    }
}

extension CharacteristicValue {
    /// nil for a `Value` with no kind set.
    init?(_ wire: Proto.Value?) {
        switch wire?.kind {
        case .boolValue(let bool)?: self = .bool(bool)
        case .intValue(let int)?: self = .int(int)
        case .uintValue(let uint)?: self = .uint(uint)
        case .floatValue(let double)?: self = .float(double)
        case .stringValue(let string)?: self = .string(string)
        case .dataValue(let bytes)?: self = .data(bytes)
        case nil: return nil
        }
    }
}

extension Proto.CharacteristicMetadata {
    init(_ metadata: CharacteristicMetadata) {
        format = metadata.format.wireNumber
        unit = metadata.unit.wireNumber
        minValue = metadata.minValue
        maxValue = metadata.maxValue
        stepValue = metadata.minStep
        validValues = metadata.validValues
        validBits = metadata.validBits
        maxLength = UInt32(clamping: metadata.maxLength ?? 0)
    }
}

extension CharacteristicMetadata {
    init(_ wire: Proto.CharacteristicMetadata?) {
        guard let wire else {
            self.init(format: .data)
            return
        }
        self.init(
            format: .fromWire(wire.format, default: .data), unit: .fromWire(wire.unit, default: .none),
            minValue: wire.minValue, maxValue: wire.maxValue, minStep: wire.stepValue, validValues: wire.validValues,
            validBits: wire.validBits, maxLength: wire.maxLength == 0 ? nil : Int(wire.maxLength))
    }
}

extension Proto.CharacteristicProperties {
    init(_ properties: CharacteristicProperties) {
        readable = properties.readable
        writable = properties.writable
        supportsEventNotification = properties.supportsEventNotification
        hidden = properties.hidden
        writeResponse = properties.writeResponse
    }
}

extension CharacteristicProperties {
    init(_ wire: Proto.CharacteristicProperties?) {
        guard let wire else {
            self.init(readable: false)
            return
        }
        self.init(
            readable: wire.readable, writable: wire.writable, supportsEventNotification: wire.supportsEventNotification,
            hidden: wire.hidden, writeResponse: wire.writeResponse)
    }
}

// MARK: - Objects

/// Where an accessory's services and characteristics are looked up while encoding.
protocol ServiceTables {
    func service(_ id: ObjectID) -> AccessoryService?
    func characteristic(_ id: ObjectID) -> Characteristic?
}

extension HomeGraph: ServiceTables {}

extension ListAccessoriesResponse: ServiceTables {
    func service(_ id: ObjectID) -> AccessoryService? { services[id] }
    func characteristic(_ id: ObjectID) -> Characteristic? { characteristics[id] }
}

extension Proto.Characteristic {
    init(_ characteristic: Characteristic) {
        id = characteristic.id
        type = characteristic.type.uuid
        typeName = characteristic.type.name
        properties = Proto.CharacteristicProperties(characteristic.properties)
        metadata = Proto.CharacteristicMetadata(characteristic.metadata)
        value = characteristic.value.map(Proto.Value.init)
        lastUpdatedMs = characteristic.lastUpdatedMs
        serviceID = characteristic.serviceID
        accessoryID = characteristic.accessoryID
    }
}

extension Characteristic {
    init(_ wire: Proto.Characteristic) {
        self.init(
            id: wire.id, serviceID: wire.serviceID, accessoryID: wire.accessoryID,
            type: TypeIdentifier(uuid: wire.type, name: wire.typeName),
            properties: CharacteristicProperties(wire.properties), metadata: CharacteristicMetadata(wire.metadata),
            value: CharacteristicValue(wire.value), lastUpdatedMs: wire.lastUpdatedMs)
    }
}

extension Proto.AccessoryService {
    init(_ service: AccessoryService, in graph: some ServiceTables) {
        id = service.id
        accessoryID = service.accessoryID
        type = service.type.uuid
        typeName = service.type.name
        name = service.name
        primary = service.isPrimary
        userInteractive = service.isUserInteractive
        hidden = service.isHidden
        linkedServiceIDs = service.linkedServiceIDs
        characteristics = service.characteristicIDs.compactMap {
            graph.characteristic($0).map(Proto.Characteristic.init)
        }
    }
}

extension Proto.Accessory {
    init(_ accessory: Accessory, in graph: some ServiceTables) {
        id = accessory.id
        homeID = accessory.homeID
        roomID = accessory.roomID
        name = accessory.name
        category = UInt32(accessory.category.rawValue)
        manufacturer = accessory.manufacturer
        model = accessory.model
        serialNumber = accessory.serialNumber
        firmwareRevision = accessory.firmwareRevision
        reachable = accessory.isReachable
        bridgeID = accessory.bridgeID ?? 0
        bridgedAccessoryIDs = accessory.bridgedAccessoryIDs
        provider = accessory.provider
        services = accessory.serviceIDs.compactMap { id in
            graph.service(id).map { Proto.AccessoryService($0, in: graph) }
        }
    }
}

extension Proto.Room {
    init(_ room: Room) {
        id = room.id
        homeID = room.homeID
        name = room.name
    }
}

extension Proto.Zone {
    init(_ zone: Zone) {
        id = zone.id
        homeID = zone.homeID
        name = zone.name
        roomIDs = zone.roomIDs
    }
}

extension Proto.ServiceGroup {
    init(_ group: ServiceGroup) {
        id = group.id
        homeID = group.homeID
        name = group.name
        serviceIDs = group.serviceIDs
    }
}

extension Proto.CharacteristicWriteAction {
    init(_ action: CharacteristicWriteAction) {
        characteristicID = action.characteristicID
        value = Proto.Value(action.value)
    }
}

extension Proto.ActionSet {
    init(_ actionSet: ActionSet) {
        id = actionSet.id
        homeID = actionSet.homeID
        name = actionSet.name
        kind = actionSet.kind.wireNumber
        actions = actionSet.actions.map(Proto.CharacteristicWriteAction.init)
    }
}

extension Proto.Trigger.Kind {
    init(_ kind: TriggerKind) {
        switch kind {
        case .timer(let fireDateMs, let timeZone, let recurrence):
            self = .timer(
                Proto.TimerTrigger(fireDateMs: fireDateMs, timeZone: timeZone, recurrence: recurrence.wireNumber))
        case .event(let characteristicID, let value, let rangeMin, let rangeMax, let conditions):
            self = .event(
                Proto.EventTrigger(
                    characteristicID: characteristicID, value: value.map(Proto.Value.init), rangeMin: rangeMin,
                    rangeMax: rangeMax,
                    conditions: conditions.map {
                        Proto.CharacteristicCondition(
                            characteristicID: $0.characteristicID, comparison: $0.comparison.wireNumber,
                            value: Proto.Value($0.value))
                    }))
        }
    }
}

extension Proto.Trigger {
    init(_ trigger: Trigger) {
        id = trigger.id
        homeID = trigger.homeID
        name = trigger.name
        enabled = trigger.isEnabled
        actionSetIDs = trigger.actionSetIDs
        kind = Kind(trigger.kind)
    }
}

extension Proto.Home {
    init(_ home: Home, in graph: HomeGraph) {
        self.init(home, in: graph, accessoryIDs: home.accessoryIDs[...], withTables: true)
    }

    /// A home with only the given accessories; without its other tables (and
    /// name) when `withTables` is false: a later page of a paged GetHome.
    init(_ home: Home, in graph: HomeGraph, accessoryIDs: ArraySlice<ObjectID>, withTables: Bool) {
        id = home.id
        accessories = accessoryIDs.compactMap { id in graph.accessories[id].map { Proto.Accessory($0, in: graph) } }
        guard withTables else { return }
        name = home.name
        primary = home.isPrimary
        defaultRoomID = home.defaultRoomID
        rooms = home.roomIDs.compactMap { graph.rooms[$0].map(Proto.Room.init) }
        zones = home.zoneIDs.compactMap { graph.zones[$0].map(Proto.Zone.init) }
        serviceGroups = home.serviceGroupIDs.compactMap { graph.serviceGroups[$0].map(Proto.ServiceGroup.init) }
        actionSets = home.actionSetIDs.compactMap { graph.actionSets[$0].map(Proto.ActionSet.init) }
        triggers = home.triggerIDs.compactMap { graph.triggers[$0].map(Proto.Trigger.init) }
    }
}

// MARK: - Decoding into tables

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
        var home = Home(id: wire.id, name: wire.name, isPrimary: wire.primary, defaultRoomID: wire.defaultRoomID)
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
                    CharacteristicWriteAction(characteristicID: action.characteristicID, value: $0)
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
                actionSetIDs: trigger.actionSetIDs, kind: Self.triggerKind(trigger.kind))
            home.triggerIDs.append(trigger.id)
        }
        homes[home.id] = home
        homeOrder.append(home.id)
    }

    /// A stored trigger's kind as the daemon sent it (lenient: a condition without
    /// a value is left out, an unknown number read as the default).
    private static func triggerKind(_ kind: Proto.Trigger.Kind?) -> TriggerKind {
        guard case .event(let event)? = kind else {
            let timer: Proto.TimerTrigger
            if case .timer(let wire)? = kind { timer = wire } else { timer = Proto.TimerTrigger() }
            return .timer(
                fireDateMs: timer.fireDateMs, timeZone: timer.timeZone,
                recurrence: .fromWire(timer.recurrence, default: .none))
        }
        let conditions = event.conditions.compactMap { condition in
            CharacteristicValue(condition.value).map {
                CharacteristicCondition(
                    characteristicID: condition.characteristicID,
                    comparison: .fromWire(condition.comparison, default: .equal), value: $0)
            }
        }
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
                    let characteristic = Characteristic(wireCharacteristic)
                    characteristics[characteristic.id] = characteristic
                    characteristicIDs.append(characteristic.id)
                }
                services[service.id] = AccessoryService(
                    id: service.id, accessoryID: accessory.id,
                    type: TypeIdentifier(uuid: service.type, name: service.typeName), name: service.name,
                    isPrimary: service.primary, isUserInteractive: service.userInteractive, isHidden: service.hidden,
                    linkedServiceIDs: service.linkedServiceIDs, characteristicIDs: characteristicIDs)
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
