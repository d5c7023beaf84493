public import HomeModel
public import NIOCore

// The provider calls on the wire: model values to their generated `Proto` mirrors
// and back. Plain Swift; protobuf-c is behind the mirrors.

extension ProviderCommand: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        let command: Proto.ProviderCommand.Command
        switch kind {
        case .opened(let opened):
            command = .opened(opened)
        case .read(let ids):
            command = .read(Proto.ReadCommand(characteristicIDs: ids))
        case .write(let writes, let atomic):
            command = .write(Proto.WriteCommand(writes: writes.map(\.wire), atomic: atomic))
        case .ping:
            command = .ping(Proto.PingCommand())
        }
        Proto.ProviderCommand(requestID: requestID, timeoutMs: timeoutMs, command: command).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.ProviderCommand(serialized: bytes)
        let kind: Kind
        switch wire.command {
        case .opened(let opened)?:
            kind = .opened(opened)
        case .read(let read)?:
            kind = .read(characteristicIDs: read.characteristicIDs)
        case .write(let write)?:
            kind = .write(
                try write.writes.map { w throws(HomeError) in try CharacteristicWrite(wire: w) }, atomic: write.atomic)
        case .ping?:
            kind = .ping
        case nil:
            throw HomeError(.invalidArgument, "provider command \(wire.requestID) carries no command")
        }
        self.init(requestID: wire.requestID, timeoutMs: wire.timeoutMs, kind: kind)
    }
}

extension CommandAnswer: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Proto.CommandAnswer(
            requestID: requestID, reads: reads.map(\.wire),
            writes: writes.map(\.wire), code: error?.code.wireNumber ?? 0,
            message: error?.message ?? ""
        ).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.CommandAnswer(serialized: bytes)
        // A status number the schema does not declare would reach the client as
        // UNKNOWN, hiding the provider's mistake: it is refused, as any undeclared
        // enum number is.
        let request = "the answer to request \(wire.requestID)"
        try Self.checkCode(wire.code, in: request)
        for read in wire.reads {
            try Self.checkCode(read.code, in: "\(request), characteristic \(read.characteristicID) of its reads")
        }
        for write in wire.writes {
            try Self.checkCode(write.code, in: "\(request), characteristic \(write.characteristicID) of its writes")
        }
        self.init(
            requestID: wire.requestID, reads: wire.reads.map(CharacteristicRead.init(wire:)),
            writes: wire.writes.map(WriteResult.init(wire:)), error: .fromWire(code: wire.code, message: wire.message))
    }

    /// - Throws: INVALID_ARGUMENT naming the number and where it was, when it is
    ///   not one of the schema's `StatusCode`s.
    private static func checkCode(_ code: UInt32, in place: String) throws(HomeError) {
        guard code > 16 else { return }
        throw HomeError(
            .invalidArgument,
            "\(place): status code \(code) is not one the schema defines (StatusCode is 0 to 16)")
    }
}

// MARK: Registration

extension Proto.ProvidedCharacteristic {
    init(_ characteristic: ProvidedCharacteristic) {
        self.init(
            type: characteristic.type, typeName: characteristic.customName ?? "",
            properties: characteristic.properties,
            metadata: characteristic.metadata.map(Proto.CharacteristicMetadata.init),
            value: characteristic.value.map(Proto.Value.init), optimistic: characteristic.isOptimistic)
    }
}

extension ProvidedCharacteristic {
    /// - Parameter label: how errors name it ("accessory 1 (key \"k\"), service 2, characteristic 3").
    init(_ wire: Proto.ProvidedCharacteristic, label: String) throws(HomeError) {
        var metadata: CharacteristicMetadata?
        if let given = wire.metadata {
            // UNSPECIFIED (0) stands for the catalog type's format; a custom type without
            // one is left without metadata, which the model refuses by name. A number
            // the schema does not define is refused here.
            let format: CharacteristicFormat?
            if given.format == 0 {
                format = HAPCatalog.characteristic(wire.type)?.format
            } else {
                format = try CharacteristicFormat.fromWire(given.format, field: "\(label): metadata.format")
            }
            let unit = try CharacteristicUnit.fromWire(given.unit, field: "\(label): metadata.unit")
            if let format {
                metadata = CharacteristicMetadata(given)
                metadata?.format = format
                metadata?.unit = unit
            }
        }
        self.init(
            type: wire.type, customName: wire.typeName.isEmpty ? nil : wire.typeName,
            properties: wire.properties, metadata: metadata,
            value: CharacteristicValue(wire.value), optimistic: wire.optimistic)
    }
}

