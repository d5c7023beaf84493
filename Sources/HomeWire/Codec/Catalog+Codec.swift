public import HomeModel
public import NIOCore

extension ListTypesResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Proto.ListTypesResponse(
            characteristicTypes: characteristicTypes.map(Proto.CharacteristicType.init),
            serviceTypes: serviceTypes.map(Proto.ServiceType.init)
        ).serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.ListTypesResponse(serialized: bytes)
        self.init(
            characteristicTypes: wire.characteristicTypes.map(CharacteristicTypeInfo.init),
            serviceTypes: wire.serviceTypes.map(ServiceTypeInfo.init))
    }
}

extension Proto.CharacteristicType {
    init(_ info: CharacteristicTypeInfo) {
        uuid = info.uuid
        name = info.name
        format = info.format.wireNumber
        permissions = Proto.CharacteristicProperties(info.permissions)
        unit = info.unit.wireNumber
        minValue = info.minValue
        maxValue = info.maxValue
        stepValue = info.minStep
        validValues = info.validValues.map { Proto.NamedValue(value: $0.value, name: $0.name) }
        validBits = info.validBits.map { Proto.NamedBit(bit: UInt32(clamping: $0.bit), name: $0.name) }
        maxLength = UInt32(clamping: info.maxLength ?? 0)
        eventOnly = info.isEventOnly
    }
}

extension CharacteristicTypeInfo {
    init(_ wire: Proto.CharacteristicType) {
        self.init(
            uuid: wire.uuid, name: wire.name, format: .fromWire(wire.format, default: .data),
            permissions: CharacteristicProperties(wire.permissions), unit: .fromWire(wire.unit, default: .none),
            minValue: wire.minValue, maxValue: wire.maxValue, minStep: wire.stepValue,
            validValues: wire.validValues.map { (name: $0.name, value: $0.value) },
            validBits: wire.validBits.map { (bit: Int($0.bit), name: $0.name) },
            maxLength: wire.maxLength == 0 ? nil : Int(wire.maxLength), isEventOnly: wire.eventOnly)
    }
}

extension Proto.ServiceType {
    init(_ info: ServiceTypeInfo) {
        self.init(
            uuid: info.uuid, name: info.name, requiredCharacteristics: info.requiredCharacteristics,
            optionalCharacteristics: info.optionalCharacteristics)
    }
}

extension ServiceTypeInfo {
    init(_ wire: Proto.ServiceType) {
        self.init(
            uuid: wire.uuid, name: wire.name, requiredCharacteristics: wire.requiredCharacteristics,
            optionalCharacteristics: wire.optionalCharacteristics)
    }
}
