import HomeClient
import HomeModel
import HomeServer
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import Testing

/// The error a layout call failed with, or nil if it succeeded.
private func failure(_ body: () async throws(HomeError) -> LayoutResponse) async -> HomeError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// Checks a response's events: numbered in order, ending at the response's seq,
/// caused by this client.
private func expectNumbered(
    _ response: LayoutResponse, after previous: inout UInt64, by client: HomeClient,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(!response.events.isEmpty, "the change published no event", sourceLocation: sourceLocation)
    for event in response.events {
        #expect(event.seq > previous, "seq \(event.seq) does not follow \(previous)", sourceLocation: sourceLocation)
        previous = event.seq
        #expect(event.origin.kind == .client, sourceLocation: sourceLocation)
        #expect(event.origin.connectionID == client.connectionID, sourceLocation: sourceLocation)
    }
    #expect(response.seq == previous, sourceLocation: sourceLocation)
}

private func layout(_ response: LayoutResponse) -> [LayoutChange] {
    response.events.compactMap { if case .layout(let change) = $0.body { change } else { nil } }
}

/// A test server whose hello timeout outlasts a loaded machine: when the whole test
/// suite runs on two cores (the scale tests included), a client can be starved of
/// CPU for seconds before its hello goes out, and these tests are not about hellos.
private func withLayoutServer<T>(_ body: (TestServer) async throws -> T) async throws -> T {
    try await withPatientServer(body)
}

@Suite("layout calls over the socket")
struct LayoutCallTests {
    @Test("every layout operation succeeds and answers with its events in increasing sequence")
    func everyOperation() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let demo = server.store.snapshot().graph
            let home = demo.id("Demo Home")
            let kitchen = demo.id("Kitchen")
            let lamp = demo.id("Living Room/Lamp")
            let lightbulb = demo.id("Living Room/Lamp/Lightbulb")
            let brightness = demo.id("Living Room/Lamp/Brightness")
            let temperature = demo.id("Bedroom/Temperature Sensor/CurrentTemperature")
            var seq = server.store.lastSeq

            // Homes
            let cabin = try await client.addHome(name: "Cabin")
            expectNumbered(cabin, after: &seq, by: client)
            #expect(layout(cabin).map(\.action) == [.added, .added])
            #expect(layout(cabin).map(\.object) == [.home, .room])
            #expect(cabin.createdID == layout(cabin)[0].objectID)
            let renamedHome = try await client.rename(cabin.createdID, to: "Lake Cabin")
            expectNumbered(renamedHome, after: &seq, by: client)
            #expect(layout(renamedHome).first?.name == "Lake Cabin")
            let primary = try await client.setPrimaryHome(cabin.createdID)
            expectNumbered(primary, after: &seq, by: client)
            #expect(primary.events.last?.body == .primaryHome(cabin.createdID))

