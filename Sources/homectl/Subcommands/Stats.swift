internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show every connection's subscriptions and every provider's requests, latency and timeouts.")

    @OptionGroup var options: ConnectionOptions

    func run() async throws {
        let (stats, providers) = try await options.withClient { client throws(HomeError) in
            (try await client.stats(), try await client.listProviders())
        }
        if options.json {
            Output.structured(
                JSON.object([
                    ("seq", .uint(stats.seq)),
                    (
                        "connections",
                        .array(
                            stats.connections.map { connection in
                                .object([
                                    ("connection_id", .uint(connection.connectionID)),
                                    ("client", .string(connection.clientName)),
                                    ("uid", .uint(UInt64(connection.uid))),
                                    ("pid", .int(Int64(connection.pid))),
                                    ("role", connection.role.map { .string($0.name) } ?? .null),
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
                    (
                        "providers",
                        .array(
                            providers.map { provider in
                                .object([
                                    ("provider", .string(provider.providerID)),
                                    ("connected", .bool(provider.connected)),
                                    ("requests_in_flight", .uint(UInt64(provider.requestsInFlight))),
                                    ("requests", .uint(provider.requests)),
                                    ("timeouts", .uint(provider.timeouts)),
                                    ("latency_p50_us", .uint(provider.latencyP50Us)),
                                    ("latency_p99_us", .uint(provider.latencyP99Us)),
                                ])
                            })
                    ),
                ]), options)
            return
        }
        var rows = [
            ["CONN", "CLIENT", "UID", "PID", "ROLE", "SUB", "POLICY", "QUEUE", "SENT", "MERGED", "DROPPED", "PENDING"]
        ]
        for connection in stats.connections {
            let peer = [String(connection.uid), String(connection.pid), connection.role?.name ?? "none"]
            if connection.subscriptions.isEmpty {
                rows.append(
                    [String(connection.connectionID), connection.clientName] + peer + [
                        "-", "", "", "", "", "",
                        "\(connection.pendingBytes) B",
                    ])
            }
            for subscription in connection.subscriptions {
                rows.append(
                    [String(connection.connectionID), connection.clientName] + peer + [
                        String(subscription.subscriptionID),
                        subscription.policy.rawValue, "\(subscription.queueDepth)/\(subscription.queueLimit)",
                        String(subscription.sent), String(subscription.merged), String(subscription.dropped),
                        "\(connection.pendingBytes) B",
                    ])
            }
        }
        for line in Output.table(rows) { Output.line(line) }
        guard !providers.isEmpty else { return }
        Output.line("")
        var providerRows = [["PROVIDER", "STATE", "IN FLIGHT", "REQUESTS", "TIMEOUTS", "P50", "P99"]]
        for provider in providers {
            providerRows.append([
                provider.providerID, provider.connected ? "connected" : "gone", String(provider.requestsInFlight),
                String(provider.requests), String(provider.timeouts), Self.latency(provider.latencyP50Us),
                Self.latency(provider.latencyP99Us),
            ])
        }
        for line in Output.table(providerRows) { Output.line(line) }
    }

    static func latency(_ microseconds: UInt64) -> String {
        microseconds == 0 ? "-" : microseconds < 10_000 ? "\(microseconds) µs" : "\(microseconds / 1_000) ms"
    }
}
