extension HomeGraph {
    /// The name of the home made for a provider's accessories when there is none.
    package static let providerDefaultHomeName = "Home"

    /// Adds a provider's accessories, or updates the ones it registered before
    /// under the same keys, and removes the keys it no longer has: all of it or,
    /// when anything is wrong, none of it.
    ///
    /// A known key keeps its accessory's id, home, room, name and memberships
    /// (scenes, groups, triggers). Its services are matched by their key, else by
    /// type and rank among the services of that type; characteristics by type
    /// within their service: matched ones keep their ids and values, new ones are
    /// added, missing ones removed (with whatever referred to them).
    ///
    /// - Parameters:
    ///   - homeID: The home new accessories go to; nil for the primary one (a home
    ///     named `providerDefaultHomeName` is made when there is none at all).
    ///   - nowMs: The time of initial values.
    /// - Throws: INVALID_ARGUMENT naming the accessory (by position and key), the
    ///   service and the characteristic at fault; NOT_FOUND for an unknown home or
    ///   a key to remove that this provider does not have.
    package mutating func register(
        _ provided: [ProvidedAccessory], removing removedKeys: [String] = [], provider: String,
        homeID: ObjectID? = nil, nowMs: Int64
    ) throws(HomeError) -> ProviderRegistration {
        var work = self
        let registration = try work.applyRegistration(
            provided, removing: removedKeys, provider: provider, homeID: homeID, nowMs: nowMs)
        self = work
        return registration
    }

    /// The accessories a provider registered, by key.
    package func accessoryIDs(ofProvider provider: String) -> [String: ObjectID] {
        var byKey: [String: ObjectID] = [:]
        for accessory in accessories.values where accessory.provider == provider && !accessory.providerKey.isEmpty {
            byKey[accessory.providerKey] = accessory.id
        }
        return byKey
    }

    private mutating func applyRegistration(
        _ provided: [ProvidedAccessory], removing removedKeys: [String], provider: String,
        homeID requestedHomeID: ObjectID?, nowMs: Int64
    ) throws(HomeError) -> ProviderRegistration {
        try ProviderNames.validateProviderID(provider)
        if provided.count > ProviderNames.maxAccessoriesPerCall {
            throw HomeError(
                .invalidArgument,
                "the registration carries \(provided.count) accessories; at most "
                    + "\(ProviderNames.maxAccessoriesPerCall) per call: register them in several calls")
        }
        var known = accessoryIDs(ofProvider: provider)
        var registration = ProviderRegistration()

        // Removals first, so that a key may be removed and registered anew in one call.
        for key in removedKeys {
            guard let id = known[key] else {
                throw HomeError(
                    .notFound, "provider \(quoted(provider)) has no accessory with key \(quoted(key)) to remove")
            }
            guard accessories[id] != nil else { continue }  // went with its bridge
            registration.changes += try removeAccessory(id)
            known[key] = nil
        }

        var seenKeys = Set<String>()
        for (position, accessory) in provided.enumerated() {
            let label = "accessory \(position + 1) (key \(quoted(accessory.key)))"
            do throws(HomeError) {
                try ProviderNames.validateKey(accessory.key, what: "the accessory key")
            } catch {
                throw HomeError(.invalidArgument, "\(label): \(error.message)")
            }
            guard seenKeys.insert(accessory.key).inserted else {
                throw HomeError(.invalidArgument, "\(label): the key is given twice in this call")
            }
        }

        // Bridges before the accessories behind them.
        let order = provided.indices.sorted { lhs, rhs in
            (provided[lhs].bridgeKey == nil ? 0 : 1, lhs) < (provided[rhs].bridgeKey == nil ? 0 : 1, rhs)
        }
        var ids = [ObjectID](repeating: 0, count: provided.count)
        var homeForNew: ObjectID?
        for position in order {
            let accessory = provided[position]
            let label = "accessory \(position + 1) (key \(quoted(accessory.key)))"
            let bridgeID = try resolveBridge(accessory, known: known, label: label)
            let plans = try Self.servicePlans(for: accessory, label: label)
            if let id = known[accessory.key], accessories[id] != nil {
                try update(
                    id, with: accessory, plans: plans, bridgeID: bridgeID, label: label, nowMs: nowMs,
                    into: &registration)
                ids[position] = id
            } else {
                if homeForNew == nil {
                    homeForNew = try homeForNewAccessories(requestedHomeID, announcing: &registration.changes)
                }
                let id = try add(
                    accessory, plans: plans, provider: provider, homeID: homeForNew!, bridgeID: bridgeID,
                    label: label, nowMs: nowMs, into: &registration)
                known[accessory.key] = id
                ids[position] = id
            }
        }
        registration.accessoryIDs = ids
        return registration
    }

