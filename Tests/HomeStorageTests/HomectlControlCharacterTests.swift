import Foundation
import HomeModel
import Testing

@testable import HomeStorage

/// The built `homectl`, beside the `homed` HomedProcessTests runs.
private let homectlBinary: String = {
    if let path = ProcessInfo.processInfo.environment["HOMED_BIN"], !path.isEmpty {
        return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("homectl").path
    }
    var repository = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { repository.deleteLastPathComponent() }
    return repository.appendingPathComponent(".build/debug/homectl").path
}()

/// Names with control characters, as a database from before homed refused them may
/// hold: homectl never writes them raw to the terminal. Here, since only a database
/// written behind homed's back can hold such names now.
@Suite(
    "homectl: names with control characters from an old database",
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: homectlBinary), "build homed and homectl first (swift build)"),
    .timeLimit(.safetyNet))
struct HomectlControlCharacterTests {
    let red = "\u{1B}[31mRed Room"
    let twoLines = "Lamp\nSecond line"

    /// A database holding the demo home, with a room and an accessory renamed in SQL.
    func oldDatabase(in scratch: Scratch) throws -> String {
        let path = scratch.file("homed.sqlite")
        let database = try HomeDatabase.open(path: path)
        defer { database.close() }
        try database.saveLayout(from: HomeGraph(), to: DemoHome.make(nowMs: 0))
        try database.withConnection { connection throws(HomeError) in
            try connection.execute(
                "UPDATE rooms SET name = char(27) || '[31mRed Room' WHERE name = 'Living Room'",
                doing: "naming a room as an old homed allowed")
            try connection.execute(
                "UPDATE accessories SET name = 'Lamp' || char(10) || 'Second line' || char(127) WHERE name = 'Lamp'",
                doing: "naming an accessory as an old homed allowed")
        }
        return path
    }

    func homectl(_ socket: String, _ arguments: String...) throws -> (status: Int32, stdout: String) {
        let result = try runToEnd(homectlBinary, arguments + ["--socket", socket])
        return (result.status, result.output)
    }

    /// No C0 control but the newline ending each line, no DEL, no C1 control.
    func isTerminalSafe(_ text: String) -> Bool {
        !text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
    }

    @Test("tables, plain lines and errors show escapes; JSON keeps the names exactly, escaped as JSON")
    func escaped() throws {
        let scratch = try Scratch()
        let database = try oldDatabase(in: scratch)
        let socket = scratch.file("homed.sock")
        let daemon = try HomedProcessTests.Daemon(["--socket", socket, "--db", database])
        defer { _ = daemon.stop(signal: SIGTERM) }
        try daemon.waitFor(socket)

        let rooms = try homectl(socket, "rooms")
        #expect(rooms.status == 0)
        #expect(rooms.stdout.contains("\\e[31mRed Room"))
        #expect(isTerminalSafe(rooms.stdout), "\(rooms.stdout.debugDescription)")

        let accessories = try homectl(socket, "accessories")
        #expect(accessories.stdout.contains("\\e[31mRed Room\n"))
        #expect(accessories.stdout.contains("Lamp\\nSecond line\\x7f"))
        #expect(isTerminalSafe(accessories.stdout), "\(accessories.stdout.debugDescription)")

        let shown = try homectl(socket, "show", "\(red)/\(twoLines)\u{7F}")
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("Lamp\\nSecond line\\x7f"))
        #expect(isTerminalSafe(shown.stdout), "\(shown.stdout.debugDescription)")

        let missing = try homectl(socket, "get", "\(red)/Nothing\u{9B}31m/On")
        #expect(missing.status == 5)
        // Escaped by homectl (\x9b) or already by the message's quoting (\u{9B}).
        #expect(
            missing.stdout.contains("Nothing\\x9b31m") || missing.stdout.contains("Nothing\\u{9B}31m"),
            "\(missing.stdout.debugDescription)")
        #expect(isTerminalSafe(missing.stdout), "\(missing.stdout.debugDescription)")

        let json = try homectl(socket, "accessories", "--json")
        #expect(isTerminalSafe(json.stdout), "\(json.stdout.debugDescription)")
        let objects = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(
            objects?.contains { $0["name"] as? String == twoLines + "\u{7F}" && $0["room"] as? String == red } == true)
    }
}
