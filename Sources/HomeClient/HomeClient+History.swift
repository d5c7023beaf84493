public import HomeModel
public import HomeWire

extension HomeClient {
    /// One page of past events (see `ReadHistoryRequest`): go on with the
    /// response's `nextSeq` as the next request's `afterSeq` (newest first: its
    /// `beforeSeq`) until it is 0.
    public func readHistory(_ request: ReadHistoryRequest) async throws(HomeError) -> ReadHistoryResponse {
        try await call(HomeMethods.readHistory, request)
    }

    /// The most recent value change of a characteristic the history keeps, or nil.
    public func lastChange(of characteristicID: ObjectID) async throws(HomeError) -> HomeEvent? {
        var filter = SubscriptionFilter()
        filter.characteristicIDs = [characteristicID]
        filter.kinds = [.valueChanged]
        var request = ReadHistoryRequest(filter: filter, limit: 1, newestFirst: true)
        while true {
            let page = try await readHistory(request)
            if let event = page.events.first { return event }
            guard page.nextSeq != 0 else { return nil }
            request.beforeSeq = page.nextSeq
        }
    }
}

extension HomeClient {
    /// A trigger's runs, newest first, from the history (see `TraceTriggerRequest`).
    public func traceTrigger(_ triggerID: ObjectID, limit: UInt32 = 0) async throws(HomeError) -> TraceTriggerResponse {
        try await call(HomeMethods.traceTrigger, TraceTriggerRequest(triggerID: triggerID, limit: limit))
    }
}
