extension HomeGraph {
    /// The layout change announcing something about an object as it is now: after an
    /// add or an update, or before a removal.
    ///
    /// The `add…` operations return the new id; this makes their event:
    /// `graph.layoutChange(.added, of: try graph.addRoom(name: "Study", homeID: home))`.
    /// An accessory's change carries its room as `parentID`.
    package func layoutChange(_ action: LayoutChange.Action, of id: ObjectID) -> LayoutChange? {
        guard let kind = kind(of: id), let homeID = homeID(of: id) else { return nil }
        var name = ""
        var parentID: ObjectID = 0
        switch kind {
        case .home: name = homes[id]?.name ?? ""
        case .room: name = rooms[id]?.name ?? ""
        case .zone: name = zones[id]?.name ?? ""
        case .accessory:
            name = accessories[id]?.name ?? ""
            parentID = accessories[id]?.roomID ?? 0
        case .service:
            name = services[id]?.name ?? ""
            parentID = services[id]?.accessoryID ?? 0
        case .characteristic:
            name = characteristics[id]?.type.name ?? ""
            parentID = characteristics[id]?.serviceID ?? 0
        case .serviceGroup: name = serviceGroups[id]?.name ?? ""
        case .actionSet: name = actionSets[id]?.name ?? ""
        case .trigger: name = triggers[id]?.name ?? ""
        }
        return LayoutChange(action: action, object: kind, objectID: id, homeID: homeID, name: name, parentID: parentID)
    }
}
