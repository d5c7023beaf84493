import Foundation
import HomeModel
import Testing

@testable import HomeStorage

/// `kill -9` loses nothing that was acknowledged: a change is durable when
/// `saveLayout` returns, whatever happens to the process after.
@Suite("Storage: kill -9")
struct CrashTests {
    static let steps = 400

    /// The versions the child saves, one layout change apart (deterministic, so the
    /// child and the test compute the same ones).
    static func versions() -> [HomeGraph] {
        var script = LayoutScript(seed: 9)
        return script.history(from: DemoHome.make(nowMs: 0), steps: steps)
    }

    @Test(
        "a process killed with SIGKILL while saving loses no acknowledged layout change",
        .timeLimit(.safetyNet))
    func killedWhileSaving() async throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        let versions = Self.versions()

        // A child process (this test binary, run again) saves version after version and
        // prints "saved N" once saveLayout returns for version N. A third of the way
        // through, a thread of its own sends it SIGKILL at a random moment: most often
        // in the middle of a transaction.
        let result = await #expect(processExitsWith: .signal(SIGKILL), observing: [\.standardOutputContent]) {
            [file = file as String] in
            let versions = CrashTests.versions()
            let database = try HomeDatabase.open(path: file)
            try database.saveLayout(from: HomeGraph(), to: versions[0])
            for step in 1..<versions.count {
                try database.saveLayout(from: versions[step - 1], to: versions[step])
                // Straight to the descriptor: buffered output would die with the process.
                let line = Array("saved \(step)\n".utf8)
                _ = line.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
                if step == versions.count / 3 {
                    Thread.detachNewThread {
                        usleep(UInt32.random(in: 0...20_000))
                        kill(getpid(), SIGKILL)
                    }
                }
            }
            // Not reached unless the kill is slower than all remaining saves.
            sleep(60)
        }
        guard let result else { return }
        let output = String(decoding: result.standardOutputContent, as: UTF8.self)
        let acknowledged = output.split(separator: "\n").compactMap { Int($0.dropFirst("saved ".count)) }.max() ?? 0
        #expect(acknowledged >= versions.count / 3, "the child stopped early: \(output.suffix(200))")

        // The restart sees the last acknowledged version, or one saved just before the kill.
        let loaded = try HomeDatabase.open(path: file).load()
        let found = versions.indices.last { versions[$0] == loaded }
        #expect(found != nil, "the database holds none of the saved versions")
        if let found {
            #expect(found >= acknowledged, "acknowledged \(acknowledged), found \(found)")
            #expect(found <= acknowledged + 1, "acknowledged \(acknowledged), found \(found)")
        }
    }

    @Test("a file left by a crash with a newer schema in its log is refused, and its log kept as it was")
    func refusedWithLog() async throws {
        let scratch = try Scratch()
        let file = scratch.file("homed.sqlite")
        // A newer homed (played by a child) saves a home, records a newer schema, and is
        // killed: its last transactions live only in the write-ahead log beside the file.
        let newer = HomeDatabase.schemaVersion + 1
        await #expect(processExitsWith: .signal(SIGKILL)) { [file = file as String, newer = newer as Int] in
            let database = try HomeDatabase.open(path: file)
            try database.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 0))
            try database.withConnection { connection throws(HomeError) in
                try connection.execute("PRAGMA user_version = \(newer)", doing: "playing a newer homed")
            }
            kill(getpid(), SIGKILL)
        }
        // The log, and the shared index of it that SQLite keeps beside a file in use.
        #expect(scratch.listing == ["homed.sqlite", "homed.sqlite-shm", "homed.sqlite-wal"])
        let before = (try bytes(of: file), try bytes(of: file + "-wal"))
        #expect(
            throws: HomeError(
                .failedPrecondition,
                "\(file) was written by a newer homed (schema \(newer); this build "
                    + "knows up to \(HomeDatabase.schemaVersion)); refusing to open it")
        ) {
            _ = try HomeDatabase.open(path: file)
        }
        #expect(scratch.listing == ["homed.sqlite", "homed.sqlite-shm", "homed.sqlite-wal"])
        #expect(try bytes(of: file) == before.0, "the database file was changed")
        #expect(try bytes(of: file + "-wal") == before.1, "the log was changed")
    }
}
