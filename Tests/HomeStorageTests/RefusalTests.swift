import CSQLite
import Foundation
import HomeModel
import Testing

@testable import HomeStorage

/// A database homed must not open is refused with a sentence saying why, and left
/// exactly as it was: same bytes, no files beside it.
@Suite("Storage: files that are refused and left alone")
struct RefusalTests {
    /// Opens `file` expecting `problem`, then checks that nothing in the directory changed.
    func expectRefusal(
        _ scratch: Scratch, _ file: String, _ problem: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = try bytes(of: file)
        let listing = scratch.listing
        #expect(
            throws: HomeError(.failedPrecondition, "\(file) \(problem); refusing to open it"),
            sourceLocation: sourceLocation
        ) {
            _ = try HomeDatabase.open(path: file)
        }
        #expect(try bytes(of: file) == before, "the file was changed", sourceLocation: sourceLocation)
        #expect(scratch.listing == listing, "files appeared or went", sourceLocation: sourceLocation)
    }

    /// A database holding the demo home, closed (so its log is checkpointed away).
    func demoDatabase(_ scratch: Scratch) throws -> String {
        let file = scratch.file("homed.sqlite")
        let database = try HomeDatabase.open(path: file)
        try database.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 0))
        database.close()
        #expect(scratch.listing == ["homed.sqlite"])
        return file
    }

    @Test("garbage bytes are not a SQLite database")
    func garbage() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        var generator = SystemRandomNumberGenerator()
        try write((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }, to: file)
        try expectRefusal(scratch, file, "is not a SQLite database (it does not start with SQLite's header)")
    }

    @Test("a few bytes of text are not a SQLite database")
    func shortFile() throws {
        let scratch = try Scratch()
        let file = scratch.file("notes.txt")
        try write(Array("hello\n".utf8), to: file)
        try expectRefusal(scratch, file, "is not a SQLite database (it is only 6 bytes long)")
    }

    @Test("a file that starts like SQLite but has no valid header is not a SQLite database")
    func fakeHeader() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        try write(Array("SQLite format 3\0".utf8) + Array(repeating: 0, count: 4080), to: file)
        try expectRefusal(scratch, file, "is not a SQLite database (file is not a database)")
    }

    @Test("a database cut short is truncated")
    func truncated() throws {
        let scratch = try Scratch()
        let file = try demoDatabase(scratch)
        let whole = try bytes(of: file)
        let pages = whole.count / 4096
        try write(Array(whole.prefix(whole.count / 2)), to: file)
        try expectRefusal(
            scratch, file,
            "is truncated: its header says \(pages) pages of 4096 bytes "
                + "(\(whole.count) bytes) but the file has \(whole.count / 2) bytes")
    }

    @Test("a database with damaged pages fails SQLite's integrity check")
    func damagedPages() throws {
        let scratch = try Scratch()
        let file = try demoDatabase(scratch)
        var damaged = try bytes(of: file)
        // Past the first page (the header and schema): the tables' own pages.
        for offset in stride(from: 4096 * 2, to: damaged.count, by: 1) { damaged[offset] = 0x5A }
        try write(damaged, to: file)
        let before = try bytes(of: file)
        #expect {
            _ = try HomeDatabase.open(path: file)
        } throws: { error in
            guard let error = error as? HomeError else { return false }
            return error.code == .failedPrecondition && error.message.hasPrefix("\(file) is corrupt: ")
                && error.message.hasSuffix("; refusing to open it")
        }
        #expect(try bytes(of: file) == before)
        #expect(scratch.listing == ["homed.sqlite"])
    }

    @Test("a database from a newer homed names both schema versions")
    func newerSchema() throws {
        let scratch = try Scratch()
        let file = try demoDatabase(scratch)
        let newer = HomeDatabase.schemaVersion + 1
        try rawSQL(file, "PRAGMA user_version = \(newer)")
        try expectRefusal(
            scratch, file,
            "was written by a newer homed (schema \(newer); this build knows up to "
                + "\(HomeDatabase.schemaVersion))")
    }

    @Test("another program's SQLite database is not homed's")
    func anotherProgram() throws {
        let scratch = try Scratch()
        let file = scratch.file("places.sqlite")
        try rawSQL(file, "CREATE TABLE bookmarks (url TEXT); INSERT INTO bookmarks VALUES ('https://swift.org')")
        try expectRefusal(
            scratch, file,
            "is a SQLite database of another program, not homed's "
                + "(it has 1 table of its own)")
        let other = scratch.file("other.sqlite")
        try rawSQL(other, "PRAGMA application_id = 1234; CREATE TABLE t (x)")
        try expectRefusal(
            scratch, other,
            "is a SQLite database of another program, not homed's "
                + "(its application id is 0x4d2)")
    }

    @Test("a database another process holds open is refused while it is held")
    func inUse() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        let first = try HomeDatabase.open(path: file)
        try first.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 0))
        #expect(
            throws: HomeError(
                .failedPrecondition,
                "\(file) is in use by another process "
                    + "(is another homed running with it?); refusing to open it")
        ) {
            _ = try HomeDatabase.open(path: file)
        }
        expectSame(try first.load(), DemoHome.make(nowMs: 0))
        first.close()
        expectSame(try HomeDatabase.open(path: file).load(), DemoHome.make(nowMs: 0))
    }

    @Test("closing ends the claim at once, even while a copy of its descriptor is held")
    func claimEndsForEveryCopy() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        try HomeDatabase.open(path: file).close()
        var claim: FileClaim? = try FileClaim(file)
        // What a process forked at this moment holds until its exec closes it.
        let copy = dup(claim!.descriptor)
        #expect(copy >= 0)
        defer { close(copy) }
        claim = nil
        let database = try HomeDatabase.open(path: file)
        database.close()
    }

    @Test("a directory is not a database")
    func directory() throws {
        let scratch = try Scratch()
        #expect(
            throws: HomeError(
                .failedPrecondition,
                "\(scratch.path) is not a regular file; refusing to open it as a database")
        ) {
            _ = try HomeDatabase.open(path: scratch.path)
        }
    }

    @Test("a database whose directory does not exist cannot be created, and says so")
    func missingDirectory() throws {
        let scratch = try Scratch()
        let file = scratch.file("missing/homed.sqlite")
        #expect {
            _ = try HomeDatabase.open(path: file)
        } throws: { error in
            (error as? HomeError)?.message.hasPrefix("cannot open database \(file): ") == true
        }
        #expect(scratch.listing.isEmpty)
    }
}

