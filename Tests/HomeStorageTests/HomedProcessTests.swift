import Foundation
import HomeModel
import HomeServer
import HomeTesting
import Testing

@testable import HomeStorage

/// The built `homed`: `$HOMED_BIN`, else `.build/debug/homed` of this repository.
private let homedBinary: String = {
    if let path = ProcessInfo.processInfo.environment["HOMED_BIN"], !path.isEmpty { return path }
    var repository = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { repository.deleteLastPathComponent() }
    return repository.appendingPathComponent(".build/debug/homed").path
}()

/// A pipe for a child's output: the read end, and the write end to hand the child
/// (both close on exec: the child gets only what it is given).
func outputPipe() throws -> (read: FileHandle, writeEnd: Int32) {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw ScratchError("pipe: \(String(cString: strerror(errno)))") }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return (FileHandle(fileDescriptor: ends[0], closeOnDealloc: true), ends[1])
}

/// Starts a program by posix_spawn (the daemon's `SpawnedProcess`: Foundation's
/// `Process.run()` now and then crashes the test run on this toolchain).
func spawn(_ program: String, _ arguments: [String], environment: [String: String], stdout: Int32, stderr: Int32)
    throws -> SpawnedProcess
{
    do throws(SpawnedProcess.StartFailure) {
        return try SpawnedProcess(program, arguments, environment: environment, stdout: stdout, stderr: stderr)
    } catch {
        throw ScratchError("\(error)")
    }
}

/// Runs a program to its end: its exit status and its stdout and stderr together.
func runToEnd(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let output = try outputPipe()
    let child: SpawnedProcess
    do {
        defer { close(output.writeEnd) }
        child = try spawn(
            program, arguments, environment: ProcessInfo.processInfo.environment, stdout: output.writeEnd,
            stderr: output.writeEnd)
    }
    let text = String(decoding: output.read.readDataToEndOfFile(), as: UTF8.self)
    child.waitUntilExit()
    return (child.terminationStatus, text)
}

/// `homed` itself with a database: what it saves, what a kill -9 or a stop keeps,
/// and what it refuses. Skipped when the binary has not been built.
@Suite(
    "homed: its database",
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: homedBinary),
        "build homed first (swift build), or set HOMED_BIN"),
    .timeLimit(.safetyNet))
struct HomedProcessTests {
    /// A running `homed`. Its `STATE_DIRECTORY` and `CONFIGURATION_DIRECTORY` are a
    /// scratch directory of its own unless the test sets them: a homed without --db
    /// never writes to root's /var/lib/homed, nor reads /etc/homed/homed.yaml.
    final class Daemon {
        let process: SpawnedProcess
        private let standardError: FileHandle
        private let own: Scratch

        init(_ arguments: [String], environment: [String: String] = [:]) throws {
            own = try Scratch()
            let errors = try outputPipe()
            let nothing = open("/dev/null", O_WRONLY | O_CLOEXEC)
            defer {
                close(errors.writeEnd)
                close(nothing)
            }
            standardError = errors.read
            process = try spawn(
                homedBinary, arguments,
                environment: ProcessInfo.processInfo.environment
                    .merging(["STATE_DIRECTORY": own.path, "CONFIGURATION_DIRECTORY": own.path]) { $1 }
                    .merging(environment) { $1 },
                stdout: nothing, stderr: errors.writeEnd)
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }

        /// Waits until `path` exists (the socket: the daemon has loaded and is serving).
        func waitFor(_ path: String) throws {
            let deadline = Date().addingTimeInterval(patience)
            while Date() < deadline {
                if FileManager.default.fileExists(atPath: path) { return }
                guard process.isRunning else { break }
                usleep(20_000)
            }
            throw ScratchError("homed did not create \(path); it said: \(errors())")
        }