    /// The home new accessories go to. A home made for them (there was none at all)
    /// is announced as `ChangeLayout` announces one: the home, then its default room.
    private mutating func homeForNewAccessories(_ requested: ObjectID?, announcing changes: inout [LayoutChange])
        throws(HomeError) -> ObjectID
    {
        if let requested {
            _ = try requireHome(requested)
            return requested
        }
        if let primary = primaryHomeID { return primary }
        let home = try addHome(name: Self.providerDefaultHomeName)
        changes += [
            layoutChange(.added, of: home), self.home(home).flatMap { layoutChange(.added, of: $0.defaultRoomID) },
        ]
        .compactMap { $0 }
        return home
    }

    private func resolveBridge(_ accessory: ProvidedAccessory, known: [String: ObjectID], label: String)
        throws(HomeError) -> ObjectID?
    {
        guard let bridgeKey = accessory.bridgeKey else { return nil }
        guard bridgeKey != accessory.key else {
            throw HomeError(.invalidArgument, "\(label): an accessory cannot be its own bridge")
        }
        guard let bridgeID = known[bridgeKey], let bridge = accessories[bridgeID] else {
            throw HomeError(
                .invalidArgument,
                "\(label): its bridge key \(quoted(bridgeKey)) names no accessory of this provider "
                    + "(register the bridge in this call or an earlier one)")
        }
        if bridge.bridgeID != nil {
            throw HomeError(
                .invalidArgument,
                "\(label): its bridge \(quoted(bridgeKey)) is itself bridged; bridges do not nest")
        }
        return bridgeID
    }

    // MARK: Applying the plans

    private mutating func add(
        _ accessory: ProvidedAccessory, plans: [ProvidedServicePlan], provider: String, homeID: ObjectID,
        bridgeID: ObjectID?, label: String, nowMs: Int64, into registration: inout ProviderRegistration
    ) throws(HomeError) -> ObjectID {
        do throws(HomeError) {
            try Self.validateName(accessory.name, for: .accessory)
        } catch {
            throw HomeError(.invalidArgument, "\(label): \(error.message)")
        }
        if let bridgeID, accessories[bridgeID]?.homeID != homeID {
            throw HomeError(.invalidArgument, "\(label): its bridge is in another home")
        }
        let home = try requireHome(homeID)
        let roomID =
            accessory.room.flatMap { name in
                home.roomIDs.first { rooms[$0].map { Self.sameName($0.name, name) } ?? false }
            } ?? home.defaultRoomID
        let accessoryID = allocateID()
        var serviceIDs: [ObjectID] = []
        for plan in plans {
            serviceIDs.append(
                addService(
                    plan, accessoryID: accessoryID, accessoryName: accessory.name, nowMs: nowMs, into: &registration))
        }
        accessories[accessoryID] = Accessory(
            id: accessoryID, homeID: homeID, roomID: roomID, name: accessory.name, category: accessory.category,
            manufacturer: accessory.manufacturer, model: accessory.model, serialNumber: accessory.serialNumber,
            firmwareRevision: accessory.firmwareRevision, isReachable: !accessory.isUnreachable, bridgeID: bridgeID,
            provider: provider, providerKey: accessory.key, serviceIDs: serviceIDs)
        homes[homeID]?.accessoryIDs.append(accessoryID)
        if let bridgeID { accessories[bridgeID]?.bridgedAccessoryIDs.append(accessoryID) }
        if let change = layoutChange(.added, of: accessoryID) { registration.changes.append(change) }
        return accessoryID
    }

