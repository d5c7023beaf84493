internal import CHomeProto
public import HomeModel

// Conversions between the home model and its protobuf-c messages. Encoders build C
// trees inside a caller's arena; decoders copy C trees into Swift values.

// MARK: - Values and metadata

extension CArena {
    mutating func value(_ value: CharacteristicValue) -> UnsafeMutablePointer<Home__V1__Value> {
        let message = allocate(Home__V1__Value.self)
        home__v1__value__init(message)
        switch value {
        case .bool(let bool):
            message.pointee.kind_case = HOME__V1__VALUE__KIND_BOOL_VALUE
            message.pointee.bool_value = bool ? 1 : 0
        case .int(let int):
            message.pointee.kind_case = HOME__V1__VALUE__KIND_INT_VALUE
            message.pointee.int_value = int
        case .uint(let uint):
            message.pointee.kind_case = HOME__V1__VALUE__KIND_UINT_VALUE
            message.pointee.uint_value = uint
        case .float(let double):
            message.pointee.kind_case = HOME__V1__VALUE__KIND_FLOAT_VALUE
            message.pointee.float_value = double
        case .string(let string):
            message.pointee.kind_case = HOME__V1__VALUE__KIND_STRING_VALUE
            message.pointee.string_value = cString(string)
        case .data(let bytes):
            message.pointee.kind_case = HOME__V1__VALUE__KIND_DATA_VALUE
            message.pointee.data_value = binary(bytes)
        }
        return message
    }

    mutating func optionalValue(_ value: CharacteristicValue?) -> UnsafeMutablePointer<Home__V1__Value>? {
        value.map { self.value($0) }
    }

    mutating func metadata(_ metadata: CharacteristicMetadata) -> UnsafeMutablePointer<Home__V1__CharacteristicMetadata>
    {
        let message = allocate(Home__V1__CharacteristicMetadata.self)
        home__v1__characteristic_metadata__init(message)
        message.pointee.format = Home__V1__Format(rawValue: metadata.format.wireNumber(offset: 1))
        message.pointee.unit = Home__V1__Unit(rawValue: metadata.unit.wireNumber())
        if let min = metadata.minValue {
            message.pointee.min_present_case = HOME__V1__CHARACTERISTIC_METADATA__MIN_PRESENT_MIN_VALUE
            message.pointee.min_value = min
        }
        if let max = metadata.maxValue {
            message.pointee.max_present_case = HOME__V1__CHARACTERISTIC_METADATA__MAX_PRESENT_MAX_VALUE
            message.pointee.max_value = max
        }
        if let step = metadata.minStep {
            message.pointee.step_present_case = HOME__V1__CHARACTERISTIC_METADATA__STEP_PRESENT_STEP_VALUE
            message.pointee.step_value = step
        }
        message.pointee.n_valid_values = metadata.validValues.count
        message.pointee.valid_values = array(Int64.self, count: metadata.validValues.count) { _, index in
            metadata.validValues[index]
        }
        message.pointee.valid_bits = metadata.validBits
        message.pointee.max_length = UInt32(clamping: metadata.maxLength ?? 0)
        return message
    }

    mutating func properties(_ properties: CharacteristicProperties) -> UnsafeMutablePointer<
        Home__V1__CharacteristicProperties
    > {
        let message = allocate(Home__V1__CharacteristicProperties.self)
        home__v1__characteristic_properties__init(message)
        message.pointee.readable = properties.readable ? 1 : 0
        message.pointee.writable = properties.writable ? 1 : 0
        message.pointee.supports_event_notification = properties.supportsEventNotification ? 1 : 0
        message.pointee.hidden = properties.hidden ? 1 : 0
        message.pointee.write_response = properties.writeResponse ? 1 : 0
        return message
    }
}

enum ModelDecoding {
    static func value(_ message: UnsafeMutablePointer<Home__V1__Value>?) -> CharacteristicValue? {
        guard let value = message?.pointee else { return nil }
        switch value.kind_case {
        case HOME__V1__VALUE__KIND_BOOL_VALUE: return .bool(value.bool_value != 0)
        case HOME__V1__VALUE__KIND_INT_VALUE: return .int(value.int_value)
        case HOME__V1__VALUE__KIND_UINT_VALUE: return .uint(value.uint_value)
        case HOME__V1__VALUE__KIND_FLOAT_VALUE: return .float(value.float_value)
        case HOME__V1__VALUE__KIND_STRING_VALUE: return .string(swiftString(value.string_value))
        case HOME__V1__VALUE__KIND_DATA_VALUE: return .data(swiftBytes(value.data_value))
        default: return nil
        }
    }

