internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl rooms`: list rooms; add, rename, remove one.
struct Rooms: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List rooms, or add, rename or remove one.",
        discussion: """
            ROOM is an id, a name ("Kitchen") or home and name ("Demo Home/Kitchen"). \
            Every home has a default room for accessories not assigned elsewhere.
            """,
        subcommands: [List.self, Add.self, Rename.self, Remove.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the rooms of every home, or of one (the default).")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        func run() async throws {
            let graph = try await options.fetchGraph()
            let homes: [Home]
            do throws(HomeError) { homes = try graph.listedHomes(home.home) } catch { throw Failure(error) }
            func zones(of room: Room) -> [Zone] {
                (graph.homes[room.homeID]?.zoneIDs ?? []).compactMap { graph.zones[$0] }
                    .filter { $0.roomIDs.contains(room.id) }
            }
            func accessories(in room: Room) -> [Accessory] {
                (graph.homes[room.homeID]?.accessoryIDs ?? []).compactMap { graph.accessories[$0] }
                    .filter { $0.roomID == room.id }
            }
            let items: [JSON] =
                homes.flatMap { home in
                    home.roomIDs.compactMap { graph.rooms[$0] }.map { room in
                        JSON.object([
                            ("id", .uint(room.id)),
                            ("name", .string(room.name)),
                            ("home_id", .uint(home.id)),
                            ("home", .string(home.name)),
                            ("default", .bool(room.id == home.defaultRoomID)),
                            ("accessory_ids", .array(accessories(in: room).map { .uint($0.id) })),
                            ("accessories", .array(accessories(in: room).map { .string($0.name) })),
                            ("zone_ids", .array(zones(of: room).map { .uint($0.id) })),
                        ])
                    }
                }
            let columns = [
                Column("NAME", "name"),
                Column("HOME", "home"),
                Column("DEFAULT", "default"),
                Column("ACCESSORIES", "accessories"),
                Column("ID", "id", wide: true),
                Column("ACCESSORY IDS", "accessory_ids", wide: true),
                Column("ZONES", "zone_ids", wide: true),
            ]
            if Output.list(items, columns: columns, options) { return }
            for home in homes {
                if homes.count > 1 || self.home.home != nil { Output.line("# \(home.name)") }
                let rows = home.roomIDs.compactMap { graph.rooms[$0] }.map { room in
                    let zoneNames = zones(of: room).map(\.name)
                    return [
                        room.name + (room.id == home.defaultRoomID ? " (default)" : ""),
                        count(accessories(in: room).count, "accessory", "accessories"),
                        zoneNames.isEmpty ? "" : "zones: " + zoneNames.joined(separator: ", "),
                        "id \(room.id)",
                    ]
                }
                for line in Output.table(rows) { Output.line(line) }
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a room to a home.")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        @Argument(help: "The new room's name, unique in its home.")
        var name: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .addRoom(name: name, homeID: try graph.resolveHome(home.home))
            }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a room.")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        @Argument(help: "The room: id, name, or Home/Room.", completion: .homeNames(.room))
        var room: String

        @Argument(help: "Its new name.")
        var name: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                let homeID = try home.home.map { (text) throws(HomeError) in try graph.resolveHome(text) }
                return .rename(id: try graph.resolveRoom(room, in: homeID), name: name)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a room; its accessories move to the home's default room.")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        @Argument(help: "The room: id, name, or Home/Room.", completion: .homeNames(.room))
        var room: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                let homeID = try home.home.map { (text) throws(HomeError) in try graph.resolveHome(text) }
                return .remove(id: try graph.resolveRoom(room, in: homeID))
            }
        }
    }
}
