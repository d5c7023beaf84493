internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

struct Accessories: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List accessories, grouped by room or by category.")

    enum Grouping: String, ExpressibleByArgument, CaseIterable {
        case room, category
    }

    @OptionGroup var options: ConnectionOptions

    @Option(help: "Group by room or by category.")
    var by: Grouping = .room

    func run() async throws {
        let graph = try await options.withClient { client throws(HomeError) in try await client.getHome().graph }
        if options.json {
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
                            ("manufacturer", .string(accessory.manufacturer)),
                            ("model", .string(accessory.model)),
                            ("reachable", .bool(accessory.isReachable)),
                            ("provider", .string(accessory.provider)),
                        ]))
                }
            }
            Output.line(JSON.array(accessories).text)
            return
        }
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
                        accessory.isReachable ? "reachable" : "unreachable",
                        "id \(accessory.id)",
                    ]
                }
                for line in Output.table(rows, indent: "  ") { Output.line(line) }
            }
        }
    }
}
