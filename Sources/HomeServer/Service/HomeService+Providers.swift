internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

// The provider calls: a provider opens its command stream, registers its
// accessories, answers commands and reports its own changes.
extension HomeService {
    func openProvider(_ request: OpenProviderRequest, context: CallContext, writer: CallWriter) throws(HomeError)
        -> any ServerStreamCall
    {
        try ProviderNames.validateProviderID(request.providerID)
        if providers.inProcessProviders.contains(request.providerID) {
            throw HomeError(
                .invalidArgument,
                "provider id \"\(request.providerID)\" is served inside this daemon; choose another id")
        }
        if let held = providers.session(ofConnection: context.connectionID) {
            throw HomeError(
                .failedPrecondition,
                "this connection already serves provider \"\(held.providerID)\"; one provider per connection")
        }
        let stream = ProviderCommandStream(
            providerID: request.providerID, connectionID: context.connectionID, writer: writer, hub: providers,
            store: store
        ) { [streamEnded = context.streamEnded, callID = context.callID] in streamEnded(callID) }
        try providers.open(
            ProviderHub.Session(
                providerID: request.providerID, connectionID: context.connectionID, clientName: context.clientName,
                uid: context.peer.uid, stream: NIOLoopBound(stream, eventLoop: context.eventLoop),
                eventLoop: context.eventLoop))
        let knownKeys = store.snapshot().graph.accessoryIDs(ofProvider: request.providerID).keys.sorted()
        store.audit(
            "provider-connected",
            detail: "provider \(quoted(request.providerID)) connected (client \(quoted(context.clientName)), pid "
                + "\(context.peer.pid); \(knownKeys.count) accessories known from before)",
            origin: Origin(
                kind: .provider, connectionID: context.connectionID, name: request.providerID, uid: context.peer.uid))
        stream.start(knownKeys: knownKeys)
        return stream
    }

    func registerAccessories(_ request: RegisterAccessoriesRequest, context: CallContext) throws(HomeError)
        -> RegisterAccessoriesResponse
    {
        let session = try providerSession(context, calling: "RegisterAccessories")
        providers.noteSeen(session.providerID)
        let outcome = try store.register(
            request.accessories, removing: request.removeKeys, provider: session.providerID,
            homeID: request.homeID, origin: providerOrigin(session))
        let registration = outcome.registration
        let registered = Set(
            registration.accessoryIDs.flatMap { id in
                (outcome.graph.accessories[id]?.serviceIDs ?? []).flatMap {
                    outcome.graph.services[$0]?.characteristicIDs ?? []
                }
            })
        providers.setOptimistic(
            registration.optimisticCharacteristicIDs,
            removing: registered.subtracting(registration.optimisticCharacteristicIDs),
            providerID: session.providerID)
        // What follows goes after this response, which is written when this returns
        // (a command sent now on the provider's own loop would be written first, and
        // name ids the provider does not know yet): requests that waited for it
        // since the daemon started, then one read of the values it did not give,
        // so that what changed while it was away is published once, as its report.
        let unread = registration.unreadCharacteristicIDs
        context.eventLoop.execute { [self] in
            providers.sendParked(to: session.providerID)
            if !unread.isEmpty { refresh(unread, from: session, on: context.eventLoop) }
        }
        return RegisterAccessoriesResponse(
            graph: outcome.graph, accessoryIDs: registration.accessoryIDs, seq: outcome.seq)
    }

    func answerCommand(_ answer: CommandAnswer, context: CallContext) -> AnswerCommandResponse {
        AnswerCommandResponse(accepted: providers.answer(answer, fromConnection: context.connectionID))
    }

    func reportValues(_ report: ValueReport, context: CallContext) throws(HomeError) -> ValueReportResponse {
        let session = try providerSession(context, calling: "ReportValues")
        providers.noteSeen(session.providerID)
        let outcome = store.report(
            report.values, reachability: report.reachability.map { ($0.accessoryID, $0.reachable) },
            provider: session.providerID, origin: providerOrigin(session))
        return ValueReportResponse(seq: outcome.seq, rejected: outcome.rejected)
    }

    /// Reports a provider pipelined: one commit (one transaction on disk) for
    /// those of one provider session, each answered with its own outcome.
    func reportValues(_ calls: [(request: ValueReport, context: CallContext)])
        -> [EventLoopFuture<ValueReportResponse>]
    {
        guard calls.count > 1, let first = calls.first,
            let session = providers.session(ofConnection: first.context.connectionID)
        else {
            return calls.map { call in
                let eventLoop = call.context.eventLoop
                do throws(HomeError) {
                    return eventLoop.makeSucceededFuture(try reportValues(call.request, context: call.context))
                } catch {
                    return eventLoop.makeFailedFuture(error)
                }
            }
        }
        providers.noteSeen(session.providerID)
        let outcomes = store.report(
            together: calls.map { ($0.request.values, $0.request.reachability.map { ($0.accessoryID, $0.reachable) }) },
            provider: session.providerID, origin: providerOrigin(session))
        return zip(calls, outcomes).map { call, outcome in
            call.context.eventLoop.makeSucceededFuture(
                ValueReportResponse(seq: outcome.seq, rejected: outcome.rejected))
        }
    }

    func listProviders(_ request: ListProvidersRequest, context: CallContext) -> ListProvidersResponse {
        ListProvidersResponse(
            providers: providers.infos(known: store.providerAccessories(excluding: providers.inProcessProviders)))
    }

    // MARK: Helpers

    private func providerSession(_ context: CallContext, calling method: String) throws(HomeError)
        -> ProviderHub.Session
    {
        guard let session = providers.session(ofConnection: context.connectionID) else {
            throw HomeError(
                .failedPrecondition,
                "\(method) is for providers: open the provider's command stream (OpenProvider) on this "
                    + "connection first")
        }
        return session
    }

    func providerOrigin(_ session: ProviderHub.Session) -> Origin {
        Origin(kind: .provider, connectionID: session.connectionID, name: session.providerID, uid: session.uid)
    }

    /// Reads characteristics from their provider and applies what it answers as
    /// its report, before its AnswerCommand is acknowledged (so before any report
    /// it sends after).
    func refresh(_ ids: [ObjectID], from session: ProviderHub.Session, on eventLoop: any EventLoop) {
        let store = self.store
        let origin = providerOrigin(session)
        providers.send(
            .read(characteristicIDs: ids), to: session.providerID, timeoutMs: nil, on: eventLoop,
            from: session.connectionID
        ) { result in
            guard case .success(let answer) = result else { return }
            let values = answer.reads.compactMap { read in
                read.error == nil
                    ? read.value.map { CharacteristicWrite(characteristicID: read.characteristicID, value: $0) }
                    : nil
            }
            _ = store.report(values, reachability: [], provider: session.providerID, origin: origin)
        }
    }
}

/// A name in double quotes, for the audit's sentences.
func quoted(_ text: String) -> String { "\"\(text)\"" }
