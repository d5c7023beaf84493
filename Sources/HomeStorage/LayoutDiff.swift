internal import HomeModel

/// What has to be written to take the stored layout from one graph to another: per
/// table, the rows to insert, update and delete; the positions that moved; the
/// link lists to rewrite.
///
/// It costs what changed, not what exists: an unchanged table is recognised in
/// constant time (a graph's tables are copy-on-write, so an untouched table still
/// shares its storage with the old graph's and `==` sees that at once); a changed
/// table costs one lookup per object; positions and links are computed only for
/// parents whose lists changed.
struct LayoutDiff {
    /// The rows of one table that differ.
    struct Rows {
        var inserted: [ObjectID] = []
        /// In both graphs with different column values (positions and links aside).
        var updated: [ObjectID] = []
        var removed: [ObjectID] = []
        /// In both graphs and different in any way: the parents whose lists may have changed.
        var changed: [ObjectID] = []

        var isEmpty: Bool { inserted.isEmpty && changed.isEmpty && removed.isEmpty }
    }

    /// A column that orders children under their parent.
    enum PositionColumn: CaseIterable {
        case homes, rooms, zones, accessories, bridgedAccessories, services, characteristics
        case serviceGroups, actionSets, triggers
    }

    var homes = Rows()
    var rooms = Rows()
    var zones = Rows()
    var accessories = Rows()
    var services = Rows()
    var characteristics = Rows()
    var serviceGroups = Rows()
    var actionSets = Rows()
    var triggers = Rows()

    /// New positions: of every inserted child, and of every existing child that moved.
    var positions: [PositionColumn: [ObjectID: Int64]] = [:]

    /// Owners whose link rows are rewritten (deleted, then inserted from the new graph).
    var zoneRooms: [ObjectID] = []
    var serviceLinks: [ObjectID] = []
    var groupMembers: [ObjectID] = []
    var actions: [ObjectID] = []
    var triggerActionSets: [ObjectID] = []
    var triggerConditions: [ObjectID] = []

    var nextIDChanged = false

    init(from old: HomeGraph, to new: HomeGraph) {
        homes = Self.rows(old.homes, new.homes) { $0.withoutLists }
        rooms = Self.rows(old.rooms, new.rooms) { $0 }
        zones = Self.rows(old.zones, new.zones) { $0.withoutLists }
        accessories = Self.rows(old.accessories, new.accessories) { $0.withoutLists }
        services = Self.rows(old.services, new.services) { $0.withoutLists }
        characteristics = Self.rows(old.characteristics, new.characteristics) { $0.withoutValue }
        serviceGroups = Self.rows(old.serviceGroups, new.serviceGroups) { $0.withoutLists }
        actionSets = Self.rows(old.actionSets, new.actionSets) { $0.withoutLists }
        triggers = Self.rows(old.triggers, new.triggers) { $0.withoutLists }

        if old.homeOrder != new.homeOrder {
            order(.homes, old: old.homeOrder, new: new.homeOrder)
        }
        orderChildren(of: homes, old.homes, new.homes, \.roomIDs, .rooms)
        orderChildren(of: homes, old.homes, new.homes, \.zoneIDs, .zones)
        orderChildren(of: homes, old.homes, new.homes, \.accessoryIDs, .accessories)
        orderChildren(of: homes, old.homes, new.homes, \.serviceGroupIDs, .serviceGroups)
        orderChildren(of: homes, old.homes, new.homes, \.actionSetIDs, .actionSets)
        orderChildren(of: homes, old.homes, new.homes, \.triggerIDs, .triggers)
        orderChildren(of: accessories, old.accessories, new.accessories, \.serviceIDs, .services)
        orderChildren(of: accessories, old.accessories, new.accessories, \.bridgedAccessoryIDs, .bridgedAccessories)
        orderChildren(of: services, old.services, new.services, \.characteristicIDs, .characteristics)

        zoneRooms = Self.owners(of: zones, old.zones, new.zones, \.roomIDs)
        serviceLinks = Self.owners(of: services, old.services, new.services, \.linkedServiceIDs)
        groupMembers = Self.owners(of: serviceGroups, old.serviceGroups, new.serviceGroups, \.serviceIDs)
        actions = Self.owners(of: actionSets, old.actionSets, new.actionSets, \.actions)
        triggerActionSets = Self.owners(of: triggers, old.triggers, new.triggers, \.actionSetIDs)
        triggerConditions = Self.owners(of: triggers, old.triggers, new.triggers, \.characteristicConditions)

        nextIDChanged = old.nextID != new.nextID
    }

    /// Whether anything at all is to be written.
    var isEmpty: Bool {
        let tables = [homes, rooms, zones, accessories, services, characteristics, serviceGroups, actionSets, triggers]
        return tables.allSatisfy(\.isEmpty) && positions.isEmpty && !nextIDChanged
    }

    /// The position of a child in the new graph, for inserting it.
    func position(_ column: PositionColumn, of id: ObjectID) -> Int64? {
        positions[column]?[id]
    }

