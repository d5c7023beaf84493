/// Planning a provider's registration: each provided accessory checked against the
/// catalog and turned into the services and characteristics it will have, before
/// anything in the graph changes (`HomeGraph+Providers.swift` applies the plans).
extension HomeGraph {
    // MARK: Plans: what the accessory will be, checked before anything changes

    struct ProvidedCharacteristicPlan {
        var type: TypeIdentifier
        var properties: CharacteristicProperties
        var metadata: CharacteristicMetadata
        /// The value the provider gave; nil when it gave none. A characteristic is
        /// never given a made-up value: it has no value until its device reports one.
        var value: CharacteristicValue?
        var isOptimistic: Bool
        var isEventOnly: Bool

        var needsRead: Bool { properties.readable && value == nil && !isEventOnly }
    }

    struct ProvidedServicePlan {
        var type: TypeIdentifier
        var key: String
        var name: String?
        var isPrimary: Bool
        var isHidden: Bool
        var isInformation: Bool
        var characteristics: [ProvidedCharacteristicPlan]
    }

    /// AccessoryInformation from the accessory's fields, then its services.
    static func servicePlans(for accessory: ProvidedAccessory, label: String) throws(HomeError)
        -> [ProvidedServicePlan]
    {
        guard let informationType = HAPCatalog.service(named: accessoryInformation) else { return [] }
        let information: [String: CharacteristicValue] = [
            "Name": .string(accessory.name), "Manufacturer": .string(accessory.manufacturer),
            "Model": .string(accessory.model), "SerialNumber": .string(accessory.serialNumber),
            "FirmwareRevision": .string(accessory.firmwareRevision),
        ]
        var informationPlan = ProvidedServicePlan(
            type: informationType.typeIdentifier, key: "", name: nil, isPrimary: false, isHidden: false,
            isInformation: true, characteristics: [])
        for name in informationType.requiredCharacteristics {
            guard let info = HAPCatalog.characteristic(named: name) else { continue }
            let value = information[name]
            informationPlan.characteristics.append(
                ProvidedCharacteristicPlan(
                    type: info.typeIdentifier, properties: info.permissions, metadata: info.defaultMetadata,
                    value: try value.map { value throws(HomeError) in
                        try Characteristic(id: 0, serviceID: 0, accessoryID: 0, typeInfo: info)
                            .validate(value, enforceWritable: false, label: "\(label): \(name)", source: .device)
                    }, isOptimistic: false, isEventOnly: info.isEventOnly))
        }
        var plans = [informationPlan]
        var seenServiceKeys = Set<String>()
        for (position, service) in accessory.services.enumerated() {
            let plan = try servicePlan(service, position: position, label: label)
            if !plan.key.isEmpty, !seenServiceKeys.insert(plan.key).inserted {
                throw HomeError(.invalidArgument, "\(label): two services have the key \(quoted(plan.key))")
            }
            plans.append(plan)
        }
        let primaries = plans.filter(\.isPrimary).count
        if primaries > 1 {
            throw HomeError(
                .invalidArgument, "\(label) has \(primaries) primary services; at most one may be primary")
        }
        return plans
    }

