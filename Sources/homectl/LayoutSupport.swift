import ArgumentParser
import HomeClient
import HomeModel

// What the layout commands (homes, rooms, zones, rename, assign, groups, scenes,
// triggers) share: finding objects by what a person types, and reporting a change.

/// `--home HOME`: which home a listing or a new object is about.
struct HomeOption: ParsableArguments {
    @Option(help: "The home, by name or id (default: the primary home; listings show every home).")
    var home: String?
}

// MARK: - Finding objects

extension HomeGraph {
    /// A home by name or id; nil means the primary home.
    func resolveHome(_ text: String?) throws(HomeError) -> ObjectID {
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
            throw HomeError(.notFound, "no home is named \(quote(text)); the homes are "
                                + Self.names(orderedHomes.map(\.name)))
        }
        return home.id
    }

    /// The homes a listing covers: the one named, or all.
    func listedHomes(_ text: String?) throws(HomeError) -> [Home] {
        guard let text else { return orderedHomes }
        return [homes[try resolveHome(text)]!]
    }

    /// A room: an id, a path (`Demo Home/Kitchen`), or a name, looked for in `homeID`
    /// if given, else in every home (where it must name one room).
    func resolveRoom(_ text: String, in homeID: ObjectID? = nil) throws(HomeError) -> ObjectID {
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
        return try unique(text, .room, candidates.map { ($0.id, $0.homeID, $0.name) },
                          all: candidates.map(\.name), scoped: homeID)
    }

    /// An accessory: an id, a path (`Living Room/Lamp`), or a name alone, which must
    /// name one accessory of all homes.
    func resolveAccessory(_ text: String) throws(HomeError) -> ObjectID {
        if let id = Self.id(text) {
            guard accessories[id] != nil else { throw notFound(.accessory, id) }
            return id
        }
        if !text.contains("/") {
            let named = homeOrder.flatMap { homes[$0]?.accessoryIDs ?? [] }.compactMap { accessories[$0] }
                .filter { $0.name.lowercased() == text.lowercased() }
            if named.count == 1 { return named[0].id }
            if named.count > 1 {
                throw HomeError(.invalidArgument, "\(quote(text)) names \(named.count) accessories: "
                                    + Self.names(named.map { "\(path(of: $0.id) ?? $0.name) (id \($0.id))" })
                                    + "; give its room too (Room/Accessory) or its id")
            }
            // A bare word that is no accessory's name: say so, unless it names something else.
            guard let other = try? resolve(path: text) else {
                let all = homeOrder.flatMap { homes[$0]?.accessoryIDs ?? [] }.compactMap { accessories[$0]?.name }
                throw HomeError(.notFound, "no accessory is named \(quote(text)); the accessories are "
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
    func resolveService(_ text: String) throws(HomeError) -> ObjectID {
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
                throw HomeError(.invalidArgument, "accessory \(quote(text)) has several services; name one: "
                                    + Self.names(candidates.map { "\(path(of: $0.id) ?? $0.name) (id \($0.id))" }))
            }
            id = service.id
        }
        return id
    }

    /// A zone, service group, action set or trigger: an id, `Home/Name`, or a name
    /// looked for in `homeID` if given, else in every home.
    func resolveNamed(_ text: String, _ kind: ObjectKind, in homeID: ObjectID? = nil) throws(HomeError) -> ObjectID {
        if let id = Self.id(text) {
            guard self.kind(of: id) == kind else { throw notFound(kind, id) }
            return id
        }
        var scope = homeID.map { [$0] } ?? homeOrder
        var name = text
        if let slash = text.firstIndex(of: "/"),
           let home = orderedHomes.first(where: { $0.name.lowercased() == text[..<slash].lowercased() }) {
            scope = [home.id]
            name = String(text[text.index(after: slash)...])
        }
        let candidates = scope.flatMap { members(kind, of: $0) }
        return try unique(name, kind, candidates, all: candidates.map(\.name), scoped: scope.count == 1 ? scope[0] : nil)
    }

    /// Anything a person can rename: a path or id first, then an accessory by name,
    /// then a zone, group, scene or trigger by name.
    func resolveRenamable(_ text: String) throws(HomeError) -> ObjectID {
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
    func members(_ kind: ObjectKind, of homeID: ObjectID) -> [(id: ObjectID, homeID: ObjectID, name: String)] {
        guard let home = homes[homeID] else { return [] }
        switch kind {
        case .zone: return home.zoneIDs.compactMap { zones[$0] }.map { ($0.id, homeID, $0.name) }
        case .serviceGroup: return home.serviceGroupIDs.compactMap { serviceGroups[$0] }.map { ($0.id, homeID, $0.name) }
        case .actionSet: return home.actionSetIDs.compactMap { actionSets[$0] }.map { ($0.id, homeID, $0.name) }
        case .trigger: return home.triggerIDs.compactMap { triggers[$0] }.map { ($0.id, homeID, $0.name) }
        case .room: return home.roomIDs.compactMap { rooms[$0] }.map { ($0.id, homeID, $0.name) }
        default: return []
        }
    }

    private func unique(_ name: String, _ kind: ObjectKind,
                        _ candidates: [(id: ObjectID, homeID: ObjectID, name: String)],
                        all: [String], scoped homeID: ObjectID?) throws(HomeError) -> ObjectID {
        let matches = candidates.filter { $0.name.lowercased() == name.lowercased() }
        if matches.count == 1 { return matches[0].id }
        let place = homeID.flatMap { homes[$0] }.map { "home \(quote($0.name))" } ?? "any home"
        if matches.isEmpty {
            throw HomeError(.notFound, "\(place) has no \(kind.noun) named \(quote(name)); there "
                                + (all.isEmpty ? "are none" : "are " + Self.names(all)))
        }
        throw HomeError(.invalidArgument, "\(quote(name)) names \(matches.count) \(kind.noun)s: "
                            + Self.names(matches.map { "\(homes[$0.homeID]?.name ?? "?")/\($0.name) (id \($0.id))" })
                            + "; start with the home's name or use the id")
    }

    private func notFound(_ kind: ObjectKind, _ id: ObjectID) -> HomeError {
        if let actual = self.kind(of: id) {
            return HomeError(.notFound, "no \(kind.noun) with id \(id) (\(id) is \(article(actual.noun)))")
        }
        return HomeError(.notFound, "no \(kind.noun) with id \(id)")
    }

    private func wrongKind(_ text: String, _ id: ObjectID, expected: ObjectKind) -> HomeError {
        HomeError(.invalidArgument, "\(quote(text)) is \(article(kind(of: id)?.noun ?? "object")) (id \(id)), "
                      + "not \(article(expected.noun))")
    }

    /// An all-digits argument is an id.
    static func id(_ text: String) -> ObjectID? {
        text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) ? ObjectID(text) : nil
    }

    static func names(_ names: [String], limit: Int = 10) -> String {
        if names.isEmpty { return "none" }
        let shown = names.prefix(limit).map { quote($0) }.joined(separator: ", ")
        return names.count > limit ? "\(shown) and \(names.count - limit) more" : shown
    }

    /// "Demo Home" for a home id, for output.
    func homeName(_ id: ObjectID) -> String { homes[id]?.name ?? "?" }
}

/// "an accessory", "a room".
func article(_ noun: String) -> String {
    "aeiou".contains(noun.first ?? "x") ? "an \(noun)" : "a \(noun)"
}

/// A name in double quotes, as messages show names.
func quote(_ text: String) -> String { "\"\(text)\"" }

// MARK: - Applying and reporting a change

/// A layout change as applied: the graph it was computed from, the daemon's answer
/// and what `--json` output needs to describe its events.
struct AppliedChange {
    var before: HomeGraph
    var response: LayoutResponse
    var journalID: String
    var connectionID: UInt64

    /// Human lines (one per event, or "nothing changed"), or one JSON object.
    func print(json: Bool) {
        if json {
            Output.line(JSON.object([
                ("seq", .uint(response.seq)),
                ("created_id", response.createdID == 0 ? .null : .uint(response.createdID)),
                ("events", .array(response.events.map {
                    eventLine($0, names: Names(graph: before), journal: journalID, ownConnection: connectionID)
                })),
            ]).text)
            return
        }
        if response.events.isEmpty {
            Output.line("nothing changed (seq \(response.seq))")
            return
        }
        for event in response.events {
            Output.line("seq \(event.seq)  \(describe(event))")
        }
    }

    private func describe(_ event: HomeEvent) -> String {
        switch event.body {
        case .layout(let change):
            let object = "\(change.object.noun) \(quote(change.name)) (id \(change.objectID))"
            switch change.action {
            case .added: return "added \(object)"
            case .removed: return "removed \(object)"
            case .updated: return "updated \(object)"
            case .moved:
                let room = before.rooms[change.parentID]?.name ?? "room \(change.parentID)"
                return "moved \(object) to \(quote(room)) (id \(change.parentID))"
            }
        case .primaryHome(let id):
            let added = response.events.lazy.compactMap { event -> LayoutChange? in
                if case .layout(let change) = event.body, change.objectID == id { return change }
                return nil
            }.first
            let name = before.homes[id]?.name ?? added?.name ?? "?"
            return "primary home is now \(quote(name)) (id \(id))"
        case .value, .reachability, .actionSetExecuted, .triggerFired:
            return event.kind.rawValue
        }
    }
}

extension ConnectionOptions {
    /// Fetches the home, lets `operation` decide the change from it (resolving
    /// names), applies it and prints the outcome.
    func applyChange(_ operation: (HomeGraph) throws(HomeError) -> LayoutOperation) async throws {
        let applied = try await withClient { client throws(HomeError) in
            let graph = try await client.getHome().graph
            let response = try await client.changeLayout(try operation(graph))
            return AppliedChange(before: graph, response: response, journalID: client.hello.journalID,
                                 connectionID: client.connectionID)
        }
        applied.print(json: json)
    }

    /// The whole home graph, for listings.
    func fetchGraph() async throws -> HomeGraph {
        try await withClient { client throws(HomeError) in try await client.getHome().graph }
    }
}
