import HomeModel
import HomeWire

/// Who makes a call: the connection's identity as the daemon knows it.
///
/// Today that is the connection id and the name from its hello; with DESIGN §7
/// it gains the peer credentials (uid, gid from `SO_PEERCRED`) and the role the
/// configuration maps them to.
struct Caller: Sendable {
    var connectionID: UInt64
    var name: String

    var origin: Origin { Origin(kind: .client, connectionID: connectionID, name: name) }
}

/// `ChangeLayout` and `ListTypes`: layout operations mapped onto the home graph's,
/// applied through `HomeStore.changeLayout` so that each is all or nothing,
/// durable before it is answered, and published to subscribers.
enum LayoutCalls {
    /// Whether `caller` may make this layout change. Every layout call goes through
    /// here before anything is looked at.
    ///
    /// The seam for DESIGN §7's roles: layout changes are for admins; users and
    /// viewers will get `.permissionDenied` naming the operation and their role.
    /// Until peer credentials and roles exist, every client may do everything.
    static func authorize(_ operation: LayoutOperation, by caller: Caller) throws(HomeError) {
        _ = (operation, caller)
    }

    /// Applies one layout operation for `caller`.
    ///
    /// - Returns: the events published (numbered), the sequence number after them,
    ///   and the id of what was created.
    /// - Throws: the model's error, unchanged (ALREADY_EXISTS, NOT_FOUND naming the
    ///   id, INVALID_ARGUMENT, FAILED_PRECONDITION), or persistence's; either way
    ///   nothing changed and nothing was published.
    static func changeLayout(_ request: LayoutRequest, caller: Caller, store: HomeStore) throws(HomeError)
        -> LayoutResponse
    {
        try authorize(request.operation, by: caller)
        var createdID: ObjectID = 0
        let (events, seq) = try store.changeLayout(origin: caller.origin) { graph throws(HomeError) in
            let primaryBefore = graph.primaryHomeID
            let outcome = try apply(request.operation, to: &graph)
            createdID = outcome.createdID
            var bodies = outcome.changes.map { HomeEvent.Body.layout($0) }
            // Adding the first home, choosing another, or removing the primary one
            // all change which home is primary; subscribers hear it once, after the
            // layout events that caused it.
            if let primary = graph.primaryHomeID, primary != primaryBefore {
                bodies.append(.primaryHome(primary))
            }
            return bodies
        }
        return LayoutResponse(events: events, seq: seq, createdID: createdID)
    }

    /// The catalog: it is static, so nobody's right needs checking.
    static func listTypes() -> ListTypesResponse {
        .standard
    }

    // MARK: The operations

    private typealias Outcome = (changes: [LayoutChange], createdID: ObjectID)

