import Foundation
import HomeModel
import Testing

@testable import HomeStorage

/// The home is nobody else's business: a database homed creates is 0600, whatever
/// the umask, and so are the files SQLite keeps beside it.
@Suite("Storage: the modes of the files it creates", .serialized)
struct FileModeTests {
    func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : nil
    }

    /// Runs `body` with the process's umask set to `mask` (022 is what a login gives).
    func withUmask<T>(_ mask: mode_t, _ body: () throws -> T) rethrows -> T {
        let previous = umask(mask)
        defer { umask(previous) }
        return try body()
    }

    @Test("a new database and its write-ahead log are 0600 under a umask of 022")
    func newDatabaseIsPrivate() throws {
        let scratch = try Scratch()
        let file = scratch.file("elsewhere.sqlite")
        let database = try withUmask(0o022) { try HomeDatabase.open(path: file) }
        try database.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 0))
        #expect(mode(file) == 0o600)
        // Open and written to, in WAL mode: the log is there, and as private.
        #expect(FileManager.default.fileExists(atPath: file + "-wal"))
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: file + suffix) {
            #expect(mode(file + suffix) == 0o600, "\(suffix)")
        }
        database.close()
        #expect(mode(file) == 0o600)
    }

    @Test("a umask that would leave the owner unable to write still gives 0600")
    func narrowUmask() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        let database = try withUmask(0o277) { try HomeDatabase.open(path: file) }
        try database.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 0))
        database.close()
        #expect(mode(file) == 0o600)
    }

    @Test("a database moved to a new place is 0600 there")
    func movedDatabaseIsPrivate() throws {
        let scratch = try Scratch()
        let source = scratch.file("old.sqlite")
        let database = try HomeDatabase.open(path: source)
        try database.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 0))
        database.close()
        let destination = scratch.file("new.sqlite")
        try withUmask(0o022) { try HomeDatabase.move(from: source, to: destination) }
        #expect(mode(destination) == 0o600)
        #expect(
            try HomeDatabase.open(path: destination).load().accessories.count
                == DemoHome.make(nowMs: 0).accessories.count)
    }

    @Test("an existing database keeps the mode its owner gave it")
    func existingModeKept() throws {
        let scratch = try Scratch()
        let file = scratch.file("shared.sqlite")
        try HomeDatabase.open(path: file).close()
        chmod(file, 0o640)
        try HomeDatabase.open(path: file).close()
        #expect(mode(file) == 0o640)
    }
}
