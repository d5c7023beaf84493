extension HomeGraph {
    /// The longest name, in UTF-8 bytes, of anything a person names (HomeKit's limit too).
    package static let maxNameLength = 64

    /// Checks a name a person gave: not blank, no control characters (ESC, newline,
    /// NUL, …), at most 64 bytes of UTF-8; and addressable in a PATH: no "/" (it
    /// separates the names) and not all digits (a PATH of digits is an id).
    static func validateName(_ name: String, for kind: ObjectKind) throws(HomeError) {
        if name.allSatisfy(\.isWhitespace) {
            throw HomeError(.invalidArgument, "\(kind.nounWithArticle) name cannot be empty")
        }
        if let slash = name.firstIndex(of: "/") {
            throw HomeError(
                .invalidArgument,
                "the \(kind.noun) name \(quoted(name)) has a \"/\" at position "
                    + "\(name.distance(from: name.startIndex, to: slash) + 1); \"/\" separates the names in a path "
                    + "(Room/Accessory/Characteristic), so no name may hold one")
        }
        if name.allSatisfy(\.isASCIIDigit) {
            throw HomeError(
                .invalidArgument,
                "the \(kind.noun) name \(quoted(name)) is all digits; a path of digits is an id, "
                    + "so a name needs at least one other character")
        }
        for (offset, scalar) in name.unicodeScalars.enumerated() where isControl(scalar) {
            throw HomeError(
                .invalidArgument,
                "the \(kind.noun) name \(quoted(name)) has a control character (U+"
                    + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4)
                    + ") at position \(offset + 1); names are text for people")
        }
        let length = name.utf8.count
        if length > maxNameLength {
            throw HomeError(
                .invalidArgument,
                "the \(kind.noun) name \(quoted(name)) is \(length) bytes long; "
                    + "names are limited to \(maxNameLength) bytes")
        }
    }

    /// Names compare without regard to case: "kitchen" and "Kitchen" are one room.
    static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        lhs == rhs || lhs.lowercased() == rhs.lowercased()
    }

    /// Checks a new name against its siblings' (case-insensitive), ignoring the object being renamed.
    ///
    /// - Parameters:
    ///   - siblings: The ids of the objects that must not share the name, with their names.
    ///   - container: How the message names where they live: `home "Demo Home"`.
    func requireUniqueName(
        _ name: String, kind: ObjectKind, among siblings: [(id: ObjectID, name: String)],
        in container: String, excluding excluded: ObjectID? = nil
    ) throws(HomeError) {
        if let clash = siblings.first(where: { $0.id != excluded && Self.sameName($0.name, name) }) {
            throw HomeError(
                .alreadyExists,
                "\(container) already has \(kind.nounWithArticle) named "
                    + "\(quoted(clash.name)) (id \(clash.id))")
        }
    }

    /// `home "Demo Home"`, as messages name a home.
    func homeLabel(_ id: ObjectID) -> String { "home \(quoted(homes[id]?.name ?? String(id)))" }

    /// A short list for a message: at most `limit` names, then how many more.
    static func list(_ names: [String], limit: Int = 10) -> String {
        if names.isEmpty { return "none" }
        let shown = names.prefix(limit).joined(separator: ", ")
        return names.count > limit ? "\(shown) and \(names.count - limit) more" : shown
    }

    /// Ids with their names, for a uniqueness check.
    func named<T: NamedObject>(_ ids: [ObjectID], in table: [ObjectID: T]) -> [(id: ObjectID, name: String)] {
        ids.compactMap { id in table[id].map { (id: id, name: $0.name) } }
    }

    /// Renames a room, zone, service group, action set or trigger: names unique in the home.
    ///
    /// - Returns: The `.updated` change, or nothing if the name is the same.
    mutating func renameInHome<T: HomeObject>(
        _ id: ObjectID, to name: String, kind: ObjectKind,
        table: WritableKeyPath<HomeGraph, [ObjectID: T]>,
        siblings: KeyPath<Home, [ObjectID]>
    ) throws(HomeError) -> [LayoutChange] {
        guard let object = self[keyPath: table][id] else { throw notFound(kind, id) }
        try Self.validateName(name, for: kind)
        let home = try requireHome(object.homeID)
        try requireUniqueName(
            name, kind: kind, among: named(home[keyPath: siblings], in: self[keyPath: table]),
            in: homeLabel(home.id), excluding: id)
        if object.name == name { return [] }
        self[keyPath: table][id]?.name = name
        return [change(.updated, id)]
    }

    /// `layoutChange(_:of:)` for an object known to exist.
    func change(_ action: LayoutChange.Action, _ id: ObjectID) -> LayoutChange {
        layoutChange(action, of: id)
            ?? LayoutChange(action: action, object: kind(of: id) ?? .home, objectID: id, homeID: 0, name: "")
    }

    /// `kind 7 ("Kitchen")`: an object as messages name it.
    func describe(_ kind: ObjectKind, _ id: ObjectID) -> String {
        let name = layoutChange(.updated, of: id)?.name ?? ""
        return "\(kind.noun) \(id) (\(quoted(name)))"
    }
}

/// The objects a person names, so name checks and renames treat them alike.
protocol NamedObject {
    var name: String { get set }
}

/// The named objects that belong directly to a home.
protocol HomeObject: NamedObject {
    var homeID: ObjectID { get }
}

extension Home: NamedObject {}
extension Accessory: HomeObject {}
extension AccessoryService: NamedObject {}
extension Room: HomeObject {}
extension Zone: HomeObject {}
extension ServiceGroup: HomeObject {}
extension ActionSet: HomeObject {}
extension Trigger: HomeObject {}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