    private static func servicePlan(_ service: ProvidedService, position: Int, label accessoryLabel: String)
        throws(HomeError) -> ProvidedServicePlan
    {
        let label = "\(accessoryLabel), service \(position + 1) (\(quoted(service.type)))"
        guard let info = HAPCatalog.service(service.type) else {
            throw HomeError(
                .invalidArgument,
                "\(label): unknown service type; a service type is a HAP catalog name such as Lightbulb, or its UUID")
        }
        if info.name == accessoryInformation {
            throw HomeError(
                .invalidArgument,
                "\(label): AccessoryInformation is built by the daemon from the accessory's fields; do not list it")
        }
        if let key = service.key { try ProviderNames.validateKey(key, what: "\(label): the service key") }
        if let name = service.name { try validateName(name, for: .service) }
        let allowed = Set(info.requiredCharacteristics + info.optionalCharacteristics)
        var plans: [ProvidedCharacteristicPlan] = []
        var seenTypes = Set<String>()
        for (index, provided) in service.characteristics.enumerated() {
            let characteristicLabel = "\(label), characteristic \(index + 1) (\(quoted(provided.type)))"
            let plan = try characteristicPlan(
                provided, allowed: allowed, service: info.name, label: characteristicLabel)
            guard seenTypes.insert(plan.type.uuid).inserted else {
                throw HomeError(.invalidArgument, "\(characteristicLabel): \(plan.type.name) is listed twice")
            }
            plans.append(plan)
        }
        let present = Set(plans.map(\.type.name))
        let missing = info.requiredCharacteristics.filter { !present.contains($0) }
        if !missing.isEmpty {
            throw HomeError(
                .invalidArgument,
                "\(label): \(withArticle(info.name)) service requires \(missing.joined(separator: ", ")), which "
                    + (missing.count == 1 ? "is" : "are") + " missing")
        }
        return ProvidedServicePlan(
            type: info.typeIdentifier, key: service.key ?? "", name: service.name, isPrimary: service.isPrimary,
            isHidden: service.isHidden, isInformation: false, characteristics: plans)
    }

    private static func characteristicPlan(
        _ provided: ProvidedCharacteristic, allowed: Set<String>, service: String, label: String
    ) throws(HomeError) -> ProvidedCharacteristicPlan {
        var plan: ProvidedCharacteristicPlan
        if let info = HAPCatalog.characteristic(provided.type) {
            guard allowed.contains(info.name) else {
                throw HomeError(
                    .invalidArgument,
                    "\(label): service type \(service) has no characteristic \(info.name); it has "
                        + allowed.sorted().joined(separator: ", ")
                        + " (a characteristic of your own needs a full UUID outside the catalog)")
            }
            let properties = try narrowed(provided.properties, of: info.permissions, label: label)
            let metadata = try narrowed(provided.metadata, of: info, label: label)
            plan = ProvidedCharacteristicPlan(
                type: info.typeIdentifier, properties: properties, metadata: metadata, value: nil,
                isOptimistic: provided.isOptimistic, isEventOnly: info.isEventOnly)
        } else {
            guard let uuid = HAPCatalog.fullUUID(provided.type), uuid.count == 36 else {
                throw HomeError(
                    .invalidArgument,
                    "\(label): unknown characteristic type; give a catalog name such as Brightness, or a full "
                        + "UUID (8-4-4-4-12 hex digits) for a type of your own")
            }
            guard let name = provided.customName, !name.isEmpty else {
                throw HomeError(.invalidArgument, "\(label): the custom type \(uuid) needs a type name")
            }
            guard let properties = provided.properties else {
                throw HomeError(.invalidArgument, "\(label): the custom type \(uuid) needs its properties")
            }
            guard let metadata = provided.metadata else {
                throw HomeError(.invalidArgument, "\(label): the custom type \(uuid) needs its metadata, with a format")
            }
            try checkRange(metadata, label: label)
            plan = ProvidedCharacteristicPlan(
                type: TypeIdentifier(uuid: uuid, name: name), properties: properties, metadata: metadata,
                value: nil, isOptimistic: provided.isOptimistic, isEventOnly: false)
        }
        if let value = provided.value {
            let probe = Characteristic(
                id: 0, serviceID: 0, accessoryID: 0, type: plan.type, properties: plan.properties,
                metadata: plan.metadata)
            plan.value = try probe.validate(value, enforceWritable: false, label: label, source: .device)
        }
        return plan
    }