    /// Makes a planned service with its characteristics (its initial values are the plan's).
    private mutating func addService(
        _ plan: ProvidedServicePlan, accessoryID: ObjectID, accessoryName: String, nowMs: Int64,
        into registration: inout ProviderRegistration
    ) -> ObjectID {
        let serviceID = allocateID()
        var characteristicIDs: [ObjectID] = []
        for characteristic in plan.characteristics {
            let id = allocateID()
            characteristics[id] = Characteristic(
                id: id, serviceID: serviceID, accessoryID: accessoryID, type: characteristic.type,
                properties: characteristic.properties, metadata: characteristic.metadata,
                value: characteristic.value, lastUpdatedMs: characteristic.value == nil ? 0 : nowMs)
            characteristicIDs.append(id)
            note(characteristic, id: id, into: &registration)
        }
        services[serviceID] = AccessoryService(
            id: serviceID, accessoryID: accessoryID, type: plan.type, name: plan.name ?? accessoryName,
            isPrimary: plan.isPrimary, isUserInteractive: !plan.isInformation, isHidden: plan.isHidden,
            characteristicIDs: characteristicIDs, providerKey: plan.key)
        return serviceID
    }

    private func note(_ plan: ProvidedCharacteristicPlan, id: ObjectID, into registration: inout ProviderRegistration) {
        if plan.needsRead { registration.unreadCharacteristicIDs.append(id) }
        if plan.isOptimistic { registration.optimisticCharacteristicIDs.insert(id) }
    }

    /// How services are told apart across registrations: their key, else their
    /// type and their rank among the unkeyed services of that type.
    private static func identities(_ services: [(type: TypeIdentifier, key: String)]) -> [String] {
        var ranks: [String: Int] = [:]
        return services.map { service in
            // A keyed service is the same only with the same type: a new type is a new service.
            guard service.key.isEmpty else { return "key:\(service.key)|\(service.type.uuid)" }
            let rank = ranks[service.type.uuid, default: 0]
            ranks[service.type.uuid] = rank + 1
            return "\(service.type.uuid)#\(rank)"
        }
    }