extension Proto.ProvidedService {
    init(_ service: ProvidedService) {
        self.init(
            type: service.type, key: service.key ?? "", name: service.name ?? "", primary: service.isPrimary,
            hidden: service.isHidden, characteristics: service.characteristics.map(Proto.ProvidedCharacteristic.init))
    }
}

extension ProvidedService {
    init(_ wire: Proto.ProvidedService, label: String) throws(HomeError) {
        var characteristics: [ProvidedCharacteristic] = []
        characteristics.reserveCapacity(wire.characteristics.count)
        for (position, characteristic) in wire.characteristics.enumerated() {
            characteristics.append(
                try ProvidedCharacteristic(
                    characteristic, label: "\(label), characteristic \(position + 1) (\"\(characteristic.type)\")"))
        }
        self.init(
            type: wire.type, key: wire.key.isEmpty ? nil : wire.key, name: wire.name.isEmpty ? nil : wire.name,
            primary: wire.primary, hidden: wire.hidden, characteristics: characteristics)
    }
}

extension Proto.ProvidedAccessory {
    init(_ accessory: ProvidedAccessory) {
        self.init(
            key: accessory.key, name: accessory.name, category: UInt32(accessory.category.rawValue),
            manufacturer: accessory.manufacturer, model: accessory.model, serialNumber: accessory.serialNumber,
            firmwareRevision: accessory.firmwareRevision, bridgeKey: accessory.bridgeKey ?? "",
            room: accessory.room ?? "", services: accessory.services.map(Proto.ProvidedService.init),
            unreachable: accessory.isUnreachable)
    }
}

extension ProvidedAccessory {
    init(_ wire: Proto.ProvidedAccessory, position: Int) throws(HomeError) {
        let label = "accessory \(position + 1) (key \"\(wire.key)\")"
        guard let category = AccessoryCategory(rawValue: Int(wire.category)) else {
            throw HomeError(
                .invalidArgument,
                "\(label): unknown category \(wire.category); "
                    + "give one of HAP's accessory categories (CATEGORY_OTHER = 1 when none fits)")
        }
        var services: [ProvidedService] = []
        for (index, service) in wire.services.enumerated() {
            services.append(try ProvidedService(service, label: "\(label), service \(index + 1) (\"\(service.type)\")"))
        }
        self.init(
            key: wire.key, name: wire.name, category: category, manufacturer: wire.manufacturer, model: wire.model,
            serialNumber: wire.serialNumber, firmwareRevision: wire.firmwareRevision,
            bridgeKey: wire.bridgeKey.isEmpty ? nil : wire.bridgeKey, room: wire.room.isEmpty ? nil : wire.room,
            services: services, isUnreachable: wire.unreachable)
    }
}

extension RegisterAccessoriesRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Proto.RegisterAccessoriesRequest(
            homeID: homeID ?? 0, accessories: accessories.map(Proto.ProvidedAccessory.init), removeKeys: removeKeys
        ).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.RegisterAccessoriesRequest(serialized: bytes)
        var accessories: [ProvidedAccessory] = []
        accessories.reserveCapacity(wire.accessories.count)
        for (position, accessory) in wire.accessories.enumerated() {
            accessories.append(try ProvidedAccessory(accessory, position: position))
        }
        self.init(homeID: wire.homeID == 0 ? nil : wire.homeID, accessories: accessories, removeKeys: wire.removeKeys)
    }
}

extension RegisterAccessoriesResponse: WireMessage, ServiceTables {
    func service(_ id: ObjectID) -> AccessoryService? { services[id] }
    func characteristic(_ id: ObjectID) -> Characteristic? { characteristics[id] }

    /// These accessories as the graph has them.
    package init(graph: HomeGraph, accessoryIDs: [ObjectID], seq: UInt64) {
        let listed = ListAccessoriesResponse(graph: graph, accessoryIDs: accessoryIDs)
        self.init(
            accessories: listed.accessories, services: listed.services, characteristics: listed.characteristics,
            seq: seq)
    }

    public func encode(into buffer: inout ByteBuffer) {
        Proto.RegisterAccessoriesResponse(accessories: accessories.map { Proto.Accessory($0, in: self) }, seq: seq)
            .serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.RegisterAccessoriesResponse(serialized: bytes)
        var tables = DecodedTables()
        tables.add(
            home: Proto.Home(
                id: 0, name: "", primary: false, defaultRoomID: 0, rooms: [], zones: [],
                accessories: wire.accessories, serviceGroups: [], actionSets: [], triggers: [], location: nil))
        self.init(
            accessories: wire.accessories.compactMap { tables.accessories[$0.id] }, services: tables.services,
            characteristics: tables.characteristics, seq: wire.seq)
    }
}
