import HomeModel
@_spi(Wire) import HomeWire
import Testing

@testable import HomeServer

@Suite("a subscription's scope")
struct SubscriptionScopeTests {
    static let graph = DemoHome.make(nowMs: 0)

    static func id(_ path: String) throws -> ObjectID { try graph.resolve(path: path) }

    /// Value events as the publisher offers them: with the characteristic's table index.
    static func matchesValue(_ scope: SubscriptionScope, _ path: String) throws -> Bool {
        let id = try id(path)
        let characteristic = try #require(graph.characteristics[id])
        let event = HomeEvent(
            seq: 1, timeMs: 0, origin: .simulator,
            body: .value(
                ValueChange(
                    accessoryID: characteristic.accessoryID, serviceID: characteristic.serviceID, characteristicID: id,
                    value: .int(1))))
        return scope.matches(event, characteristic: graph.characteristics.index(forKey: id), in: graph)
    }

    @Test("types narrow by catalog name or UUID, any case; services by their type")
    func typeNarrowing() throws {
        let brightness = SubscriptionScope(SubscriptionFilter(characteristicTypes: ["brightness"]))
        #expect(try Self.matchesValue(brightness, "Living Room/Lamp/Brightness"))
        #expect(try !Self.matchesValue(brightness, "Living Room/Lamp/On"))
        let byUUID = SubscriptionScope(
            SubscriptionFilter(characteristicTypes: ["00000008-0000-1000-8000-0026bb765291"]))
        #expect(try Self.matchesValue(byUUID, "Living Room/Lamp/Brightness"))
        let lightbulbs = SubscriptionScope(SubscriptionFilter(serviceTypes: ["Lightbulb"]))
        #expect(try Self.matchesValue(lightbulbs, "Living Room/Lamp/Hue"))
        #expect(try !Self.matchesValue(lightbulbs, "Living Room/Thermostat/TargetTemperature"))
    }

    @Test("a characteristic narrowed away is not matched though its accessory is selected")
    func exclusions() throws {
        var scope = SubscriptionScope(SubscriptionFilter(accessoryIDs: [try Self.id("Living Room/Lamp")]))
        scope.remove(SubscriptionFilter(characteristicIDs: [try Self.id("Living Room/Lamp/Hue")]))
        #expect(try Self.matchesValue(scope, "Living Room/Lamp/Brightness"))
        #expect(try !Self.matchesValue(scope, "Living Room/Lamp/Hue"))
        #expect(try !Self.matchesValue(scope, "Living Room/Thermostat/TargetTemperature"))
    }

    @Test("value events in place and snapshots by copy agree on every characteristic of the demo home")
    func inPlaceAgreesWithSnapshot() throws {
        var narrowed = SubscriptionScope(SubscriptionFilter(roomIDs: [try Self.id("Living Room")]))
        narrowed.remove(
            SubscriptionFilter(serviceIDs: [try Self.graph.characteristics[Self.id("Living Room/Lamp/On")]!.serviceID]))
        let scopes = [
            SubscriptionScope(SubscriptionFilter()),
            SubscriptionScope(SubscriptionFilter(characteristicTypes: ["Brightness", "On"])),
            SubscriptionScope(
                SubscriptionFilter(serviceTypes: ["Thermostat"], characteristicTypes: ["TargetTemperature"])),
            narrowed,
        ]
        var matched = 0
        for scope in scopes {
            for (id, characteristic) in Self.graph.characteristics {
                let inPlace = scope.covers(
                    characteristicAt: Self.graph.characteristics.index(forKey: id)!, in: Self.graph)
                #expect(inPlace == scope.covers(characteristic, in: Self.graph), "characteristic \(id)")
                if inPlace { matched += 1 }
            }
        }
        #expect(matched > 0)
    }

    @Test("only characteristics that support event notification stream value changes")
    func eventNotificationOnly() throws {
        let everything = SubscriptionScope(SubscriptionFilter())
        let silent = try #require(Self.graph.characteristics.values.first { !$0.properties.supportsEventNotification })
        let event = HomeEvent(
            seq: 1, timeMs: 0, origin: .simulator,
            body: .value(
                ValueChange(
                    accessoryID: silent.accessoryID, serviceID: silent.serviceID, characteristicID: silent.id,
                    value: .bool(true))))
        #expect(
            !everything.matches(
                event, characteristic: Self.graph.characteristics.index(forKey: silent.id), in: Self.graph))
        #expect(try Self.matchesValue(everything, "Living Room/Lamp/Brightness"))
    }
}