    /// A catalog type's permissions as the provider restricts them.
    private static func narrowed(
        _ given: CharacteristicProperties?, of catalog: CharacteristicProperties, label: String
    ) throws(HomeError) -> CharacteristicProperties {
        guard let given else { return catalog }
        let added = [
            (given.readable && !catalog.readable, "readable"), (given.writable && !catalog.writable, "writable"),
            (given.supportsEventNotification && !catalog.supportsEventNotification, "event notification"),
        ].filter(\.0).map(\.1)
        if !added.isEmpty {
            throw HomeError(
                .invalidArgument,
                "\(label): the catalog type is not \(added.joined(separator: " or ")); a provider may drop "
                    + "permissions, not add them")
        }
        return given
    }

    /// A catalog type's metadata as the provider narrows it.
    private static func narrowed(
        _ given: CharacteristicMetadata?, of info: CharacteristicTypeInfo, label: String
    ) throws(HomeError) -> CharacteristicMetadata {
        let catalog = info.defaultMetadata
        guard var metadata = given else { return catalog }
        if metadata.format != catalog.format {
            throw HomeError(
                .invalidArgument,
                "\(label): the format of \(info.name) is \(catalog.format.rawValue); it cannot be "
                    + metadata.format.rawValue)
        }
        if metadata.unit == .none { metadata.unit = catalog.unit }
        if metadata.unit != catalog.unit {
            throw HomeError(
                .invalidArgument,
                "\(label): the unit of \(info.name) is \(catalog.unit.rawValue); it cannot be \(metadata.unit.rawValue)"
            )
        }
        try checkRange(metadata, label: label)
        // The catalog's range is a default, not a law: a radiator valve really goes
        // down to 5 °C, a bulb to 153 mireds. A provider may narrow it or widen it to
        // what its device has, as far as the format can hold.
        if let range = metadata.format.integerRange {
            for (bound, what) in [(metadata.minValue, "minimum"), (metadata.maxValue, "maximum")] {
                if let bound, !range.contains(Int128(exactly: bound.rounded()) ?? Int128.max) {
                    throw HomeError(
                        .invalidArgument,
                        "\(label): \(what) \(bound) is outside what format \(metadata.format.rawValue) holds "
                            + "(\(range.lowerBound)...\(range.upperBound))")
                }
            }
        }
        metadata.minValue = metadata.minValue ?? catalog.minValue
        metadata.maxValue = metadata.maxValue ?? catalog.maxValue
        metadata.minStep = metadata.minStep ?? catalog.minStep
        if !catalog.validValues.isEmpty {
            let unknown = metadata.validValues.filter { !catalog.validValues.contains($0) }
            if !unknown.isEmpty {
                throw HomeError(
                    .invalidArgument,
                    "\(label): valid values \(unknown.map(String.init).joined(separator: ", ")) are not among "
                        + "the catalog's (\(catalog.validValues.map(String.init).joined(separator: ", ")))")
            }
            if metadata.validValues.isEmpty { metadata.validValues = catalog.validValues }
        }
        if metadata.validBits == 0 { metadata.validBits = catalog.validBits }
        if metadata.maxLength == nil { metadata.maxLength = catalog.maxLength }
        return metadata
    }

    private static func checkRange(_ metadata: CharacteristicMetadata, label: String) throws(HomeError) {
        if let min = metadata.minValue, let max = metadata.maxValue, min > max {
            throw HomeError(.invalidArgument, "\(label): minimum \(min) is above maximum \(max)")
        }
        if let step = metadata.minStep, !(step > 0) {
            throw HomeError(.invalidArgument, "\(label): step \(step) must be above 0")
        }
        for bound in [metadata.minValue, metadata.maxValue, metadata.minStep].compactMap({ $0 }) where !bound.isFinite {
            throw HomeError(.invalidArgument, "\(label): \(bound) is not a finite number")
        }
        if let length = metadata.maxLength, length > CharacteristicTypeInfo.largestMaxLength {
            throw HomeError(
                .invalidArgument,
                "\(label): maximum length \(length) bytes is above the largest the daemon takes, "
                    + "\(CharacteristicTypeInfo.largestMaxLength) bytes (a value travels in one frame)")
        }
    }
}
