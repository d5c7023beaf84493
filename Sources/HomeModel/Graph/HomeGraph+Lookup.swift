// Finding objects by what a person types: an id, a path, or a name alone where
// it names one object. homectl resolves its arguments with these; the daemon can
// resolve names the same way.

extension HomeGraph {
    /// A home by name or id; nil means the primary home.
    package func resolveHome(_ text: String?) throws(HomeError) -> ObjectID {
        guard let text else {
            guard let primary = primaryHomeID else {
                throw HomeError(.notFound, "there are no homes; add one with: homectl homes add NAME")
            }
            return primary
        }
        if let id = Self.id(text) {
            guard homes[id] != nil else { throw HomeError(.notFound, "no home with id \(id)") }
            return id
        }
        let matches = orderedHomes.filter { $0.name.lowercased() == text.lowercased() }
        guard let home = matches.first else {
            throw HomeError(
                .notFound,
                "no home is named \(quoted(text)); the homes are "
                    + Self.names(orderedHomes.map(\.name)))
        }
        return home.id
    }

    /// The homes a listing covers: the one named, or all.
    package func listedHomes(_ text: String?) throws(HomeError) -> [Home] {
        guard let text else { return orderedHomes }
        return [homes[try resolveHome(text)]!]
    }

    /// A room: an id, a path (`Demo Home/Kitchen`), or a name, looked for in `homeID`
    /// if given, else in every home (where it must name one room).
    package func resolveRoom(_ text: String, in homeID: ObjectID? = nil) throws(HomeError) -> ObjectID {
        if let id = Self.id(text) {
            guard rooms[id] != nil else { throw notFound(.room, id) }
            return id
        }
        if text.contains("/") {
            let id = try resolve(path: text)
            guard rooms[id] != nil else { throw wrongKind(text, id, expected: .room) }
            return id
        }
        let candidates = (homeID.map { [$0] } ?? homeOrder).flatMap { homeID in
            (homes[homeID]?.roomIDs ?? []).compactMap { rooms[$0] }
        }
        return try unique(
            text, .room, candidates.map { ($0.id, $0.homeID, $0.name) },
            all: candidates.map(\.name), scoped: homeID)
    }

    /// An accessory: an id, a path (`Living Room/Lamp`), or a name alone, which must
    /// name one accessory of all homes.
    package func resolveAccessory(_ text: String) throws(HomeError) -> ObjectID {
        if let id = Self.id(text) {
            guard accessories[id] != nil else { throw notFound(.accessory, id) }
            return id
        }
        if !text.contains("/") {
            let named = homeOrder.flatMap { homes[$0]?.accessoryIDs ?? [] }.compactMap { accessories[$0] }
                .filter { $0.name.lowercased() == text.lowercased() }
            if named.count == 1 { return named[0].id }
            if named.count > 1 {
                throw HomeError(
                    .invalidArgument,
                    "\(quoted(text)) names \(named.count) accessories: "
                        + Self.names(named.map { "\(path(of: $0.id) ?? $0.name) (id \($0.id))" })
                        + "; give its room too (Room/Accessory) or its id")
            }
            // A bare word that is no accessory's name: say so, unless it names something else.
            guard let other = try? resolve(path: text) else {
                let all = homeOrder.flatMap { homes[$0]?.accessoryIDs ?? [] }.compactMap { accessories[$0]?.name }
                throw HomeError(
                    .notFound,
                    "no accessory is named \(quoted(text)); the accessories are "
                        + Self.names(all.sorted { $0.lowercased() < $1.lowercased() }))
            }
            guard accessories[other] != nil else { throw wrongKind(text, other, expected: .accessory) }
            return other
        }
        let id = try resolve(path: text)
        guard accessories[id] != nil else { throw wrongKind(text, id, expected: .accessory) }
        return id
    }

