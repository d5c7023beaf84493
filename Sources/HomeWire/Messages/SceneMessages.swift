public import HomeModel

// Swift values for ExecuteActionSet: running a scene.

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
