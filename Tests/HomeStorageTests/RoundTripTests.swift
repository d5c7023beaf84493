import HomeModel
import Testing

@testable import HomeStorage

@Suite("Storage: what is saved is what loads")
struct RoundTripTests {
    @Test("a new file loads as an empty home graph with ids starting at 1")
    func emptyFile() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        #expect(try database.load() == HomeGraph())
        expectSame(try reloaded(database), HomeGraph())
    }

    @Test("the demo home loads back equal after a restart, ids and next id included")
    func demoHome() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        let demo = DemoHome.make(nowMs: 1_700_000_000_123)
        try database.saveLayout(from: HomeGraph(), to: demo)
        expectSame(try database.load(), demo)
        let restarted = try reloaded(database)
        expectSame(restarted, demo)
        #expect(restarted.nextID == demo.nextID)
    }

    @Test("a home with every kind of object, value and metadata loads back equal")
    func everything() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        let graph = try everythingHome()
        #expect(graph.zones.count == 2 && graph.triggers.count == 4 && graph.serviceGroups.count == 2)
        #expect(graph.accessories.values.contains { !$0.bridgedAccessoryIDs.isEmpty })
        #expect(graph.services.values.contains { !$0.linkedServiceIDs.isEmpty })
        try database.saveLayout(from: HomeGraph(), to: graph)
        let restarted = try reloaded(database)
        expectSame(restarted, graph)
        // Spot checks of what equality could only find by accident.
        #expect(restarted.characteristics.values.first { $0.type.name == "Huge" }?.value == .uint(UInt64.max))
        #expect(restarted.characteristics.values.first { $0.type.name == "Empty Blob" }?.value == .data([]))
        #expect(restarted.characteristics.values.first { $0.type.name == "Unset" }?.value == nil)
        #expect(restarted.primaryHomeID == restarted.homeOrder[1])
    }

    @Test(
        "a home's location, sun triggers, time conditions and holds load back, and changing them updates the rows"
    )
    func triggerTiming() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        let demo = DemoHome.make(nowMs: 1_700_000_000_123)
        try database.saveLayout(from: HomeGraph(), to: demo)
        var graph = demo
        _ = try graph.setLocation(GeoLocation(latitude: -33.87, longitude: 151.21), ofHome: 1)
        let on = try graph.resolve(path: "Living Room/Lamp/On")
        let porch = try graph.addTrigger(
            name: "Porch", homeID: 1, kind: .sun(.sunset, offsetMs: -1_800_000, timeZone: "Australia/Sydney"),
            condition: TimeCondition(days: [.monday, .friday], timeZone: "Australia/Sydney"), executeOnce: true,
            conditions: [CharacteristicCondition(characteristicID: on, comparison: .notEqual, value: .bool(true))])
        try graph.addTrigger(
            name: "Held", homeID: 1,
            kind: .event(characteristicID: on, value: .bool(true), rangeMin: nil, rangeMax: nil, conditions: []),
            condition: TimeCondition(
                days: .everyDay, window: (.sun(.sunset, offsetMs: 600_000), .clock(msOfDay: 21_600_000)),
                timeZone: "Europe/Berlin"),
            holdMs: 600_000, end: TriggerEnd(afterMs: 300_000, whenEventEnds: true),
            command: TriggerCommand(
                program: "/bin/echo", arguments: ["", "a:b", "é\u{301}", "two words"], timeoutMs: 5))
        try database.saveLayout(from: demo, to: graph)
        expectSame(try reloaded(database), graph)
        let reopened = try HomeDatabase.open(path: database.path)
        defer { reopened.close() }

        var changed = graph
        _ = try changed.setTrigger(
            porch, kind: .timer(fireDateMs: 1_700_000_000_000, timeZone: "UTC", recurrence: .daily),
            condition: .always, holdMs: 0)
        _ = try changed.setLocation(GeoLocation(latitude: 52.52, longitude: 13.405), ofHome: 1)
        try reopened.saveLayout(from: graph, to: changed)
        expectSame(try reopened.load(), changed)
    }

    @Test("a provider's keys for its accessories and services load back, and registering again keeps ids")
    func providerKeys() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        var graph = HomeGraph()
        let outlet = ProvidedAccessory(
            key: "/dev/outlet0", name: "Outlet", category: .outlet,
            services: [
                ProvidedService(
                    type: "Outlet", key: "left",
                    characteristics: [
                        ProvidedCharacteristic(type: "On", value: .bool(true)),
                        ProvidedCharacteristic(type: "OutletInUse", value: .bool(false)),
                    ])
            ])
        let first = try graph.register([outlet], provider: "plugs", nowMs: 1)
        try database.saveLayout(from: HomeGraph(), to: graph)
        var restarted = try reloaded(database)
        expectSame(restarted, graph)
        #expect(restarted.accessoryIDs(ofProvider: "plugs") == ["/dev/outlet0": first.accessoryIDs[0]])
        #expect(restarted.services.values.contains { $0.providerKey == "left" })
        let before = restarted
        let again = try restarted.register([outlet], provider: "plugs", nowMs: 2)
        #expect(again.accessoryIDs == first.accessoryIDs && again.changes.isEmpty)
        #expect(restarted.characteristics.keys.sorted() == before.characteristics.keys.sorted())
    }

    @Test("graphs saved one change at a time load back equal after every change")
    func history() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        var script = LayoutScript(seed: 42)
        let versions = script.history(from: try everythingHome(), steps: 150)
        try database.saveLayout(from: HomeGraph(), to: versions[0])
        for (old, new) in zip(versions, versions.dropFirst()) {
            try database.saveLayout(from: old, to: new)
            expectSame(try database.load(), new)
        }
        expectSame(try reloaded(database), versions.last!)
    }

    @Test("saving from a graph to itself writes nothing")
    func noChange() throws {
        let demo = DemoHome.make(nowMs: 5)
        #expect(LayoutDiff(from: demo, to: demo).isEmpty)
    }
}
