import Testing

@testable import HomeModel

/// A characteristic of a catalog type with id 42, as the graph would build it.
func catalogCharacteristic(_ type: String, id: ObjectID = 42) -> Characteristic {
    guard let info = HAPCatalog.characteristic(type) else { fatalError("no catalog type \(type)") }
    return Characteristic(id: id, serviceID: 2, accessoryID: 1, typeInfo: info)
}

/// The error a validation throws, or nil if it accepted the value.
func validationError(_ type: String, _ value: CharacteristicValue, enforceWritable: Bool = true) -> HomeError? {
    do {
        _ = try catalogCharacteristic(type).validate(value, enforceWritable: enforceWritable)
        return nil
    } catch {
        return error
    }
}

@Suite("Value validation")
struct ValidationTests {
    @Test("a write to a read-only characteristic names it and the value, and providers may still set it")
    func readOnly() throws {
        let error = validationError("CurrentTemperature", .float(21.5))
        #expect(
            error
                == HomeError(.invalidArgument, "characteristic 42 (CurrentTemperature) is read-only; cannot write 21.5")
        )
        let stored = try catalogCharacteristic("CurrentTemperature").validate(.float(21.5), enforceWritable: false)
        #expect(stored == .float(21.5))
    }

    @Test("a string for a bool is the wrong type, named with the expected format")
    func stringForBool() {
        #expect(
            validationError("On", .string("yes"))
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (On) takes a bool (true or false, or 0 or 1), not the string \"yes\""))
    }

    @Test("a bool accepts 0 and 1 and stores them as a bool, but not 2")
    func boolFromIntegers() throws {
        let on = catalogCharacteristic("On")
        #expect(try on.validate(.int(1)) == .bool(true))
        #expect(try on.validate(.uint(0)) == .bool(false))
        #expect(try on.validate(.bool(true)) == .bool(true))
        #expect(
            validationError("On", .int(2))
                == HomeError(
                    .invalidArgument, "characteristic 42 (On) takes a bool; the integer 2 is neither 0 nor 1"))
        #expect(
            validationError("On", .float(1))
                == HomeError(
                    .invalidArgument, "characteristic 42 (On) takes a bool (true or false, or 0 or 1), not the float 1")
        )
    }

    @Test("integer formats take either integer case and store unsigned formats as uint and int as int")
    func integersInterchangeable() throws {
        #expect(try catalogCharacteristic("BatteryLevel").validate(.int(40), enforceWritable: false) == .uint(40))
        #expect(try catalogCharacteristic("Brightness").validate(.uint(40)) == .int(40))
        #expect(try catalogCharacteristic("TargetTiltAngle").validate(.int(-45)) == .int(-45))
        #expect(try catalogCharacteristic("ColorTemperature").validate(.uint(300)) == .uint(300))
    }

    @Test("an integer format refuses a float, even a whole one")
    func floatForInteger() {
        #expect(
            validationError("Brightness", .float(50))
                == HomeError(
                    .invalidArgument, "characteristic 42 (Brightness) takes an integer (int), not the float 50"))
        #expect(
            validationError("Brightness", .string("50"))
                == HomeError(
                    .invalidArgument, "characteristic 42 (Brightness) takes an integer (int), not the string \"50\""))
    }

    @Test("a float takes integers and stores them as floats")
    func floatFromIntegers() throws {
        #expect(try catalogCharacteristic("TargetTemperature").validate(.int(21)) == .float(21))
        #expect(try catalogCharacteristic("Hue").validate(.uint(120)) == .float(120))
    }

    @Test("a float refuses NaN and infinity")
    func nonFinite() {
        #expect(
            validationError("Hue", .float(.nan))
                == HomeError(
                    .invalidArgument, "characteristic 42 (Hue) takes a finite number, not nan"))
        #expect(
            validationError("Hue", .float(.infinity))
                == HomeError(
                    .invalidArgument, "characteristic 42 (Hue) takes a finite number, not inf"))
    }

    @Test("a value outside the format's own range names the format and its range")
    func formatRange() {
        #expect(
            validationError("Volume", .int(300))
                == HomeError(
                    .invalidArgument, "characteristic 42 (Volume): 300 is outside the uint8 range 0…255"))
        #expect(
            validationError("Volume", .int(-1))
                == HomeError(
                    .invalidArgument, "characteristic 42 (Volume): -1 is outside the uint8 range 0…255"))
        #expect(
            validationError("Brightness", .uint(3_000_000_000))
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (Brightness): 3000000000 is outside the int range -2147483648…2147483647"))
        #expect(
            validationError("ActiveIdentifier", .uint(1 << 32))
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (ActiveIdentifier): 4294967296 is outside the uint32 range 0…4294967295"))
    }

    @Test("a write below the minimum names the minimum and the value")
    func belowMinimum() {
        #expect(
            validationError("Brightness", .int(-5))
                == HomeError(
                    .invalidArgument, "characteristic 42 (Brightness): -5 is below the minimum 0"))
        #expect(
            validationError("TargetTemperature", .float(9.5))
                == HomeError(
                    .invalidArgument, "characteristic 42 (TargetTemperature): 9.5 is below the minimum 10"))
    }

    @Test("a write above the maximum names the maximum and the value")
    func aboveMaximum() {
        #expect(
            validationError("Brightness", .int(150))
                == HomeError(
                    .invalidArgument, "characteristic 42 (Brightness): 150 is above the maximum 100"))
        #expect(
            validationError("TargetTemperature", .float(38.1))
                == HomeError(
                    .invalidArgument, "characteristic 42 (TargetTemperature): 38.1 is above the maximum 38"))
    }

    @Test("the bounds themselves are accepted")
    func bounds() throws {
        #expect(try catalogCharacteristic("Brightness").validate(.int(0)) == .int(0))
        #expect(try catalogCharacteristic("Brightness").validate(.int(100)) == .int(100))
        #expect(try catalogCharacteristic("TargetTemperature").validate(.float(10)) == .float(10))
        #expect(try catalogCharacteristic("TargetTemperature").validate(.float(38)) == .float(38))
    }

    @Test("a value off the step names the step and the minimum it counts from")
    func offStep() {
        #expect(
            validationError("TargetTemperature", .float(21.55))
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (TargetTemperature): 21.55 is not a multiple of the step 0.1 from the minimum 10"
                ))
        #expect(
            validationError("Hue", .float(120.5))
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (Hue): 120.5 is not a multiple of the step 1 from the minimum 0"))
    }

    @Test("a float a hair off the step, as float32 clients send it, is accepted and stored on the step")
    func stepTolerance() throws {
        let target = catalogCharacteristic("TargetTemperature")
        #expect(try target.validate(.float(Double(Float(21.3)))) == .float(21.3))
        #expect(try target.validate(.float(21.299999999999997)) == .float(21.3))
        let current = catalogCharacteristic("CurrentTemperature")
        #expect(try current.validate(.float(-12.7), enforceWritable: false) == .float(-12.7))
        #expect(try current.validate(.float(0.1 + 0.2), enforceWritable: false) == .float(0.3))
    }

    @Test("a value not among the valid values lists the valid ones with their names")
    func notValidValue() {
        #expect(
            validationError("TargetHeatingCoolingState", .uint(7))
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (TargetHeatingCoolingState): 7 is not a valid value; "
                        + "valid values are 0 (Off), 1 (Heat), 2 (Cool), 3 (Auto)"))
        // PictureMode has both a range and valid values: 10 is in range but not valid.
        #expect(
            validationError("PictureMode", .uint(10))?.message.hasPrefix(
                "characteristic 42 (PictureMode): 10 is not a valid value; valid values are 0 (Other), 1 (Standard)")
                == true)
    }

    @Test("a value setting bits outside the valid bits names those bits and the valid ones")
    func validBits() throws {
        #expect(try catalogCharacteristic("AccessoryFlags").validate(.uint(1), enforceWritable: false) == .uint(1))
        #expect(
            validationError("AccessoryFlags", .uint(6), enforceWritable: false)
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (AccessoryFlags): 6 sets bits 0x6 outside the valid bits 0x1 (bit 0: Requires Additional Setup)"
                ))
    }

    @Test("a string longer than the maximum is measured in UTF-8 bytes")
    func stringLength() throws {
        let name = catalogCharacteristic("ConfiguredName")
        #expect(
            try name.validate(.string(String(repeating: "é", count: 32))) == .string(String(repeating: "é", count: 32)))
        let error = validationError("ConfiguredName", .string(String(repeating: "é", count: 33)))
        #expect(
            error
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (ConfiguredName): the string \"\(String(repeating: "é", count: 33))\" is 66 bytes long; "
                        + "the maximum length is 64 bytes"))
    }

    @Test("a long offending string is shortened in the message to its first 40 characters")
    func longStringShortened() {
        #expect(
            validationError("ConfiguredName", .string(String(repeating: "a", count: 70)))
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (ConfiguredName): the string \"\(String(repeating: "a", count: 40))…\" is 70 bytes long; "
                        + "the maximum length is 64 bytes"))
    }

    @Test("data longer than its maximum length names the length and the limit")
    func dataLength() {
        var metadata = CharacteristicMetadata(format: .data)
        metadata.maxLength = 4
        let custom = Characteristic(
            id: 9, serviceID: 2, accessoryID: 1,
            type: TypeIdentifier(uuid: "A1B2C3D4-0000-1000-8000-000000000001", name: "Blob"),
            properties: CharacteristicProperties(writable: true), metadata: metadata)
        #expect(
            throws: HomeError(
                .invalidArgument,
                "characteristic 9 (Blob): the data 0x0102030405 is 5 bytes long; the maximum length is 4 bytes")
        ) {
            try custom.validate(.data([1, 2, 3, 4, 5]))
        }
        #expect(throws: HomeError(.invalidArgument, "characteristic 9 (Blob) takes data, not the string \"x\"")) {
            try custom.validate(.string("x"))
        }
    }

    @Test("TLV8 data must be whole items")
    func tlv8() throws {
        let control = catalogCharacteristic("TransitionControl")
        #expect(try control.validate(.data([1, 2, 0xAA, 0xBB, 2, 0])) == .data([1, 2, 0xAA, 0xBB, 2, 0]))
        #expect(try control.validate(.data([])) == .data([]))
        #expect(
            validationError("TransitionControl", .data([1, 2, 0xAA, 0xBB, 2, 10, 1]))
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (TransitionControl): the data 0x0102aabb020a01 is not well-formed TLV8: "
                        + "the item at byte 4 declares 10 bytes but 1 remain"))
        #expect(
            validationError("TransitionControl", .data([1]))
                == HomeError(
                    .invalidArgument,
                    "characteristic 42 (TransitionControl): the data 0x01 is not well-formed TLV8: "
                        + "the item at byte 0 has a type but no length"))
    }

    @Test("normalized gives one representation per format and nil for what the format cannot hold")
    func normalized() {
        #expect(CharacteristicFormat.uint8.normalized(.int(7)) == .uint(7))
        #expect(CharacteristicFormat.uint64.normalized(.uint(.max)) == .uint(.max))
        #expect(CharacteristicFormat.int.normalized(.uint(7)) == .int(7))
        #expect(CharacteristicFormat.float.normalized(.int(-3)) == .float(-3))
        #expect(CharacteristicFormat.bool.normalized(.uint(1)) == .bool(true))
        #expect(CharacteristicFormat.string.normalized(.string("a")) == .string("a"))
        #expect(CharacteristicFormat.tlv8.normalized(.data([1, 0])) == .data([1, 0]))
        #expect(CharacteristicFormat.uint8.normalized(.int(256)) == nil)
        #expect(CharacteristicFormat.int.normalized(.int(Int64(Int32.max) + 1)) == nil)
        #expect(CharacteristicFormat.float.normalized(.float(.nan)) == nil)
        #expect(CharacteristicFormat.string.normalized(.data([])) == nil)
        #expect(catalogCharacteristic("Brightness").normalized(.uint(5)) == .int(5))
    }

    @Test("a failed check names only the first violation, in a fixed order: writability, type, range, step, values")
    func order() {
        // Read-only wins over a wrong type.
        #expect(
            validationError("CurrentTemperature", .string("hot"))?.message
                == "characteristic 42 (CurrentTemperature) is read-only; cannot write \"hot\"")
        // The format's range wins over the metadata's maximum.
        #expect(
            validationError("BatteryLevel", .int(300), enforceWritable: false)?.message
                == "characteristic 42 (BatteryLevel): 300 is outside the uint8 range 0…255")
    }
}
