import Foundation
import HomeModel
import Testing

@testable import HomeStorage

@Suite("Storage: an online backup")
struct BackupTests {
    @Test("a backup taken in one-page steps while values are written holds every change made before it ended")
    func writesDuringBackup() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        defer { database.close() }
        var graph = DemoHome.make(nowMs: 10)
        try database.saveLayout(from: HomeGraph(), to: graph)
        // Enough rooms that the copy takes many steps.
        for index in 0..<200 {
            let before = graph
            _ = try graph.addRoom(name: "Room \(index)", homeID: 1)
            try database.saveLayout(from: before, to: graph)
        }
        let brightness = path(graph, "Living Room/Lamp/Brightness")
        var steps = 0
        var written: Int64 = 0
        let size = try database.backup(to: scratch.file("copy.sqlite"), pagesPerStep: 1) {
            // A writer between every step: the copy follows the connection's changes.
            steps += 1
            written = Int64(steps % 100)
            _ = try? graph.write(.int(written), to: brightness, nowMs: 20, enforceWritable: true)
            try? database.appendValues([.init(characteristicID: brightness, value: .int(written))], timeMs: 20)
        }
        #expect(steps > 10, "the copy took \(steps) steps")
        #expect(size == (try FileManager.default.attributesOfItem(atPath: scratch.file("copy.sqlite"))[.size] as? Int))
        let copy = try HomeDatabase.open(path: scratch.file("copy.sqlite"))
        defer { copy.close() }
        let restored = try copy.load()
        #expect(restored.rooms.count == graph.rooms.count)
        #expect(restored.characteristics[brightness]?.value == .int(written))
        let mode = try FileManager.default.attributesOfItem(atPath: scratch.file("copy.sqlite"))[.posixPermissions]
        #expect(mode as? Int == 0o600)
    }

    @Test("a backup to a path that exists or cannot be created is refused naming it, and leaves nothing")
    func refusedPath() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        defer { database.close() }
        try database.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 10))
        let missing = scratch.file("no/such/dir/copy.sqlite")
        let error = #expect(throws: HomeError.self) { try database.backup(to: missing, pagesPerStep: 8) {} }
        #expect(error?.message.contains(missing) == true)
        let existing = scratch.file("homed.sqlite")
        #expect(throws: HomeError.self) { try database.backup(to: existing, pagesPerStep: 8) {} }
        #expect(scratch.listing.filter { !$0.hasPrefix("homed.sqlite") } == [])
    }

    @Test("the daemon's copy goes beside the database, under a hidden name the caller removes")
    func temporaryCopy() throws {
        let scratch = try Scratch()
        let database = try HomeDatabase.open(path: scratch.file("homed.sqlite"))
        defer { database.close() }
        try database.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 10))
        let copy = try database.backupToTemporaryFile()
        #expect(copy.hasPrefix(scratch.file(".homed.sqlite.backup-")))
        let opened = try HomeDatabase.open(path: copy)
        #expect(try opened.load() == DemoHome.make(nowMs: 10))
        opened.close()
    }
}