    /// Sparse positions for an ordered list of ids: each child's position is its id,
    /// unless that would not come after the previous child's, and then it is one more
    /// than that. Lists that only ever grow by new (larger) ids and shrink — nearly all
    /// of them — keep every position when a child is added or removed, so such a change
    /// writes one row, not one per sibling.
    static func positions(_ list: [ObjectID]) -> [(id: ObjectID, position: Int64)] {
        var result: [(id: ObjectID, position: Int64)] = []
        result.reserveCapacity(list.count)
        var previous: Int64 = 0
        for id in list {
            let position = max(Int64(clamping: id), previous + 1)
            result.append((id, position))
            previous = position
        }
        return result
    }

    // MARK: Computing

    /// The rows of one table that differ, comparing `columns` (the object without
    /// what is stored elsewhere: child lists, links, values).
    private static func rows<T: Equatable, C: Equatable>(
        _ old: [ObjectID: T], _ new: [ObjectID: T],
        columns: (T) -> C
    ) -> Rows {
        var rows = Rows()
        if old == new { return rows }
        // Through indices, so that comparing borrows the objects rather than copying them out.
        for index in new.indices {
            let id = new.keys[index]
            guard let oldIndex = old.index(forKey: id) else {
                rows.inserted.append(id)
                continue
            }
            if old.values[oldIndex] == new.values[index] { continue }
            rows.changed.append(id)
            if columns(old.values[oldIndex]) != columns(new.values[index]) { rows.updated.append(id) }
        }
        // Counting tells whether anything went, without looking at every old id.
        if old.count + rows.inserted.count != new.count {
            for id in old.keys where new.index(forKey: id) == nil { rows.removed.append(id) }
        }
        return rows
    }

    /// Records new positions for the children of parents whose list of them changed.
    private mutating func orderChildren<Parent>(
        of parents: Rows, _ old: [ObjectID: Parent],
        _ new: [ObjectID: Parent], _ list: KeyPath<Parent, [ObjectID]>,
        _ column: PositionColumn
    ) {
        for id in parents.inserted + parents.changed {
            guard let parent = new[id] else { continue }
            let before = old[id]?[keyPath: list] ?? []
            let after = parent[keyPath: list]
            if before != after { order(column, old: before, new: after) }
        }
    }

    private mutating func order(_ column: PositionColumn, old: [ObjectID], new: [ObjectID]) {
        let previous = Dictionary(
            Self.positions(old).map { ($0.id, $0.position) }, uniquingKeysWith: { first, _ in first })
        for (id, position) in Self.positions(new) where previous[id] != position {
            positions[column, default: [:]][id] = position
        }
    }

    /// The owners (inserted or changed) whose link list differs from before.
    private static func owners<Owner, Link: Equatable>(
        of rows: Rows, _ old: [ObjectID: Owner],
        _ new: [ObjectID: Owner],
        _ links: KeyPath<Owner, [Link]>
    ) -> [ObjectID] {
        var owners: [ObjectID] = []
        for id in rows.inserted + rows.changed {
            guard let owner = new[id] else { continue }
            let after = owner[keyPath: links]
            if (old[id]?[keyPath: links] ?? []) != after { owners.append(id) }
        }
        return owners
    }
}

// What of each object is a row's columns: lists are the children's positions and
// link rows, and a characteristic's value is written by the value log (HomeDatabase+Values.swift).

extension Home {
    fileprivate var withoutLists: Home {
        Home(id: id, name: name, isPrimary: isPrimary, defaultRoomID: defaultRoomID, location: location)
    }
}

extension Zone {
    fileprivate var withoutLists: Zone { Zone(id: id, homeID: homeID, name: name) }
}

extension Accessory {
    fileprivate var withoutLists: Accessory {
        var copy = self
        copy.serviceIDs = []
        copy.bridgedAccessoryIDs = []
        return copy
    }
}

extension AccessoryService {
    fileprivate var withoutLists: AccessoryService {
        var copy = self
        copy.characteristicIDs = []
        copy.linkedServiceIDs = []
        return copy
    }
}

extension Characteristic {
    fileprivate var withoutValue: Characteristic {
        var copy = self
        copy.value = nil
        copy.lastUpdatedMs = 0
        return copy
    }
}

extension ServiceGroup {
    fileprivate var withoutLists: ServiceGroup { ServiceGroup(id: id, homeID: homeID, name: name) }
}

extension ActionSet {
    fileprivate var withoutLists: ActionSet { ActionSet(id: id, homeID: homeID, name: name, kind: kind) }
}

extension Trigger {
    fileprivate var withoutLists: Trigger {
        var copy = self
        copy.actionSetIDs = []
        copy.kind = kind.withoutConditions
        copy.conditions = []
        return copy
    }
}

extension TriggerKind {
    /// An event trigger's conditions; none for a timer.
    var conditions: [CharacteristicCondition] {
        if case .event(_, _, _, _, let conditions) = self { return conditions }
        return []
    }

    fileprivate var withoutConditions: TriggerKind {
        guard case .event(let id, let value, let low, let high, _) = self else { return self }
        return .event(characteristicID: id, value: value, rangeMin: low, rangeMax: high, conditions: [])
    }
}
