internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homectl scenes`: action sets, the writes a scene applies together.
struct Scenes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List scenes (action sets), run one, create one, set or remove its actions, remove it.",
        discussion: """
            SCENE is an id, a name, or Home/Scene. An action writes VALUE to the characteristic \
            at PATH when the scene runs; VALUE is read as `homectl set` reads it, and checked \
            as a write would be.
            """,
        subcommands: [List.self, Run.self, Create.self, AddAction.self, RemoveAction.self, Remove.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the scenes and their actions (the default).")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        func run() async throws {
            let graph = try await options.fetchGraph()
            let homes: [Home]
            do throws(HomeError) { homes = try graph.listedHomes(home.home) } catch { throw Failure(error) }
            let items: [JSON] =
                homes.flatMap { home in
                    home.actionSetIDs.compactMap { graph.actionSets[$0] }.map { scene in
                        JSON.object([
                            ("id", .uint(scene.id)),
                            ("name", .string(scene.name)),
                            ("kind", .string(scene.kind.rawValue)),
                            ("home_id", .uint(home.id)),
                            ("home", .string(home.name)),
                            (
                                "actions",
                                .array(
                                    scene.actions.map { action in
                                        .object([
                                            ("characteristic_id", .uint(action.characteristicID)),
                                            ("path", .string(graph.path(of: action.characteristicID) ?? "")),
                                            ("value", action.value.json),
                                            ("only_if", action.onlyIf?.json ?? .null),
                                        ])
                                    })
                            ),
                        ])
                    }
                }
            let columns = [
                Column("NAME", "name"),
                Column("KIND", "kind"),
                Column("HOME", "home"),
                Column("ACTIONS", "actions") { item in
                    guard case .uint(let id)? = item["id"], let scene = graph.actionSets[id] else { return "" }
                    return count(scene.actions.count, "action")
                },
                Column("ID", "id", wide: true),
                Column("WRITES", "actions", wide: true) { item in
                    guard case .uint(let id)? = item["id"], let scene = graph.actionSets[id] else { return "" }
                    return scene.actions.map { action in
                        (graph.path(of: action.characteristicID) ?? "characteristic \(action.characteristicID)")
                            + " = " + graph.shown(action.value, of: action.characteristicID)
                            + (action.onlyIf.map { " if " + graph.shown($0, of: action.characteristicID) } ?? "")
                    }.joined(separator: "; ")
                },
            ]
            if Output.list(items, columns: columns, options) { return }
            for home in homes {
                if homes.count > 1 || self.home.home != nil { Output.line("# \(home.name)") }
                let scenes = home.actionSetIDs.compactMap { graph.actionSets[$0] }
                if scenes.isEmpty { Output.line("no scenes") }
                for scene in scenes {
                    Output.line(
                        "\(scene.name)  \(scene.kind.rawValue)  \(count(scene.actions.count, "action"))  id \(scene.id)"
                    )
                    let rows = scene.actions.map { action in
                        var characteristic = graph.characteristics[action.characteristicID]
                        characteristic?.value = action.value
                        return [
                            graph.path(of: action.characteristicID) ?? "characteristic \(action.characteristicID)",
                            "=", characteristic.map(Show.value) ?? action.value.description,
                            action.onlyIf.map { "if " + graph.shown($0, of: action.characteristicID) } ?? "",
                        ]
                    }
                    for line in Output.table(rows, indent: "  ") { Output.line(line) }
                }
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an empty scene.",
            discussion: "A home has at most one scene of each built-in kind (wake-up, sleep, departure, arrival).")

        @OptionGroup var options: ConnectionOptions
        @OptionGroup var home: HomeOption

        @Option(help: "user-defined, wake-up, sleep, departure or arrival.")
        var kind: String = ActionSetKind.userDefined.rawValue

        @Argument(help: "The scene's name, unique in its home.")
        var name: String

        func validate() throws {
            if ActionSetKind(rawValue: kind) == nil {
                throw ValidationError(
                    "--kind takes \(ActionSetKind.allCases.map(\.rawValue).joined(separator: ", ")), "
                        + "not '\(kind)'")
            }
        }

        func run() async throws {
            let kind = ActionSetKind(rawValue: self.kind)!
            try await options.applyChange { graph throws(HomeError) in
                .addActionSet(name: name, kind: kind, homeID: try graph.resolveHome(home.home))
            }
        }
    }

    struct AddAction: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a scene write VALUE to a characteristic (replacing what it wrote there before).")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The scene.", completion: .homeNames(.scene))
        var scene: String

        @Argument(help: "The characteristic, by PATH or id.", completion: .homeNames(.characteristic))
        var path: String

        @Argument(help: "The value to write.")
        var value: String

        @Option(
            name: .customLong("if"),
            help: ArgumentHelp(
                "Write only if the characteristic holds CURRENT when the scene runs (else this action fails, "
                    + "FAILED_PRECONDITION, and the others still run): two automations cannot undo each other.",
                valueName: "current"))
        var onlyIf: String?

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                let sceneID = try graph.resolveNamed(scene, .actionSet)
                let characteristicID = try graph.resolveCharacteristic(path)
                let characteristic = graph.characteristics[characteristicID]!
                let value = try ValueParser.parse(self.value, for: characteristic)
                let expected = try onlyIf.map { text throws(HomeError) in
                    try ValueParser.parse(text, for: characteristic)
                }
                return .addAction(
                    CharacteristicWriteAction(characteristicID: characteristicID, value: value, onlyIf: expected),
                    actionSetID: sceneID)
            }
        }
    }

    struct RemoveAction: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop a scene writing a characteristic.")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The scene.", completion: .homeNames(.scene))
        var scene: String

        @Argument(help: "The characteristic, by PATH or id.", completion: .homeNames(.characteristic))
        var path: String

        func run() async throws {
            try await options.applyChange { graph throws(HomeError) in
                .removeAction(
                    characteristicID: try graph.resolveCharacteristic(path),
                    actionSetID: try graph.resolveNamed(scene, .actionSet))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a scene; triggers that ran it no longer do.",
            discussion: """
                A scene that triggers run is removed only when you say so: on a terminal homectl \
                names the triggers and asks; elsewhere --force must say it.
                """)

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The scene.", completion: .homeNames(.scene))
        var scene: String

        @Flag(help: "Remove it even when triggers run it (they then run what else they have).")
        var force = false

        func run() async throws {
            if !force {
                let graph = try await options.fetchGraph()
                let id: ObjectID
                do throws(HomeError) { id = try graph.resolveNamed(scene, .actionSet) } catch { throw Failure(error) }
                let users = graph.triggers.values.filter { $0.actionSetIDs.contains(id) }.map(\.name).sorted()
                if !users.isEmpty {
                    let name = graph.actionSets[id]?.name ?? scene
                    try Self.confirm(
                        "scene \(quote(name)) is run by \(users.count == 1 ? "trigger" : "triggers") "
                            + users.map(quote).joined(separator: ", "))
                }
            }
            try await options.applyChange { graph throws(HomeError) in
                .remove(id: try graph.resolveNamed(scene, .actionSet))
            }
        }

        /// Asks on a terminal; refuses elsewhere, nothing removed.
        private static func confirm(_ sentence: String) throws {
            guard isatty(0) == 1 else {
                throw Failure(HomeError(.failedPrecondition, "\(sentence): give --force to remove it anyway"))
            }
            FileHandle.standardError.write(Data("\(sentence); remove it anyway? [y/N] ".utf8))
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            guard answer == "y" || answer == "yes" else { throw Failure(HomeError(.cancelled, "nothing removed")) }
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a scene: apply its writes, then announce it (an action-set event).")

        @OptionGroup var options: ConnectionOptions

        @Argument(help: "The scene.", completion: .homeNames(.scene))
        var scene: String

        func run() async throws {
            let (graph, response) = try await options.withClient { client throws(HomeError) in
                let graph = try await client.getHome().graph
                return (graph, try await client.executeActionSet(try graph.resolveNamed(scene, .actionSet)))
            }
            let failed = response.results.filter { $0.error != nil }
            if options.json {
                Output.structured(
                    JSON.object([
                        ("seq", .uint(response.seq)),
                        (
                            "results",
                            .array(
                                response.results.map { result in
                                    .object([
                                        ("characteristic_id", .uint(result.characteristicID)),
                                        ("path", .string(graph.path(of: result.characteristicID) ?? "")),
                                        ("seq", .uint(result.seq)),
                                        ("error", result.error.map(errorJSON) ?? .null),
                                    ])
                                })
                        ),
                    ]), options)
            } else {
                Output.line(
                    "ran \(scene): \(response.results.count - failed.count) of \(response.results.count) actions applied (seq \(response.seq))"
                )
                for result in failed {
                    Output.error(
                        "homectl: \(graph.path(of: result.characteristicID) ?? String(result.characteristicID)): \(result.error!.message)"
                    )
                }
            }
            // Each failure was shown once, on stderr or in the JSON; the exit code is the first one's.
            if let first = failed.first?.error { throw Failure(first, shown: true) }
        }
    }
}
