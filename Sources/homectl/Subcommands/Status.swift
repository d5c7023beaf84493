internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the daemon's status.")

    @OptionGroup var options: ConnectionOptions

    func run() async throws {
        let status = try await options.withClient { client throws(HomeError) in try await client.status() }
        if options.json {
            Output.structured(
                JSON.object([
                    ("server_version", .string(status.serverVersion)),
                    ("protocol_version", .uint(UInt64(status.protocolVersion))),
                    ("socket", .string(status.socketPath)),
                    ("database", status.databasePath.isEmpty ? .null : .string(status.databasePath)),
                    ("daemon_pid", .int(Int64(status.daemonPID))),
                    ("journal", .string(status.journalID)),
                    ("seq", .uint(status.seq)),
                    ("uptime_ms", .int(status.uptimeMs)),
                    ("connections", .uint(UInt64(status.connections))),
                    ("subscriptions", .uint(UInt64(status.subscriptions))),
                    ("homes", .uint(UInt64(status.homes))),
                    ("accessories", .uint(UInt64(status.accessories))),
                    ("characteristics", .uint(UInt64(status.characteristics))),
                    ("uid", .uint(UInt64(status.callerUID))),
                    ("pid", .int(Int64(status.callerPID))),
                    ("role", status.callerRole.map { .string($0.name) } ?? .null),
                ]), options)
            return
        }
        for line in Output.table([
            ["homed", status.serverVersion + " (protocol \(status.protocolVersion))"],
            ["socket", status.socketPath],
            ["database", status.databasePath.isEmpty ? "in memory (nothing survives a restart)" : status.databasePath],
            ["pid", String(status.daemonPID)],
            ["journal", status.journalID],
            ["sequence", String(status.seq)],
            ["uptime", "\(status.uptimeMs / 1000) s"],
            ["connections", String(status.connections)],
            ["subscriptions", String(status.subscriptions)],
            ["homes", String(status.homes)],
            ["accessories", String(status.accessories)],
            ["characteristics", String(status.characteristics)],
            ["you", "\(status.callerRole?.name ?? "no role") (uid \(status.callerUID), pid \(status.callerPID))"],
        ]) {
            Output.line(line)
        }
    }
}
