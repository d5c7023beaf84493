extension HomeGraph {
    /// The catalog name of the service every accessory has.
    static let accessoryInformation = "AccessoryInformation"

    /// Adds an accessory built from catalog types, as HomeKit would see it after pairing.
    ///
    /// The accessory gets an AccessoryInformation service first (Name, Manufacturer,
    /// Model, SerialNumber, FirmwareRevision and Identify, from the spec), then the
    /// spec's services in order. Each service has every required characteristic of
    /// its type plus the optional ones the spec names, in catalog order, with the
    /// catalog's permissions and metadata. Initial values are validated as a
    /// provider's writes; a characteristic without one gets its type's default
    /// (`CharacteristicMetadata.defaultValue`; a Name gets the service's name), except
    /// that an event-only characteristic (a button press) and a write-only one
    /// (Identify) start with no value, since they have no state to report.
    ///
    /// - Parameters:
    ///   - roomID: The room; nil for the home's default room.
    ///   - nowMs: The time of the initial values, as their `lastUpdatedMs`.
    /// - Returns: The accessory's id; its services and characteristics get the ids after it.
    /// - Throws: `.notFound` for an unknown home, room or bridge; `.invalidArgument`
    ///   for a bad name, an unknown service or characteristic type, a characteristic
    ///   its service type does not have, an invalid initial value, or two primary services.
    @discardableResult
    package mutating func addAccessory(
        _ spec: AccessorySpec, homeID: ObjectID, roomID: ObjectID? = nil,
        nowMs: Int64
    ) throws(HomeError) -> ObjectID {
        let home = try requireHome(homeID)
        let roomID = roomID ?? home.defaultRoomID
        _ = try requireRoom(roomID)
        try requireSameHome(roomID, .room, homeID: homeID)
        try Self.validateName(spec.name, for: .accessory)
        if let bridgeID = spec.bridgeID {
            let bridge = try requireAccessory(bridgeID)
            try requireSameHome(bridgeID, .accessory, homeID: homeID)
            if let outer = bridge.bridgeID {
                throw HomeError(
                    .invalidArgument,
                    "accessory \(bridgeID) (\(quoted(bridge.name))) is itself bridged through accessory "
                        + "\(outer); bridges do not nest")
            }
        }
        let plans = try servicePlans(for: spec)
        let primaries = plans.filter(\.isPrimary)
        if primaries.count > 1 {
            throw HomeError(
                .invalidArgument,
                "accessory \(quoted(spec.name)) has \(primaries.count) primary services ("
                    + primaries.map(\.info.name).joined(separator: ", ") + "); at most one may be primary")
        }

        // Everything is checked: from here on nothing throws.
        let accessoryID = allocateID()
        var serviceIDs: [ObjectID] = []
        for plan in plans {
            let serviceID = allocateID()
            var characteristicIDs: [ObjectID] = []
            for (info, value) in plan.characteristics {
                let id = allocateID()
                characteristics[id] = Characteristic(
                    id: id, serviceID: serviceID, accessoryID: accessoryID,
                    typeInfo: info, value: value,
                    lastUpdatedMs: value == nil ? 0 : nowMs)
                characteristicIDs.append(id)
            }
            services[serviceID] = AccessoryService(
                id: serviceID, accessoryID: accessoryID, type: plan.info.typeIdentifier, name: plan.name,
                isPrimary: plan.isPrimary, isUserInteractive: plan.info.name != Self.accessoryInformation,
                isHidden: plan.isHidden, characteristicIDs: characteristicIDs)
            serviceIDs.append(serviceID)
        }
        accessories[accessoryID] = Accessory(
            id: accessoryID, homeID: homeID, roomID: roomID, name: spec.name, category: spec.category,
            manufacturer: spec.manufacturer, model: spec.model, serialNumber: spec.serialNumber,
            firmwareRevision: spec.firmwareRevision, isReachable: spec.isReachable, bridgeID: spec.bridgeID,
            provider: spec.provider, providerKey: spec.providerKey, serviceIDs: serviceIDs)
        homes[homeID]?.accessoryIDs.append(accessoryID)
        if let bridgeID = spec.bridgeID {
            accessories[bridgeID]?.bridgedAccessoryIDs.append(accessoryID)
        }
        return accessoryID
    }

    /// A service to build: its type, name, and characteristics with validated initial values.
    private struct ServicePlan {
        var info: ServiceTypeInfo
        var name: String
        var isPrimary: Bool
        var isHidden: Bool
        var characteristics: [(info: CharacteristicTypeInfo, value: CharacteristicValue?)]
    }

    /// The plans for AccessoryInformation and the spec's services, all values validated.
    private func servicePlans(for spec: AccessorySpec) throws(HomeError) -> [ServicePlan] {
        var informationSpec = ServiceSpec(type: Self.accessoryInformation)
        var others: [ServiceSpec] = []
        var sawInformation = false
        for serviceSpec in spec.services {
            guard HAPCatalog.service(serviceSpec.type)?.name == Self.accessoryInformation else {
                others.append(serviceSpec)
                continue
            }
            if sawInformation {
                throw HomeError(
                    .invalidArgument,
                    "accessory \(quoted(spec.name)) lists AccessoryInformation twice; it has one")
            }
            sawInformation = true
            informationSpec.name = serviceSpec.name
            informationSpec.isHidden = serviceSpec.isHidden
            informationSpec.isPrimary = serviceSpec.isPrimary
            informationSpec.characteristics = serviceSpec.characteristics
            informationSpec.optionalCharacteristics = serviceSpec.optionalCharacteristics
        }
        // The spec's fields are the information service's defaults; its own values win.
        let information: [String: CharacteristicValue] = [
            "Name": .string(spec.name), "Manufacturer": .string(spec.manufacturer), "Model": .string(spec.model),
            "SerialNumber": .string(spec.serialNumber), "FirmwareRevision": .string(spec.firmwareRevision),
        ]
        var plans = [try plan(informationSpec, accessoryName: spec.name, defaults: information)]
        for serviceSpec in others {
            plans.append(try plan(serviceSpec, accessoryName: spec.name, defaults: [:]))
        }
        return plans
    }

    private func plan(_ spec: ServiceSpec, accessoryName: String, defaults: [String: CharacteristicValue])
        throws(HomeError) -> ServicePlan
    {
        let owner = "accessory \(quoted(accessoryName))"
        guard let info = HAPCatalog.service(spec.type) else {
            throw HomeError(
                .invalidArgument,
                "unknown service type \(quoted(spec.type)) in \(owner); a service type is a HAP catalog "
                    + "name such as Lightbulb, or its UUID")
        }
        if let name = spec.name { try Self.validateName(name, for: .service) }
        let serviceName = spec.name ?? accessoryName
        // A Name characteristic, where a service has one, says the service's name.
        var defaults = defaults
        if defaults["Name"] == nil { defaults["Name"] = .string(serviceName) }
        let allowed = info.requiredCharacteristics + info.optionalCharacteristics

        /// Finds a characteristic type the service may have, by name or UUID.
        func member(_ key: String) throws(HomeError) -> CharacteristicTypeInfo {
            guard let characteristic = HAPCatalog.characteristic(key) else {
                throw HomeError(
                    .invalidArgument,
                    "unknown characteristic type \(quoted(key)) for service \(info.name) of \(owner)")
            }
            guard allowed.contains(characteristic.name) else {
                throw HomeError(
                    .invalidArgument,
                    "service type \(info.name) has no characteristic \(characteristic.name); it has "
                        + allowed.joined(separator: ", "))
            }
            return characteristic
        }

        var values: [String: CharacteristicValue] = [:]
        // Sorted so that, of several problems, the same one is reported every time.
        for (key, value) in spec.characteristics.sorted(by: { $0.key < $1.key }) {
            let characteristic = try member(key)
            if values.updateValue(value, forKey: characteristic.name) != nil {
                throw HomeError(
                    .invalidArgument,
                    "service \(info.name) of \(owner) is given two values for \(characteristic.name)")
            }
        }
        var included = Set(info.requiredCharacteristics).union(values.keys)
        for key in spec.optionalCharacteristics {
            included.insert(try member(key).name)
        }

        var characteristics: [(info: CharacteristicTypeInfo, value: CharacteristicValue?)] = []
        for name in allowed where included.contains(name) {
            guard let characteristic = HAPCatalog.characteristic(named: name) else { continue }
            let value: CharacteristicValue?
            if let given = values[name] ?? defaults[name] {
                let label = "\(name) of service \(info.name) of \(owner)"
                let probe = Characteristic(id: 0, serviceID: 0, accessoryID: 0, typeInfo: characteristic)
                value = try probe.validate(given, enforceWritable: false, label: label)
            } else if characteristic.isEventOnly || !characteristic.permissions.readable {
                value = nil
            } else {
                value = characteristic.defaultMetadata.defaultValue
            }
            characteristics.append((info: characteristic, value: value))
        }
        return ServicePlan(
            info: info, name: serviceName, isPrimary: spec.isPrimary,
            isHidden: spec.isHidden, characteristics: characteristics)
    }
}
