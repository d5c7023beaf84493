internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl rename PATH NEWNAME`: rename anything a person names.
struct Rename: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rename a home, room, zone, accessory, service, group, scene or trigger.",
        discussion: """
            PATH is an id, a path ("Living Room/Lamp", "Living Room/Lamp/Lightbulb"), an accessory's \
            name alone, or the name of a zone, group, scene or trigger (optionally "Home/Name").
            """)

    @OptionGroup var options: ConnectionOptions

    @Argument(help: "What to rename.", completion: .homeNames(.renamable))
    var path: String

    @Argument(help: "Its new name.")
    var name: String

    func run() async throws {
        try await options.applyChange { graph throws(HomeError) in
            .rename(id: try graph.resolveRenamable(path), name: name)
        }
    }
}