            // Rooms and zones
            let study = try await client.addRoom(name: "Study", homeID: home)
            expectNumbered(study, after: &seq, by: client)
            #expect(
                layout(study) == [
                    LayoutChange(
                        action: .added, object: .room, objectID: study.createdID,
                        homeID: home, name: "Study")
                ])
            expectNumbered(try await client.rename(study.createdID, to: "Library"), after: &seq, by: client)
            let upstairs = try await client.addZone(name: "Upstairs", homeID: home)
            expectNumbered(upstairs, after: &seq, by: client)
            expectNumbered(
                try await client.addRoom(study.createdID, toZone: upstairs.createdID), after: &seq, by: client)
            expectNumbered(try await client.addRoom(kitchen, toZone: upstairs.createdID), after: &seq, by: client)
            expectNumbered(try await client.removeRoom(kitchen, fromZone: upstairs.createdID), after: &seq, by: client)
            expectNumbered(try await client.rename(upstairs.createdID, to: "First Floor"), after: &seq, by: client)

            // Accessories and services
            let moved = try await client.assignAccessory(lamp, toRoom: study.createdID)
            expectNumbered(moved, after: &seq, by: client)
            #expect(layout(moved).first?.action == .moved)
            #expect(layout(moved).first?.parentID == study.createdID)
            expectNumbered(try await client.rename(lamp, to: "Reading Lamp"), after: &seq, by: client)
            expectNumbered(try await client.rename(lightbulb, to: "Bulb"), after: &seq, by: client)

            // Service groups
            let group = try await client.addServiceGroup(name: "Lights", homeID: home)
            expectNumbered(group, after: &seq, by: client)
            expectNumbered(try await client.addService(lightbulb, toGroup: group.createdID), after: &seq, by: client)
            expectNumbered(
                try await client.removeService(lightbulb, fromGroup: group.createdID), after: &seq, by: client)
            expectNumbered(try await client.rename(group.createdID, to: "All Lights"), after: &seq, by: client)

            // Action sets
            let scene = try await client.addActionSet(name: "Reading", homeID: home)
            expectNumbered(scene, after: &seq, by: client)
            let wakeUp = try await client.addActionSet(name: "Good Morning", kind: .wakeUp, homeID: home)
            expectNumbered(wakeUp, after: &seq, by: client)
            expectNumbered(
                try await client.addAction(
                    characteristicID: brightness, value: .int(40),
                    toActionSet: scene.createdID), after: &seq, by: client)
            expectNumbered(try await client.rename(scene.createdID, to: "Evening"), after: &seq, by: client)

            // Triggers
            let timer = try await client.addTrigger(
                name: "Sunrise", homeID: home,
                kind: .timer(fireDateMs: 1_800_000_000_000, timeZone: "Europe/Berlin", recurrence: .daily),
                actionSetIDs: [wakeUp.createdID])
            expectNumbered(timer, after: &seq, by: client)
            let cold = try await client.addTrigger(
                name: "Cold Bedroom", homeID: home,
                kind: .event(characteristicID: temperature, value: nil, rangeMin: nil, rangeMax: 16, conditions: []),
                enabled: false)
            expectNumbered(cold, after: &seq, by: client)
            expectNumbered(try await client.setTrigger(cold.createdID, enabled: true), after: &seq, by: client)
            expectNumbered(try await client.setTrigger(timer.createdID, enabled: false), after: &seq, by: client)
            expectNumbered(
                try await client.addActionSet(scene.createdID, toTrigger: timer.createdID), after: &seq, by: client)
            expectNumbered(
                try await client.removeActionSet(scene.createdID, fromTrigger: timer.createdID),
                after: &seq, by: client)
            expectNumbered(try await client.rename(timer.createdID, to: "Dawn"), after: &seq, by: client)

            // The graph the daemon holds now shows all of it.
            let graph = server.store.snapshot().graph
            #expect(graph.home(cabin.createdID)?.name == "Lake Cabin")
            #expect(graph.primaryHomeID == cabin.createdID)
            #expect(graph.room(study.createdID)?.name == "Library")
            #expect(graph.zone(upstairs.createdID)?.roomIDs == [study.createdID])
            #expect(graph.accessory(lamp)?.roomID == study.createdID)
            #expect(graph.accessory(lamp)?.name == "Reading Lamp")
            #expect(graph.service(lightbulb)?.name == "Bulb")
            #expect(
                graph.actionSet(scene.createdID)?.actions
                    == [CharacteristicWriteAction(characteristicID: brightness, value: .int(40))])
            #expect(graph.actionSet(wakeUp.createdID)?.kind == .wakeUp)
            #expect(graph.trigger(timer.createdID)?.isEnabled == false)
            #expect(graph.trigger(timer.createdID)?.actionSetIDs == [wakeUp.createdID])
            #expect(graph.trigger(cold.createdID)?.isEnabled == true)
            #expect(try await client.getHome().graph == graph)

            // And the removals.
            expectNumbered(
                try await client.removeAction(characteristicID: brightness, fromActionSet: scene.createdID),
                after: &seq, by: client)
            for id in [
                timer.createdID, cold.createdID, scene.createdID, group.createdID, upstairs.createdID,
                study.createdID, lamp,
            ] {
                let removed = try await client.remove(id)
                expectNumbered(removed, after: &seq, by: client)
                let last = try #require(layout(removed).last)
                #expect(last.action == .removed)
                #expect(last.object == graph.kind(of: id))
                #expect(last.objectID == id)
                #expect(last.homeID == home)
            }
            let removedHome = try await client.remove(cabin.createdID)
            expectNumbered(removedHome, after: &seq, by: client)
            // The primary home went, so the remaining one is primary again.
            #expect(removedHome.events.last?.body == .primaryHome(home))
            let after = server.store.snapshot().graph
            #expect(after.homes.count == 1)
            #expect(after.primaryHomeID == home)
            #expect(after.accessory(lamp) == nil)
        }
    }

    @Test("ImportLayout over the wire: a dry run changes nothing; the import lands whole; a bad file names itself")
    func importLayout() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let file = "homes:\n  - name: \"Demo Home\"\n    rooms: [\"Attic\", \"Cellar\"]\n"
            let seq = server.store.lastSeq
            let dry = try await client.importLayout(file, fileName: "home.yaml", dryRun: true)
            #expect(dry.steps == ["add room \"Attic\" to \"Demo Home\"", "add room \"Cellar\" to \"Demo Home\""])
            #expect(dry.seq == 0 && server.store.lastSeq == seq, "a dry run changes nothing")
            let applied = try await client.importLayout(file, fileName: "home.yaml")
            #expect(applied.steps == dry.steps && applied.seq == server.store.lastSeq && applied.seq > seq)
            #expect(server.store.snapshot().graph.rooms.values.contains { $0.name == "Cellar" })
            let again = try await client.importLayout(file)
            #expect(again.steps.isEmpty && again.seq == 0)
            do throws(HomeError) {
                _ = try await client.importLayout("homes: [", fileName: "broken.yaml")
                Issue.record("a file that is not YAML was imported")
            } catch {
                #expect(error.code == .invalidArgument && error.message.hasPrefix("broken.yaml is not YAML or JSON"))
            }
        }
    }

    @Test("a change that changes nothing publishes nothing")
    func noChange() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let lamp = server.store.snapshot().graph.id("Living Room/Lamp")
            let before = server.store.lastSeq
            let response = try await client.rename(lamp, to: "Lamp")
            #expect(response.events.isEmpty)
            #expect(response.seq == before)
            #expect(response.createdID == 0)
        }
    }

    @Test("two rooms named alike in one home are refused with ALREADY_EXISTS, and nothing changes")
    func duplicateRoom() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let before = server.store.snapshot()
            let home = before.graph.id("Demo Home")
            let kitchen = before.graph.id("Kitchen")
            let error = try #require(
                await failure { () async throws(HomeError) in
                    try await client.addRoom(name: "kitchen", homeID: home)
                })
            #expect(error.code == .alreadyExists)
            #expect(error.message.contains("Kitchen"))
            #expect(error.message.contains("id \(kitchen)"))
            let renamed = try #require(
                await failure { () async throws(HomeError) in
                    try await client.rename(before.graph.id("Bedroom"), to: "KITCHEN")
                })
            #expect(renamed.code == .alreadyExists)
            let after = server.store.snapshot()
            #expect(after.graph == before.graph)
            #expect(after.seq == before.seq)

            // The same name in another home is fine: uniqueness is per home.
            let cabin = try await client.addHome(name: "Cabin").createdID
            try await client.addRoom(name: "Kitchen", homeID: cabin)
        }
    }

    @Test("other duplicates are ALREADY_EXISTS too: homes, zones, groups, scenes, triggers, zone rooms")
    func otherDuplicates() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let graph = server.store.snapshot().graph
            let home = graph.id("Demo Home")
            let kitchen = graph.id("Kitchen")
            let zone = try await client.addZone(name: "Downstairs", homeID: home).createdID
            try await client.addRoom(kitchen, toZone: zone)
            try await client.addServiceGroup(name: "Lights", homeID: home)
            try await client.addActionSet(name: "Night", kind: .sleep, homeID: home)
            try await client.addTrigger(
                name: "Noon", homeID: home,
                kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .none))
            let before = server.store.snapshot()
            let attempts: [LayoutOperation] = [
                .addHome(name: "demo home"),
                .addZone(name: "DOWNSTAIRS", homeID: home),
                .addRoomToZone(roomID: kitchen, zoneID: zone),
                .addServiceGroup(name: "lights", homeID: home),
                .addActionSet(name: "Night", kind: .userDefined, homeID: home),
                .addActionSet(name: "Bedtime", kind: .sleep, homeID: home),
                .addTrigger(
                    name: "noon", homeID: home, kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .none),
                    actionSetIDs: [], enabled: true),
            ]
            for operation in attempts {
                let error = await failure { () async throws(HomeError) in try await client.changeLayout(operation) }
                #expect(error?.code == .alreadyExists, "\(operation.name): \(String(describing: error))")
            }
            #expect(server.store.snapshot().graph == before.graph)
            #expect(server.store.lastSeq == before.seq)
        }
    }

    @Test("unknown ids are NOT_FOUND, and the message names the id")
    func unknownIDs() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let graph = server.store.snapshot().graph
            let home = graph.id("Demo Home")
            let kitchen = graph.id("Kitchen")
            let lamp = graph.id("Living Room/Lamp")
            let on = graph.id("Living Room/Lamp/On")
            let missing: ObjectID = 987_654
            let operations: [LayoutOperation] = [
                .rename(id: missing, name: "X"),
                .remove(id: missing),
                .setPrimaryHome(homeID: missing),
                .addRoom(name: "Study", homeID: missing),
                .addZone(name: "Upstairs", homeID: missing),
                .addRoomToZone(roomID: kitchen, zoneID: missing),
                .removeRoomFromZone(roomID: kitchen, zoneID: missing),
                .assignAccessory(accessoryID: missing, roomID: kitchen),
                .assignAccessory(accessoryID: lamp, roomID: missing),
                .addServiceGroup(name: "Lights", homeID: missing),
                .addServiceToGroup(serviceID: missing, groupID: missing),
                .removeServiceFromGroup(serviceID: missing, groupID: missing),
                .addActionSet(name: "Scene", kind: .userDefined, homeID: missing),
                .addAction(CharacteristicWriteAction(characteristicID: on, value: .bool(true)), actionSetID: missing),
                .removeAction(characteristicID: on, actionSetID: missing),
                .addTrigger(
                    name: "T", homeID: missing, kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .none),
                    actionSetIDs: [], enabled: true),
                .addTrigger(
                    name: "T", homeID: home,
                    kind: .event(
                        characteristicID: missing, value: nil, rangeMin: nil, rangeMax: nil,
                        conditions: []),
                    actionSetIDs: [], enabled: true),
                .addTrigger(
                    name: "T", homeID: home, kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .none),
                    actionSetIDs: [missing], enabled: true),
                .setTriggerEnabled(triggerID: missing, enabled: false),
                .addActionSetToTrigger(actionSetID: missing, triggerID: missing),
                .removeActionSetFromTrigger(actionSetID: missing, triggerID: missing),
            ]
            let before = server.store.snapshot()
            for operation in operations {
                let error = await failure { () async throws(HomeError) in try await client.changeLayout(operation) }
                #expect(error?.code == .notFound, "\(operation.name): \(String(describing: error))")
                #expect(
                    error?.message.contains(String(missing)) == true, "\(operation.name): \(String(describing: error))")
            }
            #expect(server.store.snapshot().graph == before.graph)
            #expect(server.store.lastSeq == before.seq)
        }
    }

    @Test("empty, blank and 65-byte names are INVALID_ARGUMENT; 64 bytes are fine")
    func badNames() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let graph = server.store.snapshot().graph
            let home = graph.id("Demo Home")
            let lamp = graph.id("Living Room/Lamp")
            let long = String(repeating: "a", count: 65)
            // 64 bytes, but only 32 characters: the limit is in bytes.
            let longInBytes = String(repeating: "é", count: 33)
            let before = server.store.snapshot()
            let operations: [LayoutOperation] = [
                .addHome(name: ""),
                .addHome(name: long),
                .addRoom(name: "", homeID: home),
                .addRoom(name: "   ", homeID: home),
                .addRoom(name: long, homeID: home),
                .addRoom(name: longInBytes, homeID: home),
                .addZone(name: "", homeID: home),
                .addServiceGroup(name: long, homeID: home),
                .addActionSet(name: "", kind: .userDefined, homeID: home),
                .addTrigger(
                    name: long, homeID: home, kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .none),
                    actionSetIDs: [], enabled: true),
                .rename(id: lamp, name: ""),
                .rename(id: lamp, name: long),
                .rename(id: home, name: "\t"),
            ]
            for operation in operations {
                let error = await failure { () async throws(HomeError) in try await client.changeLayout(operation) }
                #expect(error?.code == .invalidArgument, "\(operation.name): \(String(describing: error))")
            }
            let error = await failure { () async throws(HomeError) in try await client.addRoom(name: long, homeID: home)
            }
            #expect(error?.message.contains("65 bytes") == true)
            #expect(server.store.snapshot().graph == before.graph)
            #expect(server.store.lastSeq == before.seq)

            let longest = String(repeating: "b", count: 64)
            let room = try await client.addRoom(name: longest, homeID: home)
            #expect(server.store.snapshot().graph.room(room.createdID)?.name == longest)
        }
    }

    @Test("an action whose value does not fit its characteristic is INVALID_ARGUMENT")
    func actionValueDoesNotFit() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let graph = server.store.snapshot().graph
            let home = graph.id("Demo Home")
            let scene = try await client.addActionSet(name: "Movie", homeID: home).createdID
            let before = server.store.snapshot()
            let cases: [(path: String, value: CharacteristicValue, mentions: String)] = [
                ("Living Room/Lamp/Brightness", .int(150), "150"),
                ("Living Room/Lamp/On", .string("bright"), "On"),
                ("Living Room/Thermostat/TargetHeatingCoolingState", .uint(7), "7"),
                // Read-only: a scene cannot write a sensor's reading.
                ("Bedroom/Temperature Sensor/CurrentTemperature", .float(20), "CurrentTemperature"),
            ]
            for item in cases {
                let error = await failure { () async throws(HomeError) in
                    try await client.addAction(
                        characteristicID: graph.id(item.path), value: item.value,
                        toActionSet: scene)
                }
                #expect(error?.code == .invalidArgument, "\(item.path): \(String(describing: error))")
                #expect(error?.message.contains(item.mentions) == true, "\(item.path): \(String(describing: error))")
            }
            // An event trigger's value is checked the same way.
            let trigger = await failure { () async throws(HomeError) in
                try await client.addTrigger(
                    name: "Bright", homeID: home,
                    kind: .event(
                        characteristicID: graph.id("Living Room/Lamp/Brightness"), value: .int(101),
                        rangeMin: nil, rangeMax: nil, conditions: []))
            }
            #expect(trigger?.code == .invalidArgument)
            #expect(server.store.snapshot().graph == before.graph)
            #expect(server.store.lastSeq == before.seq)
        }
    }

    @Test("removing a room moves its accessories to the default room")
    func removeRoomMovesAccessories() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let graph = server.store.snapshot().graph
            let home = try #require(graph.home(graph.id("Demo Home")))
            let livingRoom = graph.id("Living Room")
            let lamp = graph.id("Living Room/Lamp")
            let thermostat = graph.id("Living Room/Thermostat")
            let zone = try await client.addZone(name: "Ground Floor", homeID: home.id).createdID
            try await client.addRoom(livingRoom, toZone: zone)

            let response = try await client.remove(livingRoom)
            let changes = layout(response)
            #expect(Set(changes.filter { $0.action == .moved }.map(\.objectID)) == [lamp, thermostat])
            #expect(changes.filter { $0.action == .moved }.allSatisfy { $0.parentID == home.defaultRoomID })
            #expect(changes.contains { $0.action == .updated && $0.objectID == zone })
            #expect(changes.last?.action == .removed)
            #expect(changes.last?.objectID == livingRoom)

            let after = server.store.snapshot().graph
            #expect(after.room(livingRoom) == nil)
            #expect(after.accessory(lamp)?.roomID == home.defaultRoomID)
            #expect(after.accessory(thermostat)?.roomID == home.defaultRoomID)
            #expect(after.zone(zone)?.roomIDs == [])

            // The default room itself stays.
            let error = await failure { () async throws(HomeError) in try await client.remove(home.defaultRoomID) }
            #expect(error?.code == .failedPrecondition)
        }
    }

    @Test("characteristics cannot be renamed or removed, nor services removed on their own")
    func partsOfAccessories() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let graph = server.store.snapshot().graph
            let on = graph.id("Living Room/Lamp/On")
            let lightbulb = graph.id("Living Room/Lamp/Lightbulb")
            let renamed = await failure { () async throws(HomeError) in try await client.rename(on, to: "Power") }
            #expect(renamed?.code == .invalidArgument)
            #expect(renamed?.message.contains("\(on)") == true)
            for id in [on, lightbulb] {
                let removed = await failure { () async throws(HomeError) in try await client.remove(id) }
                #expect(removed?.code == .invalidArgument)
                #expect(removed?.message.contains("\(id)") == true)
            }
            #expect(server.store.snapshot().graph == graph)
        }
    }

    @Test("a layout request naming no operation is INVALID_ARGUMENT")
    func emptyRequest() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            // GetStatusRequest encodes to no bytes: a LayoutRequest whose op is unset.
            let mismatched = UnaryMethod<GetStatusRequest, LayoutResponse>(HomeMethods.changeLayout.name)
            let error = await failure { () async throws(HomeError) in
                try await client.call(mismatched, GetStatusRequest())
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("no operation") == true)
        }
    }

    @Test("a subscriber sees the layout events with the sequence numbers the change answered with")
    func subscriberSeesLayoutEvents() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            let watcher = try await server.connect(name: "watcher")
            defer {
                Task {
                    await client.close()
                    await watcher.close()
                }
            }
            let home = server.store.snapshot().graph.id("Demo Home")
            let subscription = watcher.subscribe(
                SubscribeRequest(
                    filter: SubscriptionFilter(kinds: [.layoutChanged, .primaryHomeChanged])))
            let (answered, seen) = try await withTimeout(patience, "layout events on the subscription") {
                var iterator = subscription.makeAsyncIterator()
                let first = try await iterator.next()
                #expect(first?.marker?.kind == .subscribed)
                var answered: [HomeEvent] = []
                answered += try await client.addRoom(name: "Study", homeID: home).events
                answered += try await client.addHome(name: "Cabin").events
                let cabin = answered.last {
                    if case .layout(let change) = $0.body { change.object == .home } else { false }
                }
                if case .layout(let change)? = cabin?.body {
                    answered += try await client.setPrimaryHome(change.objectID).events
                }
                var seen: [HomeEvent] = []
                while seen.count < answered.count, let batch = try await iterator.next() {
                    seen += batch.events
                }
                return (answered, seen)
            }
            #expect(seen == answered)
            #expect(answered.contains { $0.kind == .primaryHomeChanged })
            #expect(seen.allSatisfy { $0.origin.name == "test" })
        }
    }

    @Test("ListTypes returns the 153 characteristic and 44 service types of the HAP catalog")
    func listTypes() async throws {
        try await withLayoutServer { server in
            let client = try await server.connect()
            defer { Task { await client.close() } }
            let catalog = try await client.listTypes()
            #expect(catalog.characteristicTypes.count == 153)
            #expect(catalog.serviceTypes.count == 44)
            #expect(catalog.characteristicTypes.map(\.uuid) == HAPCatalog.characteristicTypes.map(\.uuid))
            #expect(catalog.serviceTypes == HAPCatalog.serviceTypes)

            let brightness = try #require(catalog.characteristicTypes.first { $0.name == "Brightness" })
            #expect(brightness.uuid == "00000008-0000-1000-8000-0026BB765291")
            #expect(brightness.format == .int)
            #expect(brightness.unit == .percentage)
            #expect(brightness.minValue == 0)
            #expect(brightness.maxValue == 100)
            #expect(brightness.minStep == 1)
            #expect(brightness.permissions.readable && brightness.permissions.writable)
            #expect(brightness.permissions.supportsEventNotification)

            let heating = try #require(catalog.characteristicTypes.first { $0.name == "TargetHeatingCoolingState" })
            #expect(heating.validValues.map(\.value) == [0, 1, 2, 3])
            #expect(heating.validValues.map(\.name) == ["Off", "Heat", "Cool", "Auto"])
            let flags = try #require(catalog.characteristicTypes.first { $0.name == "AccessoryFlags" })
            #expect(flags.validBits.map(\.bit) == [0])
            let press = try #require(catalog.characteristicTypes.first { $0.name == "ProgrammableSwitchEvent" })
            #expect(press.isEventOnly)

            // Every field survives the wire, for every type.
            for (received, expected) in zip(catalog.characteristicTypes, HAPCatalog.characteristicTypes) {
                #expect(received.name == expected.name)
                #expect(received.format == expected.format)
                #expect(received.permissions == expected.permissions)
                #expect(received.unit == expected.unit)
                #expect(received.minValue == expected.minValue)
                #expect(received.maxValue == expected.maxValue)
                #expect(received.minStep == expected.minStep)
                #expect(received.validValues.map(\.value) == expected.validValues.map(\.value))
                #expect(received.validValues.map(\.name) == expected.validValues.map(\.name))
                #expect(received.validBits.map(\.bit) == expected.validBits.map(\.bit))
                #expect(received.validBits.map(\.name) == expected.validBits.map(\.name))
                #expect(received.maxLength == expected.maxLength)
                #expect(received.isEventOnly == expected.isEventOnly)
            }
        }
    }
}
