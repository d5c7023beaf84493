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
            removes nor overwrites. Everything is checked first, against a copy of the home, with the \
            daemon's own rules: an unknown key, a value of the wrong type, a name that clashes, an accessory \
            no provider has registered yet (refused, not held as a placeholder: start its provider first) \
            stops the import before anything changed, with the place in the file (homes[0].rooms[2]). \
            --dry-run prints the steps and changes nothing. Needs the admin role.

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
        let layout: LayoutFile
        do throws(HomeError) {
            layout = try LayoutFile.parse(text, source: file)
        } catch {
            throw Failure(error)
        }
        let dryRun = self.dryRun
        let (plan, done) = try await options.withClient { client throws(HomeError) -> (ImportPlan, Int) in
            let plan = try ImportPlan(file: layout, graph: try await client.getHome().graph)
            if dryRun { return (plan, 0) }
            var created: [ObjectID: ObjectID] = [:]
            var done = 0
            for step in plan.steps {
                do throws(HomeError) {
                    let response = try await client.changeLayout(step.operation.mapping(created))
                    if step.createdID != 0 { created[step.createdID] = response.createdID }
                    done += 1
                } catch {
                    throw HomeError(
                        error.code,
                        "\(error.message) (at step \(done + 1) of \(plan.steps.count), \(step.text); the \(done) "
                            + "before it were made: import the file again to go on)")
                }
            }
            return (plan, done)
        }
        for step in plan.steps { Output.line((dryRun ? "would " : "") + step.text) }
        for difference in plan.differences { Output.line("differs: " + difference) }
        if plan.steps.isEmpty {
            Output.line("nothing to change: the home already has everything the file names")
        } else if !dryRun {
            Output.line("imported: \(done) change\(done == 1 ? "" : "s")")
        }
    }
}
