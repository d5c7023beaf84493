public import HomeModel
internal import Yams

/// homed's configuration file: YAML, every key in `ConfigFile.keys` and nothing
/// else. Each setting can also be given by a flag, which wins over the file.
///
/// ```yaml
/// socket: {path: /run/homed/homed.sock, mode: "0660", group: homed}
/// database: {path: /var/lib/homed/homed.sqlite, fold_interval_ms: 500}
/// journal: {capacity: 100000}
/// subscriptions: {queue_limit: 1024}
/// providers: {timeout_ms: 5000, ping_interval_ms: 300, ping_timeout_ms: 600, startup_grace_ms: 10000}
/// roles: {admins: [alice], users: ["@homed"], viewers: [], default: user}
/// log: {level: info, format: auto}
/// ```
///
/// Parsed with Yams (as the simulator's files are) rather than through
/// swift-configuration's YAML provider: refusing unknown keys needs the list of
/// keys a file holds, and errors need their line, and that provider gives neither.
public struct ConfigFile: Equatable, Sendable {
    /// Where it was read from, for messages.
    public var path: String
    /// Each setting found, by its dotted key ("socket.mode"), with its line.
    public private(set) var settings: [String: Setting] = [:]

    public struct Setting: Equatable, Sendable {
        public var value: Value
        public var line: Int
    }

    public enum Value: Equatable, Sendable {
        case string(String)
        case integer(Int)
        case list([String])
    }

    /// The kind of value a key takes.
    public enum Kind: Sendable {
        case string
        case integer
        case list

        var description: String {
            switch self {
            case .string: "a string"
            case .integer: "a whole number (0 or more)"
            case .list: "a list of names"
            }
        }
    }

    /// Every key the file may hold.
    public static let keys: [String: Kind] = [
        "socket.path": .string, "socket.mode": .string, "socket.group": .string,
        "database.path": .string, "database.fold_interval_ms": .integer,
        "journal.capacity": .integer,
        "history.retention": .string, "history.audit_retention": .string,
        "history.rollup_retention": .string, "history.keep": .list,
        "subscriptions.queue_limit": .integer,
        "providers.timeout_ms": .integer, "providers.ping_interval_ms": .integer,
        "providers.ping_timeout_ms": .integer, "providers.startup_grace_ms": .integer,
        "roles.admins": .list, "roles.users": .list, "roles.viewers": .list, "roles.default": .string,
        "log.level": .string, "log.format": .string,
        "automation.missed_triggers": .string,
        "automation.missed_ends": .string,
    ]

    public init(path: String, settings: [String: Setting] = [:]) {
        self.path = path
        self.settings = settings
    }

    public func string(_ key: String) -> String? {
        if case .string(let text)? = settings[key]?.value { return text }
        return nil
    }

    public func integer(_ key: String) -> Int? {
        if case .integer(let number)? = settings[key]?.value { return number }
        return nil
    }

    public func list(_ key: String) -> [String]? {
        if case .list(let names)? = settings[key]?.value { return names }
        return nil
    }

    /// "homed.yaml:12 (roles.viewers)": where a setting came from, for a message
    /// about its value.
    public func source(_ key: String) -> String {
        settings[key].map { "\(path):\($0.line) (\(key))" } ?? "\(path) (\(key))"
    }

    /// Parses YAML text; an empty file is a file with no settings.
    ///
    /// - Throws: INVALID_ARGUMENT naming the file, the line and the key: YAML that
    ///   does not parse, a key that is not in `keys`, a value of the wrong kind.
    public static func parse(_ text: String, path: String) throws(HomeError) -> ConfigFile {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw HomeError(.invalidArgument, "\(path): not valid YAML: \(describe(error))")
        } catch {
            throw HomeError(.invalidArgument, "\(path): not valid YAML: \(error)")
        }
        var file = ConfigFile(path: path)
        guard let root else { return file }
        guard case .mapping(let mapping) = root else {
            throw HomeError(
                .invalidArgument, "\(path):\(line(root)): the file must be a mapping of keys (socket:, roles:, …)")
        }
        try file.read(mapping, prefix: "")
        return file
    }

    private mutating func read(_ mapping: Node.Mapping, prefix: String) throws(HomeError) {
        for (keyNode, value) in mapping {
            guard let name = keyNode.string else {
                throw HomeError(.invalidArgument, "\(path):\(Self.line(keyNode)): a key must be a name")
            }
            let key = prefix + name
            if case .mapping(let inner) = value, Self.keys[key] == nil {
                guard Self.keys.keys.contains(where: { $0.hasPrefix(key + ".") }) else {
                    throw unknown(key, at: keyNode)
                }
                try read(inner, prefix: key + ".")
                continue
            }
            guard let kind = Self.keys[key] else {
                let inner = Self.keys.keys.filter { $0.hasPrefix(key + ".") }.map { $0.dropFirst(key.count + 1) }
                // A section whose keys are all commented out is empty, not wrong.
                if !inner.isEmpty, case .scalar(let scalar) = value, ["", "~", "null"].contains(scalar.string) {
                    continue
                }
                guard inner.isEmpty else {
                    throw HomeError(
                        .invalidArgument,
                        "\(path):\(Self.line(keyNode)): \(key) is a section holding \(inner.sorted().joined(separator: ", ")), "
                            + "not \(Self.describe(value))")
                }
                throw unknown(key, at: keyNode)
            }
            settings[key] = Setting(
                value: try Self.value(value, kind: kind, key: key, path: path), line: Self.line(keyNode))
        }
    }

    private func unknown(_ key: String, at node: Node) -> HomeError {
        let section = key.split(separator: ".").dropLast().joined(separator: ".")
        let siblings = Self.keys.keys.filter {
            section.isEmpty ? true : $0.hasPrefix(section + ".")
        }.map { section.isEmpty ? String($0.split(separator: ".")[0]) : String($0.dropFirst(section.count + 1)) }
        let known = Set(siblings).sorted().joined(separator: ", ")
        return HomeError(
            .invalidArgument,
            "\(path):\(Self.line(node)): unknown key '\(key)'; "
                + (section.isEmpty ? "the sections are \(known)" : "\(section) holds \(known)"))
    }

    private static func value(_ node: Node, kind: Kind, key: String, path: String) throws(HomeError) -> Value {
        func wrong() -> HomeError {
            HomeError(
                .invalidArgument,
                "\(path):\(line(node)): \(key) must be \(kind.description), not \(describe(node))")
        }
        switch (kind, node) {
        case (.string, .scalar(let scalar)):
            return .string(scalar.string)
        case (.integer, .scalar(let scalar)):
            guard let number = Int(scalar.string), number >= 0 else { throw wrong() }
            return .integer(number)
        case (.list, .scalar(let scalar)):
            // One name alone is a list of one; an empty value, none.
            return .list(scalar.string.isEmpty ? [] : [scalar.string])
        case (.list, .sequence(let sequence)):
            var names: [String] = []
            for item in sequence {
                guard case .scalar(let scalar) = item else { throw wrong() }
                names.append(scalar.string)
            }
            return .list(names)
        default:
            throw wrong()
        }
    }

    private static func describe(_ node: Node) -> String {
        switch node {
        case .scalar(let scalar): "'\(scalar.string)'"
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .alias: "an alias"
        }
    }

    private static func line(_ node: Node) -> Int { node.mark?.line ?? 0 }

    private static func describe(_ error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            "\(problem) at line \(mark.line), column \(mark.column)"
        default:
            "\(error)"
        }
    }
}