/// Runs SQL on a file the way another program would: plain SQLite, no homed rules.
func rawSQL(_ file: String, _ sql: String) throws {
    let connection = try Connection(path: file, filename: file, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
    try connection.execute(sql, doing: "test SQL")
}

@Suite("Storage: no saved row stops the daemon from starting")
struct SkippedRowTests {
    @Test("a timer trigger dated out of range (written by an older build) is reported and left out")
    func outOfRangeTimer() throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        let database = try HomeDatabase.open(path: file)
        var graph = DemoHome.make(nowMs: 0)
        let home = try #require(graph.homeOrder.first)
        let trigger = try graph.addTrigger(
            name: "Ancient", homeID: home,
            kind: .timer(fireDateMs: 0, timeZone: "UTC", recurrence: .hourly))
        try database.saveLayout(from: HomeGraph(), to: graph)
        database.close()
        try rawSQL(file, "UPDATE triggers SET fire_date_ms = \(Int64.min + 7) WHERE id = \(trigger)")
        let reopened = try HomeDatabase.open(path: file)
        var skipped: [String] = []
        let loaded = try reopened.load { skipped.append($0) }
        #expect(loaded.triggers[trigger] == nil)
        #expect(loaded.homes[home]?.triggerIDs.contains(trigger) == false)
        #expect(skipped.count == 1)
        #expect(skipped.first?.contains("timer trigger \(trigger) (Ancient) has fire_date_ms \(Int64.min + 7)") == true)
        #expect(loaded.accessories.count == graph.accessories.count)
    }
}
