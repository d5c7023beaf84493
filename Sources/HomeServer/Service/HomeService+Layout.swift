internal import HomeModel
internal import HomeWire

extension HomeService {
    /// Applies one layout operation, all or nothing, durable before it is answered.
    func changeLayout(_ request: LayoutRequest, context: CallContext) throws(HomeError) -> LayoutResponse {
        try authorize(request.operation, context: context)
        try refuseRemovingServed(request.operation)
        // The file system is no part of the model: a trigger's program is checked
        // here, before the store's lock.
        if let command = request.operation.command { try CommandRunner.checkExecutable(command.program) }
        let outcome = try store.changeLayout(request.operation, origin: context.origin)
        return LayoutResponse(events: outcome.events, seq: outcome.seq, createdID: outcome.createdID)
    }

    /// An accessory whose provider is connected is not removed: the provider would
    /// know nothing of it and its next report of it would be refused, leaving the
    /// device dead in homed until the provider restarted and registered it again.
    private func refuseRemovingServed(_ operation: LayoutOperation) throws(HomeError) {
        guard case .remove(let id) = operation, let accessory = store.snapshot().graph.accessory(id),
            !providers.inProcessProviders.contains(accessory.provider), providers.isConnected(accessory.provider)
        else { return }
        throw HomeError(
            .failedPrecondition,
            "accessory \(id) (\"\(accessory.name)\") is served by provider \"\(accessory.provider)\", which is connected: "
                + "remove the device in the provider (homed drops it when the provider no longer registers it), "
                + "or stop the provider and `homectl providers forget \(accessory.provider)`")
    }

    /// Whether the caller may make this layout change. Every layout call goes
    /// through here before anything is looked at.
    ///
    /// The seam for roles from peer credentials: layout changes are for admins; users and
    /// viewers will get `.permissionDenied` naming the operation and their role.
    /// Until peer credentials and roles exist, every client may do everything.
    private func authorize(_ operation: LayoutOperation, context: CallContext) throws(HomeError) {
        _ = (operation, context)
    }
}
