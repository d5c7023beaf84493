internal import CHomeProto
public import HomeModel
public import NIOCore

extension ListTypesRequest: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__ListTypesRequest.self)
        home__v1__list_types_request__init(message)
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        try withUnpacked(
            bytes, as: "home.v1.ListTypesRequest", unpack: home__v1__list_types_request__unpack,
            free: home__v1__list_types_request__free_unpacked
        ) { _ in }
    }
}

extension ListTypesResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        var arena = CArena()
        let message = arena.allocate(Home__V1__ListTypesResponse.self)
        home__v1__list_types_response__init(message)
        let characteristicTypes = self.characteristicTypes
        message.pointee.n_characteristic_types = characteristicTypes.count
        message.pointee.characteristic_types = arena.array(
            UnsafeMutablePointer<Home__V1__CharacteristicType>?.self, count: characteristicTypes.count
        ) { $0.characteristicType(characteristicTypes[$1]) }
        let serviceTypes = self.serviceTypes
        message.pointee.n_service_types = serviceTypes.count
        message.pointee.service_types = arena.array(
            UnsafeMutablePointer<Home__V1__ServiceType>?.self, count: serviceTypes.count
        ) { $0.serviceType(serviceTypes[$1]) }
        packMessage(message, into: &buffer, withFrameHeader: false)
    }

    public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        self = try withUnpacked(
            bytes, as: "home.v1.ListTypesResponse", unpack: home__v1__list_types_response__unpack,
            free: home__v1__list_types_response__free_unpacked
        ) { message throws(HomeError) in
            ListTypesResponse(
                characteristicTypes: try swiftArray(
                    message.pointee.characteristic_types,
                    message.pointee.n_characteristic_types
                ) {
                    CatalogDecoding.characteristicType($0!.pointee)
                },
                serviceTypes: try swiftArray(message.pointee.service_types, message.pointee.n_service_types) {
                    CatalogDecoding.serviceType($0!.pointee)
                })
        }
    }
}

extension CArena {
    fileprivate mutating func characteristicType(_ info: CharacteristicTypeInfo)
        -> UnsafeMutablePointer<Home__V1__CharacteristicType>
    {
        let message = allocate(Home__V1__CharacteristicType.self)
        home__v1__characteristic_type__init(message)
        message.pointee.uuid = cString(info.uuid)
        message.pointee.name = cString(info.name)
        message.pointee.format = Home__V1__Format(rawValue: info.format.wireNumber(offset: 1))
        message.pointee.permissions = properties(info.permissions)
        message.pointee.unit = Home__V1__Unit(rawValue: info.unit.wireNumber())
        if let min = info.minValue {
            message.pointee.min_present_case = HOME__V1__CHARACTERISTIC_TYPE__MIN_PRESENT_MIN_VALUE
            message.pointee.min_value = min
        }
        if let max = info.maxValue {
            message.pointee.max_present_case = HOME__V1__CHARACTERISTIC_TYPE__MAX_PRESENT_MAX_VALUE
            message.pointee.max_value = max
        }
        if let step = info.minStep {
            message.pointee.step_present_case = HOME__V1__CHARACTERISTIC_TYPE__STEP_PRESENT_STEP_VALUE
            message.pointee.step_value = step
        }
        let validValues = info.validValues
        message.pointee.n_valid_values = validValues.count
        message.pointee.valid_values = array(
            UnsafeMutablePointer<Home__V1__NamedValue>?.self,
            count: validValues.count
        ) { arena, index in
            let item = arena.allocate(Home__V1__NamedValue.self)
            home__v1__named_value__init(item)
            item.pointee.value = validValues[index].value
            item.pointee.name = arena.cString(validValues[index].name)
            return item
        }
        let validBits = info.validBits
        message.pointee.n_valid_bits = validBits.count
        message.pointee.valid_bits = array(
            UnsafeMutablePointer<Home__V1__NamedBit>?.self,
            count: validBits.count
        ) { arena, index in
            let item = arena.allocate(Home__V1__NamedBit.self)
            home__v1__named_bit__init(item)
            item.pointee.bit = UInt32(clamping: validBits[index].bit)
            item.pointee.name = arena.cString(validBits[index].name)
            return item
        }
        message.pointee.max_length = UInt32(clamping: info.maxLength ?? 0)
        message.pointee.event_only = info.isEventOnly ? 1 : 0
        return message
    }

    fileprivate mutating func serviceType(_ info: ServiceTypeInfo) -> UnsafeMutablePointer<Home__V1__ServiceType> {
        let message = allocate(Home__V1__ServiceType.self)
        home__v1__service_type__init(message)
        message.pointee.uuid = cString(info.uuid)
        message.pointee.name = cString(info.name)
        let required = info.requiredCharacteristics
        message.pointee.n_required_characteristics = required.count
        message.pointee.required_characteristics = array(UnsafeMutablePointer<CChar>?.self, count: required.count) {
            $0.cString(required[$1])
        }
        let optional = info.optionalCharacteristics
        message.pointee.n_optional_characteristics = optional.count
        message.pointee.optional_characteristics = array(UnsafeMutablePointer<CChar>?.self, count: optional.count) {
            $0.cString(optional[$1])
        }
        return message
    }
}

private enum CatalogDecoding {
    static func characteristicType(_ message: Home__V1__CharacteristicType) -> CharacteristicTypeInfo {
        var validValues: [(name: String, value: Int64)] = []
        for index in 0..<message.n_valid_values {
            if let item = message.valid_values?[index]?.pointee {
                validValues.append((name: swiftString(item.name), value: item.value))
            }
        }
        var validBits: [(bit: Int, name: String)] = []
        for index in 0..<message.n_valid_bits {
            if let item = message.valid_bits?[index]?.pointee {
                validBits.append((bit: Int(item.bit), name: swiftString(item.name)))
            }
        }
        return CharacteristicTypeInfo(
            uuid: swiftString(message.uuid), name: swiftString(message.name),
            format: .fromWire(message.format.rawValue, offset: 1, default: .data),
            permissions: ModelDecoding.properties(message.permissions),
            unit: .fromWire(message.unit.rawValue, default: .none),
            minValue: message.min_present_case == HOME__V1__CHARACTERISTIC_TYPE__MIN_PRESENT_MIN_VALUE
                ? message.min_value : nil,
            maxValue: message.max_present_case == HOME__V1__CHARACTERISTIC_TYPE__MAX_PRESENT_MAX_VALUE
                ? message.max_value : nil,
            minStep: message.step_present_case == HOME__V1__CHARACTERISTIC_TYPE__STEP_PRESENT_STEP_VALUE
                ? message.step_value : nil,
            validValues: validValues, validBits: validBits,
            maxLength: message.max_length == 0 ? nil : Int(message.max_length),
            isEventOnly: message.event_only != 0)
    }

    static func serviceType(_ message: Home__V1__ServiceType) -> ServiceTypeInfo {
        var required: [String] = []
        for index in 0..<message.n_required_characteristics {
            required.append(swiftString(message.required_characteristics?[index]))
        }
        var optional: [String] = []
        for index in 0..<message.n_optional_characteristics {
            optional.append(swiftString(message.optional_characteristics?[index]))
        }
        return ServiceTypeInfo(
            uuid: swiftString(message.uuid), name: swiftString(message.name),
            requiredCharacteristics: required, optionalCharacteristics: optional)
    }
}