        /// Waits until the daemon on `socket` serves `json` (a fragment of `homectl get
        /// --json`'s answer) for the characteristic at `path`: the simulator has moved it
        /// there, and homed has acknowledged it.
        func waitFor(_ path: String, toRead json: String, on socket: String) throws {
            let homectl = URL(fileURLWithPath: homedBinary).deletingLastPathComponent().appendingPathComponent(
                "homectl")
            let deadline = Date().addingTimeInterval(patience)
            var answer = ""
            while Date() < deadline && process.isRunning {
                answer = try runToEnd(homectl.path, ["--socket", socket, "get", path, "--json"]).output
                if answer.contains(json) { return }
                usleep(20_000)
            }
            throw ScratchError("\(path) never read \(json); the last answer: \(answer)")
        }

        func stop(signal: Int32) -> Int32 {
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            return process.terminationStatus
        }

        func errors() -> String {
            String(decoding: standardError.readDataToEndOfFile(), as: UTF8.self)
        }
    }

    /// The layout without values and their times, which the simulator changes.
    func layout(_ graph: HomeGraph) throws -> HomeGraph {
        var tables = Tables(graph)
        for id in tables.characteristics.keys {
            tables.characteristics[id]?.value = nil
            tables.characteristics[id]?.lastUpdatedMs = 0
        }
        return try tables.graph()
    }

    /// The demo home as `homed --demo` leaves it: the built-in demo's accessories
    /// with their ids, rooms and keys (the simulator registered them again by key,
    /// adding its controls), and the demo file's other accessories.
    func expectDemoKept(_ graph: HomeGraph, sourceLocation: SourceLocation = #_sourceLocation) {
        let demo = DemoHome.make(nowMs: 0)
        for (id, accessory) in demo.accessories {
            let kept = graph.accessories[id]
            #expect(kept?.name == accessory.name, sourceLocation: sourceLocation)
            #expect(kept?.roomID == accessory.roomID, sourceLocation: sourceLocation)
            #expect(kept?.providerKey == accessory.providerKey, sourceLocation: sourceLocation)
            #expect(kept?.serviceIDs == accessory.serviceIDs, sourceLocation: sourceLocation)
        }
        #expect(Set(demo.characteristics.keys).isSubset(of: graph.characteristics.keys), sourceLocation: sourceLocation)
        #expect(graph.accessories.count == 12, sourceLocation: sourceLocation)
        #expect(graph.accessories.values.contains { $0.name == "Garage Door" }, sourceLocation: sourceLocation)
    }

    /// The characteristic the simulator moves at once (to its target, then it stays).
    let thermostat = "Living Room/Thermostat/CurrentTemperature"

    func currentTemperature(_ graph: HomeGraph) -> CharacteristicValue? {
        graph.characteristics[path(graph, "Living Room/Thermostat/CurrentTemperature")]?.value
    }

    @Test("homed --demo saves the demo home before serving; kill -9 keeps it, and its values, folded or not")
    func killNine() throws {
        let scratch = try Scratch()
        let database = scratch.file("homed.sqlite")
        let socket = scratch.file("homed.sock")
        let daemon = try Daemon([
            "--socket", socket, "--db", database, "--demo", "--simulator-interval-ms", "20",
            "--value-fold-interval-ms", "600000",
        ])
        try daemon.waitFor(socket)
        // The thermostat drifts from 20.5 to its target 21 in 0.1 steps, one per tick.
        try daemon.waitFor(thermostat, toRead: "\"value\":21,", on: socket)
        #expect(daemon.stop(signal: SIGKILL) == SIGKILL)
        let restarted = try HomeDatabase.open(path: database).load()
        expectDemoKept(restarted)
        #expect(currentTemperature(restarted) == .float(21))
    }

