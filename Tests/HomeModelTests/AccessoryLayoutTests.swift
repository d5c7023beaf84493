import Testing

@testable import HomeModel

@Suite("Layout: accessories and services")
struct AccessoryLayoutTests {
    @Test("assigning an accessory to a room reports the move with the room; the same room reports nothing")
    func assign() throws {
        var graph = DemoHome.make(nowMs: 0)
        let lamp = id(graph, "Living Room/Lamp")
        #expect(
            try graph.assignAccessory(lamp, toRoom: 5) == [
                LayoutChange(action: .moved, object: .accessory, objectID: lamp, homeID: 1, name: "Lamp", parentID: 5)
            ])
        #expect(try graph.resolve(path: "Bedroom/Lamp") == lamp)
        #expect(try graph.assignAccessory(lamp, toRoom: 5) == [])
        expectFailure(graph, HomeError(.notFound, "no room with id \(lamp) (\(lamp) is an accessory)")) {
            _ = try $0.assignAccessory(lamp, toRoom: lamp)
        }
    }

    @Test("an accessory cannot move to a room of another home")
    func assignAcrossHomes() throws {
        var graph = DemoHome.make(nowMs: 0)
        let cabin = try graph.addHome(name: "Cabin")
        let lamp = id(graph, "Living Room/Lamp")
        let cabinRoom = try #require(graph.home(cabin)?.defaultRoomID)
        expectFailure(
            graph, HomeError(.invalidArgument, "room \(cabinRoom) belongs to home \"Cabin\", not home \"Demo Home\"")
        ) {
            _ = try $0.assignAccessory(lamp, toRoom: cabinRoom)
        }
    }

    @Test("renaming an accessory or a service reports the update and checks the name")
    func rename() throws {
        var graph = DemoHome.make(nowMs: 0)
        let lamp = id(graph, "Living Room/Lamp")
        #expect(
            try graph.renameAccessory(lamp, to: "Floor Lamp") == [
                LayoutChange(
                    action: .updated, object: .accessory, objectID: lamp, homeID: 1, name: "Floor Lamp", parentID: 3)
            ])
        let bulb = id(graph, "Living Room/Floor Lamp/Lightbulb")
        #expect(
            try graph.renameService(bulb, to: "Bulb") == [
                LayoutChange(
                    action: .updated, object: .service, objectID: bulb, homeID: 1, name: "Bulb", parentID: lamp)
            ])
        #expect(try graph.renameService(bulb, to: "Bulb") == [])
        expectFailure(graph, HomeError(.invalidArgument, "an accessory name cannot be empty")) {
            _ = try $0.renameAccessory(lamp, to: "")
        }
        expectFailure(graph, HomeError(.notFound, "no service with id \(lamp) (\(lamp) is an accessory)")) {
            _ = try $0.renameService(lamp, to: "X")
        }
    }

    @Test("removing an accessory removes its services and characteristics and cuts every reference to them")
    func removeAccessory() throws {
        var graph = DemoHome.make(nowMs: 0)
        let lamp = id(graph, "Living Room/Lamp")
        let on = id(graph, "Living Room/Lamp/On")
        let bulb = id(graph, "Living Room/Lamp/Lightbulb")
        let lock = id(graph, "Hallway/Front Door Lock/LockTargetState")
        let group = try graph.addServiceGroup(name: "Lights", homeID: 1)
        _ = try graph.addService(bulb, toGroup: group)
        let scene = try graph.addActionSet(name: "Night", homeID: 1)
        _ = try graph.addAction(characteristicID: on, value: .bool(false), toActionSet: scene)
        _ = try graph.addAction(characteristicID: lock, value: .uint(1), toActionSet: scene)
        let watcher = try graph.addTrigger(
            name: "Lamp On", homeID: 1,
            kind: .event(
                characteristicID: on, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: []))
        let doorbell = id(graph, "Hallway/Doorbell/ProgrammableSwitchEvent")
        let conditional = try graph.addTrigger(
            name: "Ring", homeID: 1,
            kind: .event(
                characteristicID: doorbell, value: nil, rangeMin: nil, rangeMax: nil,
                conditions: [CharacteristicCondition(characteristicID: on, comparison: .equal, value: .bool(true))]))

        let changes = try graph.removeAccessory(lamp)
        #expect(
            changes.map { "\($0.action.rawValue) \($0.object.rawValue) \($0.objectID)" } == [
                "updated service-group \(group)", "updated action-set \(scene)", "removed trigger \(watcher)",
                "updated trigger \(conditional)", "removed accessory \(lamp)",
            ])
        #expect(graph.accessory(lamp) == nil)
        #expect(graph.characteristic(on) == nil)
        #expect(graph.service(bulb) == nil)
        #expect(graph.serviceGroup(group)?.serviceIDs == [])
        #expect(graph.actionSet(scene)?.actions.map(\.characteristicID) == [lock])
        #expect(graph.trigger(watcher) == nil)
        guard case .event(_, _, _, _, let conditions) = graph.trigger(conditional)?.kind else {
            Issue.record("the doorbell trigger changed kind")
            return
        }
        #expect(conditions.isEmpty)
        #expect(graph.home(1)?.accessoryIDs.contains(lamp) == false)
        try graph.checkIntegrity()
        expectFailure(graph, HomeError(.notFound, "no accessory with id \(lamp)")) { _ = try $0.removeAccessory(lamp) }
    }

    @Test("removing a bridge removes the accessories behind it; removing a bridged one updates the bridge")
    func removeBridge() throws {
        var (graph, home, _, _) = try smallHome()
        let hub = try graph.addAccessory(AccessorySpec(name: "Hub", category: .bridge), homeID: home, nowMs: 0)
        var spec = lampSpec()
        spec.bridgeID = hub
        let first = try graph.addAccessory(spec, homeID: home, nowMs: 0)
        let second = try graph.addAccessory(spec, homeID: home, nowMs: 0)
        var copy = graph
        #expect(
            try copy.removeAccessory(first).map { "\($0.action.rawValue) \($0.objectID)" } == [
                "updated \(hub)", "removed \(first)",
            ])
        #expect(copy.accessory(hub)?.bridgedAccessoryIDs == [second])
        try copy.checkIntegrity()
        #expect(
            try graph.removeAccessory(hub).map { "\($0.action.rawValue) \($0.objectID)" } == [
                "removed \(first)", "removed \(second)", "removed \(hub)",
            ])
        #expect(graph.accessories.isEmpty)
        #expect(graph.characteristics.isEmpty)
        try graph.checkIntegrity()
    }
}
