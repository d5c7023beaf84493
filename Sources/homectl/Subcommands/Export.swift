internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl export`: the home's layout as YAML (or JSON) to keep or to read.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the layout of every home as YAML (-o json for JSON).",
        discussion: """
            Homes, rooms, zones, accessories (by their provider and key, with their names \
            and rooms), service groups, scenes and triggers, by name: a file people read \
            and keep in git. Values are left out, but for those scenes and triggers hold. \
            Importing such a file is not done yet.
            """)

    @OptionGroup var options: ConnectionOptions

    func run() async throws {
        let graph = try await options.withClient { client throws(HomeError) in try await client.getHome().graph }
        var yaml = options
        // A file for people: YAML unless JSON is asked for.
        if !options.json { yaml.output = .yaml }
        Output.structured(LayoutExport.json(of: graph), yaml)
    }
}
