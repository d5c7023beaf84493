import HomeModel
import Testing

@testable import HomeStorage

@Suite("Storage: the value log")
struct ValueLogTests {
    @Test("every kind of value survives the log's encoding, bit for bit")
    func recordRoundTrip() throws {
        let changes: [SavedValue] = [
            .init(characteristicID: 1, value: nil), .init(characteristicID: 127, value: .bool(false)),
            .init(characteristicID: 128, value: .bool(true)), .init(characteristicID: 1 << 40, value: .int(-1)),
            .init(characteristicID: 5, value: .int(.min)), .init(characteristicID: 6, value: .int(.max)),
            .init(characteristicID: 7, value: .uint(.max)), .init(characteristicID: 8, value: .float(-0.0)),
            .init(characteristicID: 9, value: .float(.infinity)),
            .init(characteristicID: 10, value: .string("Küche 🏠")),
            .init(characteristicID: 11, value: .data([])), .init(characteristicID: .max, value: .data(Array(0...255))),
        ]
        let decoded = try ValueLogRecord.decode(ValueLogRecord.encode(changes), row: 1)
        #expect(decoded == changes)
        if case .float(let zero) = decoded[7].value { #expect(zero.sign == .minus) }
    }

    @Test("a damaged record is refused with the row and the byte at fault")
    func damagedRecord() throws {
        let bytes = ValueLogRecord.encode([.init(characteristicID: 3, value: .string("abc"))])
        #expect(throws: HomeError(.dataLoss, "value log row 9: 3 bytes announced at byte 4, fewer remain")) {
            try ValueLogRecord.decode(Array(bytes.prefix(4)), row: 9)
        }
        #expect(throws: HomeError(.dataLoss, "value log row 9 ends early, at byte 2")) {
            try ValueLogRecord.decode(Array(bytes.prefix(2)), row: 9)
        }
        #expect(throws: HomeError(.dataLoss, "value log row 9: unknown value kind 99 at byte 2")) {
            try ValueLogRecord.decode([1, 3, 99], row: 9)
        }
        #expect(throws: HomeError(.dataLoss, "value log row 9 has unknown version 2")) {
            try ValueLogRecord.decode([2], row: 9)
        }
    }

    @Test("appended values are there after a reopen without a fold, in the order they were appended")
    func appendedWithoutFold() throws {
        let scratch = try Scratch()
        let demo = DemoHome.make(nowMs: 10)
        let on = path(demo, "Living Room/Lamp/On")
        let brightness = path(demo, "Living Room/Lamp/Brightness")
        do {
            let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
            try database.saveLayout(from: HomeGraph(), to: demo)
            try database.appendValues(
                [
                    .init(characteristicID: on, value: .bool(false)),
                    .init(characteristicID: brightness, value: .int(3)),
                ],
                timeMs: 20)
            try database.appendValues([.init(characteristicID: brightness, value: .int(4))], timeMs: 30)
            try database.appendValues([.init(characteristicID: 999_999, value: .int(4))], timeMs: 40)
            #expect(try database.valueLogRows() == 3)
            database.close()
        }
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        let graph = try database.load()
        #expect(graph.characteristics[on]?.value == .bool(false))
        #expect(graph.characteristics[on]?.lastUpdatedMs == 20)
        #expect(graph.characteristics[brightness]?.value == .int(4))
        #expect(graph.characteristics[brightness]?.lastUpdatedMs == 30)
        // Loading folded the log into the rows: the daemon that loaded it does not
        // know the log's rows, so they must not wait for its next fold.
        #expect(try database.valueLogRows() == 0)
        #expect(try reloaded(database) == graph)
    }

    @Test("a layout save folds the log, so a row it writes is never older than a logged value")
    func layoutSaveFolds() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        let demo = DemoHome.make(nowMs: 10)
        try database.saveLayout(from: HomeGraph(), to: demo)
        let brightness = path(demo, "Living Room/Lamp/Brightness")
        var changed = demo
        try changed.write(.int(5), to: brightness, nowMs: 20, enforceWritable: true)
        try database.appendValues([.init(characteristicID: brightness, value: .int(5))], timeMs: 20)
        let withRoom = changed
        _ = try changed.addRoom(name: "Attic", homeID: 1)
        try database.saveLayout(from: withRoom, to: changed, values: [changed.characteristics[brightness]!])
        #expect(try database.valueLogRows() == 0)
        let restarted = try reloaded(database)
        #expect(restarted.characteristics[brightness]?.value == .int(5))
        #expect(restarted.characteristics[brightness]?.lastUpdatedMs == 20)
    }
}
