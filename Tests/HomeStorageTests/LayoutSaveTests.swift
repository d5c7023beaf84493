import HomeModel
import Testing

@testable import HomeStorage

@Suite("Storage: layout changes")
struct LayoutSaveTests {
    /// Saves `change` applied to `graph`, restarts, and expects to find the changed graph.
    func persist(
        _ graph: HomeGraph, sourceLocation: SourceLocation = #_sourceLocation,
        _ change: (inout HomeGraph) throws -> Void
    ) throws -> HomeGraph {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        try database.saveLayout(from: HomeGraph(), to: graph)
        var changed = graph
        try change(&changed)
        try database.saveLayout(from: graph, to: changed)
        let restarted = try reloaded(database)
        expectSame(restarted, changed, sourceLocation: sourceLocation)
        return restarted
    }

    @Test("renaming a room is one updated row and survives a restart")
    func renameRoom() throws {
        let demo = DemoHome.make(nowMs: 0)
        let kitchen = path(demo, "Kitchen")
        var renamed = demo
        _ = try renamed.renameRoom(kitchen, to: "Galley")
        let diff = LayoutDiff(from: demo, to: renamed)
        #expect(diff.rooms.updated == [kitchen])
        #expect(diff.rooms.inserted.isEmpty && diff.rooms.removed.isEmpty && diff.positions.isEmpty)
        #expect(diff.accessories.isEmpty && diff.characteristics.isEmpty && !diff.nextIDChanged)
        let restarted = try persist(demo) { _ = try $0.renameRoom(kitchen, to: "Galley") }
        #expect(restarted.rooms[kitchen]?.name == "Galley")
    }

    @Test("removing a room moves its accessories to the default room and out of its zones")
    func removeRoom() throws {
        var graph = DemoHome.make(nowMs: 0)
        let hallway = path(graph, "Hallway")
        let zone = try graph.addZone(name: "Entrance", homeID: 1)
        _ = try graph.addRoom(hallway, toZone: zone)
        _ = try graph.addRoom(path(graph, "Kitchen"), toZone: zone)
        let lock = path(graph, "Hallway/Front Door Lock")
        let restarted = try persist(graph) { _ = try $0.removeRoom(hallway) }
        #expect(restarted.rooms[hallway] == nil)
        #expect(restarted.accessories[lock]?.roomID == restarted.homes[1]?.defaultRoomID)
        #expect(restarted.zones[zone]?.roomIDs == [path(graph, "Kitchen")])
    }

    @Test("removing an accessory removes its services, characteristics, actions, group places and triggers")
    func removeAccessoryCascades() throws {
        let graph = try everythingHome()
        let lamp = path(graph, "Home/Living Room/Lamp")
        let restarted = try persist(graph) { _ = try $0.removeAccessory(lamp) }
        #expect(restarted.accessories[lamp] == nil)
        #expect(!restarted.services.values.contains { $0.accessoryID == lamp })
        #expect(!restarted.characteristics.values.contains { $0.accessoryID == lamp })
        #expect(restarted.triggers.values.first { $0.name == "Lamp On" } == nil)
        #expect(restarted.serviceGroups.values.first { $0.name == "Lights" }?.serviceIDs.count == 1)
    }

