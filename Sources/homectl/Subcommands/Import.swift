internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// `homectl import FILE`: a layout file (`homectl export`'s) applied to the home.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply a layout file (homectl export's): create what is missing, report what differs.",
        discussion: """
            Homes, rooms, zones, groups, scenes and triggers the file names and the home has not are \
            created; accessories (found by their provider and key) are renamed and put in the rooms the file \
            says; a scene's missing actions are added. What exists and differs (a scene's action with \
            another value, a trigger of the same name) is reported and left as it is: an import never \
            removes nor overwrites. The daemon plans it against the home as it is, with its own rules, and \
            applies it in one commit, all or nothing: an unknown key, a value of the wrong type, a name that \
            clashes, an accessory no provider has registered yet (refused, not held as a placeholder: start \
            its provider first) stops the import with nothing changed, naming the place in the file \
            (homes[0].rooms[2]). --dry-run prints the steps and changes nothing. Needs the admin role.

            Examples:
              homectl export > home.yaml && homectl import home.yaml --dry-run
              homectl import home.yaml
            """)

    @OptionGroup var options: ConnectionOptions

    @Argument(help: ArgumentHelp("The layout file, YAML or JSON.", valueName: "file"))
    var file: String

    @Flag(help: "Print the steps; change nothing.")
    var dryRun = false

    func run() async throws {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw Failure(HomeError(.notFound, "cannot read \(file): \(error.localizedDescription)"))
        }
        // The daemon parses, plans and applies it, in one commit (ImportLayout).
        let (file, dryRun) = (self.file, self.dryRun)
        let outcome = try await options.withClient { client throws(HomeError) in
            try await client.importLayout(text, fileName: file, dryRun: dryRun)
        }
        for step in outcome.steps { Output.line((dryRun ? "would " : "") + step) }
        for difference in outcome.differences { Output.line("differs: " + difference) }
        if outcome.steps.isEmpty {
            Output.line("nothing to change: the home already has everything the file names")
        } else if !dryRun {
            Output.line("imported: \(outcome.steps.count) change\(outcome.steps.count == 1 ? "" : "s")")
        }
    }
}