    static func metadata(_ message: UnsafeMutablePointer<Home__V1__CharacteristicMetadata>?) -> CharacteristicMetadata {
        guard let metadata = message?.pointee else { return CharacteristicMetadata(format: .data) }
        return CharacteristicMetadata(
            format: .fromWire(metadata.format.rawValue, offset: 1, default: .data),
            unit: .fromWire(metadata.unit.rawValue, default: .none),
            minValue: metadata.min_present_case == HOME__V1__CHARACTERISTIC_METADATA__MIN_PRESENT_MIN_VALUE
                ? metadata.min_value : nil,
            maxValue: metadata.max_present_case == HOME__V1__CHARACTERISTIC_METADATA__MAX_PRESENT_MAX_VALUE
                ? metadata.max_value : nil,
            minStep: metadata.step_present_case == HOME__V1__CHARACTERISTIC_METADATA__STEP_PRESENT_STEP_VALUE
                ? metadata.step_value : nil,
            validValues: metadata.n_valid_values > 0
                ? Array(UnsafeBufferPointer(start: metadata.valid_values, count: metadata.n_valid_values)) : [],
            validBits: metadata.valid_bits,
            maxLength: metadata.max_length == 0 ? nil : Int(metadata.max_length))
    }

    static func properties(_ message: UnsafeMutablePointer<Home__V1__CharacteristicProperties>?)
        -> CharacteristicProperties
    {
        guard let properties = message?.pointee else { return CharacteristicProperties(readable: false) }
        return CharacteristicProperties(
            readable: properties.readable != 0,
            writable: properties.writable != 0,
            supportsEventNotification: properties.supports_event_notification != 0,
            hidden: properties.hidden != 0,
            writeResponse: properties.write_response != 0)
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

extension CArena {
    mutating func characteristic(_ characteristic: Characteristic) -> UnsafeMutablePointer<Home__V1__Characteristic> {
        let message = allocate(Home__V1__Characteristic.self)
        home__v1__characteristic__init(message)
        message.pointee.id = characteristic.id
        message.pointee.type = cString(characteristic.type.uuid)
        message.pointee.type_name = cString(characteristic.type.name)
        message.pointee.properties = properties(characteristic.properties)
        message.pointee.metadata = metadata(characteristic.metadata)
        message.pointee.value = optionalValue(characteristic.value)
        message.pointee.last_updated_ms = characteristic.lastUpdatedMs
        message.pointee.service_id = characteristic.serviceID
        message.pointee.accessory_id = characteristic.accessoryID
        return message
    }

    mutating func service(_ service: AccessoryService, in graph: some ServiceTables) -> UnsafeMutablePointer<
        Home__V1__AccessoryService
    > {
        let message = allocate(Home__V1__AccessoryService.self)
        home__v1__accessory_service__init(message)
        message.pointee.id = service.id
        message.pointee.accessory_id = service.accessoryID
        message.pointee.type = cString(service.type.uuid)
        message.pointee.type_name = cString(service.type.name)
        message.pointee.name = cString(service.name)
        message.pointee.primary = service.isPrimary ? 1 : 0
        message.pointee.user_interactive = service.isUserInteractive ? 1 : 0
        message.pointee.hidden = service.isHidden ? 1 : 0
        message.pointee.n_linked_service_ids = service.linkedServiceIDs.count
        message.pointee.linked_service_ids = array(UInt64.self, count: service.linkedServiceIDs.count) { _, index in
            service.linkedServiceIDs[index]
        }
        let characteristics = service.characteristicIDs.compactMap { graph.characteristic($0) }
        message.pointee.n_characteristics = characteristics.count
        message.pointee.characteristics = array(
            UnsafeMutablePointer<Home__V1__Characteristic>?.self, count: characteristics.count
        ) {
            $0.characteristic(characteristics[$1])
        }
        return message
    }

    mutating func accessory(_ accessory: Accessory, in graph: some ServiceTables) -> UnsafeMutablePointer<
        Home__V1__Accessory
    > {
        let message = allocate(Home__V1__Accessory.self)
        home__v1__accessory__init(message)
        message.pointee.id = accessory.id
        message.pointee.home_id = accessory.homeID
        message.pointee.room_id = accessory.roomID
        message.pointee.name = cString(accessory.name)
        message.pointee.category = Home__V1__AccessoryCategory(rawValue: UInt32(accessory.category.rawValue))
        message.pointee.manufacturer = cString(accessory.manufacturer)
        message.pointee.model = cString(accessory.model)
        message.pointee.serial_number = cString(accessory.serialNumber)
        message.pointee.firmware_revision = cString(accessory.firmwareRevision)
        message.pointee.reachable = accessory.isReachable ? 1 : 0
        message.pointee.bridge_id = accessory.bridgeID ?? 0
        message.pointee.n_bridged_accessory_ids = accessory.bridgedAccessoryIDs.count
        message.pointee.bridged_accessory_ids = array(UInt64.self, count: accessory.bridgedAccessoryIDs.count) {
            _, index in
            accessory.bridgedAccessoryIDs[index]
        }
        message.pointee.provider = cString(accessory.provider)
        let services = accessory.serviceIDs.compactMap { graph.service($0) }
        message.pointee.n_services = services.count
        message.pointee.services = array(UnsafeMutablePointer<Home__V1__AccessoryService>?.self, count: services.count)
        {
            $0.service(services[$1], in: graph)
        }
        return message
    }

    mutating func room(_ room: Room) -> UnsafeMutablePointer<Home__V1__Room> {
        let message = allocate(Home__V1__Room.self)
        home__v1__room__init(message)
        message.pointee.id = room.id
        message.pointee.home_id = room.homeID
        message.pointee.name = cString(room.name)
        return message
    }

    mutating func ids(_ ids: [ObjectID]) -> UnsafeMutablePointer<UInt64>? {
        array(UInt64.self, count: ids.count) { _, index in ids[index] }
    }

    mutating func zone(_ zone: Zone) -> UnsafeMutablePointer<Home__V1__Zone> {
        let message = allocate(Home__V1__Zone.self)
        home__v1__zone__init(message)
        message.pointee.id = zone.id
        message.pointee.home_id = zone.homeID
        message.pointee.name = cString(zone.name)
        message.pointee.n_room_ids = zone.roomIDs.count
        message.pointee.room_ids = ids(zone.roomIDs)
        return message
    }

    mutating func serviceGroup(_ group: ServiceGroup) -> UnsafeMutablePointer<Home__V1__ServiceGroup> {
        let message = allocate(Home__V1__ServiceGroup.self)
        home__v1__service_group__init(message)
        message.pointee.id = group.id
        message.pointee.home_id = group.homeID
        message.pointee.name = cString(group.name)
        message.pointee.n_service_ids = group.serviceIDs.count
        message.pointee.service_ids = ids(group.serviceIDs)
        return message
    }

    mutating func actionSet(_ actionSet: ActionSet) -> UnsafeMutablePointer<Home__V1__ActionSet> {
        let message = allocate(Home__V1__ActionSet.self)
        home__v1__action_set__init(message)
        message.pointee.id = actionSet.id
        message.pointee.home_id = actionSet.homeID
        message.pointee.name = cString(actionSet.name)
        message.pointee.kind = Home__V1__ActionSetKind(rawValue: actionSet.kind.wireNumber())
        message.pointee.n_actions = actionSet.actions.count
        message.pointee.actions = array(
            UnsafeMutablePointer<Home__V1__CharacteristicWriteAction>?.self, count: actionSet.actions.count
        ) { arena, index in
            let action = arena.allocate(Home__V1__CharacteristicWriteAction.self)
            home__v1__characteristic_write_action__init(action)
            action.pointee.characteristic_id = actionSet.actions[index].characteristicID
            action.pointee.value = arena.value(actionSet.actions[index].value)
            return action
        }
        return message
    }

    mutating func trigger(_ trigger: Trigger) -> UnsafeMutablePointer<Home__V1__Trigger> {
        let message = allocate(Home__V1__Trigger.self)
        home__v1__trigger__init(message)
        message.pointee.id = trigger.id
        message.pointee.home_id = trigger.homeID
        message.pointee.name = cString(trigger.name)
        message.pointee.enabled = trigger.isEnabled ? 1 : 0
        message.pointee.n_action_set_ids = trigger.actionSetIDs.count
        message.pointee.action_set_ids = ids(trigger.actionSetIDs)
        switch trigger.kind {
        case .timer(let fireDateMs, let timeZone, let recurrence):
            let timer = allocate(Home__V1__TimerTrigger.self)
            home__v1__timer_trigger__init(timer)
            timer.pointee.fire_date_ms = fireDateMs
            timer.pointee.time_zone = cString(timeZone)
            timer.pointee.recurrence = Home__V1__Recurrence(rawValue: recurrence.wireNumber())
            message.pointee.kind_case = HOME__V1__TRIGGER__KIND_TIMER
            message.pointee.timer = timer
        case .event(let characteristicID, let value, let rangeMin, let rangeMax, let conditions):
            let event = allocate(Home__V1__EventTrigger.self)
            home__v1__event_trigger__init(event)
            event.pointee.characteristic_id = characteristicID
            if let value {
                event.pointee.value_present_case = HOME__V1__EVENT_TRIGGER__VALUE_PRESENT_VALUE
                event.pointee.value = self.value(value)
            }
            if let rangeMin {
                event.pointee.min_present_case = HOME__V1__EVENT_TRIGGER__MIN_PRESENT_RANGE_MIN
                event.pointee.range_min = rangeMin
            }
            if let rangeMax {
                event.pointee.max_present_case = HOME__V1__EVENT_TRIGGER__MAX_PRESENT_RANGE_MAX
                event.pointee.range_max = rangeMax
            }
            event.pointee.n_conditions = conditions.count
            event.pointee.conditions = array(
                UnsafeMutablePointer<Home__V1__CharacteristicCondition>?.self, count: conditions.count
            ) { arena, index in
                let condition = arena.allocate(Home__V1__CharacteristicCondition.self)
                home__v1__characteristic_condition__init(condition)
                condition.pointee.characteristic_id = conditions[index].characteristicID
                condition.pointee.comparison = Home__V1__Comparison(rawValue: conditions[index].comparison.wireNumber())
                condition.pointee.value = arena.value(conditions[index].value)
                return condition
            }
            message.pointee.kind_case = HOME__V1__TRIGGER__KIND_EVENT
            message.pointee.event = event
        }
        return message
    }

    mutating func home(_ home: Home, in graph: HomeGraph) -> UnsafeMutablePointer<Home__V1__Home> {
        self.home(home, in: graph, accessoryIDs: home.accessoryIDs[...], withTables: true)
    }

    /// A home with only the given accessories; without its other tables (and
    /// name) when `withTables` is false: a later page of a paged GetHome.
    mutating func home(
        _ home: Home, in graph: HomeGraph, accessoryIDs: ArraySlice<ObjectID>,
        withTables: Bool
    ) -> UnsafeMutablePointer<Home__V1__Home> {
        let message = allocate(Home__V1__Home.self)
        home__v1__home__init(message)
        message.pointee.id = home.id
        let accessories = accessoryIDs.compactMap { graph.accessories[$0] }
        message.pointee.n_accessories = accessories.count
        message.pointee.accessories = array(UnsafeMutablePointer<Home__V1__Accessory>?.self, count: accessories.count) {
            $0.accessory(accessories[$1], in: graph)
        }
        guard withTables else { return message }
        message.pointee.name = cString(home.name)
        message.pointee.primary = home.isPrimary ? 1 : 0
        message.pointee.default_room_id = home.defaultRoomID
        let rooms = home.roomIDs.compactMap { graph.rooms[$0] }
        message.pointee.n_rooms = rooms.count
        message.pointee.rooms = array(UnsafeMutablePointer<Home__V1__Room>?.self, count: rooms.count) {
            $0.room(rooms[$1])
        }
        let zones = home.zoneIDs.compactMap { graph.zones[$0] }
        message.pointee.n_zones = zones.count
        message.pointee.zones = array(UnsafeMutablePointer<Home__V1__Zone>?.self, count: zones.count) {
            $0.zone(zones[$1])
        }
        let groups = home.serviceGroupIDs.compactMap { graph.serviceGroups[$0] }
        message.pointee.n_service_groups = groups.count
        message.pointee.service_groups = array(UnsafeMutablePointer<Home__V1__ServiceGroup>?.self, count: groups.count)
        {
            $0.serviceGroup(groups[$1])
        }
        let actionSets = home.actionSetIDs.compactMap { graph.actionSets[$0] }
        message.pointee.n_action_sets = actionSets.count
        message.pointee.action_sets = array(UnsafeMutablePointer<Home__V1__ActionSet>?.self, count: actionSets.count) {
            $0.actionSet(actionSets[$1])
        }
        let triggers = home.triggerIDs.compactMap { graph.triggers[$0] }
        message.pointee.n_triggers = triggers.count
        message.pointee.triggers = array(UnsafeMutablePointer<Home__V1__Trigger>?.self, count: triggers.count) {
            $0.trigger(triggers[$1])
        }
        return message
    }
}

extension ModelDecoding {
    static func ids(_ pointer: UnsafeMutablePointer<UInt64>?, _ count: Int) -> [ObjectID] {
        guard count > 0, let pointer else { return [] }
        return Array(UnsafeBufferPointer(start: pointer, count: count))
    }

    static func characteristic(_ message: Home__V1__Characteristic) -> Characteristic {
        Characteristic(
            id: message.id, serviceID: message.service_id, accessoryID: message.accessory_id,
            type: TypeIdentifier(uuid: swiftString(message.type), name: swiftString(message.type_name)),
            properties: properties(message.properties), metadata: metadata(message.metadata),
            value: value(message.value), lastUpdatedMs: message.last_updated_ms)
    }

    /// Adds a decoded home and everything in it to `tables`.
    static func addHome(_ message: Home__V1__Home, to tables: inout DecodedTables) {
        var home = Home(
            id: message.id, name: swiftString(message.name), isPrimary: message.primary != 0,
            defaultRoomID: message.default_room_id)
        for index in 0..<message.n_rooms {
            let room = message.rooms[index]!.pointee
            tables.rooms[room.id] = Room(
                id: room.id, homeID: room.home_id == 0 ? home.id : room.home_id, name: swiftString(room.name))
            home.roomIDs.append(room.id)
        }
        for index in 0..<message.n_zones {
            let zone = message.zones[index]!.pointee
            tables.zones[zone.id] = Zone(
                id: zone.id, homeID: home.id, name: swiftString(zone.name),
                roomIDs: ids(zone.room_ids, zone.n_room_ids))
            home.zoneIDs.append(zone.id)
        }
        addAccessories(of: message, to: &home, in: &tables)
        for index in 0..<message.n_service_groups {
            let group = message.service_groups[index]!.pointee
            tables.serviceGroups[group.id] = ServiceGroup(
                id: group.id, homeID: home.id, name: swiftString(group.name),
                serviceIDs: ids(group.service_ids, group.n_service_ids))
            home.serviceGroupIDs.append(group.id)
        }
        for index in 0..<message.n_action_sets {
            let actionSet = message.action_sets[index]!.pointee
            var actions: [CharacteristicWriteAction] = []
            for actionIndex in 0..<actionSet.n_actions {
                let action = actionSet.actions[actionIndex]!.pointee
                if let value = value(action.value) {
                    actions.append(CharacteristicWriteAction(characteristicID: action.characteristic_id, value: value))
                }
            }
            tables.actionSets[actionSet.id] = ActionSet(
                id: actionSet.id, homeID: home.id, name: swiftString(actionSet.name),
                kind: .fromWire(actionSet.kind.rawValue, default: .userDefined), actions: actions)
            home.actionSetIDs.append(actionSet.id)
        }
        for index in 0..<message.n_triggers {
            let trigger = message.triggers[index]!.pointee
            let kind: TriggerKind
            if trigger.kind_case == HOME__V1__TRIGGER__KIND_EVENT, let event = trigger.event?.pointee {
                var conditions: [CharacteristicCondition] = []
                for conditionIndex in 0..<event.n_conditions {
                    let condition = event.conditions[conditionIndex]!.pointee
                    if let value = value(condition.value) {
                        conditions.append(
                            CharacteristicCondition(
                                characteristicID: condition.characteristic_id,
                                comparison: .fromWire(condition.comparison.rawValue, default: .equal), value: value))
                    }
                }
                kind = .event(
                    characteristicID: event.characteristic_id,
                    value: event.value_present_case == HOME__V1__EVENT_TRIGGER__VALUE_PRESENT_VALUE
                        ? value(event.value) : nil,
                    rangeMin: event.min_present_case == HOME__V1__EVENT_TRIGGER__MIN_PRESENT_RANGE_MIN
                        ? event.range_min : nil,
                    rangeMax: event.max_present_case == HOME__V1__EVENT_TRIGGER__MAX_PRESENT_RANGE_MAX
                        ? event.range_max : nil,
                    conditions: conditions)
            } else {
                let timer = trigger.timer?.pointee
                kind = .timer(
                    fireDateMs: timer?.fire_date_ms ?? 0, timeZone: swiftString(timer?.time_zone),
                    recurrence: .fromWire(timer?.recurrence.rawValue ?? 0, default: .none))
            }
            tables.triggers[trigger.id] = Trigger(
                id: trigger.id, homeID: home.id, name: swiftString(trigger.name), isEnabled: trigger.enabled != 0,
                actionSetIDs: ids(trigger.action_set_ids, trigger.n_action_set_ids), kind: kind)
            home.triggerIDs.append(trigger.id)
        }
        tables.homes[home.id] = home
        tables.homeOrder.append(home.id)
    }

    /// Adds a later page's accessories to a home the first page brought.
    static func addAccessories(of message: Home__V1__Home, toHome homeID: ObjectID, in tables: inout DecodedTables) {
        guard var home = tables.homes[homeID] else { return }
        addAccessories(of: message, to: &home, in: &tables)
        tables.homes[homeID] = home
    }

    private static func addAccessories(of message: Home__V1__Home, to home: inout Home, in tables: inout DecodedTables)
    {
        for index in 0..<message.n_accessories {
            let accessory = message.accessories[index]!.pointee
            var serviceIDs: [ObjectID] = []
            for serviceIndex in 0..<accessory.n_services {
                let service = accessory.services[serviceIndex]!.pointee
                var characteristicIDs: [ObjectID] = []
                for characteristicIndex in 0..<service.n_characteristics {
                    let characteristic = characteristic(service.characteristics[characteristicIndex]!.pointee)
                    tables.characteristics[characteristic.id] = characteristic
                    characteristicIDs.append(characteristic.id)
                }
                tables.services[service.id] = AccessoryService(
                    id: service.id, accessoryID: accessory.id,
                    type: TypeIdentifier(uuid: swiftString(service.type), name: swiftString(service.type_name)),
                    name: swiftString(service.name), isPrimary: service.primary != 0,
                    isUserInteractive: service.user_interactive != 0, isHidden: service.hidden != 0,
                    linkedServiceIDs: ids(service.linked_service_ids, service.n_linked_service_ids),
                    characteristicIDs: characteristicIDs)
                serviceIDs.append(service.id)
            }
            tables.accessories[accessory.id] = Accessory(
                id: accessory.id, homeID: accessory.home_id == 0 ? home.id : accessory.home_id,
                roomID: accessory.room_id, name: swiftString(accessory.name),
                category: AccessoryCategory(rawValue: Int(accessory.category.rawValue)) ?? .other,
                manufacturer: swiftString(accessory.manufacturer), model: swiftString(accessory.model),
                serialNumber: swiftString(accessory.serial_number),
                firmwareRevision: swiftString(accessory.firmware_revision),
                isReachable: accessory.reachable != 0, bridgeID: accessory.bridge_id == 0 ? nil : accessory.bridge_id,
                bridgedAccessoryIDs: ids(accessory.bridged_accessory_ids, accessory.n_bridged_accessory_ids),
                provider: swiftString(accessory.provider), serviceIDs: serviceIDs)
            home.accessoryIDs.append(accessory.id)
        }
    }
}

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