    private mutating func update(
        _ accessoryID: ObjectID, with provided: ProvidedAccessory, plans: [ProvidedServicePlan], bridgeID: ObjectID?,
        label: String, nowMs: Int64, into registration: inout ProviderRegistration
    ) throws(HomeError) {
        guard var accessory = accessories[accessoryID] else { return }
        if let bridgeID, accessories[bridgeID]?.homeID != accessory.homeID {
            throw HomeError(.invalidArgument, "\(label): its bridge is in another home")
        }
        let before = accessory
        accessory.category = provided.category
        accessory.manufacturer = provided.manufacturer
        accessory.model = provided.model
        accessory.serialNumber = provided.serialNumber
        accessory.firmwareRevision = provided.firmwareRevision
        if accessory.bridgeID != bridgeID {
            if let old = accessory.bridgeID { accessories[old]?.bridgedAccessoryIDs.removeAll { $0 == accessoryID } }
            if let bridgeID { accessories[bridgeID]?.bridgedAccessoryIDs.append(accessoryID) }
            accessory.bridgeID = bridgeID
        }

        let existing = accessory.serviceIDs.compactMap { services[$0] }
        let existingIdentities = Self.identities(existing.map { ($0.type, $0.providerKey) })
        var byIdentity: [String: AccessoryService] = [:]
        for (identity, service) in zip(existingIdentities, existing) { byIdentity[identity] = service }
        let plannedIdentities = Self.identities(plans.map { ($0.type, $0.key) })

        var serviceIDs: [ObjectID] = []
        var removedServices = Set<ObjectID>()
        var removedCharacteristics = Set<ObjectID>()
        var added: [ObjectID] = []
        var updated: [ObjectID] = []
        for (identity, plan) in zip(plannedIdentities, plans) {
            guard var service = byIdentity.removeValue(forKey: identity) else {
                let id = addService(
                    plan, accessoryID: accessoryID, accessoryName: accessory.name, nowMs: nowMs, into: &registration)
                serviceIDs.append(id)
                added.append(id)
                continue
            }
            let isInformation = plan.isInformation
            var byType: [String: Characteristic] = [:]
            for id in service.characteristicIDs { if let c = characteristics[id] { byType[c.type.uuid] = c } }
            var characteristicIDs: [ObjectID] = []
            for characteristicPlan in plan.characteristics {
                guard var characteristic = byType.removeValue(forKey: characteristicPlan.type.uuid) else {
                    let id = allocateID()
                    characteristics[id] = Characteristic(
                        id: id, serviceID: service.id, accessoryID: accessoryID, type: characteristicPlan.type,
                        properties: characteristicPlan.properties, metadata: characteristicPlan.metadata,
                        value: characteristicPlan.value, lastUpdatedMs: characteristicPlan.value == nil ? 0 : nowMs)
                    characteristicIDs.append(id)
                    added.append(id)
                    note(characteristicPlan, id: id, into: &registration)
                    continue
                }
                let plan = characteristicPlan
                let changed =
                    characteristic.type.name != plan.type.name || characteristic.properties != plan.properties
                    || characteristic.metadata != plan.metadata
                if changed {
                    characteristic.type = plan.type
                    characteristic.properties = plan.properties
                    characteristic.metadata = plan.metadata
                    // A value the new metadata no longer admits is dropped, and read again.
                    if let value = characteristic.value,
                        (try? characteristic.validate(value, enforceWritable: false)) == nil
                    {
                        characteristic.value = nil
                        characteristic.lastUpdatedMs = 0
                    }
                    characteristics[characteristic.id] = characteristic
                    updated.append(characteristic.id)
                }
                if let value = plan.value {
                    // A known accessory keeps the daemon's name (a user may have
                    // renamed it): its Name is that, not the provider's.
                    let kept = isInformation && plan.type.name == "Name" ? .string(accessory.name) : value
                    registration.reportedValues.append(
                        CharacteristicWrite(characteristicID: characteristic.id, value: kept))
                }
                note(plan, id: characteristic.id, into: &registration)
                characteristicIDs.append(characteristic.id)
            }
            for leftover in byType.values { removedCharacteristics.insert(leftover.id) }
            let serviceChanged =
                service.isPrimary != plan.isPrimary || service.isHidden != plan.isHidden
                || service.characteristicIDs != characteristicIDs
            service.isPrimary = plan.isPrimary
            service.isHidden = plan.isHidden
            service.characteristicIDs = characteristicIDs
            services[service.id] = service
            if serviceChanged { updated.append(service.id) }
            serviceIDs.append(service.id)
        }
        for leftover in byIdentity.values {
            removedServices.insert(leftover.id)
            removedCharacteristics.formUnion(leftover.characteristicIDs)
        }

        accessory.serviceIDs = serviceIDs
        accessories[accessoryID] = accessory
        for id in added { if let change = layoutChange(.added, of: id) { registration.changes.append(change) } }
        for id in updated { if let change = layoutChange(.updated, of: id) { registration.changes.append(change) } }
        if !removedServices.isEmpty || !removedCharacteristics.isEmpty {
            for id in removedServices.sorted() + removedCharacteristics.sorted() {
                if let change = layoutChange(.removed, of: id) { registration.changes.append(change) }
            }
            registration.changes += forget(
                services: removedServices, characteristics: removedCharacteristics, homeID: accessory.homeID)
            for id in removedCharacteristics { characteristics[id] = nil }
            for id in removedServices { services[id] = nil }
        }
        if before != accessory, let change = layoutChange(.updated, of: accessoryID) {
            registration.changes.append(change)
        }
    }
}
