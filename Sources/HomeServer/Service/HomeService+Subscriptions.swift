import HomeModel
import HomeWire

extension HomeService {
    /// Opens a subscription stream on the call's connection.
    func subscribe(_ request: SubscribeRequest, context: CallContext) throws(HomeError) -> any ServerStreamCall {
        let limit = request.queueLimit == 0 ? configuration.defaultQueueLimit : Int(request.queueLimit)
        guard limit <= configuration.maxQueueLimit else {
            throw HomeError(.invalidArgument,
                            "queue_limit \(request.queueLimit) exceeds the daemon's maximum of \(configuration.maxQueueLimit)")
        }
        let start: SubscriptionStart = request.sinceSeq.map { .resume(after: $0, journalID: request.journalID) }
            ?? (request.snapshot ? .snapshot : .live)
        let store = self.store
        return try store.subscribe(request.filter, start: start) { id, scope in
            SubscriptionSink(subscriptionID: id, callID: context.callID, connectionID: context.connectionID, scope: scope,
                             request: request, channel: context.channel, store: store, queueLimit: limit,
                             frameSize: context.frameSize) { _ in context.streamEnded(context.callID) }
        }
    }

    /// Widens or narrows a subscription open on the same connection.
    func modifySubscription(_ request: ModifySubscriptionRequest, context: CallContext) throws(HomeError)
        -> ModifySubscriptionResponse
    {
        guard let sink = context.openStream(request.callID) as? SubscriptionSink else {
            throw HomeError(.notFound, "no open subscription with call id \(request.callID) on this connection")
        }
        return ModifySubscriptionResponse(seq: try store.modify(sink, add: request.add, remove: request.remove))
    }
}
