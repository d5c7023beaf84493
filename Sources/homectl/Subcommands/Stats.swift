internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show every connection's subscriptions: queue depth, events sent, merged and dropped.")

    @OptionGroup var options: ConnectionOptions

    func run() async throws {
        let stats = try await options.withClient { client throws(HomeError) in try await client.stats() }
        if options.json {
            Output.line(
                JSON.object([
                    ("seq", .uint(stats.seq)),
                    (
                        "connections",
                        .array(
                            stats.connections.map { connection in
                                .object([
                                    ("connection_id", .uint(connection.connectionID)),
                                    ("client", .string(connection.clientName)),
                                    ("open_calls", .uint(UInt64(connection.openCalls))),
                                    ("pending_bytes", .uint(connection.pendingBytes)),
                                    (
                                        "subscriptions",
                                        .array(
                                            connection.subscriptions.map { subscription in
                                                .object([
                                                    ("subscription_id", .uint(subscription.subscriptionID)),
                                                    ("call_id", .uint(subscription.callID)),
                                                    ("policy", .string(subscription.policy.rawValue)),
                                                    ("queue_limit", .uint(UInt64(subscription.queueLimit))),
                                                    ("queue_depth", .uint(UInt64(subscription.queueDepth))),
                                                    ("sent", .uint(subscription.sent)),
                                                    ("merged", .uint(subscription.merged)),
                                                    ("dropped", .uint(subscription.dropped)),
                                                ])
                                            })
                                    ),
                                ])
                            })
                    ),
                ]).text)
            return
        }
        var rows = [["CONN", "CLIENT", "SUB", "POLICY", "QUEUE", "SENT", "MERGED", "DROPPED", "PENDING"]]
        for connection in stats.connections {
            if connection.subscriptions.isEmpty {
                rows.append([
                    String(connection.connectionID), connection.clientName, "-", "", "", "", "", "",
                    "\(connection.pendingBytes) B",
                ])
            }
            for subscription in connection.subscriptions {
                rows.append([
                    String(connection.connectionID), connection.clientName, String(subscription.subscriptionID),
                    subscription.policy.rawValue, "\(subscription.queueDepth)/\(subscription.queueLimit)",
                    String(subscription.sent), String(subscription.merged), String(subscription.dropped),
                    "\(connection.pendingBytes) B",
                ])
            }
        }
        for line in Output.table(rows) { Output.line(line) }
    }
}
