internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl homes`: list homes; add, rename, remove one; choose the primary one.
struct Homes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List homes, or add, rename, remove one, choose the primary home, or set where one is.",
        subcommands: [List.self, Add.self, Rename.self, Remove.self, Primary.self, SetLocation.self],
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
                        ("latitude", home.location.map { .double($0.latitude) } ?? .null),
                        ("longitude", home.location.map { .double($0.longitude) } ?? .null),
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
                Column("LATITUDE", "latitude", wide: true),
                Column("LONGITUDE", "longitude", wide: true),
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

    struct SetLocation: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-location",
            abstract: "Set where a home is (for sunrise and sunset), or clear it with --clear.",
            discussion:
                "Latitude in degrees north (-90 to 90, south negative), longitude in degrees east (-180 to 180, west negative): homectl homes set-location Home --latitude 52.52 --longitude 13.405. The sun's times are computed from it on this machine and in the daemon; nothing is looked up."
        )

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The home, by name or id.", completion: .homeNames(.home))
        var home: String

        // Unconditional: a southern latitude or western longitude is negative (-0.12).
        @Option(parsing: .unconditional, help: "Degrees north (negative: south).")
        var latitude: Double?

        @Option(parsing: .unconditional, help: "Degrees east (negative: west).")
        var longitude: Double?

        @Flag(help: "Clear the location (refused while a trigger of the home uses the sun).")
        var clear = false

        func validate() throws {
            if clear && (latitude != nil || longitude != nil) {
                throw ValidationError("--clear takes no --latitude or --longitude")
            }
            if !clear && (latitude == nil || longitude == nil) {
                throw ValidationError(
                    "give --latitude and --longitude (--latitude 52.52 --longitude 13.405), or --clear")
            }
        }

        func run() async throws {
            let location = latitude.flatMap { latitude in
                longitude.map { GeoLocation(latitude: latitude, longitude: $0) }
            }
            try await options.applyChange { graph throws(HomeError) in
                .setHomeLocation(homeID: try graph.resolveHome(home), location: clear ? nil : location)
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
