internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl groups`: service groups (services controlled together).
struct Groups: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List service groups, or create one, add or remove its services, delete it.",
        discussion: """
            GROUP is an id, a name, or Home/Group. SERVICE is a service's id or path \
            ("Living Room/Lamp/Lightbulb"), or an accessory, meaning its primary service.
            """,
        subcommands: [List.self, Create.self, Add.self, Remove.self, Delete.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the service groups (the default).")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        func run() async throws {
            let graph = try await options.fetchGraph()
            let homes: [Home]
            do throws(HomeError) { homes = try graph.listedHomes(home.home) } catch { throw Failure(error) }
            let items: [JSON] =
                homes.flatMap { home in
                    home.serviceGroupIDs.compactMap { graph.serviceGroups[$0] }.map { group in
                        JSON.object([
                            ("id", .uint(group.id)),
                            ("name", .string(group.name)),
                            ("home_id", .uint(home.id)),
                            ("home", .string(home.name)),
                            ("service_ids", .array(group.serviceIDs.map { .uint($0) })),
                            ("services", .array(group.serviceIDs.map { .string(graph.path(of: $0) ?? "") })),
                        ])
                    }
                }
            let columns = [
                Column("NAME", "name"),
                Column("HOME", "home"),
                Column("SERVICES", "services"),
                Column("ID", "id", wide: true),
                Column("SERVICE IDS", "service_ids", wide: true),
            ]
            if Output.list(items, columns: columns, options) { return }
            for home in homes {
                if homes.count > 1 || self.home.home != nil { Output.line("# \(home.name)") }
                let groups = home.serviceGroupIDs.compactMap { graph.serviceGroups[$0] }
                if groups.isEmpty { Output.line("no service groups") }
                for group in groups {
                    Output.line("\(group.name)  \(count(group.serviceIDs.count, "service"))  id \(group.id)")
                    for serviceID in group.serviceIDs {
                        Output.line("  \(graph.path(of: serviceID) ?? "?")  id \(serviceID)")
                    }
                }
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an empty service group.")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        @Argument(help: "The group's name, unique in its home.")
        var name: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .addServiceGroup(name: name, homeID: try graph.resolveHome(home.home))
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a service to a group.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The group.", completion: .homeNames(.group))
        var group: String

        @Argument(help: "The service, or an accessory for its primary service.", completion: .homeNames(.accessory))
        var service: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .addServiceToGroup(
                    serviceID: try graph.resolveService(service),
                    groupID: try graph.resolveNamed(group, .serviceGroup))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take a service out of a group.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The group.", completion: .homeNames(.group))
        var group: String

        @Argument(help: "The service, or an accessory for its primary service.", completion: .homeNames(.accessory))
        var service: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .removeServiceFromGroup(
                    serviceID: try graph.resolveService(service),
                    groupID: try graph.resolveNamed(group, .serviceGroup))
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a service group; its services stay.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The group.", completion: .homeNames(.group))
        var group: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .remove(id: try graph.resolveNamed(group, .serviceGroup))
            }
        }
    }
}
