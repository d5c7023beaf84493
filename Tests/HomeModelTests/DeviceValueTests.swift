import Testing

@testable import HomeModel

/// What a device states (`ValueSource.device`) against what a client asks (`.request`).
@Suite("a device's readings are facts; a request is checked strictly")
struct DeviceValueTests {
    private func device(_ type: String, _ value: CharacteristicValue) throws -> CharacteristicValue {
        try catalogCharacteristic(type).validate(value, enforceWritable: false, source: .device)
    }

    @Test("a reading off the step is rounded to it: humidity 51.92 % with a step of 1 is 52; hue 35.3 with 1 is 35")
    func roundedToStep() throws {
        #expect(try device("CurrentRelativeHumidity", .float(51.92)) == .float(52))
        #expect(try device("Hue", .float(35.3)) == .float(35))
        #expect(try device("CurrentTemperature", .float(21.26)) == .float(21.3))
        #expect(
            validationError("CurrentRelativeHumidity", .float(51.92), enforceWritable: false)?.code == .invalidArgument)
    }

    @Test("a reading outside the catalog's range is kept: 0 lux under 0.0001, a 5 °C setpoint under 10")
    func outsideRangeKept() throws {
        #expect(try device("CurrentAmbientLightLevel", .float(0)) == .float(0))
        #expect(try device("TargetTemperature", .float(5)) == .float(5))
        #expect(validationError("TargetTemperature", .float(5))?.message.contains("below the minimum 10") == true)
    }

    @Test("only what the format cannot hold is clamped: a uint8 battery level of 300 is 255, -4 is 0; 150 is kept")
    func clampedToFormat() throws {
        #expect(try device("BatteryLevel", .int(300)) == .uint(255))
        #expect(try device("BatteryLevel", .int(-4)) == .uint(0))
        #expect(try device("BatteryLevel", .int(150)) == .uint(150))
        #expect(validationError("BatteryLevel", .int(150), enforceWritable: false)?.code == .invalidArgument)
    }

    @Test("kinds and valid values are checked as for a request: a string for a bool, a door state of 9")
    func stillChecked() {
        #expect(throws: HomeError.self) { try device("On", .string("yes")) }
        #expect(throws: HomeError.self) { try device("CurrentDoorState", .uint(9)) }
        #expect(throws: HomeError.self) { try device("CurrentTemperature", .float(.nan)) }
    }
}
