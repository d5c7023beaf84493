public import HomeModel
@_spi(Wire) public import HomeWire

extension HomeClient {
    /// Runs a scene (action set).
    public func executeActionSet(_ actionSetID: ObjectID) async throws(HomeError) -> ExecuteActionSetResponse {
        try await call(HomeMethods.executeActionSet, ExecuteActionSetRequest(actionSetID: actionSetID))
    }
}
