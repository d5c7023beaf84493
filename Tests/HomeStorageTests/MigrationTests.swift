import CSQLite
import HomeModel
import Testing

@testable import HomeStorage

@Suite("Storage: schema versions and migrations")
struct MigrationTests {
    /// The schema version and journal mode a file has now.
    func version(of file: String) throws -> (version: Int64, journal: [String]) {
        let connection = try Connection(path: file, filename: file, flags: SQLITE_OPEN_READONLY)
        return (
            try connection.integer("PRAGMA user_version", doing: "test"),
            try connection.strings("PRAGMA journal_mode", doing: "test")
        )
    }

    @Test("an empty (zero-byte) file is migrated to the current schema")
    func zeroBytes() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        try write([], to: file)
        let database = try HomeDatabase.open(path: file)
        #expect(try database.load() == HomeGraph())
        database.close()
        #expect(try version(of: file) == (Int64(HomeDatabase.schemaVersion), ["wal"]))
    }

    @Test("a SQLite file at version 0 with no tables is migrated, and switched to WAL")
    func versionZero() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        try rawSQL(file, "CREATE TABLE scratch (x); DROP TABLE scratch")
        #expect(try version(of: file) == (0, ["delete"]))
        let database = try HomeDatabase.open(path: file)
        try database.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 0))
        expectSame(try reloaded(database), DemoHome.make(nowMs: 0))
        #expect(try version(of: file).version == Int64(HomeDatabase.schemaVersion))
    }

    @Test("a later migration runs once on a file at the version before it, keeping its data")
    func laterMigration() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        let first = try HomeDatabase.open(path: file, migrations: Schema.migrations)
        try first.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 0))
        first.close()

        let second = Schema.Migration(
            version: Schema.version + 1,
            sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT")
        let upgraded = try HomeDatabase.open(path: file, migrations: Schema.migrations + [second])
        expectSame(try upgraded.load(), DemoHome.make(nowMs: 0))
        upgraded.close()
        #expect(try version(of: file).version == Int64(Schema.version + 1))
        // Opening again applies nothing (it would fail: the table exists).
        try HomeDatabase.open(path: file, migrations: Schema.migrations + [second]).close()

        // The build that knows only the first schema refuses the upgraded file.
        #expect(
            throws: HomeError(
                .failedPrecondition,
                "\(file) was written by a newer homed (schema "
                    + "\(Schema.version + 1); this build knows up to \(Schema.version)); "
                    + "refusing to open it")
        ) {
            _ = try HomeDatabase.open(path: file)
        }
    }

    @Test("a migration that fails leaves the file at the version before it")
    func failedMigration() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        let first = try HomeDatabase.open(path: file)
        try first.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 0))
        first.close()
        let broken = Schema.Migration(
            version: Schema.version + 1,
            sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY); CREATE TABLE notes (x)")
        #expect(throws: HomeError.self) {
            _ = try HomeDatabase.open(path: file, migrations: Schema.migrations + [broken])
        }
        #expect(try version(of: file).version == Int64(Schema.version))
        expectSame(try HomeDatabase.open(path: file).load(), DemoHome.make(nowMs: 0))
    }
}
