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

extension CharacteristicValue: WireConvertible {
    var wire: Proto.Value { Proto.Value(self) }

    /// - Throws: `.invalidArgument` for a `Value` with no kind set.
    init(wire: Proto.Value) throws(HomeError) {
        guard let value = CharacteristicValue(wire) else {
            throw HomeError(.invalidArgument, "a value with no kind set (bool, int, uint, float, string or data)")
        }
        self = value
    }

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

extension Characteristic: WireConvertible {
    var wire: Proto.Characteristic {
        Proto.Characteristic(
            id: id, type: type.uuid, typeName: type.name, properties: properties,
            metadata: Proto.CharacteristicMetadata(metadata), value: value.map(Proto.Value.init),
            lastUpdatedMs: lastUpdatedMs, serviceID: serviceID, accessoryID: accessoryID)
    }

    init(wire: Proto.Characteristic) {
        self.init(
            id: wire.id, serviceID: wire.serviceID, accessoryID: wire.accessoryID,
            type: TypeIdentifier(uuid: wire.type, name: wire.typeName),
            properties: wire.properties ?? CharacteristicProperties(readable: false),
            metadata: CharacteristicMetadata(wire.metadata),
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
        providerKey = service.providerKey
        characteristics = service.characteristicIDs.compactMap {
            graph.characteristic($0)?.wire
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
        providerKey = accessory.providerKey
        services = accessory.serviceIDs.compactMap { id in
            graph.service(id).map { Proto.AccessoryService($0, in: graph) }
        }
    }
}

extension Proto.CharacteristicWriteAction {
    init(_ action: CharacteristicWriteAction) {
        characteristicID = action.characteristicID
        value = Proto.Value(action.value)
        onlyIf = action.onlyIf.map(Proto.Value.init)
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
                    rangeMax: rangeMax, conditions: conditions.map(Proto.CharacteristicCondition.init)))
        case .sun(let event, let offsetMs, let timeZone):
            self = .sun(Proto.SunTrigger(event: event, offsetMs: offsetMs, timeZone: timeZone))
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
        condition = Proto.TimeCondition(trigger.condition)
        holdMs = trigger.holdMs
        executeOnce = trigger.executeOnce
        endAfterMs = trigger.end.afterMs
        endWhenEventEnds = trigger.end.whenEventEnds
        command = trigger.command
        conditions = trigger.conditions.map(Proto.CharacteristicCondition.init)
    }
}

extension Proto.CharacteristicCondition {
    init(_ condition: CharacteristicCondition) {
        self.init(
            characteristicID: condition.characteristicID, comparison: condition.comparison.wireNumber,
            value: Proto.Value(condition.value))
    }
}

extension CharacteristicCondition {
    /// Conditions as the daemon sent them (lenient: one without a value is left
    /// out, an unknown comparison read as the default).
    static func lenient(_ wire: [Proto.CharacteristicCondition]) -> [CharacteristicCondition] {
        wire.compactMap { condition in
            CharacteristicValue(condition.value).map {
                CharacteristicCondition(
                    characteristicID: condition.characteristicID,
                    comparison: .fromWire(condition.comparison, default: .equal), value: $0)
            }
        }
    }

    /// Conditions as a client sent them: an undeclared comparison or a missing
    /// value is INVALID_ARGUMENT naming it.
    static func strict(_ wire: [Proto.CharacteristicCondition], field: String) throws(HomeError)
        -> [CharacteristicCondition]
    {
        var conditions: [CharacteristicCondition] = []
        for (index, condition) in wire.enumerated() {
            let comparison = try Comparison.fromWire(condition.comparison, field: "\(field)[\(index)].comparison")
            guard let value = CharacteristicValue(condition.value) else {
                throw HomeError(
                    .invalidArgument, "the condition on characteristic \(condition.characteristicID) carries no value")
            }
            conditions.append(
                CharacteristicCondition(
                    characteristicID: condition.characteristicID, comparison: comparison, value: value))
        }
        return conditions
    }
}

extension Proto.Home {
    init(_ home: Home, in graph: HomeGraph) {
        self.init(home, in: graph, accessoryIDs: home.accessoryIDs[...], withTables: true)
    }

    /// A home with only the given accessories; without its other tables (and
    /// name) when `withTables` is false: a later page of a paged GetHome.
    init(_ home: Home, in graph: HomeGraph, accessoryIDs: ArraySlice<ObjectID>, withTables: Bool) {
        let accessories = accessoryIDs.compactMap { id in graph.accessories[id].map { Proto.Accessory($0, in: graph) } }
        guard withTables else {
            self.init(
                id: home.id, name: "", primary: false, defaultRoomID: 0, rooms: [], zones: [],
                accessories: accessories, serviceGroups: [], actionSets: [], triggers: [], location: nil)
            return
        }
        self.init(
            id: home.id, name: home.name, primary: home.isPrimary, defaultRoomID: home.defaultRoomID,
            rooms: home.roomIDs.compactMap { graph.rooms[$0] }, zones: home.zoneIDs.compactMap { graph.zones[$0] },
            accessories: accessories, serviceGroups: home.serviceGroupIDs.compactMap { graph.serviceGroups[$0] },
            actionSets: home.actionSetIDs.compactMap { graph.actionSets[$0].map(Proto.ActionSet.init) },
            triggers: home.triggerIDs.compactMap { graph.triggers[$0].map(Proto.Trigger.init) },
            location: home.location)
    }
}
