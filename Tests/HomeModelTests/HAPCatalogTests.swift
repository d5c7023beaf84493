import Testing

@testable import HomeModel

@Suite("HAP catalog")
struct HAPCatalogTests {
    @Test("the catalog holds exactly the 153 characteristic and 44 service types of the HAP JSON and Apple's additions")
    func counts() throws {
        let characteristics = try HAPFixture.characteristics()
        let services = try HAPFixture.services()
        #expect(characteristics.count == 153)
        #expect(services.count == 44)
        #expect(Set(HAPCatalog.characteristicTypes.map(\.name)) == Set(characteristics.keys))
        #expect(Set(HAPCatalog.serviceTypes.map(\.name)) == Set(services.keys))
        #expect(HAPCatalog.characteristicTypes.map(\.name) == characteristics.keys.sorted())
        #expect(HAPCatalog.serviceTypes.map(\.name) == services.keys.sorted())
    }

    @Test("Apple's optional characteristics the base JSON omits are in: a Lightbulb takes ColorTemperature")
    func appleAdditions() throws {
        let lightbulb = try #require(HAPCatalog.service(named: "Lightbulb"))
        #expect(lightbulb.optionalCharacteristics.contains("ColorTemperature"))
        #expect(
            HAPCatalog.service(named: "AccessoryInformation")?.optionalCharacteristics.contains("SoftwareRevision")
                == true)
        let temperature = try #require(HAPCatalog.characteristic(named: "ColorTemperature"))
        #expect(temperature.minValue == 140 && temperature.maxValue == 500)
    }

    @Test("the JSON uses no key the generator does not map")
    func knownKeys() throws {
        #expect(
            try HAPFixture.keys("characteristics.json") == [
                "Format", "Permissions", "UUID", "ValidValues", "ValidBits", "minValue", "maxValue", "minStep",
                "stepValue", "unit", "MaximumLength",
            ])
        #expect(try HAPFixture.keys("services.json") == ["UUID", "RequiredCharacteristics", "OptionalCharacteristics"])
    }

    @Test(
        "every characteristic type agrees with the JSON on uuid, format, permissions, unit, range, step, values, bits and length"
    )
    func everyCharacteristic() throws {
        for (name, json) in try HAPFixture.characteristics() {
            let info = try #require(HAPCatalog.characteristic(named: name), "\(name) missing")
            #expect(info.name == name)
            #expect(info.uuid == json.UUID.uppercased(), "\(name)")
            #expect(info.format.rawValue == json.Format, "\(name)")
            #expect(
                info.permissions
                    == CharacteristicProperties(
                        readable: json.Permissions.contains("pr"), writable: json.Permissions.contains("pw"),
                        supportsEventNotification: json.Permissions.contains("ev"), hidden: false,
                        writeResponse: json.Permissions.contains("wr")), "\(name)")
            #expect(info.unit.rawValue == (json.unit ?? "none"), "\(name)")
            #expect(info.minValue == json.minValue, "\(name)")
            #expect(info.maxValue == json.maxValue, "\(name)")
            #expect(info.minStep == (json.minStep ?? json.stepValue), "\(name)")
            let validValues = (json.ValidValues ?? [:]).map { (name: $0.key, value: $0.value) }
                .sorted { $0.value < $1.value }
            #expect(info.validValues.map(\.name) == validValues.map(\.name), "\(name)")
            #expect(info.validValues.map(\.value) == validValues.map(\.value), "\(name)")
            let validBits = (json.ValidBits ?? [:]).map { (bit: Int($0.key)!, name: $0.value) }.sorted {
                $0.bit < $1.bit
            }
            #expect(info.validBits.map(\.bit) == validBits.map(\.bit), "\(name)")
            #expect(info.validBits.map(\.name) == validBits.map(\.name), "\(name)")
            #expect(info.maxLength == json.MaximumLength, "\(name)")
            #expect(info.isEventOnly == (name == "ProgrammableSwitchEvent"), "\(name)")
        }
    }

    @Test("every service type agrees with the JSON on uuid and required and optional characteristics, in order")
    func everyService() throws {
        for (name, json) in try HAPFixture.services() {
            let info = try #require(HAPCatalog.service(named: name), "\(name) missing")
            #expect(info.name == name)
            #expect(info.uuid == json.UUID.uppercased(), "\(name)")
            #expect(info.requiredCharacteristics == json.RequiredCharacteristics, "\(name)")
            #expect(info.optionalCharacteristics == json.OptionalCharacteristics, "\(name)")
            for member in info.requiredCharacteristics + info.optionalCharacteristics {
                #expect(HAPCatalog.characteristic(named: member) != nil, "\(name) lists unknown \(member)")
            }
        }
    }

    @Test("every type is found by its full uuid in any case and by its short forms")
    func uuidLookups() throws {
        for info in HAPCatalog.characteristicTypes {
            #expect(HAPCatalog.characteristic(uuid: info.uuid)?.name == info.name)
            #expect(HAPCatalog.characteristic(uuid: info.uuid.lowercased())?.name == info.name)
            let short = String(info.uuid.prefix(8).drop { $0 == "0" })
            #expect(HAPCatalog.characteristic(uuid: short)?.name == info.name, "\(short)")
            #expect(HAPCatalog.characteristic(short)?.name == info.name, "\(short)")
        }
        for info in HAPCatalog.serviceTypes {
            // Speaker and TelevisionSpeaker share a UUID; the UUID finds Speaker.
            let expected = info.name == "TelevisionSpeaker" ? "Speaker" : info.name
            #expect(HAPCatalog.service(uuid: info.uuid)?.name == expected)
            #expect(HAPCatalog.service(uuid: String(info.uuid.prefix(8)))?.name == expected)
        }
    }

    @Test("the short forms 25, 0025 and 00000025 all name On")
    func shortForms() {
        for form in ["25", "0025", "00000025", "00000025-0000-1000-8000-0026bb765291"] {
            #expect(HAPCatalog.characteristic(form)?.name == "On", "\(form)")
        }
        #expect(HAPCatalog.fullUUID("25") == "00000025-0000-1000-8000-0026BB765291")
        #expect(HAPCatalog.fullUUID("123456789") == nil)
        #expect(HAPCatalog.fullUUID("0025-0000") == nil)
        #expect(HAPCatalog.characteristic("FFFFFFFF") == nil)
    }

    @Test("names are found in any case and with spaces between the words")
    func nameLookups() {
        #expect(HAPCatalog.characteristic("brightness")?.name == "Brightness")
        #expect(HAPCatalog.characteristic("Current Temperature")?.name == "CurrentTemperature")
        #expect(HAPCatalog.characteristic("pm2.5density")?.name == "PM2.5Density")
        #expect(HAPCatalog.service("LIGHTBULB")?.name == "Lightbulb")
        #expect(HAPCatalog.service("television speaker")?.name == "TelevisionSpeaker")
        #expect(HAPCatalog.characteristic("Brightnes") == nil)
        // No two names collide once case and spaces are ignored.
        #expect(Set(HAPCatalog.characteristicTypes.map { HAPCatalog.lookupKey($0.name) }).count == 153)
        #expect(Set(HAPCatalog.serviceTypes.map { HAPCatalog.lookupKey($0.name) }).count == 44)
    }

    @Test(
        "default metadata carries the catalog's constraints, folds valid bits into a mask and bounds strings at 64 bytes"
    )
    func defaultMetadata() throws {
        let brightness = try #require(HAPCatalog.characteristic("Brightness")).defaultMetadata
        #expect(
            brightness
                == CharacteristicMetadata(
                    format: .int, unit: .percentage, minValue: 0, maxValue: 100,
                    minStep: 1))
        let temperature = try #require(HAPCatalog.characteristic("CurrentTemperature")).defaultMetadata
        #expect(temperature.minValue == -273.1)
        #expect(temperature.minStep == 0.1)
        #expect(temperature.unit == .celsius)
        let mode = try #require(HAPCatalog.characteristic("TargetHeatingCoolingState"))
        #expect(mode.defaultMetadata.validValues == [0, 1, 2, 3])
        #expect(mode.validValues.map(\.name) == ["Off", "Heat", "Cool", "Auto"])
        #expect(mode.name(ofValidValue: 3) == "Auto")
        #expect(try #require(HAPCatalog.characteristic("AccessoryFlags")).defaultMetadata.validBits == 0b1)
        #expect(try #require(HAPCatalog.characteristic("Name")).defaultMetadata.maxLength == 64)
        #expect(try #require(HAPCatalog.characteristic("SerialNumber")).defaultMetadata.maxLength == 64)
        #expect(try #require(HAPCatalog.characteristic("SetupEndpoints")).defaultMetadata.maxLength == nil)
        #expect(try #require(HAPCatalog.characteristic("FilterLifeLevel")).defaultMetadata.minStep == 1)
    }

    @Test("a programmable switch event is event-only and an ordinary state is not")
    func eventOnly() {
        #expect(HAPCatalog.characteristic("ProgrammableSwitchEvent")?.isEventOnly == true)
        #expect(HAPCatalog.characteristicTypes.filter(\.isEventOnly).map(\.name) == ["ProgrammableSwitchEvent"])
    }

    @Test("permissions map pr, pw, ev and wr")
    func permissions() throws {
        let identify = try #require(HAPCatalog.characteristic("Identify")).permissions
        #expect(identify == CharacteristicProperties(readable: false, writable: true))
        let transition = try #require(HAPCatalog.characteristic("TransitionControl")).permissions
        #expect(transition == CharacteristicProperties(readable: true, writable: true, writeResponse: true))
        let current = try #require(HAPCatalog.characteristic("CurrentTemperature")).permissions
        #expect(current == CharacteristicProperties(readable: true, writable: false, supportsEventNotification: true))
    }

    @Test("a service allows its required and optional characteristics and no others")
    func serviceAllows() throws {
        let lightbulb = try #require(HAPCatalog.service("Lightbulb"))
        #expect(lightbulb.allows(characteristic: "on"))
        #expect(lightbulb.allows(characteristic: "Brightness"))
        #expect(!lightbulb.allows(characteristic: "CurrentTemperature"))
    }
}
