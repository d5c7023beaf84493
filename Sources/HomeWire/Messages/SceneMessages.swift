public import HomeModel

// Swift values for ExecuteActionSet: running a scene.

public struct ExecuteActionSetRequest: Hashable, Sendable {
    public var actionSetID: ObjectID
    public init(actionSetID: ObjectID) { self.actionSetID = actionSetID }
}

public struct ExecuteActionSetResponse: Hashable, Sendable {
    /// One per action, in the scene's order.
    public var results: [WriteResult]
    /// The sequence number of the action-set-executed event.
    public var seq: UInt64
    public init(results: [WriteResult], seq: UInt64) {
        self.results = results
        self.seq = seq
    }
}
