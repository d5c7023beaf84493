extension HomeGraph {
    /// Resolves what a person types to name an object: an id, or a path of names.
    ///
    /// Accepted forms, names compared without regard to case:
    /// - `42`: the object with that id, whatever it is (an id wins over a name that looks like one);
    /// - `Living Room/Lamp`: an accessory in a room;
    /// - `Living Room/Lamp/Brightness`: a characteristic, by catalog type name, of
    ///   any of the accessory's services (or, if no characteristic has that name, a
    ///   service by name or type);
    /// - `Living Room/Lamp/Lightbulb/Brightness`: the same, with the service (by name
    ///   or type) when the characteristic alone is ambiguous;
    /// - any of these after a home name, `Demo Home/Living Room/Lamp/On`; also
    ///   `Demo Home`, `Demo Home/Kitchen` and `Kitchen` for homes and rooms.
    ///
    /// Without a home name every home is searched and exactly one must match. A first
    /// part that names a home is always taken as the home. Names containing "/" can
    /// only be reached by id.
    ///
    /// - Throws: `.notFound` naming the part that matched nothing, where it was
    ///   looked for and what is there instead; `.invalidArgument` for an empty or
    ///   over-long path, or a part that matches several objects (listing them).
    public func resolve(path: String) throws(HomeError) -> ObjectID {
        if path.isEmpty { throw HomeError(.invalidArgument, "an empty path names nothing") }
        if path.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            guard let id = ObjectID(path), kind(of: id) != nil else {
                throw HomeError(.notFound, "no object with id \(path)")
            }
            return id
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.contains(where: \.isEmpty) {
            throw HomeError(.invalidArgument, "the path \(quoted(path, limit: 200)) has an empty part")
        }
        if homes.isEmpty { throw HomeError(.notFound, "there are no homes, so nothing is named \(quoted(path))") }

        if let home = homeOrder.compactMap({ homes[$0] }).first(where: { Self.sameName($0.name, parts[0]) }) {
            do {
                return try resolve(parts.dropFirst(), in: home, path: path)
            } catch {
                throw error.error
            }
        }
        var matches: [(home: Home, id: ObjectID)] = []
        var deepest: PathFailure?
        for home in homeOrder.compactMap({ homes[$0] }) {
            do {
                matches.append((home, try resolve(parts[...], in: home, path: path)))
            } catch {
                if deepest == nil || error.depth > deepest!.depth { deepest = error }
            }
        }
        switch matches.count {
        case 1:
            return matches[0].id
        case 0:
            throw deepest?.error ?? HomeError(.notFound, "nothing is named \(quoted(path))")
        default:
            let candidates = matches.map { "\($0.home.name)/\(path) (id \($0.id))" }
            throw HomeError(
                .invalidArgument,
                "\(quoted(path)) names objects in \(matches.count) homes: "
                    + Self.list(candidates) + "; start the path with the home's name")
        }
    }

    /// The full path of an object, for display: `Home/Room/Accessory/Service/Characteristic`,
    /// shorter for objects higher up. `resolve(path:)` finds the object from it
    /// unless a name contains "/" or siblings share a name. Zones, groups, action
    /// sets and triggers show as `Home/Name`, which `resolve(path:)` does not take.
    public func path(of id: ObjectID) -> String? {
        if let home = homes[id] { return home.name }
        if let room = rooms[id] { return homes[room.homeID].map { "\($0.name)/\(room.name)" } }
        if let accessory = accessories[id] {
            return path(of: accessory.roomID).map { "\($0)/\(accessory.name)" }
        }
        if let service = services[id] {
            return path(of: service.accessoryID).map { "\($0)/\(segment(for: service))" }
        }
        if let characteristic = characteristics[id], let service = services[characteristic.serviceID] {
            return path(of: service.id).map { "\($0)/\(characteristic.type.name)" }
        }
        let named: (homeID: ObjectID, name: String)? =
            zones[id].map { ($0.homeID, $0.name) }
            ?? serviceGroups[id].map { ($0.homeID, $0.name) } ?? actionSets[id].map { ($0.homeID, $0.name) }
            ?? triggers[id].map { ($0.homeID, $0.name) }
        return named.flatMap { object in homes[object.homeID].map { "\($0.name)/\(object.name)" } }
    }

    /// A failed resolution and how many parts matched before it, so that of several
    /// homes the one that came closest explains the failure.
    struct PathFailure: Error {
        var depth: Int
        var error: HomeError

        init(_ depth: Int, _ code: HomeError.Code, _ message: String) {
            self.depth = depth
            self.error = HomeError(code, message)
        }
    }

    /// Resolves the parts after the home: Room[/Accessory[/Characteristic-or-Service | /Service/Characteristic]].
    private func resolve(_ parts: ArraySlice<String>, in home: Home, path: String) throws(PathFailure) -> ObjectID {
        let parts = Array(parts)
        if parts.isEmpty { return home.id }
        if parts.count > 4 {
            throw PathFailure(
                4, .invalidArgument,
                "the path \(quoted(path, limit: 200)) has too many parts; the longest form is "
                    + "Home/Room/Accessory/Service/Characteristic")
        }
        let room = try self.room(parts[0], in: home)
        if parts.count == 1 { return room.id }
        let accessory = try self.accessory(parts[1], in: room, of: home)
        switch parts.count {
        case 2: return accessory.id
        case 3: return try characteristicOrService(parts[2], of: accessory, in: room)
        default: return try characteristic(parts[3], ofService: parts[2], of: accessory)
        }
    }

    private func room(_ part: String, in home: Home) throws(PathFailure) -> Room {
        let homeRooms = home.roomIDs.compactMap { rooms[$0] }
        guard let room = homeRooms.first(where: { Self.sameName($0.name, part) }) else {
            throw PathFailure(
                0, .notFound,
                "home \(quoted(home.name)) has no room named \(quoted(part)); its rooms are "
                    + Self.list(homeRooms.map(\.name)))
        }
        return room
    }

    private func accessory(_ part: String, in room: Room, of home: Home) throws(PathFailure) -> Accessory {
        let inRoom = home.accessoryIDs.compactMap { accessories[$0] }.filter { $0.roomID == room.id }
        let named = inRoom.filter { Self.sameName($0.name, part) }
        guard let accessory = named.first else {
            throw PathFailure(
                1, .notFound,
                "room \(quoted(room.name)) has no accessory named \(quoted(part)); "
                    + (inRoom.isEmpty ? "it has none" : "its accessories are " + Self.list(inRoom.map(\.name))))
        }
        if named.count > 1 {
            throw PathFailure(
                1, .invalidArgument,
                "\(quoted(part)) names \(named.count) accessories in room \(quoted(room.name)) "
                    + "(\(Self.ids(named.map(\.id)))); use an id")
        }
        return accessory
    }

    /// The third part: a characteristic of any service, else a service.
    private func characteristicOrService(_ part: String, of accessory: Accessory, in room: Room) throws(PathFailure)
        -> ObjectID
    {
        let accessoryServices = accessory.serviceIDs.compactMap { services[$0] }
        let all = accessoryServices.flatMap { service in
            service.characteristicIDs.compactMap { characteristics[$0] }.map { (service: service, characteristic: $0) }
        }
        let matching = all.filter { Self.sameTypeName($0.characteristic.type.name, part) }
        if matching.count == 1 { return matching[0].characteristic.id }
        if matching.count > 1 {
            let typeName = matching[0].characteristic.type.name
            let paths = matching.map { match in
                let service = segment(for: match.service)
                return "\(room.name)/\(accessory.name)/\(service)/\(typeName) (id \(match.characteristic.id))"
            }
            throw PathFailure(
                2, .invalidArgument,
                "accessory \(quoted(accessory.name)) has \(matching.count) \(typeName) characteristics; "
                    + "name the service: " + Self.list(paths))
        }
        let servicesNamed = matchingServices(accessoryServices, part)
        if servicesNamed.count == 1 { return servicesNamed[0].id }
        if servicesNamed.count > 1 {
            throw PathFailure(
                2, .invalidArgument,
                "\(quoted(part)) names \(servicesNamed.count) services of accessory "
                    + "\(quoted(accessory.name)) (\(Self.ids(servicesNamed.map(\.id)))); use an id")
        }
        var names: [String] = []
        for item in all where !names.contains(item.characteristic.type.name) {
            names.append(item.characteristic.type.name)
        }
        throw PathFailure(
            2, .notFound,
            "accessory \(quoted(accessory.name)) has no characteristic or service named \(quoted(part)); "
                + "its characteristics are " + Self.list(names, limit: 30))
    }

    /// The third and fourth parts: a service, then one of its characteristics.
    private func characteristic(_ part: String, ofService servicePart: String, of accessory: Accessory)
        throws(PathFailure) -> ObjectID
    {
        let accessoryServices = accessory.serviceIDs.compactMap { services[$0] }
        let servicesNamed = matchingServices(accessoryServices, servicePart)
        if servicesNamed.isEmpty {
            throw PathFailure(
                2, .notFound,
                "accessory \(quoted(accessory.name)) has no service named \(quoted(servicePart)); "
                    + "its services are " + Self.list(accessoryServices.map(describe)))
        }
        let candidates = servicesNamed.flatMap { $0.characteristicIDs.compactMap { characteristics[$0] } }
        let matching = candidates.filter { Self.sameTypeName($0.type.name, part) }
        if matching.count == 1 { return matching[0].id }
        if matching.count > 1 {
            throw PathFailure(
                3, .invalidArgument,
                "\(quoted(servicePart + "/" + part)) names \(matching.count) characteristics of "
                    + "accessory \(quoted(accessory.name)) (\(Self.ids(matching.map(\.id)))); use an id")
        }
        throw PathFailure(
            3, .notFound,
            "service \(quoted(servicePart)) of accessory \(quoted(accessory.name)) has no characteristic "
                + "named \(quoted(part)); its characteristics are "
                + Self.list(candidates.map(\.type.name), limit: 30))
    }

    /// "ids 12, 40".
    private static func ids(_ ids: [ObjectID]) -> String {
        "ids " + ids.map { String($0) }.joined(separator: ", ")
    }

    /// The services a path part names: those of that type if any, else those of that
    /// name. Type comes first because service names default to the accessory's name:
    /// in "Thermostat/Thermostat" the service part means the Thermostat service, not
    /// the AccessoryInformation service that shares the accessory's name.
    private func matchingServices(_ candidates: [AccessoryService], _ part: String) -> [AccessoryService] {
        let byType = candidates.filter { Self.sameTypeName($0.type.name, part) }
        return byType.isEmpty ? candidates.filter { Self.sameName($0.name, part) } : byType
    }

    /// Type names compare as catalog lookups do: without case, ignoring spaces
    /// ("current temperature" is CurrentTemperature).
    private static func sameTypeName(_ typeName: String, _ part: String) -> Bool {
        HAPCatalog.lookupKey(typeName) == HAPCatalog.lookupKey(part)
    }

    /// "Lightbulb (\"Lamp\")": a service as a list in a message shows it.
    private func describe(_ service: AccessoryService) -> String {
        "\(service.type.name) (\(quoted(service.name)))"
    }

    /// The path part that names a service: its type, unless the accessory has two
    /// services of that type, then its name.
    /// A service's part of a path: its type's name, or its own name when the
    /// accessory has several services of that type.
    public func segment(for service: AccessoryService) -> String {
        let siblings = accessories[service.accessoryID]?.serviceIDs.compactMap { services[$0] } ?? []
        let sameType = siblings.filter { $0.type.uuid == service.type.uuid && $0.type.name == service.type.name }
        return sameType.count > 1 ? service.name : service.type.name
    }
}
