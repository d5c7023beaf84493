internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl homes`: list homes; add, rename, remove one; choose the primary one.
struct Homes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List homes, or add, rename, remove one, or choose the primary home.",
        subcommands: [List.self, Add.self, Rename.self, Remove.self, Primary.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the homes (the default).")

        @OptionGroup var options: ConnectionOptions

        func run() async throws {
            let graph = try await options.fetchGraph()
            let items: [JSON] =
                graph.orderedHomes.map { home in
                    .object([
                        ("id", .uint(home.id)),
                        ("name", .string(home.name)),
                        ("primary", .bool(home.isPrimary)),
                        ("default_room_id", .uint(home.defaultRoomID)),
                        ("rooms", .uint(UInt64(home.roomIDs.count))),
                        ("zones", .uint(UInt64(home.zoneIDs.count))),
                        ("accessories", .uint(UInt64(home.accessoryIDs.count))),
                        ("service_groups", .uint(UInt64(home.serviceGroupIDs.count))),
                        ("action_sets", .uint(UInt64(home.actionSetIDs.count))),
                        ("triggers", .uint(UInt64(home.triggerIDs.count))),
                    ])
                }
            let columns = [
                Column("NAME", "name"),
                Column("PRIMARY", "primary"),
                Column("ROOMS", "rooms"),
                Column("ACCESSORIES", "accessories"),
                Column("SCENES", "action_sets"),
                Column("TRIGGERS", "triggers"),
                Column("ID", "id", wide: true),
                Column("ZONES", "zones", wide: true),
                Column("GROUPS", "service_groups", wide: true),
            ]
            if Output.list(items, columns: columns, options) { return }
            if graph.homes.isEmpty {
                Output.line("no homes; add one with: homectl homes add NAME")
                return
            }
            let rows = graph.orderedHomes.map { home in
                [
                    home.name, home.isPrimary ? "primary" : "",
                    count(home.roomIDs.count, "room"), count(home.accessoryIDs.count, "accessory", "accessories"),
                    count(home.actionSetIDs.count, "scene"), count(home.triggerIDs.count, "trigger"),
                    "id \(home.id)",
                ]
            }
            for line in Output.table(rows) { Output.line(line) }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a home (with its default room); the first home becomes primary.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The new home's name.")
        var name: String

        func run() async throws {
            try await options.applyChange { _ throws(HomeError) in .addHome(name: name) }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a home.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The home, by name or id.", completion: .homeNames(.home))
        var home: String

        @Argument(help: "Its new name.")
        var name: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .rename(id: try graph.resolveHome(home), name: name)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a home and everything in it.",
            discussion: "If it was the primary home, the first remaining home becomes primary.")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var confirmation: Confirmation

        @Argument(help: "The home, by name or id.", completion: .homeNames(.home))
        var home: String

        func run() async throws {
            try await options.applyConfirmedChange(confirmation) { graph throws(HomeError) in
                let id = try graph.resolveHome(home)
                let found = graph.homes[id]!
                let parts = [
                    found.roomIDs.count.counted("room", "rooms"),
                    found.accessoryIDs.count.counted("accessory", "accessories"),
                    found.actionSetIDs.count.counted("scene", "scenes"),
                    found.triggerIDs.count.counted("trigger", "triggers"),
                ]
                return
                    "Remove home \"\(found.name)\" (id \(id)) and everything in it: \(parts.joined(separator: ", "))?"
            } operation: { graph throws(HomeError) in
                .remove(id: try graph.resolveHome(home))
            }
        }
    }

    struct Primary: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a home the primary home.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The home, by name or id.", completion: .homeNames(.home))
        var home: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .setPrimaryHome(homeID: try graph.resolveHome(home))
            }
        }
    }
}

/// "3 rooms", "1 room", "no rooms".
func count(_ number: Int, _ singular: String, _ plural: String? = nil) -> String {
    let plural = plural ?? singular + "s"
    switch number {
    case 0: return "no \(plural)"
    case 1: return "1 \(singular)"
    default: return "\(number) \(plural)"
    }
}