    private static func apply(_ operation: LayoutOperation, to graph: inout HomeGraph) throws(HomeError) -> Outcome {
        switch operation {
        case .addHome(let name):
            let id = try graph.addHome(name: name)
            // The home arrives with its default room; announce both.
            let room = graph.home(id).flatMap { graph.layoutChange(.added, of: $0.defaultRoomID) }
            return (added(id, in: graph).changes + (room.map { [$0] } ?? []), id)
        case .rename(let id, let name):
            return (try rename(id, to: name, in: &graph), 0)
        case .remove(let id):
            return (try remove(id, from: &graph), 0)
        case .setPrimaryHome(let homeID):
            return (try graph.setPrimaryHome(homeID), 0)
        case .addRoom(let name, let homeID):
            return added(try graph.addRoom(name: name, homeID: homeID), in: graph)
        case .addZone(let name, let homeID):
            return added(try graph.addZone(name: name, homeID: homeID), in: graph)
        case .addRoomToZone(let roomID, let zoneID):
            return (try graph.addRoom(roomID, toZone: zoneID), 0)
        case .removeRoomFromZone(let roomID, let zoneID):
            return (try graph.removeRoom(roomID, fromZone: zoneID), 0)
        case .assignAccessory(let accessoryID, let roomID):
            return (try graph.assignAccessory(accessoryID, toRoom: roomID), 0)
        case .addServiceGroup(let name, let homeID):
            return added(try graph.addServiceGroup(name: name, homeID: homeID), in: graph)
        case .addServiceToGroup(let serviceID, let groupID):
            return (try graph.addService(serviceID, toGroup: groupID), 0)
        case .removeServiceFromGroup(let serviceID, let groupID):
            return (try graph.removeService(serviceID, fromGroup: groupID), 0)
        case .addActionSet(let name, let kind, let homeID):
            return added(try graph.addActionSet(name: name, kind: kind, homeID: homeID), in: graph)
        case .addAction(let action, let actionSetID):
            return (try graph.addAction(characteristicID: action.characteristicID, value: action.value,
                                        toActionSet: actionSetID), 0)
        case .removeAction(let characteristicID, let actionSetID):
            return (try graph.removeAction(characteristicID: characteristicID, fromActionSet: actionSetID), 0)
        case .addTrigger(let name, let homeID, let kind, let actionSetIDs, let enabled):
            return added(try graph.addTrigger(name: name, homeID: homeID, kind: kind, actionSetIDs: actionSetIDs,
                                              enabled: enabled), in: graph)
        case .setTriggerEnabled(let triggerID, let enabled):
            return (try graph.setTrigger(triggerID, enabled: enabled), 0)
        case .addActionSetToTrigger(let actionSetID, let triggerID):
            return (try graph.addActionSet(actionSetID, toTrigger: triggerID), 0)
        case .removeActionSetFromTrigger(let actionSetID, let triggerID):
            return (try graph.removeActionSet(actionSetID, fromTrigger: triggerID), 0)
        }
    }

    private static func added(_ id: ObjectID, in graph: HomeGraph) -> Outcome {
        (graph.layoutChange(.added, of: id).map { [$0] } ?? [], id)
    }

    private static func rename(_ id: ObjectID, to name: String, in graph: inout HomeGraph) throws(HomeError)
        -> [LayoutChange]
    {
        switch graph.kind(of: id) {
        case .home: return try graph.renameHome(id, to: name)
        case .room: return try graph.renameRoom(id, to: name)
        case .zone: return try graph.renameZone(id, to: name)
        case .accessory: return try graph.renameAccessory(id, to: name)
        case .service: return try graph.renameService(id, to: name)
        case .serviceGroup: return try graph.renameServiceGroup(id, to: name)
        case .actionSet: return try graph.renameActionSet(id, to: name)
        case .trigger: return try graph.renameTrigger(id, to: name)
        case .characteristic:
            let typeName = graph.characteristic(id)?.type.name ?? "?"
            throw HomeError(.invalidArgument,
                            "characteristic \(id) (\(typeName)) is named by its type and cannot be renamed")
        case nil:
            throw HomeError(.notFound, "no object with id \(id) to rename")
        }
    }

    private static func remove(_ id: ObjectID, from graph: inout HomeGraph) throws(HomeError) -> [LayoutChange] {
        switch graph.kind(of: id) {
        case .home: return try graph.removeHome(id)
        case .room: return try graph.removeRoom(id)
        case .zone: return try graph.removeZone(id)
        case .accessory: return try graph.removeAccessory(id)
        case .serviceGroup: return try graph.removeServiceGroup(id)
        case .actionSet: return try graph.removeActionSet(id)
        case .trigger: return try graph.removeTrigger(id)
        case .service:
            let accessoryID = graph.service(id)?.accessoryID ?? 0
            throw HomeError(.invalidArgument, "service \(id) is part of accessory \(accessoryID) and cannot be "
                                + "removed on its own; remove the accessory")
        case .characteristic:
            let serviceID = graph.characteristic(id)?.serviceID ?? 0
            throw HomeError(.invalidArgument, "characteristic \(id) is part of service \(serviceID) and cannot be "
                                + "removed on its own")
        case nil:
            throw HomeError(.notFound, "no object with id \(id) to remove")
        }
    }
}
