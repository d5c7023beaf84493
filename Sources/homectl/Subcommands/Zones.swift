internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl zones`: list zones; add, rename, remove one; put rooms in and take them out.
struct Zones: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List zones (named sets of rooms), or change them.",
        discussion: "ZONE is an id, a name, or Home/Zone; a room may be in several zones.",
        subcommands: [List.self, Add.self, Rename.self, Remove.self, AddRoom.self, RemoveRoom.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the zones and their rooms (the default).")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        func run() async throws {
            let graph = try await options.fetchGraph()
            let homes: [Home]
            do throws(HomeError) { homes = try graph.listedHomes(home.home) } catch { throw Failure(error) }
            let items: [JSON] =
                homes.flatMap { home in
                    home.zoneIDs.compactMap { graph.zones[$0] }.map { zone in
                        JSON.object([
                            ("id", .uint(zone.id)),
                            ("name", .string(zone.name)),
                            ("home_id", .uint(home.id)),
                            ("home", .string(home.name)),
                            ("room_ids", .array(zone.roomIDs.map { .uint($0) })),
                            ("rooms", .array(zone.roomIDs.map { .string(graph.rooms[$0]?.name ?? "") })),
                        ])
                    }
                }
            let columns = [
                Column("NAME", "name"),
                Column("HOME", "home"),
                Column("ROOMS", "rooms"),
                Column("ID", "id", wide: true),
                Column("ROOM IDS", "room_ids", wide: true),
            ]
            if Output.list(items, columns: columns, options) { return }
            for home in homes {
                if homes.count > 1 || self.home.home != nil { Output.line("# \(home.name)") }
                let zones = home.zoneIDs.compactMap { graph.zones[$0] }
                if zones.isEmpty { Output.line("no zones") }
                let rows = zones.map { zone in
                    let rooms = zone.roomIDs.compactMap { graph.rooms[$0]?.name }
                    return [
                        zone.name, rooms.isEmpty ? "no rooms" : "rooms: " + rooms.joined(separator: ", "),
                        "id \(zone.id)",
                    ]
                }
                for line in Output.table(rows) { Output.line(line) }
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a zone to a home.")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        @Argument(help: "The new zone's name, unique in its home.")
        var name: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .addZone(name: name, homeID: try graph.resolveHome(home.home))
            }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a zone.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The zone: id, name, or Home/Zone.", completion: .homeNames(.zone))
        var zone: String

        @Argument(help: "Its new name.")
        var name: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .rename(id: try graph.resolveNamed(zone, .zone), name: name)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a zone; its rooms stay.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The zone: id, name, or Home/Zone.", completion: .homeNames(.zone))
        var zone: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in .remove(id: try graph.resolveNamed(zone, .zone))
            }
        }
    }

    struct AddRoom: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Put a room in a zone.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The zone: id, name, or Home/Zone.", completion: .homeNames(.zone))
        var zone: String

        @Argument(help: "The room, of the zone's home: id or name.", completion: .homeNames(.room))
        var room: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                let zoneID = try graph.resolveNamed(zone, .zone)
                return .addRoomToZone(
                    roomID: try graph.resolveRoom(room, in: graph.zones[zoneID]?.homeID),
                    zoneID: zoneID)
            }
        }
    }

    struct RemoveRoom: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take a room out of a zone.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The zone: id, name, or Home/Zone.", completion: .homeNames(.zone))
        var zone: String

        @Argument(help: "The room: id or name.", completion: .homeNames(.room))
        var room: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                let zoneID = try graph.resolveNamed(zone, .zone)
                return .removeRoomFromZone(
                    roomID: try graph.resolveRoom(room, in: graph.zones[zoneID]?.homeID),
                    zoneID: zoneID)
            }
        }
    }
}