    @Test("a graceful stop folds every value written into the tables, however long the fold interval")
    func gracefulStop() throws {
        let scratch = try Scratch()
        let database = scratch.file("homed.sqlite")
        let socket = scratch.file("homed.sock")
        let daemon = try Daemon([
            "--socket", socket, "--db", database, "--demo", "--simulator-interval-ms", "20",
            "--value-fold-interval-ms", "600000",
        ])
        try daemon.waitFor(socket)
        try daemon.waitFor(thermostat, toRead: "\"value\":21,", on: socket)
        #expect(daemon.stop(signal: SIGTERM) == 0)
        #expect(!FileManager.default.fileExists(atPath: socket))
        let reopened = try HomeDatabase.open(path: database)
        #expect(try reopened.valueLogRows() == 0)
        #expect(currentTemperature(try reopened.load()) == .float(21))
    }

    @Test("a restart without --demo keeps the home; a new database without --demo has no homes")
    func restart() throws {
        let scratch = try Scratch()
        let database = scratch.file("homed.sqlite")
        let socket = scratch.file("homed.sock")
        let first = try Daemon(["--socket", socket, "--db", database, "--demo", "--no-simulator"])
        try first.waitFor(socket)
        #expect(first.stop(signal: SIGTERM) == 0)
        let second = try Daemon(["--socket", socket, "--db", database])
        try second.waitFor(socket)
        #expect(second.stop(signal: SIGTERM) == 0)
        expectSame(try layout(HomeDatabase.open(path: database).load()), try layout(DemoHome.make(nowMs: 0)))

        let empty = scratch.file("empty.sqlite")
        let third = try Daemon(["--socket", socket, "--db", empty])
        try third.waitFor(socket)
        #expect(third.stop(signal: SIGTERM) == 0)
        #expect(try HomeDatabase.open(path: empty).load() == HomeGraph())
    }

    @Test("the database defaults to homed.sqlite beside the socket; --in-memory writes none")
    func defaultPath() throws {
        let scratch = try Scratch()
        let socket = scratch.file("run/homed/homed.sock")
        let state = ["STATE_DIRECTORY": scratch.file("state/homed")]
        let daemon = try Daemon(["--socket", socket, "--demo", "--no-simulator"], environment: state)
        try daemon.waitFor(socket)
        #expect(daemon.stop(signal: SIGTERM) == 0)
        #expect(try HomeDatabase.open(path: scratch.file("state/homed/homed.sqlite")).load().homes.count == 1)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("run/homed/homed.sqlite")))

        let memory = scratch.file("memory/homed.sock")
        let inMemory = try Daemon(
            ["--socket", memory, "--demo", "--in-memory"], environment: ["STATE_DIRECTORY": scratch.file("unused")])
        try inMemory.waitFor(memory)
        #expect(inMemory.stop(signal: SIGTERM) == 0)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("memory/homed.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("unused")))
    }

