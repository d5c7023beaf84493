public import HomeModel

extension HomeDatabase {
    /// Reads the whole home graph: every object with its id, the lists in their
    /// order, last known values, and the next id. Values still in the value log
    /// (the last run stopped without folding them) are folded into the tables.
    ///
    /// - Throws: `.dataLoss` naming the file and what is wrong when the tables do not
    ///   make a consistent graph (checked by `HomeGraph(homes:…)`) or hold something
    ///   this build cannot read; `.failedPrecondition` if closed.
    ///
    /// - Parameter skipped: told of each row that cannot be part of a valid home and
    ///   is left out, so that no saved row can stop the daemon from starting (a
    ///   timer trigger whose date is out of range, written by an older build). The
    ///   row stays in the file, untouched.
    public func load(skipped: (String) -> Void = { _ in }) throws(HomeError) -> HomeGraph {
        try withConnection { connection throws(HomeError) -> HomeGraph in
            do throws(HomeError) {
                return try GraphLoader(connection: connection).load(skipped: skipped)
            } catch  where error.code == .dataLoss {
                throw HomeError(.dataLoss, "database \(path) holds a damaged home: \(error.message)")
            }
        }
    }
}

/// Reads the tables and assembles a `HomeGraph` (the tables are read in
/// HomeDatabase+LoadDevices.swift and +LoadAutomations.swift).
struct GraphLoader {
    let connection: Connection

    /// Children of each parent with their positions, for putting lists in order.
    struct Children {
        private var entries: [ObjectID: [(position: Int64, id: ObjectID)]] = [:]

        mutating func add(_ id: ObjectID, to parent: ObjectID, at position: Int64) {
            entries[parent, default: []].append((position, id))
        }

        func list(of parent: ObjectID) -> [ObjectID] {
            guard let children = entries[parent] else { return [] }
            return children.sorted { $0.position < $1.position }.map(\.id)
        }
    }

    /// Link rows of each owner, already in order (their primary key is owner, position).
    typealias Links<T> = [ObjectID: [T]]

    func load(skipped: (String) -> Void) throws(HomeError) -> HomeGraph {
        let nextID = try readNextID()
        var (homes, homeOrder) = try self.homes()
        let (rooms, roomsOfHome) = try self.rooms()
        let (zones, zonesOfHome) = try self.zones()
        var (accessories, accessoriesOfHome, accessoriesOfBridge) = try self.accessories()
        var types = TypeIdentifiers()
        var (services, servicesOfAccessory) = try self.services(&types)
        let (characteristics, characteristicsOfService) = try self.characteristics(&types)
        let (serviceGroups, groupsOfHome) = try self.serviceGroups()
        let (actionSets, actionSetsOfHome) = try self.actionSets()
        let (triggers, triggersOfHome) = try self.triggers(skipped: skipped)

        // The lists, in order.
        for index in homes.indices {
            let id = homes[index].id
            homes[index].roomIDs = roomsOfHome.list(of: id)
            homes[index].zoneIDs = zonesOfHome.list(of: id)
            homes[index].accessoryIDs = accessoriesOfHome.list(of: id)
            homes[index].serviceGroupIDs = groupsOfHome.list(of: id)
            homes[index].actionSetIDs = actionSetsOfHome.list(of: id)
            homes[index].triggerIDs = triggersOfHome.list(of: id)
        }
        for index in accessories.indices {
            let id = accessories[index].id
            accessories[index].serviceIDs = servicesOfAccessory.list(of: id)
            accessories[index].bridgedAccessoryIDs = accessoriesOfBridge.list(of: id)
        }
        for index in services.indices {
            services[index].characteristicIDs = characteristicsOfService.list(of: services[index].id)
        }

        return try HomeGraph(
            homes: homes, rooms: rooms, zones: zones, accessories: accessories, services: services,
            characteristics: characteristics, serviceGroups: serviceGroups, actionSets: actionSets, triggers: triggers,
            homeOrder: homeOrder, nextID: nextID)
    }

    private func readNextID() throws(HomeError) -> ObjectID {
        let statement = try connection.prepare("SELECT value FROM meta WHERE key = 'next_id'")
        guard try statement.step(doing: "reading the next id"), !statement.isNull(0) else {
            throw HomeError(.dataLoss, "the next id is missing")
        }
        return statement.id(0)
    }

    /// Runs a query, calling `body` with the statement positioned on each row.
    func each(_ sql: String, _ body: (Statement) throws(HomeError) -> Void) throws(HomeError) {
        let statement = try connection.prepare(sql)
        while try statement.step(doing: "reading the layout") {
            try body(statement)
        }
    }

    /// Reads a link table whose first column is the owner, in order.
    func links<T>(_ sql: String, _ link: (Statement) throws(HomeError) -> T) throws(HomeError) -> Links<T> {
        var links: Links<T> = [:]
        try each(sql) { row throws(HomeError) in
            links[row.id(0), default: []].append(try link(row))
        }
        return links
    }
}

/// Shares one `TypeIdentifier` (and its strings' storage) among all objects of a
/// type: 100 000 characteristics hold a few dozen distinct types.
struct TypeIdentifiers {
    private var known: [TypeIdentifier: TypeIdentifier] = [:]

    mutating func type(_ uuid: String, _ name: String) -> TypeIdentifier {
        let type = TypeIdentifier(uuid: uuid, name: name)
        if let shared = known[type] { return shared }
        known[type] = type
        return type
    }
}
