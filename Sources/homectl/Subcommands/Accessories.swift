internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

struct Accessories: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List accessories with their state, grouped by room or by category.",
        discussion: """
            Each accessory's state is its primary service's: On or Off (with the brightness \
            of a light), a temperature, Locked, Closed… -o table or -o wide lists them one \
            per line with columns, -o json or -o yaml as objects.

            Examples:
              homectl accessories --by category
              homectl accessories -o wide          # with models, providers and ids
            """)

    enum Grouping: String, ExpressibleByArgument, CaseIterable {
        case room, category
    }

    @OptionGroup var options: ConnectionOptions

    @Option(help: "Group by room or by category.")
    var by: Grouping = .room

    func run() async throws {
        let graph = try await options.withClient { client throws(HomeError) in try await client.getHome().graph }
        var accessories: [JSON] = []
        for home in graph.orderedHomes {
            for accessory in home.accessoryIDs.compactMap({ graph.accessories[$0] }) {
                accessories.append(
                    .object([
                        ("id", .uint(accessory.id)),
                        ("name", .string(accessory.name)),
                        ("home_id", .uint(home.id)),
                        ("home", .string(home.name)),
                        ("room_id", .uint(accessory.roomID)),
                        ("room", .string(graph.rooms[accessory.roomID]?.name ?? "")),
                        ("category", .string(String(describing: accessory.category))),
                        ("state", .string(graph.primaryState(of: accessory))),
                        ("manufacturer", .string(accessory.manufacturer)),
                        ("model", .string(accessory.model)),
                        ("reachable", .bool(accessory.isReachable)),
                        ("provider", .string(accessory.provider)),
                    ]))
            }
        }
        let columns = [
            Column("NAME", "name"), Column("ROOM", "room"), Column("CATEGORY", "category"),
            Column("STATE", "state"), Column("REACHABLE", "reachable"), Column("ID", "id", wide: true),
            Column("HOME", "home", wide: true), Column("MANUFACTURER", "manufacturer", wide: true),
            Column("MODEL", "model", wide: true), Column("PROVIDER", "provider", wide: true),
        ]
        if Output.list(accessories, columns: columns, options) { return }
        let homes = graph.orderedHomes
        for home in homes {
            if homes.count > 1 { Output.line("# \(home.name)") }
            let groups: [(String, [Accessory])]
            do {
                switch by {
                case .room:
                    groups = try graph.accessoriesByRoom(homeID: home.id).filter { !$0.accessories.isEmpty }
                        .map { ($0.room.name, $0.accessories) }
                case .category:
                    groups = try graph.accessoriesByCategory(homeID: home.id).map {
                        ($0.category.displayName, $0.accessories)
                    }
                }
            } catch {
                throw Failure(error)
            }
            for (title, accessories) in groups {
                Output.line(title)
                let rows = accessories.map { accessory in
                    [
                        accessory.name,
                        by == .room ? accessory.category.displayName : graph.rooms[accessory.roomID]?.name ?? "",
                        accessory.isReachable ? graph.primaryState(of: accessory) : "unreachable",
                        "id \(accessory.id)",
                    ]
                }
                for line in Output.table(rows, indent: "  ") { Output.line(line) }
            }
        }
    }
}
