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
        let outcome = try store.changeLayout(request.operation, origin: caller.origin)
        return LayoutResponse(events: outcome.events, seq: outcome.seq, createdID: outcome.createdID)
    }

    /// The catalog: it is static, so nobody's right needs checking.
    static func listTypes() -> ListTypesResponse {
        .standard
    }
}
