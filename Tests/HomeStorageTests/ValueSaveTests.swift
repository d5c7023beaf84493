import HomeModel
import Testing

@testable import HomeStorage

@Suite("Storage: last known values")
struct ValueSaveTests {
    @Test("values saved in one batch load back with their times, of every value type")
    func saveValues() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        let graph = try everythingHome()
        try database.saveLayout(from: HomeGraph(), to: graph)
        var tables = Tables(graph)
        var written: [Characteristic] = []
        let newValues: [String: CharacteristicValue?] = [
            "On": .bool(true), "Brightness": .int(99), "TargetTemperature": .float(-0.5), "Mode": .uint(0),
            "Motto": .string(""), "Blob": .data(Array(0...255)), "Empty Blob": .data([7]), "Unset": .bool(true),
            "Huge": .uint(1 << 63), "Level": nil,
        ]
        for (id, characteristic) in graph.characteristics.sorted(by: { $0.key < $1.key }) {
            guard let value = newValues[characteristic.type.name] else { continue }
            tables.characteristics[id]?.value = value
            tables.characteristics[id]?.lastUpdatedMs = 1_800_000_000_000 + Int64(id)
            written.append(tables.characteristics[id]!)
        }
        #expect(written.count >= newValues.count)
        try database.foldValueLog(into: written)
        expectSame(try reloaded(database), try tables.graph())
    }

    @Test("a layout save stores new characteristics' initial values and leaves other values alone")
    func layoutSaveAndValues() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        let demo = DemoHome.make(nowMs: 10)
        try database.saveLayout(from: HomeGraph(), to: demo)
        let brightness = path(demo, "Living Room/Lamp/Brightness")
        var changed = demo
        try changed.write(.int(5), to: brightness, nowMs: 20, enforceWritable: true)
        let added = try changed.addAccessory(lamp("Desk Lamp"), homeID: 1, nowMs: 30)
        try database.saveLayout(from: demo, to: changed)
        let restarted = try reloaded(database)
        // Values are written behind: the layout save kept the stored brightness …
        #expect(restarted.characteristics[brightness]?.value == .int(80))
        #expect(restarted.characteristics[brightness]?.lastUpdatedMs == 10)
        // … but the new lamp came with its initial values.
        let deskBrightness = path(changed, "Default Room/Desk Lamp/Brightness")
        #expect(restarted.accessories[added] != nil)
        #expect(restarted.characteristics[deskBrightness]?.value == .int(40))
        #expect(restarted.characteristics[deskBrightness]?.lastUpdatedMs == 30)
    }

    @Test("saving the value of a characteristic removed meanwhile does nothing")
    func removedMeanwhile() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        let demo = DemoHome.make(nowMs: 0)
        try database.saveLayout(from: HomeGraph(), to: demo)
        let lampID = path(demo, "Living Room/Lamp")
        var written = demo
        try written.write(.bool(false), to: path(demo, "Living Room/Lamp/On"), nowMs: 1, enforceWritable: true)
        let stale = written.characteristics[path(demo, "Living Room/Lamp/On")]!
        var removed = demo
        _ = try removed.removeAccessory(lampID)
        try database.saveLayout(from: demo, to: removed)
        try database.foldValueLog(into: [stale])
        expectSame(try reloaded(database), removed)
    }

    @Test("a closed database refuses to save, with a sentence naming it")
    func closed() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        database.close()
        #expect(throws: HomeError(.failedPrecondition, "database \(database.path) is closed")) {
            try database.foldValueLog(into: DemoHome.make(nowMs: 0).characteristics.values.map { $0 })
        }
    }
}