    @Test("removing a bridge removes the accessories behind it")
    func removeBridge() throws {
        let graph = try everythingHome()
        let hub = path(graph, "Home/Default Room/Hub")
        let bridged = graph.accessories[hub]?.bridgedAccessoryIDs ?? []
        #expect(bridged.count == 2)
        let restarted = try persist(graph) { _ = try $0.removeAccessory(hub) }
        for id in bridged + [hub] { #expect(restarted.accessories[id] == nil) }
        #expect(restarted.triggers.values.first { $0.name == "Cold" } == nil)
    }

    @Test("removing one bridged accessory updates its bridge's list")
    func removeBridged() throws {
        let graph = try everythingHome()
        let hub = path(graph, "Home/Default Room/Hub")
        let sensor = path(graph, "Home/Loft/Sensor")
        let restarted = try persist(graph) { _ = try $0.removeAccessory(path($0, "Home/Kitchen/Switch")) }
        #expect(restarted.accessories[hub]?.bridgedAccessoryIDs == [sensor])
    }

    @Test("removing the primary home removes everything in it and makes the next home primary")
    func removeHome() throws {
        let graph = try everythingHome()
        let cabin = graph.homeOrder[1]
        let restarted = try persist(graph) { _ = try $0.removeHome(cabin) }
        #expect(restarted.homeOrder == [graph.homeOrder[0]])
        #expect(restarted.primaryHomeID == graph.homeOrder[0])
    }

    @Test("zones, groups, scenes and triggers changed in place persist")
    func scenesAndTriggers() throws {
        let graph = try everythingHome()
        let evening = graph.actionSets.values.first { $0.name == "Evening" }!.id
        let sunset = graph.triggers.values.first { $0.name == "Sunset" }!.id
        let cold = graph.triggers.values.first { $0.name == "Cold" }!.id
        let zone = graph.zones.values.first { $0.name == "Everywhere" }!.id
        let restarted = try persist(graph) { graph in
            _ = try graph.setTrigger(sunset, enabled: false)
            _ = try graph.setTrigger(
                sunset,
                kind: .timer(
                    fireDateMs: 1, timeZone: "America/New_York",
                    recurrence: .hourly))
            _ = try graph.removeActionSet(evening)
            let on = path(graph, "Home/Living Room/Lamp/On")
            _ = try graph.setTrigger(
                cold,
                kind: .event(
                    characteristicID: on, value: .bool(false), rangeMin: nil,
                    rangeMax: nil, conditions: []))
            _ = try graph.removeRoom(path(graph, "Home/Loft"), fromZone: zone)
            _ = try graph.renameZone(zone, to: "Upstairs")
        }
        #expect(restarted.actionSets[evening] == nil)
        #expect(restarted.triggers[sunset]?.actionSetIDs.count == 1)
        #expect(restarted.triggers[cold]?.kind.conditions == [])
    }

    @Test("ids are never reused after a restart: the next id is stored with every change")
    func nextID() throws {
        let demo = DemoHome.make(nowMs: 0)
        let restarted = try persist(demo) { graph in
            let room = try graph.addRoom(name: "Study", homeID: 1)
            _ = try graph.removeRoom(room)
        }
        #expect(restarted.nextID == demo.nextID + 1)
        var next = restarted
        #expect(try next.addRoom(name: "Attic", homeID: 1) == demo.nextID + 1)
    }

    @Test("adding or removing one accessory of many moves no sibling: positions are sparse")
    func sparsePositions() throws {
        var graph = HomeGraph()
        let home = try graph.addHome(name: "Home")
        for number in 0..<50 { try graph.addAccessory(lamp("Lamp \(number)"), homeID: home, nowMs: 0) }
        let middle = graph.homes[home]!.accessoryIDs[25]
        var removed = graph
        _ = try removed.removeAccessory(middle)
        let diff = LayoutDiff(from: graph, to: removed)
        #expect(diff.accessories.removed == [middle])
        #expect(diff.positions.isEmpty)
        var added = removed
        let newest = try added.addAccessory(lamp("Newest"), homeID: home, nowMs: 0)
        let addition = LayoutDiff(from: removed, to: added)
        #expect(addition.positions[.accessories]?.keys.sorted() == [newest])
        _ = try persist(graph) { graph in
            _ = try graph.removeAccessory(middle)
            try graph.addAccessory(lamp("Newest"), homeID: home, nowMs: 0)
        }
    }

    @Test("positions keep any order: a list out of id order loads in its order")
    func positionsOfAnyOrder() {
        #expect(LayoutDiff.positions([3, 9, 4, 5, 20]).map(\.position) == [3, 9, 10, 11, 20])
        #expect(LayoutDiff.positions([]).isEmpty)
    }

    @Test("a zone's rooms keep the order they were added in, which is not id order")
    func zoneOrder() throws {
        var graph = DemoHome.make(nowMs: 0)
        let zone = try graph.addZone(name: "Mixed", homeID: 1)
        for room in [path(graph, "Hallway"), path(graph, "Kitchen"), path(graph, "Bedroom")] {
            _ = try graph.addRoom(room, toZone: zone)
        }
        let restarted = try persist(graph) { graph in
            _ = try graph.removeRoom(path(graph, "Kitchen"), fromZone: zone)
            _ = try graph.addRoom(path(graph, "Living Room"), toZone: zone)
        }
        #expect(
            restarted.zones[zone]?.roomIDs == [
                path(graph, "Hallway"), path(graph, "Bedroom"),
                path(graph, "Living Room"),
            ])
    }

    @Test("a failed save changes nothing: the transaction rolls back whole")
    func failedSaveRollsBack() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        let demo = DemoHome.make(nowMs: 0)
        try database.saveLayout(from: HomeGraph(), to: demo)
        // Claiming the stored graph is empty makes the save insert ids that exist: it must fail.
        var changed = demo
        _ = try changed.renameRoom(path(demo, "Kitchen"), to: "Galley")
        #expect(throws: HomeError.self) { try database.saveLayout(from: HomeGraph(), to: changed) }
        expectSame(try reloaded(database), demo)
    }

    @Test("a layout commit's record is one transaction: its rows and its events are stored together, or neither")
    func layoutRecordWithEvents() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        var database = try HomeDatabase.open(path: file)
        try database.beginJournal(id: "j1")
        let demo = DemoHome.make(nowMs: 0)
        try database.saveLayout(from: HomeGraph(), to: demo)
        let kitchen = path(demo, "Kitchen")
        var renamed = demo
        _ = try renamed.renameRoom(kitchen, to: "Galley")
        let event = HomeEvent(
            seq: 1, timeMs: 5, origin: .daemon,
            body: .layout(LayoutChange(action: .updated, object: .room, objectID: kitchen, homeID: 1, name: "Galley")))
        try database.append(
            CommitRecord(
                events: [event], keepUntilMs: 1_000, values: [], timeMs: 5,
                layout: LayoutSave(before: demo, after: renamed, unfolded: [])))
        #expect(try database.events(HistoryQuery()).events.map(\.seq) == [1])
        expectSame(try reloaded(database), renamed)

        // A save that fails (the stored graph claimed empty: ids inserted twice) stores no event either.
        database = try HomeDatabase.open(path: file)
        defer { database.close() }
        var again = renamed
        _ = try again.renameRoom(kitchen, to: "Scullery")
        var second = event
        second.seq = 2
        #expect(throws: HomeError.self) {
            try database.append(
                CommitRecord(
                    events: [second], keepUntilMs: 1_000, values: [], timeMs: 6,
                    layout: LayoutSave(before: HomeGraph(), after: again, unfolded: [])))
        }
        #expect(try database.events(HistoryQuery()).events.map(\.seq) == [1])
        expectSame(try database.load(), renamed)
    }
}
