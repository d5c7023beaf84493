internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl providers`: the accessory providers homed knows; `providers forget ID`
/// removes a gone provider's accessories.
struct Providers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the accessory providers, or forget one that is gone.",
        subcommands: [List.self, Forget.self], defaultSubcommand: List.self)
}

extension Providers {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the accessory providers: connected or gone, their accessories, last seen, requests.",
            discussion: """
                A provider is a process that registers accessories and serves their reads and writes \
                (see docs/providers.md). Its accessories are unreachable while it is not connected.
                """)

        @OptionGroup var options: ConnectionOptions

        func run() async throws {
            let (providers, graph) = try await options.withClient { client throws(HomeError) in
                (try await client.listProviders(), try await client.getHome().graph)
            }
            let columns = [
                Column("PROVIDER", "provider"), Column("CONNECTED", "connected"), Column("CONN", "connection_id"),
                Column("CLIENT", "client"), Column("LAST SEEN", "last_seen"), Column("IN FLIGHT", "requests_in_flight"),
                Column("REQUESTS", "requests", wide: true), Column("TIMEOUTS", "timeouts", wide: true),
            ]
            if Output.list(providers.map { Self.json($0, graph: graph) }, columns: columns, options) { return }
            if providers.isEmpty {
                Output.line("no providers have registered accessories")
                return
            }
            var rows = [["PROVIDER", "STATE", "CONN", "ACCESSORIES", "LAST SEEN", "IN FLIGHT", "REQUESTS", "TIMEOUTS"]]
            for provider in providers {
                rows.append([
                    provider.providerID, provider.connected ? "connected" : "gone",
                    provider.connected ? String(provider.connectionID) : "-", String(provider.accessoryIDs.count),
                    provider.lastSeenMs == 0 ? "-" : isoTime(provider.lastSeenMs), String(provider.requestsInFlight),
                    String(provider.requests), String(provider.timeouts),
                ])
            }
            for line in Output.table(rows) { Output.line(line) }
            for provider in providers where !provider.accessoryIDs.isEmpty {
                Output.line("")
                Output.line("\(provider.providerID):")
                let names = provider.accessoryIDs.map { id -> [String] in
                    let accessory = graph.accessories[id]
                    let room = accessory.flatMap { graph.rooms[$0.roomID]?.name } ?? "?"
                    return [
                        accessory?.name ?? "?", room, accessory?.providerKey ?? "",
                        accessory?.isReachable == true ? "reachable" : "unreachable", "id \(id)",
                    ]
                }
                for line in Output.table(names, indent: "  ") { Output.line(line) }
            }
        }

        static func json(_ provider: ProviderInfo, graph: HomeGraph) -> JSON {
            .object([
                ("provider", .string(provider.providerID)),
                ("connected", .bool(provider.connected)),
                ("connection_id", .uint(provider.connectionID)),
                ("client", .string(provider.clientName)),
                (
                    "accessories",
                    .array(
                        provider.accessoryIDs.map { id in
                            .object([
                                ("id", .uint(id)), ("name", .string(graph.accessories[id]?.name ?? "")),
                                ("key", .string(graph.accessories[id]?.providerKey ?? "")),
                                ("reachable", .bool(graph.accessories[id]?.isReachable ?? false)),
                            ])
                        })
                ),
                ("last_seen", provider.lastSeenMs == 0 ? .null : .string(isoTime(provider.lastSeenMs))),
                ("requests_in_flight", .uint(UInt64(provider.requestsInFlight))),
                ("requests", .uint(provider.requests)),
                ("timeouts", .uint(provider.timeouts)),
                ("latency_p50_us", .uint(provider.latencyP50Us)),
                ("latency_p99_us", .uint(provider.latencyP99Us)),
            ])
        }
    }
}

extension Providers {
    /// Removes every accessory of a provider that is gone for good (uninstalled, a
    /// bridge retired): they stay, unreachable, until someone says so.
    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove every accessory of a provider that is gone; asks first.",
            discussion: """
                For a provider that will not come back. Refused while it is connected (it would register \
                its accessories again): stop it first.

                Examples:
                  homectl providers forget zigbee2mqtt
                  homectl providers forget old-bridge --yes
                """)

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var confirmation: Confirmation

        @Argument(help: "The provider's id, as `homectl providers` lists it.")
        var provider: String

        func run() async throws {
            let (found, graph) = try await options.withClient { client throws(HomeError) in
                (try await client.listProviders(), try await client.getHome().graph)
            }
            guard let info = found.first(where: { $0.providerID == provider }) else {
                let known = found.map(\.providerID).sorted().joined(separator: ", ")
                throw Failure(
                    HomeError(
                        .notFound,
                        "no provider \"\(provider)\"" + (known.isEmpty ? "" : "; homed knows \(known)")))
            }
            if info.connected {
                throw Failure(
                    HomeError(
                        .failedPrecondition,
                        "provider \"\(provider)\" is connected (connection \(info.connectionID)): stop it first, or it "
                            + "registers its accessories again"))
            }
            if info.accessoryIDs.isEmpty {
                Output.line("provider \"\(provider)\" has no accessories left; nothing to remove")
                return
            }
            let names = info.accessoryIDs.map { graph.accessories[$0]?.name ?? "id \($0)" }
            try confirmation.ask(
                "Forget provider \"\(provider)\" and remove its \(names.count.counted("accessory", "accessories")) "
                    + "(\(names.joined(separator: ", ")))?")
            // One removal per accessory; a bridge's removal takes those behind it,
            // which are then already gone (NOT_FOUND) and skipped.
            var removed: [HomeEvent] = []
            var lastSeq: UInt64 = 0
            try await options.withClient { client throws(HomeError) in
                for id in info.accessoryIDs {
                    do throws(HomeError) {
                        let response = try await client.changeLayout(.remove(id: id))
                        removed += response.events
                        lastSeq = response.seq
                    } catch  where error.code == .notFound {
                        continue
                    }
                }
            }
            AppliedChange(
                before: graph, response: LayoutResponse(events: removed, seq: lastSeq), journalID: "", connectionID: 0
            ).print(options)
        }
    }
}