    /// A service: an id or path naming a service, or an accessory, meaning its
    /// primary service (or its one service besides AccessoryInformation).
    package func resolveService(_ text: String) throws(HomeError) -> ObjectID {
        let id: ObjectID
        if let number = Self.id(text), services[number] != nil {
            id = number
        } else if let number = Self.id(text), accessories[number] == nil {
            throw notFound(.service, number)
        } else if let service = try? resolve(path: text), services[service] != nil {
            id = service
        } else {
            let accessoryID = try resolveAccessory(text)
            let candidates = accessories[accessoryID]!.serviceIDs.compactMap { services[$0] }
            let main = candidates.filter(\.isPrimary)
            let others = candidates.filter { $0.type.name != "AccessoryInformation" }
            guard let service = main.count == 1 ? main.first : others.count == 1 ? others.first : nil else {
                throw HomeError(
                    .invalidArgument,
                    "accessory \(quoted(text)) has several services; name one: "
                        + Self.names(candidates.map { "\(path(of: $0.id) ?? $0.name) (id \($0.id))" }))
            }
            id = service.id
        }
        return id
    }

    /// A zone, service group, action set or trigger: an id, `Home/Name`, or a name
    /// looked for in `homeID` if given, else in every home.
    package func resolveNamed(_ text: String, _ kind: ObjectKind, in homeID: ObjectID? = nil) throws(HomeError)
        -> ObjectID
    {
        if let id = Self.id(text) {
            guard self.kind(of: id) == kind else { throw notFound(kind, id) }
            return id
        }
        var scope = homeID.map { [$0] } ?? homeOrder
        var name = text
        if let slash = text.firstIndex(of: "/"),
            let home = orderedHomes.first(where: { $0.name.lowercased() == text[..<slash].lowercased() })
        {
            scope = [home.id]
            name = String(text[text.index(after: slash)...])
        }
        let candidates = scope.flatMap { members(kind, of: $0) }
        return try unique(
            name, kind, candidates, all: candidates.map(\.name), scoped: scope.count == 1 ? scope[0] : nil)
    }

    /// Anything a person can rename: a path or id first, then an accessory by name,
    /// then a zone, group, scene or trigger by name.
    package func resolveRenamable(_ text: String) throws(HomeError) -> ObjectID {
        if let id = Self.id(text) {
            guard kind(of: id) != nil else { throw HomeError(.notFound, "no object with id \(id)") }
            return id
        }
        let pathError: HomeError
        do throws(HomeError) {
            return try resolve(path: text)
        } catch {
            pathError = error
        }
        if let id = try? resolveAccessory(text) { return id }
        for kind in [ObjectKind.zone, .serviceGroup, .actionSet, .trigger] {
            if let id = try? resolveNamed(text, kind) { return id }
        }
        throw pathError
    }

    /// The ids and names of a home's zones, groups, action sets or triggers.
    package func members(_ kind: ObjectKind, of homeID: ObjectID) -> [(id: ObjectID, homeID: ObjectID, name: String)] {
        guard let home = homes[homeID] else { return [] }
        switch kind {
        case .zone: return home.zoneIDs.compactMap { zones[$0] }.map { ($0.id, homeID, $0.name) }
        case .serviceGroup:
            return home.serviceGroupIDs.compactMap { serviceGroups[$0] }.map { ($0.id, homeID, $0.name) }
        case .actionSet: return home.actionSetIDs.compactMap { actionSets[$0] }.map { ($0.id, homeID, $0.name) }
        case .trigger: return home.triggerIDs.compactMap { triggers[$0] }.map { ($0.id, homeID, $0.name) }
        case .room: return home.roomIDs.compactMap { rooms[$0] }.map { ($0.id, homeID, $0.name) }
        default: return []
        }
    }

