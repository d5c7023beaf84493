internal import ArgumentParser
internal import Foundation
internal import HomeClient
internal import HomeModel
internal import HomeWire

/// What a command-line argument names, for completing it from the live home.
enum HomeNameKind: Sendable {
    /// `get`: a characteristic's PATH, or an accessory (for all of its characteristics).
    case characteristicOrAccessory
    case characteristic
    case accessory
    case room
    case zone
    case group
    case home
    case scene
    case trigger
    /// Anything `rename` takes: homes, rooms, zones, accessories, groups, scenes, triggers.
    case renamable
    /// The values a characteristic takes by name (`set PATH <Tab>`: Open, Closed),
    /// the characteristic being the word after `option`, or for nil the word
    /// before the one completed.
    case valueOf(option: String?)
}

extension CompletionKind {
    /// Completes names by asking the daemon at the moment the shell completes, as
    /// kubectl and busctl do: the rooms, accessories, PATHs, scenes and triggers
    /// homed has now, on the socket the command line names (--socket, else
    /// HOMED_SOCKET, else the default). Nothing when no daemon answers within a
    /// second: a completion must never hang the shell.
    static func homeNames(_ kind: HomeNameKind) -> CompletionKind {
        .custom { (arguments: [String], index: Int, prefix: String) async -> [String] in
            let socket = LiveCompletion.socket(in: arguments)
            guard let graph = await LiveCompletion.graph(socket: socket) else { return [] }
            let names: [String]
            if case .valueOf(let option) = kind {
                names = LiveCompletion.values(in: graph, arguments: arguments, index: index, after: option)
            } else {
                names = LiveCompletion.names(kind, in: graph)
            }
            return LiveCompletion.offered(names, typed: prefix)
        }
    }
}

enum LiveCompletion {
    /// The names that continue what was typed. Bash hands over the word as typed
    /// (`Living\ Room/`, `'Living Room/`), so it is unquoted before comparing; the
    /// names go back as they are, and bash quotes what it inserts (the script
    /// registers with `-o filenames`) after filtering them against the word it
    /// unquotes the same way.
    static func offered(_ names: [String], typed: String, shell: String? = ShellWord.currentShell) -> [String] {
        let text = shell == "bash" ? ShellWord.unquoted(typed) : typed
        return names.filter { $0.hasPrefix(text) }
    }

    /// The names of the values of the characteristic the command line names (the
    /// word after `option`, else the word before the one completed): a person's
    /// names for an enumerated one, true and false for a bool, none otherwise.
    static func values(in graph: HomeGraph, arguments: [String], index: Int, after option: String?) -> [String] {
        let path: String?
        if let option {
            path = arguments.firstIndex(of: option).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        } else {
            path = index > 0 && index - 1 < arguments.count ? arguments[index - 1] : nil
        }
        guard let path, let id = try? graph.resolveCharacteristic(ShellWord.unquoted(path)),
            let characteristic = graph.characteristics[id]
        else { return [] }
        if characteristic.metadata.format == .bool { return ["true", "false"] }
        return ValueNames.names(of: characteristic).map(\.name)
    }

    /// `--socket PATH` or `--socket=PATH` on the command line being completed.
    static func socket(in arguments: [String]) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--socket", index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix("--socket=") { return String(argument.dropFirst("--socket=".count)) }
        }
        return nil
    }

    /// The home, or nil when no daemon answers within a second.
    static func graph(socket: String?) async -> HomeGraph? {
        await withTaskGroup(of: HomeGraph?.self) { group in
            group.addTask {
                guard let client = try? await HomeClient.connect(to: socket, name: "homectl-completion") else {
                    return nil
                }
                let graph = try? await client.getHome().graph
                await client.close()
                return graph
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(1))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Every name of that kind, each as homectl takes it: an accessory by its name
    /// alone and as Room/Accessory; a characteristic as Room/Accessory/Type and
    /// Accessory/Type.
    static func names(_ kind: HomeNameKind, in graph: HomeGraph) -> [String] {
        func accessoryNames() -> [String] {
            graph.accessories.values.flatMap { accessory in
                [accessory.name] + (graph.rooms[accessory.roomID].map { ["\($0.name)/\(accessory.name)"] } ?? [])
            }
        }
        func characteristicPaths() -> [String] {
            graph.characteristics.values.flatMap { characteristic -> [String] in
                guard let accessory = graph.accessories[characteristic.accessoryID] else { return [] }
                let short = "\(accessory.name)/\(characteristic.type.name)"
                return [short] + (graph.rooms[accessory.roomID].map { ["\($0.name)/\(short)"] } ?? [])
            }
        }
        let names: [String]
        switch kind {
        case .characteristicOrAccessory: names = accessoryNames() + characteristicPaths()
        case .characteristic: names = characteristicPaths()
        case .accessory: names = accessoryNames()
        case .room: names = graph.rooms.values.map(\.name)
        case .zone: names = graph.zones.values.map(\.name)
        case .group: names = graph.serviceGroups.values.map(\.name)
        case .home: names = graph.homes.values.map(\.name)
        case .scene: names = graph.actionSets.values.map(\.name)
        case .trigger: names = graph.triggers.values.map(\.name)
        case .renamable:
            names =
                accessoryNames() + graph.rooms.values.map(\.name) + graph.zones.values.map(\.name)
                + graph.homes.values.map(\.name) + graph.serviceGroups.values.map(\.name)
                + graph.actionSets.values.map(\.name) + graph.triggers.values.map(\.name)
        case .valueOf: names = []
        }
        return Array(Set(names)).sorted()
    }
}

/// A word as bash's completion hands it over.
enum ShellWord {
    /// The shell a completion script runs in (its scripts set SAP_SHELL).
    static var currentShell: String? { ProcessInfo.processInfo.environment["SAP_SHELL"] }

    /// The text of a word as typed so far: without the quote it opens with, or
    /// with its backslash escapes resolved.
    static func unquoted(_ word: String) -> String {
        if let first = word.first, first == "'" || first == "\"" {
            return String(word.dropFirst())
        }
        var text = ""
        var escaping = false
        for character in word {
            if escaping || character != "\\" {
                text.append(character)
                escaping = false
            } else {
                escaping = true
            }
        }
        return text
    }
}
