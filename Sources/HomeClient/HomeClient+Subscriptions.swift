public import HomeModel
@_spi(Wire) public import HomeWire

extension HomeClient {
    /// Widens or narrows an open subscription without reopening it and without a
    /// gap: HomeKit's `enableNotification(true/false)`, for any set of objects.
    ///
    /// - Returns: the sequence number after which the new filter applies.
    @discardableResult
    public func modify(
        _ subscription: HomeSubscription, add: SubscriptionFilter = SubscriptionFilter(),
        remove: SubscriptionFilter = SubscriptionFilter()
    ) async throws(HomeError) -> UInt64 {
        try await call(
            HomeMethods.modifySubscription,
            ModifySubscriptionRequest(callID: subscription.callID, add: add, remove: remove)
        ).seq
    }

    /// Every connection's subscriptions: queue depth, events sent, merged, dropped.
    public func stats() async throws(HomeError) -> GetStatsResponse {
        try await call(HomeMethods.getStats, GetStatsRequest())
    }
}