    private func unique(
        _ name: String, _ kind: ObjectKind,
        _ candidates: [(id: ObjectID, homeID: ObjectID, name: String)],
        all: [String], scoped homeID: ObjectID?
    ) throws(HomeError) -> ObjectID {
        let matches = candidates.filter { $0.name.lowercased() == name.lowercased() }
        if matches.count == 1 { return matches[0].id }
        let place = homeID.flatMap { homes[$0] }.map { "home \(quoted($0.name))" } ?? "any home"
        if matches.isEmpty {
            throw HomeError(
                .notFound,
                "\(place) has no \(kind.noun) named \(quoted(name)); there "
                    + (all.isEmpty ? "are none" : "are " + Self.names(all)))
        }
        throw HomeError(
            .invalidArgument,
            "\(quoted(name)) names \(matches.count) \(kind.noun)s: "
                + Self.names(matches.map { "\(homes[$0.homeID]?.name ?? "?")/\($0.name) (id \($0.id))" })
                + "; start with the home's name or use the id")
    }

    private func wrongKind(_ text: String, _ id: ObjectID, expected: ObjectKind) -> HomeError {
        HomeError(
            .invalidArgument,
            "\(quoted(text)) is \(kind(of: id)?.nounWithArticle ?? "an object") (id \(id)), "
                + "not \(expected.nounWithArticle)")
    }

    /// An all-digits argument is an id.
    package static func id(_ text: String) -> ObjectID? {
        text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) ? ObjectID(text) : nil
    }

    package static func names(_ names: [String], limit: Int = 10) -> String {
        if names.isEmpty { return "none" }
        let shown = names.prefix(limit).map { quoted($0) }.joined(separator: ", ")
        return names.count > limit ? "\(shown) and \(names.count - limit) more" : shown
    }

    /// "Demo Home" for a home id, for output.
    package func homeName(_ id: ObjectID) -> String { homes[id]?.name ?? "?" }

    /// Resolves a PATH that must name a characteristic. Besides the PATH forms of
    /// `resolve(path:)`, it may start with an accessory's name alone (`Lamp/On`)
    /// when no room or home has that name and it names one accessory of all homes.
    package func resolveCharacteristic(_ path: String) throws(HomeError) -> ObjectID {
        let id: ObjectID
        do throws(HomeError) {
            id = try resolve(path: path)
        } catch {
            guard let slash = path.firstIndex(of: "/"),
                let accessoryID = try? resolveAccessory(String(path[..<slash])),
                let accessoryPath = self.path(of: accessoryID)
            else { throw error }
            id = try resolve(path: accessoryPath + path[slash...])
        }
        guard characteristics[id] != nil else {
            let what = kind(of: id)?.nounWithArticle ?? "an object"
            let example = exampleContinuation(under: id).map { "\(path)/\($0)" } ?? "\(path)/On"
            throw HomeError(
                .invalidArgument,
                "\(path) is \(what) (id \(id)), not a characteristic; add the characteristic's name, e.g. \(example)")
        }
        return id
    }

    /// How a path that stops short of a characteristic could go on: of an
    /// accessory, its primary (else first) service's first characteristic ("On");
    /// of a service, its first one; of a room, its first accessory's
    /// ("Coffee Maker/On"). For the hint of such a path.
    private func exampleContinuation(under id: ObjectID) -> String? {
        if let room = rooms[id] {
            let inRoom = accessories.values.filter { $0.roomID == room.id }.sorted { $0.id < $1.id }
            for accessory in inRoom {
                if let rest = exampleContinuation(under: accessory.id) { return "\(accessory.name)/\(rest)" }
            }
            return nil
        }
        var serviceID = id
        if let accessory = accessories[id] {
            let services = accessory.serviceIDs.compactMap { self.services[$0] }
                .filter { $0.type.name != "AccessoryInformation" }
            guard let service = services.first(where: \.isPrimary) ?? services.first else { return nil }
            serviceID = service.id
        }
        guard let service = services[serviceID] else { return nil }
        return service.characteristicIDs.compactMap { characteristics[$0] }
            .first { $0.type.name != "Name" }?.type.name
    }
}
