internal import HomeModel

extension CharacteristicTypeInfo: WireConvertible {
    var wire: Proto.CharacteristicType {
        Proto.CharacteristicType(
            uuid: uuid, name: name, format: format.wireNumber, permissions: permissions,
            unit: unit.wireNumber, minValue: minValue, maxValue: maxValue, stepValue: minStep,
            validValues: validValues.map { Proto.NamedValue(value: $0.value, name: $0.name) },
            validBits: validBits.map { Proto.NamedBit(bit: UInt32(clamping: $0.bit), name: $0.name) },
            maxLength: UInt32(clamping: maxLength ?? 0), eventOnly: isEventOnly)
    }

    init(wire: Proto.CharacteristicType) {
        self.init(
            uuid: wire.uuid, name: wire.name, format: .fromWire(wire.format, default: .data),
            permissions: wire.permissions ?? CharacteristicProperties(readable: false),
            unit: .fromWire(wire.unit, default: .none),
            minValue: wire.minValue, maxValue: wire.maxValue, minStep: wire.stepValue,
            validValues: wire.validValues.map { (name: $0.name, value: $0.value) },
            validBits: wire.validBits.map { (bit: Int($0.bit), name: $0.name) },
            maxLength: wire.maxLength == 0 ? nil : Int(wire.maxLength), isEventOnly: wire.eventOnly)
    }
}
