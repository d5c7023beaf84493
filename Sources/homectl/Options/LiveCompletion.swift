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
    case scene
    case trigger
}

extension CompletionKind {
    /// Completes names by asking the daemon at the moment the shell completes, as
    /// kubectl and busctl do: the rooms, accessories, PATHs, scenes and triggers
    /// homed has now, on the socket the command line names (--socket, else
    /// HOMED_SOCKET, else the default). Nothing when no daemon answers within a
    /// second: a completion must never hang the shell.
    static func homeNames(_ kind: HomeNameKind) -> CompletionKind {
        .custom { (arguments: [String], _: Int, prefix: String) async -> [String] in
            let socket = LiveCompletion.socket(in: arguments)
            guard let graph = await LiveCompletion.graph(socket: socket) else { return [] }
            return LiveCompletion.names(kind, in: graph).filter { $0.hasPrefix(prefix) }
        }
    }
}

enum LiveCompletion {
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
        case .scene: names = graph.actionSets.values.map(\.name)
        case .trigger: names = graph.triggers.values.map(\.name)
        }
        return Array(Set(names)).sorted()
    }
}
