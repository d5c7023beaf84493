internal import HomeModel
internal import HomeWire
internal import NIOCore

extension HomeService {
    /// The shortest heartbeat interval a subscription may ask for.
    static let minimumHeartbeatMs: UInt32 = 100

    /// Opens a subscription stream on the call's connection.
    func subscribe(_ request: SubscribeRequest, context: CallContext, writer: CallWriter) throws(HomeError)
        -> any ServerStreamCall
    {
        let limit = request.queueLimit == 0 ? configuration.defaultQueueLimit : Int(request.queueLimit)
        guard limit <= configuration.maxQueueLimit else {
            throw HomeError(
                .invalidArgument,
                "queue_limit \(request.queueLimit) exceeds the daemon's maximum of \(configuration.maxQueueLimit)")
        }
        // A heartbeat is a timer per subscription: one every millisecond would keep the
        // event loop busy for nothing.
        guard request.heartbeatMs == 0 || request.heartbeatMs >= Self.minimumHeartbeatMs else {
            throw HomeError(
                .invalidArgument,
                "heartbeat_ms \(request.heartbeatMs) is below the minimum of \(Self.minimumHeartbeatMs) ms "
                    + "(0: no heartbeat)")
        }
        let bytes = limit * configuration.queueBytesPerEvent
        let session = context.session.value
        guard session.reservedQueueBytes + bytes <= configuration.maxQueueBytesPerConnection else {
            throw HomeError(
                .resourceExhausted,
                "queue_limit \(limit) would let this subscription hold \(bytes) bytes, but this connection's "
                    + "subscriptions may hold \(configuration.maxQueueBytesPerConnection) bytes together and "
                    + "already reserve \(session.reservedQueueBytes); ask for a smaller queue_limit or close one")
        }
        let options = SubscriptionState.Options(
            connectionID: context.connectionID, excludeOwn: request.excludeOwn, policy: request.policy,
            queueLimit: limit, queueByteLimit: bytes, minIntervalMs: Int64(request.minIntervalMs),
            heartbeatMs: Int64(request.heartbeatMs))
        let start = try subscriptionStart(request)
        let store = self.store
        let flusher = flushers.flusher(for: context.eventLoop)
        let stream = try store.subscribe(request.filter, start: start) { id, scope in
            SubscriptionStream(
                subscriptionID: id, state: SubscriptionState(scope: scope, options: options),
                journalID: store.journalID, journalField: journalField, writer: writer, flusher: flusher,
                publishedSeq: store.publishedSeq
            ) {
                store.unsubscribe(id)
                context.session.value.reservedQueueBytes -= bytes
                context.streamEnded(context.callID)
            }
        }
        session.reservedQueueBytes += bytes
        return stream
    }

    /// Where a subscription starts: live, with a snapshot, or in the past (after a
    /// sequence number, or from a time), with the stored events memory no longer
    /// holds read here, before the store's lock is taken.
    private func subscriptionStart(_ request: SubscribeRequest) throws(HomeError) -> SubscriptionStart {
        if let sinceTime = request.sinceTimeMs {
            guard request.sinceSeq == nil, !request.snapshot else {
                throw HomeError(
                    .invalidArgument, "since_time_ms starts a subscription in the past: not with since_seq or snapshot")
            }
            let nowMs = store.wallClockMs()
            guard sinceTime <= nowMs else {
                throw HomeError(.invalidArgument, "since_time_ms \(sinceTime) is in the future (now is \(nowMs))")
            }
            let after = try store.firstSeq(atOrAfter: sinceTime) - 1
            return .resume(
                after: after, journalID: store.journalID, stored: try store.storedEventsForResume(after: after))
        }
        guard let since = request.sinceSeq else { return request.snapshot ? .snapshot : .live }
        let stored = request.journalID == store.journalID ? try store.storedEventsForResume(after: since) : []
        return .resume(after: since, journalID: request.journalID, stored: stored)
    }

    /// Widens or narrows a subscription open on the same connection.
    func modifySubscription(_ request: ModifySubscriptionRequest, context: CallContext) throws(HomeError)
        -> ModifySubscriptionResponse
    {
        guard let stream = context.openStream(request.callID) as? SubscriptionStream else {
            throw HomeError(.notFound, "no open subscription with call id \(request.callID) on this connection")
        }
        return ModifySubscriptionResponse(seq: try store.modify(stream, add: request.add, remove: request.remove))
    }
}
