import Testing

@testable import HomeModel

@Suite("Home graph: value writes")
struct ValueWriteTests {
    @Test("a write stores the normalized value, stamps the time and reports the change")
    func writeStores() throws {
        var graph = DemoHome.make(nowMs: 100)
        let brightness = id(graph, "Living Room/Lamp/Brightness")
        #expect(try graph.write(.uint(40), to: brightness, nowMs: 200, enforceWritable: true) == .int(40))
        #expect(graph.characteristic(brightness)?.value == .int(40))
        #expect(graph.characteristic(brightness)?.lastUpdatedMs == 200)
    }

    @Test("a checked write is stored at the position it was checked at, also when a snapshot shares the table")
    func checkThenStore() throws {
        var graph = DemoHome.make(nowMs: 100)
        let brightness = id(graph, "Living Room/Lamp/Brightness")
        let press = id(graph, "Hallway/Doorbell/ProgrammableSwitchEvent")
        let snapshot = graph  // shares the table: the first store copies it
        let checked = try #require(try graph.checkWrite(.uint(40), to: brightness, enforceWritable: true))
        let pressed = try #require(try graph.checkWrite(.uint(0), to: press, enforceWritable: false))
        #expect(!checked.isOccurrence && pressed.isOccurrence)
        #expect(graph.store(checked, nowMs: 200) == .int(40))
        #expect(graph.store(checked, nowMs: 300) == nil, "the same value again is no change")
        #expect(graph.store(pressed, nowMs: 300) == .uint(0))
        #expect(graph.store(pressed, nowMs: 400) == .uint(0), "every press counts")
        #expect(graph.characteristic(brightness)?.value == .int(40))
        #expect(graph.characteristic(brightness)?.lastUpdatedMs == 200)
        #expect(snapshot.characteristic(brightness)?.value == .int(80), "the snapshot keeps the value it had")
        #expect(try graph.checkWrite(.uint(40), to: 999_999, enforceWritable: true) == nil)
    }

    @Test("writing the value a characteristic holds reports no change and keeps its time")
    func unchangedWrite() throws {
        var graph = DemoHome.make(nowMs: 100)
        let on = id(graph, "Living Room/Lamp/On")
        #expect(try graph.write(.int(1), to: on, nowMs: 200, enforceWritable: true) == nil)
        #expect(graph.characteristic(on)?.lastUpdatedMs == 100)
        #expect(try graph.write(.bool(false), to: on, nowMs: 300, enforceWritable: true) == .bool(false))
        #expect(try graph.write(.bool(false), to: on, nowMs: 400, enforceWritable: true) == nil)
    }

    @Test("every press of a programmable switch is reported, the same press twice included")
    func everyPress() throws {
        var graph = DemoHome.make(nowMs: 100)
        let press = id(graph, "Hallway/Doorbell/ProgrammableSwitchEvent")
        #expect(graph.characteristic(press)?.value == nil)
        #expect(try graph.write(.uint(0), to: press, nowMs: 200, enforceWritable: false) == .uint(0))
        #expect(try graph.write(.uint(0), to: press, nowMs: 300, enforceWritable: false) == .uint(0))
        #expect(graph.characteristic(press)?.lastUpdatedMs == 300)
    }

    @Test("every write of a write-only characteristic is reported: Identify twice identifies twice")
    func writeOnly() throws {
        var graph = DemoHome.make(nowMs: 100)
        let identify = id(graph, "Living Room/Lamp/AccessoryInformation/Identify")
        #expect(try graph.write(.bool(true), to: identify, nowMs: 200, enforceWritable: true) == .bool(true))
        #expect(try graph.write(.bool(true), to: identify, nowMs: 300, enforceWritable: true) == .bool(true))
    }

    @Test("a write to an unknown id is NOT_FOUND naming the id, and a non-characteristic id says what it is")
    func unknownID() throws {
        let graph = DemoHome.make(nowMs: 100)
        expectFailure(graph, HomeError(.notFound, "no characteristic with id 9999")) {
            _ = try $0.write(.bool(true), to: 9999, nowMs: 1, enforceWritable: true)
        }
        let room = id(graph, "Living Room")
        expectFailure(graph, HomeError(.notFound, "no characteristic with id \(room) (\(room) is a room)")) {
            _ = try $0.write(.bool(true), to: room, nowMs: 1, enforceWritable: true)
        }
        let lamp = id(graph, "Living Room/Lamp")
        expectFailure(graph, HomeError(.notFound, "no characteristic with id \(lamp) (\(lamp) is an accessory)")) {
            _ = try $0.write(.bool(true), to: lamp, nowMs: 1, enforceWritable: true)
        }
    }

    @Test("a client may not write a read-only characteristic, but a provider may, and nothing changes on refusal")
    func readOnly() throws {
        var graph = DemoHome.make(nowMs: 100)
        let current = id(graph, "Living Room/Thermostat/CurrentTemperature")
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "characteristic \(current) (CurrentTemperature) is read-only; cannot write 22")
        ) {
            _ = try $0.write(.float(22), to: current, nowMs: 1, enforceWritable: true)
        }
        #expect(try graph.write(.float(22), to: current, nowMs: 200, enforceWritable: false) == .float(22))
    }

    @Test("an invalid value changes nothing and names the characteristic")
    func invalidValue() throws {
        let graph = DemoHome.make(nowMs: 100)
        let target = id(graph, "Living Room/Thermostat/TargetTemperature")
        expectFailure(
            graph,
            HomeError(
                .invalidArgument,
                "characteristic \(target) (TargetTemperature): 40 is above the maximum 38")
        ) {
            _ = try $0.write(.float(40), to: target, nowMs: 1, enforceWritable: true)
        }
    }

    @Test("validateWrite checks and normalizes without storing")
    func validateWrite() throws {
        let graph = DemoHome.make(nowMs: 100)
        let target = id(graph, "Living Room/Thermostat/TargetTemperature")
        #expect(try graph.validateWrite(.int(25), to: target, enforceWritable: true) == .float(25))
        #expect(graph.characteristic(target)?.value == .float(21))
        #expect(throws: HomeError(.notFound, "no characteristic with id 0")) {
            try graph.validateWrite(.int(25), to: 0, enforceWritable: true)
        }
    }

    @Test("reachability is recorded and reported only when it changes")
    func reachability() throws {
        var graph = DemoHome.make(nowMs: 100)
        let lamp = id(graph, "Living Room/Lamp")
        #expect(try graph.setReachable(false, accessoryID: lamp))
        #expect(graph.accessory(lamp)?.isReachable == false)
        #expect(try graph.setReachable(false, accessoryID: lamp) == false)
        expectFailure(graph, HomeError(.notFound, "no accessory with id 1 (1 is a home)")) {
            _ = try $0.setReachable(true, accessoryID: 1)
        }
    }
}