    @Test("a database at the old default place, beside the socket, is moved to the state directory once")
    func movedFromFormerDefault() throws {
        let scratch = try Scratch()
        let socket = scratch.file("run/homed/homed.sock")
        let former = scratch.file("run/homed/homed.sqlite")
        let first = try Daemon(["--socket", socket, "--db", former, "--demo", "--no-simulator"])
        try first.waitFor(socket)
        // Killed, so that the move must carry the write-ahead log's contents too.
        #expect(first.stop(signal: SIGKILL) == SIGKILL)
        unlink(socket)  // what the killed daemon left; the next one's socket is waited for
        let state = ["STATE_DIRECTORY": scratch.file("state")]
        let moved = try Daemon(["--socket", socket, "--log-level", "notice"], environment: state)
        try moved.waitFor(socket)
        #expect(moved.stop(signal: SIGTERM) == 0)
        #expect(moved.errors().contains("moved the database from the old default location"))
        for suffix in ["", "-wal", "-shm"] { #expect(!FileManager.default.fileExists(atPath: former + suffix)) }
        let graph = try HomeDatabase.open(path: scratch.file("state/homed.sqlite")).load()
        expectSame(try layout(graph), try layout(DemoHome.make(nowMs: 0)))
    }

    @Test("--print-paths says where everything is and why, and starts nothing")
    func printPaths() throws {
        let scratch = try Scratch()
        let socket = scratch.file("run/homed.sock")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: homedBinary)
        process.arguments = ["--socket", socket, "--print-paths"]
        process.environment = ProcessInfo.processInfo.environment.merging(["STATE_DIRECTORY": "/var/lib/x"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(printed.contains("socket    \(socket)  (--socket)"), "\(printed)")
        #expect(printed.contains("database  /var/lib/x/homed.sqlite  ($STATE_DIRECTORY (from systemd))"))
        #expect(printed.contains("lock      \(socket).lock"))
        #expect(printed.contains("former    \(scratch.file("run/homed.sqlite"))"))
    }

    @Test("two daemons started at the same moment on one socket and database: one serves, one says why, 100 times")
    func twoAtOnce() async throws {
        try await onDedicatedThread { try Self.twoAtOnceTrials() }
    }

    static func twoAtOnceTrials() throws {
        let scratch = try Scratch()
        let socket = scratch.file("homed.sock")
        let database = scratch.file("homed.sqlite")
        for trial in 0..<100 {
            let arguments = ["--socket", socket, "--db", database, "--no-simulator", "--demo"]
            let pair = [try Daemon(arguments), try Daemon(arguments)]
            // The loser exits on its own; the winner serves until stopped.
            var loser: Daemon?
            for _ in 0..<500 where loser == nil {
                loser = pair.first { !$0.process.isRunning }
                if loser == nil { usleep(10_000) }
            }
            guard let loser, let winner = pair.first(where: { $0 !== loser }) else {
                Issue.record("trial \(trial): both daemons kept running")
                break
            }
            #expect(loser.process.terminationStatus == 6, "trial \(trial): \(loser.errors())")
            let said = loser.errors()
            #expect(
                said.contains("another homed (pid \(winner.process.processIdentifier)) is running on \(socket)"),
                "trial \(trial): \(said)")
            try winner.waitFor(socket)
            #expect(winner.process.isRunning, "trial \(trial): the winner stopped: \(winner.errors())")
            #expect(winner.stop(signal: SIGTERM) == 0, "trial \(trial)")
        }
    }

    @Test("homed refuses a database it must not touch, says why on stderr, and creates nothing")
    func refusal() throws {
        let scratch = try Scratch()
        let database = scratch.file("homed.sqlite")
        let socket = scratch.file("homed.sock")
        try write(Array(repeating: 0x42, count: 4096), to: database)
        let before = try bytes(of: database)
        let daemon = try Daemon(["--socket", socket, "--db", database, "--demo"])
        daemon.process.waitUntilExit()
        #expect(daemon.process.terminationStatus != 0)
        #expect(
            daemon.errors() == "homed: \(database) is not a SQLite database (it does not start with SQLite's "
                + "header); refusing to open it\n")
        #expect(try bytes(of: database) == before)
        #expect(scratch.listing == ["homed.sqlite"])
    }
    @Test("a database that is a symbolic link is refused, naming where it points, and nothing is written there")
    func symbolicLink() throws {
        let scratch = try Scratch()
        let elsewhere = scratch.file("other-program.db")
        try write(Array("someone else's".utf8), to: elsewhere)
        let link = scratch.file("homed.sqlite")
        #expect(symlink(elsewhere, link) == 0)
        let daemon = try Daemon(["--socket", scratch.file("homed.sock"), "--db", link, "--demo"])
        daemon.process.waitUntilExit()
        #expect(daemon.process.terminationStatus == 9)
        #expect(
            daemon.errors()
                == "homed: the database \(link) is a symbolic link (to \(elsewhere)); homed opens only the file itself: "
                + "give --db the real path\n")
        #expect(try bytes(of: elsewhere) == Array("someone else's".utf8))
        #expect(scratch.listing == ["homed.sqlite", "other-program.db"])
    }
}
